"""Bring-your-own cycle input: a JSONL file of image–caption pairs with structured facts.

One row per caption (1-based line numbers in errors)::

    {"image_id": "kitchen-01", "file_name": "kitchen-01.jpg", "width": 640, "height": 480,
     "objects": [{"name": "dog", "box": [x, y, w, h]}, {"name": "chair", "box": [...], "iscrowd": false}],
     "caption_id": "c1", "caption": "a dog to the left of a chair",
     "mentions": ["dog", "chair"],
     "triples": [{"subject": "dog", "relation": "left of", "object": "chair"}]}

* ``image_id`` (string or integer) and ``caption`` are required; ``caption_id`` defaults to
  ``"<image_id>#<line>"``; ``file_name`` defaults to the image id.
* ``objects`` is the *complete* object annotation of the image (a name absent from it is absent from the
  image). Give it on at least one row of each image; rows of the same image that repeat it must agree.
  ``box`` is COCO [x, y, w, h] in pixels (needs ``width`` and ``height``); ``iscrowd`` defaults to false.
* ``mentions``: object names the caption asserts are present (family ``pairs-object``).
* ``triples``: relations the caption asserts, relation one of left of, right of, above, below, larger than,
  smaller than, judged from the boxes by the same rules as COCO (family ``pairs-relation``).
Names are compared in Unicode NFC, lower-cased and whitespace-normalised (:mod:`vlaudit.sources.names`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from vlaudit.errors import InputError
from vlaudit.files import iter_jsonl
from vlaudit.sources.names import norm_name
from vlaudit.sources.rows import local_file

# The relation vocabulary of the box rules (vlaudit.builders.cycles.rules.RELATIONS; a test keeps them equal).
RELATIONS = ("left of", "right of", "above", "below", "larger than", "smaller than")


@dataclass(frozen=True)
class PairObject:
    name: str
    box: tuple[float, float, float, float] | None
    iscrowd: bool


@dataclass
class PairImage:
    image_id: str
    file_name: str
    width: float | None
    height: float | None
    objects: tuple[PairObject, ...] | None


@dataclass(frozen=True)
class PairCaption:
    caption_id: str
    image_id: str
    text: str
    mentions: tuple[str, ...]
    triples: tuple[tuple[str, str, str], ...]


def _num(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _objects(path: Path, record: str, raw: object, width: object, height: object) -> tuple[PairObject, ...]:
    if not isinstance(raw, list):
        raise InputError("expected a list of objects", path=path, record=record, field="objects")
    out = []
    for k, obj in enumerate(raw):
        where = f"{record}, objects[{k}]"
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"].strip():
            raise InputError("each object needs a non-empty string 'name'", path=path, record=where, field="name")
        box = obj.get("box")
        if box is not None:
            if not (isinstance(box, list) and len(box) == 4 and all(_num(v) for v in box)):
                raise InputError(f"expected [x, y, w, h], got {box!r}", path=path, record=where, field="box")
            if not (_num(width) and _num(height) and width > 0 and height > 0):
                raise InputError("boxes need positive image 'width' and 'height'", path=path, record=record,
                                 field="width")
            x, y, w, h = (float(v) for v in box)
            if w < 0 or h < 0 or x < -1 or y < -1 or x + w > width + 1 or y + h > height + 1:
                raise InputError(f"box {box} lies outside the {width}x{height} image", path=path, record=where,
                                 field="box")
            box = (x, y, w, h)
        iscrowd = obj.get("iscrowd", False)
        if not isinstance(iscrowd, (bool, int)) or iscrowd not in (0, 1):
            raise InputError(f"expected true/false, got {iscrowd!r}", path=path, record=where, field="iscrowd")
        out.append(PairObject(norm_name(obj["name"]), box, bool(iscrowd)))
    return tuple(out)


def read_pairs_jsonl(path: str | Path) -> tuple[dict[str, PairImage], list[PairCaption]]:
    """Parse and validate a pairs JSONL file (format in the module docstring)."""
    path = local_file(path, reads="a pairs JSONL file")
    images: dict[str, PairImage] = {}
    captions: list[PairCaption] = []
    seen_captions: set[str] = set()
    for line, row in iter_jsonl(path):
        record = f"line {line}"
        image_id = row.get("image_id")
        if not isinstance(image_id, (str, int)) or isinstance(image_id, bool) or str(image_id) == "":
            raise InputError("missing or mistyped image id", path=path, record=record, field="image_id")
        image_id = str(image_id)
        if not isinstance(row.get("caption"), str) or not row["caption"].strip():
            raise InputError("missing or empty caption", path=path, record=record, field="caption")
        caption_id = str(row.get("caption_id", f"{image_id}#{line}"))
        if caption_id in seen_captions:
            raise InputError(f"duplicate caption id '{caption_id}'", path=path, record=record, field="caption_id")
        seen_captions.add(caption_id)
        objects = None
        if row.get("objects") is not None:
            objects = _objects(path, record, row["objects"], row.get("width"), row.get("height"))
        image = images.get(image_id)
        if image is None:
            images[image_id] = PairImage(image_id, str(row.get("file_name") or image_id),
                                         row.get("width"), row.get("height"), objects)
        elif objects is not None:
            if image.objects is not None and image.objects != objects:
                raise InputError(f"objects of image '{image_id}' differ from an earlier row", path=path,
                                 record=record, field="objects")
            image.objects, image.width, image.height = objects, row.get("width"), row.get("height")
        mentions = row.get("mentions", [])
        if not isinstance(mentions, list) or not all(isinstance(m, str) and m.strip() for m in mentions):
            raise InputError("expected a list of names", path=path, record=record, field="mentions")
        triples = []
        raw_triples = row.get("triples", [])
        if not isinstance(raw_triples, list):
            raise InputError("expected a list of triples", path=path, record=record, field="triples")
        for k, t in enumerate(raw_triples):
            if not isinstance(t, dict) or not all(isinstance(t.get(f), str) for f in ("subject", "relation", "object")):
                raise InputError("each triple needs string subject, relation, object", path=path,
                                 record=f"{record}, triples[{k}]", field="triples")
            relation = norm_name(t["relation"])
            if relation not in RELATIONS:
                raise InputError(f"unknown relation '{t['relation']}'; expected one of {list(RELATIONS)}",
                                 path=path, record=f"{record}, triples[{k}]", field="relation")
            triples.append((norm_name(t["subject"]), relation, norm_name(t["object"])))
        captions.append(PairCaption(caption_id, image_id, " ".join(row["caption"].split()),
                                    tuple(sorted({norm_name(m) for m in mentions})), tuple(triples)))
    missing = [i for i, image in images.items() if image.objects is None]
    if missing:
        raise InputError(f"image '{missing[0]}' has no 'objects' on any row", path=path, record=f"image {missing[0]}",
                         field="objects")
    if not captions:
        raise InputError("no rows in file", path=path)
    return images, captions
