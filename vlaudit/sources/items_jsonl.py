"""vlaudit's own JSONL layout of suite items (what ``vlaudit giveaway`` writes as the blind-filtered subset).

One JSON object per line, keys exactly::

    {"id": "17", "subset": "swap_obj", "images": ["000000222235.jpg"],
     "texts": ["A cat sits on its hind legs.", "Its hind legs sit on a cat."], "positives": [[0, 0]]}

* ``id`` — the item's id (text); ``subset`` — the unit the suite's aggregation groups by;
* ``images`` — a list of image paths relative to the images folder, or objects ``{"path": ..., "crop":
  [x, y, w, h]}`` for a crop (pixels of the file);
* ``texts`` — the candidate texts in the suite's own order (a tie rule depends on it);
* ``positives`` — the true ``[image index, text index]`` pairs; every other pair of the item is a negative.

:func:`item_line` writes an item as that object; :func:`read_items_jsonl` reads the layout back (a bad line is
one :class:`InputError` naming file, line and field).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from vlaudit.records import SuiteItem
from vlaudit.sources.suites.pairs import read_pairs_suite

KEYS = ("id", "subset", "images", "texts", "positives")


def item_line(item: SuiteItem) -> dict[str, Any]:
    """One item as the layout's JSON object (see the module docstring)."""
    images: list[Any] = [image.path if image.crop is None else {"path": image.path, "crop": list(image.crop)}
                         for image in item.images]
    return {"id": item.item_id, "subset": item.subset, "images": images, "texts": list(item.texts),
            "positives": [[i, j] for i, j in item.positives]}


def is_items_jsonl(path: str | Path) -> bool:
    """Whether ``path`` is a JSONL file whose first object has the layout's keys (for format detection)."""
    path = Path(path)
    if path.suffix.lower() != ".jsonl" or not path.is_file():
        return False
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    try:
        row = json.loads(first)
    except ValueError:
        return False
    return isinstance(row, dict) and set(KEYS) <= set(row)


def read_items_jsonl(path: str | Path, *, suite: str = "items") -> list[SuiteItem]:
    """The items of a file in vlaudit's JSONL layout (see the module docstring), read by the one reader of that
    layout, :func:`vlaudit.sources.suites.pairs.read_pairs_suite` (``suite eval pairs-suite`` reads the same
    file); the items are named ``suite`` and keep their texts as caption keys (a scores table joins on them)."""
    read = read_pairs_suite(Path(path))
    return [replace(item, suite=suite, extra={**item.extra, "caption_keys": tuple(item.texts)}) for item in read.items]
