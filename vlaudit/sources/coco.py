"""The official COCO annotation files: ``instances_*.json`` and ``captions_*.json`` (cycle paper §4, §D.2).

Parsed with orjson into column arrays (numpy) so that builders can work on ~860k instances at once.

Checks (each failure is an :class:`~vlaudit.errors.InputError` naming the file, the record and the field):
missing or mistyped fields, duplicate image / annotation / category / caption ids, unknown category ids,
annotations or captions on image ids absent from the instances file, non-positive image sizes, negative
box sizes and boxes that leave the image by more than ``BOX_TOLERANCE`` pixels.

Recoverable cases are repaired and counted in ``warnings`` (reported in every summary): boxes that leave
the image by at most ``BOX_TOLERANCE`` pixels are clipped (COCO has float rounding at the border), a
missing ``iscrowd`` is read as 0, empty captions are dropped.

Every record is validated by a vectorised fast path; only when that path finds something wrong is the
slow per-record pass run, to name the first bad record exactly.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from vlaudit.errors import InputError
from vlaudit.files import refuse_compressed
from vlaudit.sources.rows import dataset_rows, is_dataset_source, local_file

BOX_TOLERANCE = 1.0


@dataclass
class CocoInstances:
    """Images, categories and instance boxes of one instances file, as parallel arrays.

    ``ann_image`` indexes ``image_ids``; ``ann_cat`` indexes ``category_names``; ``bbox`` is COCO
    [x, y, w, h] in pixels (float64, clipped to the image); ``iscrowd`` is bool.
    """

    path: str
    image_ids: list[str]
    raw_image_ids: np.ndarray
    file_names: list[str]
    width: np.ndarray
    height: np.ndarray
    category_ids: list[int]
    category_names: list[str]
    ann_image: np.ndarray
    ann_cat: np.ndarray
    bbox: np.ndarray
    iscrowd: np.ndarray
    warnings: Counter = field(default_factory=Counter)

    def image_index(self) -> dict[str, int]:
        return {image_id: i for i, image_id in enumerate(self.image_ids)}


@dataclass
class CocoCaptions:
    """Captions of one captions file: ids (strings), the index of their image in the instances, texts."""

    path: str
    raw_ids: np.ndarray
    image: np.ndarray
    texts: list[str]  # as in the file; strip before showing
    warnings: Counter = field(default_factory=Counter)

    def caption_id(self, k: int) -> str:
        return str(int(self.raw_ids[k]))

    @property
    def caption_ids(self) -> list[str]:
        return [str(i) for i in self.raw_ids.tolist()]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: parsed JSON is a tree (no cycles), and with millions of live
    containers every full collection re-scans them all, which can double the time of a large parse."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# A "segmentation" value of the official shapes: polygons [[x, y, ...], ...], [] or RLE {"counts", "size"}.
# List interiors are [^\]]* (a single negated character runs ~2x faster than a character set); a match
# ends on the value's own closing bracket, and anything odd is left alone or falls back to a full parse.
# The quantifiers are possessive (*+): giving back a list interior or a whole ",[...]" can never let the
# next "]" match (the char given back is a number or ","), and not recording backtrack points per polygon
# makes the pass ~2x faster.
_LIST = rb"\[[^\]]*+\]"
_SEGMENTATION = re.compile(
    rb'"segmentation":\s*(?:\[' + _LIST + rb"(?:,\s*" + _LIST + rb")*+\]|\[\]"
    rb'|\{"counts":\s*(?:' + _LIST + rb'|"[^"\\]*"),\s*"size":\s*' + _LIST + rb"\s*\})")


def _load(path: str | Path, keys: tuple[str, ...], *, skip_segmentation: bool = False) -> dict:
    """Parse with orjson. ``skip_segmentation`` replaces well-formed segmentation values by 0 before parsing:
    the builders never read masks, and polygons are most of the bytes (and of the parse time) of an instances
    file. Inside a JSON string the quotes would be escaped, so the pattern only ever matches the key; a value
    it does not recognise is left as it is and parsed normally."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    try:
        with gc_paused():
            raw = path.read_bytes()
            refuse_compressed(raw[:4], path)
            data = None
            if skip_segmentation:
                try:
                    data = orjson.loads(_SEGMENTATION.sub(b'"segmentation":0', raw))
                except orjson.JSONDecodeError:
                    data = None  # report errors against the file as it is
            if data is None:
                data = orjson.loads(raw)
            del raw
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}", path=path) from exc
    if not isinstance(data, dict):
        raise InputError("expected a JSON object with " + ", ".join(keys), path=path)
    for key in keys:
        if not isinstance(data.get(key), list):
            raise InputError("missing or not a list", path=path, field=key)
    return data


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_num(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_record(path: Path, section: str, index: int, rec: object, spec: dict[str, tuple]) -> None:
    where = f"{section}[{index}]"
    if not isinstance(rec, dict):
        raise InputError("not a JSON object", path=path, record=where)
    if _is_int(rec.get("id")):
        where = f"{section}[{index}] (id {rec['id']})"
    for name, (check, what) in spec.items():
        if name not in rec:
            raise InputError("missing required field", path=path, record=where, field=name)
        if not check(rec[name]):
            raise InputError(f"expected {what}, got {rec[name]!r}", path=path, record=where, field=name)


def _is_box(value: object) -> bool:
    return isinstance(value, list) and len(value) == 4 and all(_is_num(v) for v in value)


def _is_str(value: object) -> bool:
    return isinstance(value, str)


_IMAGE_SPEC = {"id": (_is_int, "an integer"), "width": (_is_num, "a number"), "height": (_is_num, "a number"),
               "file_name": (_is_str, "a string")}
_ANN_SPEC = {"id": (_is_int, "an integer"), "image_id": (_is_int, "an integer"),
             "category_id": (_is_int, "an integer"), "bbox": (_is_box, "a list of 4 numbers [x, y, w, h]")}
_CAT_SPEC = {"id": (_is_int, "an integer"), "name": (lambda v: isinstance(v, str) and v != "", "a name")}
_CAPTION_SPEC = {"id": (_is_int, "an integer"), "image_id": (_is_int, "an integer"),
                 "caption": (_is_str, "a string")}


def _first_duplicate(values: np.ndarray) -> int | None:
    """Position of the first value that occurred before, or None."""
    if len(values) == 0:
        return None
    sorted_values = np.sort(values)  # the common case, no duplicate, needs no (slower, stable) argsort
    if not (sorted_values[1:] == sorted_values[:-1]).any():
        return None
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    repeated = np.nonzero(sorted_values[1:] == sorted_values[:-1])[0]
    if len(repeated) == 0:
        return None
    return int(order[repeated + 1].min())


def _int_column(values: list, name: str) -> np.ndarray:
    column = np.array(values)
    if len(values) and column.dtype.kind not in "iu":
        raise TypeError(name)
    return column.astype(np.int64, copy=False)


def _fast_columns(records: list, spec: dict[str, tuple], optional: tuple[str, ...] = ()
                  ) -> dict[str, Any] | None:
    """Columns for every spec field (and the ``optional`` fields when every record has them, as raw
    tuples), or None when a record is malformed (then the slow pass names it)."""
    try:
        columns: dict[str, Any] = {}  # numpy columns, and the optional fields as raw lists
        for name in optional:
            with contextlib.suppress(KeyError):
                columns[name] = list(map(itemgetter(name), records))
        for name, (check, _) in spec.items():
            # one C-level pass per field (measured faster than one pass building tuples of all fields)
            values = list(map(itemgetter(name), records))
            if check is _is_int:
                columns[name] = _int_column(values, name)
            elif check is _is_num:
                column = np.array(values)
                if len(records) and column.dtype.kind not in "iuf":
                    return None
                columns[name] = column.astype(np.float64, copy=False)
            elif check is _is_box:
                # flattened first (np.array on nested lists is slow); no dtype, so strings or nulls give a
                # non-numeric array instead of being converted
                lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
                if len(values) and (lengths.min() != 4 or lengths.max() != 4):
                    return None
                column = np.array(list(itertools.chain.from_iterable(values)))
                if len(records) and column.dtype.kind not in "iuf":
                    return None
                columns[name] = column.astype(np.float64, copy=False).reshape(len(records), 4)
            else:
                # exact types, checked in C; anything else (rare) goes through the check itself
                if not (set(map(type, values)) <= {str} if check is _is_str else all(map(check, values))):
                    return None
                columns[name] = list(values)
        return columns
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _columns(path: Path, section: str, records: list, spec: dict[str, tuple], optional: tuple[str, ...] = ()
             ) -> dict:
    columns = _fast_columns(records, spec, optional)
    if columns is None:
        for index, rec in enumerate(records):
            _check_record(path, section, index, rec, spec)
        raise InputError("malformed records", path=path, field=section)  # pragma: no cover - slow pass raises
    return columns


def _where(section: str, index: int, rec_id: object) -> str:
    return f"{section}[{index}] (id {rec_id})"


def read_coco_instances(path: str | Path) -> CocoInstances:
    """Parse and validate an official COCO ``instances_*.json`` file (the file itself: it has no dataset form)."""
    path = local_file(path, reads="a COCO instances_*.json file")
    data = _load(path, ("images", "annotations", "categories"), skip_segmentation=True)
    warnings: Counter = Counter()
    cats = _columns(path, "categories", data["categories"], _CAT_SPEC)
    dup = _first_duplicate(cats["id"])
    if dup is not None:
        raise InputError(f"duplicate category id {cats['id'][dup]}", path=path,
                         record=_where("categories", dup, cats["id"][dup]), field="id")
    images = _columns(path, "images", data["images"], _IMAGE_SPEC)
    image_ids = images["id"]
    dup = _first_duplicate(image_ids)
    if dup is not None:
        raise InputError(f"duplicate image id {image_ids[dup]}", path=path,
                         record=_where("images", dup, image_ids[dup]), field="id")
    for name in ("width", "height"):
        bad = np.nonzero(~(images[name] > 0))[0]
        if len(bad):
            raise InputError(f"image {name} must be positive, got {images[name][bad[0]]}", path=path,
                             record=_where("images", int(bad[0]), image_ids[bad[0]]), field=name)
    anns_list = data["annotations"]
    anns = _columns(path, "annotations", anns_list, _ANN_SPEC, optional=("iscrowd",))
    ann_ids = anns["id"]
    dup = _first_duplicate(ann_ids)
    if dup is not None:
        raise InputError(f"duplicate annotation id {ann_ids[dup]}", path=path,
                         record=_where("annotations", dup, ann_ids[dup]), field="id")
    ann_image = _lookup(image_ids, anns["image_id"])
    bad = np.nonzero(ann_image < 0)[0]
    if len(bad):
        i = int(bad[0])
        raise InputError(f"image id {anns['image_id'][i]} is not in 'images'", path=path,
                         record=_where("annotations", i, ann_ids[i]), field="image_id")
    ann_cat = _lookup(cats["id"], anns["category_id"])
    bad = np.nonzero(ann_cat < 0)[0]
    if len(bad):
        i = int(bad[0])
        raise InputError(f"unknown category id {anns['category_id'][i]}", path=path,
                         record=_where("annotations", i, ann_ids[i]), field="category_id")
    iscrowd = _iscrowd(path, anns.get("iscrowd") or [a.get("iscrowd") for a in anns_list], ann_ids, warnings)
    bbox = _checked_boxes(path, anns["bbox"], images["width"][ann_image], images["height"][ann_image], ann_ids,
                          warnings)
    return CocoInstances(
        path=str(path), image_ids=[str(i) for i in image_ids.tolist()], raw_image_ids=image_ids,
        file_names=images["file_name"],
        width=images["width"], height=images["height"], category_ids=cats["id"].tolist(),
        category_names=list(cats["name"]), ann_image=ann_image.astype(np.int32), ann_cat=ann_cat.astype(np.int16),
        bbox=bbox, iscrowd=iscrowd, warnings=warnings,
    )


def _lookup(keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Index of each query in ``keys`` (unique), −1 where absent."""
    if len(keys) == 0:
        return np.full(len(queries), -1, dtype=np.int64)
    order = np.argsort(keys)  # unique keys: any sort order is the same
    sorted_keys = keys[order]
    pos = np.clip(np.searchsorted(sorted_keys, queries), 0, len(keys) - 1)
    found = sorted_keys[pos] == queries
    return np.where(found, order[pos], -1)


def _iscrowd(path: Path, values: list | tuple, ann_ids: np.ndarray, warnings: Counter) -> np.ndarray:
    """``values``: the iscrowd field of each annotation, None where it is missing."""
    values = list(values)
    missing = values.count(None)
    if missing:
        warnings["missing iscrowd read as 0"] += missing
        values = [0 if v is None else v for v in values]
    column = np.array(values)
    if len(values) and (column.dtype.kind not in "iub" or not np.isin(column, (0, 1)).all()):
        for i, v in enumerate(values):
            if v not in (0, 1) or isinstance(v, float):
                raise InputError(f"expected 0 or 1, got {v!r}", path=path,
                                 record=_where("annotations", i, ann_ids[i]), field="iscrowd")
    return column.astype(bool).reshape(len(values))


def _checked_boxes(path: Path, bbox: np.ndarray, width: np.ndarray, height: np.ndarray, ann_ids: np.ndarray,
                   warnings: Counter) -> np.ndarray:
    x, y, w, h = bbox.T
    bad = np.nonzero(~np.isfinite(bbox).all(axis=1) | (w < 0) | (h < 0))[0]
    if len(bad):
        i = int(bad[0])
        raise InputError(f"box {bbox[i].tolist()} has a negative or non-finite size", path=path,
                         record=_where("annotations", i, ann_ids[i]), field="bbox")
    excess = np.maximum.reduce([-x, -y, x + w - width, y + h - height])
    bad = np.nonzero(excess > BOX_TOLERANCE)[0]
    if len(bad):
        i = int(bad[0])
        raise InputError(
            f"box {bbox[i].tolist()} lies outside the {width[i]:g}x{height[i]:g} image", path=path,
            record=_where("annotations", i, ann_ids[i]), field="bbox")
    clipped = excess > 0
    if clipped.any():
        warnings["boxes clipped to the image border"] += int(clipped.sum())
        x0 = np.clip(x, 0, width)
        y0 = np.clip(y, 0, height)
        x1 = np.clip(x + w, 0, width)
        y1 = np.clip(y + h, 0, height)
        bbox = np.stack([x0, y0, x1 - x0, y1 - y0], axis=1)
    return np.ascontiguousarray(bbox, dtype=np.float64)


def _caption_row(number: int, row: dict) -> dict:
    """A dataset row as a captions annotation: ``image_id`` and ``caption`` as given, ``id`` the row number
    when the dataset has none (ids read as text are turned back into integers where they are digits)."""
    record = dict(row)
    record.setdefault("id", number)
    for name in ("id", "image_id"):
        value = record.get(name)
        if isinstance(value, str) and value.isdigit():
            record[name] = int(value)
    return record


def read_coco_captions(path: str | Path, instances: CocoInstances) -> CocoCaptions:
    """Parse and validate an official ``captions_*.json`` file against its instances file.

    ``path`` may also be a dataset source (:mod:`vlaudit.sources.rows`) with one caption per row: columns
    ``image_id``, ``caption`` and, optionally, ``id``."""
    path = Path(path)
    if is_dataset_source(path):
        records = [_caption_row(number, row) for number, row in dataset_rows(path)]
    else:
        records = _load(path, ("annotations",))["annotations"]
    warnings: Counter = Counter()
    cols = _columns(path, "annotations", records, _CAPTION_SPEC)
    ids = cols["id"]
    dup = _first_duplicate(ids)
    if dup is not None:
        raise InputError(f"duplicate caption id {ids[dup]}", path=path, record=_where("annotations", dup, ids[dup]),
                         field="id")
    image = _lookup(instances.raw_image_ids, cols["image_id"])
    bad = np.nonzero(image < 0)[0]
    if len(bad):
        i = int(bad[0])
        raise InputError(f"image id {cols['image_id'][i]} is not in the instances file {instances.path}",
                         path=path, record=_where("annotations", i, ids[i]), field="image_id")
    texts = cols["caption"]
    # one C-level pass in the common case (no empty caption); the list only when there is one
    has_empty = "" in texts or any(map(str.isspace, texts))
    empty = [k for k, t in enumerate(texts) if not t or t.isspace()] if has_empty else []
    if empty:
        warnings["empty captions dropped"] += len(empty)
        keep = np.ones(len(texts), dtype=bool)
        keep[empty] = False
        keep_idx = np.nonzero(keep)[0]
        ids, image, texts = ids[keep_idx], image[keep_idx], [texts[i] for i in keep_idx]
    return CocoCaptions(path=str(path), raw_ids=ids, image=image.astype(np.int32), texts=texts, warnings=warnings)
