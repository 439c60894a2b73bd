"""CREPE (Ma et al., CVPR 2023): a systematicity or productivity hard-negatives CSV, as its loader reads it.

Layout (RAIVNLab/CREPE @ 1fa81c4 : crepe_eval_utils.py, ``BaseCsvDataset``; crepe_compo_eval_open_clip.py,
``CsvDataset`` and ``gather_params``; crepe_params.py for the column names): a CSV with ``image_id`` (a Visual
Genome id), ``caption``, the crop ``x, y, width, height`` (``TF.crop(image, y, x, height, width)``) and the hard
negatives as a **Python-literal list** in one column — ``hard_negs`` (productivity,
``prod_vg_hard_negs_<type>_complexity_<n>.csv``) or ``valid_hard_negs_{atom,comp,combined}`` (systematicity,
``syst_vg_hard_negs_<split>_in_<dataset>.csv``) — parsed with :func:`ast.literal_eval` (never ``eval``), as the
loader does. The texts a model ranks are ``[caption] + hard_negs`` (the true caption first).

One :class:`~vlaudit.records.SuiteItem` per row and negatives column: ``images = (crop of the image,)``,
``texts = (caption, *hard_negs)``, ``positives = ((0, 0),)``. ``subset`` is the file's stem, with
``:<column>`` where a file has several negatives columns (a systematicity file is scored once per negative type;
``hard_neg_key=`` picks one). Images: the loader looks for ``<id>.jpg`` in ``VG_100K`` then ``VG_100K_2``; pass
``image_root=`` (the folder holding both) and the reader does the same, else the image is ``<id>.jpg`` (one flat
folder). Any other table is refused by name.
"""

from __future__ import annotations

import ast
import csv
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.common import counts, refuse

SUITE = "crepe"
TITLE = "CREPE"
LAYOUT = ("a CSV of image_id, caption, x, y, width, height and hard_negs / valid_hard_negs_* (Python-literal "
          "lists of captions)")
VG_FOLDERS = ("VG_100K", "VG_100K_2")  # crepe_eval_utils.py, get_image_by_id
_NEEDED = ("image_id", "caption", "x", "y", "width", "height")


def _negatives(value: str, *, path: Path, record: str, name: str) -> tuple[str, ...]:
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise InputError(f"not a Python-literal list: {type(exc).__name__}", path=path, record=record,
                         field=name) from exc
    if not isinstance(parsed, list | tuple) or not parsed:
        raise InputError(f"expected a non-empty list of captions, found {type(parsed).__name__}", path=path,
                         record=record, field=name)
    if not all(isinstance(text, str) and text.strip() for text in parsed):
        raise InputError("every hard negative must be a non-empty caption", path=path, record=record, field=name)
    return tuple(str(text) for text in parsed)


def _image(image_id: str, image_root: Path | None, *, path: Path, record: str) -> str:
    if not image_id.isdigit():
        raise InputError(f"image id {image_id!r} is not a Visual Genome id", path=path, record=record,
                         field="image_id")
    if image_root is None:
        return f"{image_id}.jpg"
    for folder in VG_FOLDERS:
        if (image_root / folder / f"{image_id}.jpg").is_file():
            return f"{folder}/{image_id}.jpg"
    raise InputError(f"the image {image_id}.jpg is in neither {' nor '.join(VG_FOLDERS)} of {image_root}",
                     path=path, record=record, field="image_id")


def read_crepe(path: Path, *, hard_neg_key: str | None = None, image_root: str | Path | None = None,
               **options: Any) -> SuiteRead:
    """The items of a CREPE CSV (see the module docstring)."""
    if options:
        raise InputError(f"CREPE takes hard_neg_key= and image_root=; got {sorted(options)}", path=path)
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found" if not path.exists() else "not a file", path=path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            columns = list(reader.fieldnames or [])
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read as CSV: {exc}", path=path) from exc
    keys = [name for name in columns if name == "hard_negs" or name.startswith("valid_hard_negs_")]
    missing = [name for name in _NEEDED if name not in columns]
    if missing or not keys:
        found = f"the columns {columns[:8]}" + (f" (missing {missing})" if missing else " (no hard_negs column)")
        raise refuse(path, TITLE, LAYOUT, found)
    if hard_neg_key is not None:
        if hard_neg_key not in keys:
            raise InputError(f"no negatives column {hard_neg_key!r}; the file has {keys}", path=path,
                             field="hard_neg_key")
        keys = [hard_neg_key]
    root = None if image_root is None else Path(image_root)
    items = []
    for index, row in enumerate(rows):
        record = f"row {index + 2}"
        caption = (row.get("caption") or "").strip()
        if not caption:
            raise InputError("missing or empty caption", path=path, record=record, field="caption")
        crop = []
        for name in ("x", "y", "width", "height"):
            try:
                crop.append(float(row.get(name) or ""))
            except ValueError as exc:
                raise InputError(f"not a number: {row.get(name)!r}", path=path, record=record, field=name) from exc
        if crop[2] <= 0 or crop[3] <= 0:
            raise InputError("the crop has no area", path=path, record=record, field="width")
        image = SuiteImage(_image((row.get("image_id") or "").strip(), root, path=path, record=record),
                           (crop[0], crop[1], crop[2], crop[3]))
        for key in keys:
            negatives = _negatives(row.get(key) or "", path=path, record=record, name=key)
            items.append(SuiteItem(
                suite=SUITE, item_id=f"{index}" if len(keys) == 1 else f"{index}/{key}",
                subset=path.stem if len(keys) == 1 else f"{path.stem}:{key}", images=(image,),
                texts=(caption, *negatives), positives=((0, 0),), record=record,
                extra={"image_id": row.get("image_id"), "hard_neg_key": key}, direction="i2t"))
    notes = () if len(keys) == 1 else (f"{len(keys)} negatives columns {keys}: each row is an item per column",)
    return SuiteRead(suite=SUITE, source=str(path), items=items,
                     counts=counts(len(rows), len(rows)), notes=notes)
