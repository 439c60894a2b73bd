"""VALSE (Parcalabescu et al. 2022) as published → :class:`~vlaudit.records.SuiteRead`.

Layout (Heidelberg-NLP/VALSE @ 2152d90 : data/*.json, README.md): one JSON object per piece,
``{sample_id: {dataset, original_split, dataset_idx, linguistic_phenomena, image_file, caption, foil,
classes, classes_foil, mturk: {caption, foil, other}, ...}}``. The official evaluation scripts
(lxmert_valse_eval.py, unimodal_valse_eval.py) keep a sample only when ``foil["mturk"]["caption"] >= 2`` (two
of three annotators chose the caption and not the foil): the reader applies that filter and counts what it
left out (``"mturk.caption < 2"``). Each kept sample is one item: image ``image_file`` (relative to the
piece's own image folder — the pieces come from SWiG, VisDial, Visual7W, COCO), texts ``(caption, foil)``,
subset = the piece (the file's stem, e.g. ``existence``; ``piece=`` overrides it), item id
``<piece>/<sample id>``.

A folder is read as every ``*.json`` in it, in name order (the eleven pieces together, one subset each).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.caption_rows import looks_like
from vlaudit.sources.suites.common import counts, image_path, refuse, text_field

SUITE = "valse"
LEFT_OUT = "mturk.caption < 2"
MIN_VOTES = 2
_EXPECTED = ('a JSON object {sample_id: {image_file, caption, foil, mturk: {caption, foil, other}, ...}} '
             '(Heidelberg-NLP/VALSE data/*.json)')


def _votes(record: Mapping[str, Any], *, path: Path, key: str) -> int:
    mturk = record.get("mturk")
    value = mturk.get("caption") if isinstance(mturk, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError("expected an integer count of annotators" if value is not None else "missing",
                         path=path, record=key, field="mturk.caption")
    return value


def _read_piece(path: Path, piece: str | None, piece_folders: bool) -> tuple[list[SuiteItem], int, int]:
    data = read_json(path)
    if not isinstance(data, Mapping) or not data:
        raise refuse(path, "VALSE", _EXPECTED, looks_like(data))
    first = next(iter(data.values()))
    if not isinstance(first, Mapping) or not {"caption", "foil", "mturk"} <= set(first):
        raise refuse(path, "VALSE", _EXPECTED, looks_like(data))
    subset = piece or path.stem
    items: list[SuiteItem] = []
    low = 0
    for key, record in data.items():
        key = str(key)
        if not isinstance(record, Mapping):
            raise InputError("expected an object", path=path, record=key)
        if _votes(record, path=path, key=key) < MIN_VOTES:
            low += 1
            continue
        caption = text_field(record, "caption", path=path, record=key)
        foil = text_field(record, "foil", path=path, record=key)
        name = image_path(record.get("image_file"), path=path, record=key, name="image_file")
        image = SuiteImage(f"{subset}/{name}" if piece_folders else name)
        extra = {name: record[name] for name in ("dataset", "linguistic_phenomena", "classes", "classes_foil",
                                                 "mturk") if name in record}
        items.append(SuiteItem(SUITE, f"{subset}/{key}", subset, (image,), (caption, foil), ((0, 0),), key,
                               extra))
    return items, len(data), low


def read_valse(path: str | Path, *, piece: str | None = None, piece_folders: bool = False) -> SuiteRead:
    """The valid samples of one VALSE piece (or of every piece in a folder): module docstring.
    ``SuiteRead.counts``: ``read``, ``kept`` and ``"mturk.caption < 2"``; ``notes`` give the same per piece.
    ``item_id`` is ``<piece>/<sample id>`` (sample ids repeat across pieces: actant-swap and
    action-replacement share ``actions_test_*``); ``record`` the sample id. ``piece_folders``: name each image
    ``<piece>/<image_file>``, for an images folder with one subfolder per piece (the pieces' images come from
    different datasets; the official config.py gives each piece its own folder)."""
    path = Path(path)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise InputError("the folder has no *.json piece", path=path)
    if piece is not None and len(files) > 1:
        raise InputError("piece= names one file's piece; a folder's pieces are named by their files", path=path,
                         field="piece")
    items: list[SuiteItem] = []
    read = low = 0
    notes = []
    for file in files:
        piece_items, piece_read, piece_low = _read_piece(file, piece, piece_folders)
        items += piece_items
        read += piece_read
        low += piece_low
        notes.append(f"{piece or file.stem}: kept {len(piece_items)} of {piece_read} samples "
                     f"(mturk.caption >= {MIN_VOTES}, the official validity filter)")
    if not items:
        raise InputError(f"no sample has mturk.caption >= {MIN_VOTES}", path=path)
    return SuiteRead(SUITE, str(path), items, counts(read, len(items), {LEFT_OUT: low}), tuple(notes))
