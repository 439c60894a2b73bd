"""SugarCrepe and SugarCrepe++ as published → :class:`~vlaudit.records.SuiteRead`.

* **SugarCrepe** (RAIVNLab/sugar-crepe @ 0047054 : data/{add,replace,swap}_*.json, read by main_eval.py): a
  JSON object ``{"0": {filename, caption, negative_caption}, ...}`` per file; one item per entry, texts
  ``(caption, negative_caption)``, image ``filename`` (COCO val2017), subset = the file's stem (main_eval.py
  reports one accuracy per file). Every entry is kept, as main_eval.py counts ``len(data_dict)``.
  (:mod:`vlaudit.sources.sugarcrepe` reads the same files as labelled pairs; this reader gives suite items.)
* **SugarCrepe++** (Sri-Harsha/scpp @ c083bbf : data/*.json, read by VLMs/test_*.py): a JSON list of
  ``{id, filename, caption, caption2, negative_caption}``; one item per entry, texts ``(caption, caption2,
  negative_caption)`` (both captions positive), subset = the file's stem.

Either reads a Hub dataset / Parquet / JSONL of the same columns, and a folder of the files (one subset each).
An item's id is ``<file stem>/<entry id>`` (ids repeat across files). A SugarCrepe++ file given as SugarCrepe (or the reverse) is refused by name: SugarCrepe would silently drop
``caption2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.records import SuiteItem, SuiteRead
from vlaudit.sources.rows import ImageFolder
from vlaudit.sources.suites.caption_rows import load_source, looks_like, row_label, suite_image
from vlaudit.sources.suites.common import counts, refuse, text_field

SUGARCREPE = "sugarcrepe"
SUGARCREPE_PP = "sugarcrepe-pp"
_SC_EXPECTED = 'a JSON object {"0": {filename, caption, negative_caption}, ...} (RAIVNLab/sugar-crepe data/*.json)'
_PP_EXPECTED = "a JSON list of {id, filename, caption, caption2, negative_caption} (Sri-Harsha/scpp data/*.json)"


def _files(path: Path) -> list[Path]:
    """A folder of the release's JSON files → the files in name order; anything else (a file, a dataset
    folder written by ``save_to_disk``, a folder of Parquet) is one source."""
    dataset_marks = ("dataset_info.json", "state.json", "dataset_dict.json")
    if path.is_dir() and not any((path / name).exists() for name in dataset_marks) and not any(
            path.glob("*.parquet")) and not any(path.glob("*.arrow")):
        files = sorted(path.glob("*.json"))
        if not files:
            raise InputError("the folder has no *.json file", path=path)
        return files
    return [path]


def _entries(path: Path, images: ImageFolder | str | Path | None) -> tuple[list[tuple[str, str, Mapping[str, Any]]],
                                                                            Any]:
    """``[(item id, record label, entry)]`` of one file, and the parsed value (for the refusal)."""
    data, is_rows = load_source(path, images=images, image_field="filename")
    if isinstance(data, Mapping):
        return [(str(key), str(key), entry) for key, entry in data.items()], data
    if isinstance(data, list):
        return [(str(entry.get("id", index)) if isinstance(entry, Mapping) else str(index),
                 row_label(is_rows, index), entry) for index, entry in enumerate(data)], data
    return [], data


def _read(path: str | Path, suite: str, images: ImageFolder | str | Path | None) -> SuiteRead:
    path = Path(path)
    plus = suite == SUGARCREPE_PP
    title, expected = ("SugarCrepe++", _PP_EXPECTED) if plus else ("SugarCrepe", _SC_EXPECTED)
    fields = ("caption", "caption2", "negative_caption") if plus else ("caption", "negative_caption")
    items: list[SuiteItem] = []
    read = 0
    for file in _files(path):
        entries, data = _entries(file, images)
        first = entries[0][2] if entries else None
        if not isinstance(first, Mapping) or not {"caption", "negative_caption"} <= set(first) or (
                ("caption2" in first) != plus):
            found = looks_like(data)
            if not plus and isinstance(first, Mapping) and "caption2" in first:
                found += "; read it as the suite 'sugarcrepe-pp', which keeps caption2"
            raise refuse(file, title, expected, found)
        for item_id, record, entry in entries:
            if not isinstance(entry, Mapping):
                raise InputError("expected an object", path=file, record=record)
            texts = tuple(text_field(entry, name, path=file, record=record) for name in fields)
            image = suite_image(entry, ("filename", "image"), path=file, record=record)
            positives = ((0, 0), (0, 1)) if plus else ((0, 0),)
            items.append(SuiteItem(suite, f"{file.stem}/{item_id}", file.stem, (image,), texts, positives,
                                   record))
        read += len(entries)
    return SuiteRead(suite, str(path), items, counts(read, len(items)))


def read_sugarcrepe_suite(path: str | Path, *, images: ImageFolder | str | Path | None = None) -> SuiteRead:
    """SugarCrepe files as suite items (module docstring): texts ``(caption, negative_caption)``."""
    return _read(path, SUGARCREPE, images)


def read_sugarcrepe_pp(path: str | Path, *, images: ImageFolder | str | Path | None = None) -> SuiteRead:
    """SugarCrepe++ files (module docstring): texts ``(caption, caption2, negative_caption)``."""
    return _read(path, SUGARCREPE_PP, images)
