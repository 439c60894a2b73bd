"""vlaudit's own suite layout (``pairs-suite``): one JSONL record per item, written by hand or by a script.

One line per item::

    {"id": "cat-dog-1", "images": ["a.jpg", "b.jpg"], "texts": ["a cat left of a dog", "a dog left of a cat"],
     "positives": [[0, 0], [1, 1]], "subset": "spatial"}

* ``id`` — the item's id (text or integer; unique in the file);
* ``images`` — one or more image files relative to the images folder, each either a name or an object
  ``{"path": "a.jpg", "crop": [x, y, w, h]}`` (a crop in pixels of the file);
* ``texts`` — one or more candidate texts, in the order the item states them;
* ``positives`` — the true ``[image index, text index]`` pairs (at least one); every other pair of the item is a
  negative;
* ``subset`` (optional, default ``"all"``) — the group the figures are reported by.

This is the layout of :mod:`vlaudit.metrics.suites.pairs` (the per-image and per-text accuracies, strict) and of
the exact-cycle count (:mod:`vlaudit.analysis.suites.cycles`): a 2×2 item with positives ``[[0, 0], [1, 1]]`` is
one exact cycle. Any other file is refused by name (a What's Up, COLA or SugarCrepe file is not this layout).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import read_json, read_records
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.common import counts, image_path, refuse, shape_of

NAME = "pairs-suite"
LAYOUT = 'JSONL: {id, images: [...], texts: [...], positives: [[i, j], ...], subset}'
_KEYS = ("id", "images", "texts", "positives")


def _image(value: object, *, path: Path, record: str, name: str) -> SuiteImage:
    if isinstance(value, Mapping):
        crop = value.get("crop")
        file_name = image_path(value.get("path"), path=path, record=record, name=f"{name}.path")
        if crop is None:
            return SuiteImage(file_name)
        if (not isinstance(crop, list) or len(crop) != 4
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in crop)
                or crop[2] <= 0 or crop[3] <= 0 or crop[0] < 0 or crop[1] < 0):
            raise InputError(f"crop must be [x, y, w, h] with x, y >= 0 and w, h > 0, got {crop!r}", path=path,
                             record=record, field=f"{name}.crop")
        return SuiteImage(file_name, (float(crop[0]), float(crop[1]), float(crop[2]), float(crop[3])))
    return SuiteImage(image_path(value, path=path, record=record, name=name))


def _texts(value: object, *, path: Path, record: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise InputError("expected a non-empty list of texts", path=path, record=record, field="texts")
    texts = []
    for index, text in enumerate(value):
        if not isinstance(text, str) or not text.strip():
            raise InputError("expected a non-empty text", path=path, record=record, field=f"texts[{index}]")
        texts.append(text.strip())
    return tuple(texts)


def _positives(value: object, n_images: int, n_texts: int, *, path: Path, record: str
               ) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, list) or not value:
        raise InputError("expected a non-empty list of [image index, text index] pairs", path=path, record=record,
                         field="positives")
    out: list[tuple[int, int]] = []
    for index, pair in enumerate(value):
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)):
            raise InputError(f"expected [image index, text index], got {pair!r}", path=path, record=record,
                             field=f"positives[{index}]")
        i, j = pair
        if not (0 <= i < n_images and 0 <= j < n_texts):
            raise InputError(f"[{i}, {j}] is outside the item's {n_images} image(s) and {n_texts} text(s)",
                             path=path, record=record, field=f"positives[{index}]")
        if (i, j) in out:
            raise InputError(f"[{i}, {j}] is listed twice", path=path, record=record, field=f"positives[{index}]")
        out.append((i, j))
    return tuple(out)


def read_pairs_suite(path: Path, **options: Any) -> SuiteRead:
    """Read a ``pairs-suite`` JSONL file (module docstring) into :class:`~vlaudit.records.SuiteRead`.

    A file whose first record lacks the layout's keys is refused naming the layout; a bad record names file,
    record (line number and id) and field. Options: none."""
    if options:
        raise InputError(f"the {NAME} reader takes no options, got {sorted(options)}", path=path, field="option")
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found" if not path.exists() else "not a file", path=path)
    if path.suffix.lower() not in (".jsonl", ".json"):
        raise refuse(path, NAME, LAYOUT, f"a {path.suffix or 'suffix-less'} file")
    try:
        rows = read_records(path) if path.suffix.lower() == ".jsonl" else None
    except InputError as error:
        raise refuse(path, NAME, LAYOUT, str(error)) from None
    if rows is None:
        data = read_json(path)
        if not isinstance(data, list) or not all(isinstance(row, Mapping) for row in data):
            raise refuse(path, NAME, LAYOUT, shape_of(data))
        rows = [dict(row) for row in data]
    if not rows:
        raise InputError(f"no items: expected {LAYOUT}", path=path)
    missing = [key for key in _KEYS if key not in rows[0]]
    if missing:
        raise refuse(path, NAME, LAYOUT, f"records with keys {list(rows[0])[:6]} (no {', '.join(missing)})")
    items: list[SuiteItem] = []
    seen: set[str] = set()
    for line, row in enumerate(rows, start=1):
        raw_id = row.get("id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or not str(raw_id).strip():
            raise InputError("missing or empty id", path=path, record=f"line {line}", field="id")
        item_id = str(raw_id).strip()
        record = f"line {line} (id {item_id})"
        if item_id in seen:
            raise InputError("id repeats an earlier record's", path=path, record=record, field="id")
        seen.add(item_id)
        images_value = row.get("images")
        if not isinstance(images_value, list) or not images_value:
            raise InputError("expected a non-empty list of images", path=path, record=record, field="images")
        images = tuple(_image(value, path=path, record=record, name=f"images[{index}]")
                       for index, value in enumerate(images_value))
        texts = _texts(row.get("texts"), path=path, record=record)
        positives = _positives(row.get("positives"), len(images), len(texts), path=path, record=record)
        subset = row.get("subset", "all")
        if not isinstance(subset, str) or not subset.strip():
            raise InputError("expected a non-empty text", path=path, record=record, field="subset")
        extra = {k: v for k, v in row.items() if k not in (*_KEYS, "subset")}
        items.append(SuiteItem(suite=NAME, item_id=item_id, subset=subset.strip(), images=images, texts=texts,
                               positives=positives, record=record, extra=extra))
    return SuiteRead(suite=NAME, source=str(path), items=items, counts=counts(len(rows), len(items)))
