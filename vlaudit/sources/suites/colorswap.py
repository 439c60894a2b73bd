"""ColorSwap (Burapacheep et al., 2024): the dataset's ``data/{train,test}.json`` as its README shows it.

Layout (Top34051/colorswap @ 4f2c9e4 : README.md, "Usage"): a JSON list of ``{"id", "caption_1", "caption_2",
"image_1", "image_2", "image_source", "caption_source"}``; caption k describes image k (``images/img_0_1.png``,
relative to the folder the images zip is extracted in). The two captions have the same words with the colour
words swapped.

One :class:`~vlaudit.records.SuiteItem` per example: ``images = (image_1, image_2)``, ``texts = (caption_1,
caption_2)``, ``positives = ((0, 0), (1, 1))`` — a native 2×2 block (an exact cycle). ``subset`` is the file's
stem (``test``, ``train``): the official scores are means over one file. The repository's published
``vlm_results/*.json`` (a VLM's prompts and responses, with ``log_1`` / ``log_2``), a Winoground file
(``caption_0`` / ``image_0``) and any other JSON are refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.common import counts, image_path, refuse, shape_of, text_field

SUITE = "colorswap"
TITLE = "ColorSwap"
LAYOUT = "data/{train,test}.json: a JSON list of {id, caption_1, caption_2, image_1, image_2, ...}"
FIELDS = ("id", "caption_1", "caption_2", "image_1", "image_2")


def _found(data: Any) -> str:
    """What a look-alike is, in words (a result file and Winoground by name)."""
    shape = shape_of(data)
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], Mapping) else {}
    if any(str(key).startswith(("prompt_", "response_")) for key in first) or {"log_1", "log_2"} <= set(first):
        return (f"{shape} — a ColorSwap VLM result file (vlm_results/: prompts and responses), not the dataset; "
                "the dataset is data/{train,test}.json from the README's Google Drive link or the Hub")
    if {"caption_0", "image_0"} <= set(first):
        return f"{shape} — a Winoground file (caption_0 / image_0), not ColorSwap"
    return shape


def read_colorswap(path: Path, **options: Any) -> SuiteRead:
    """The examples of a ColorSwap dataset file (see the module docstring); no options."""
    if options:
        raise InputError(f"ColorSwap takes no options; got {sorted(options)}", path=path)
    path = Path(path)
    data = read_json(path)
    if not (isinstance(data, list) and data and isinstance(data[0], Mapping) and set(FIELDS) <= set(data[0])):
        raise refuse(path, TITLE, LAYOUT, _found(data))
    items, seen = [], set()
    for index, row in enumerate(data):
        record = f"entry {index}"
        if not isinstance(row, Mapping):
            raise InputError("expected an object", path=path, record=record)
        example = row.get("id")
        if example is None or isinstance(example, bool | float | list | dict):
            raise InputError(f"id {example!r} is not an integer or a string", path=path, record=record, field="id")
        record = f"id {example}"
        if str(example) in seen:
            raise InputError("id seen twice", path=path, record=record, field="id")
        seen.add(str(example))
        images = tuple(SuiteImage(image_path(row.get(name), path=path, record=record, name=name))
                       for name in ("image_1", "image_2"))
        texts = tuple(text_field(row, name, path=path, record=record) for name in ("caption_1", "caption_2"))
        items.append(SuiteItem(suite=SUITE, item_id=str(example), subset=path.stem, images=images, texts=texts,
                               positives=((0, 0), (1, 1)), record=record,
                               extra={name: row[name] for name in ("image_source", "caption_source") if name in row}))
    return SuiteRead(suite=SUITE, source=str(path), items=items, counts=counts(len(data), len(items)))
