"""Where the one-image caption suites' records come from: the release's JSON file, a JSONL file, or a dataset.

ARO, SugarCrepe, SugarCrepe++, BLA and VALSE publish one JSON file per piece (a list, or an object keyed by
id). Their Hugging Face re-uploads are read as users load them: ``hf-dataset:NAME[@SPLIT]``, a
``save_to_disk`` folder or a Parquet export (:mod:`vlaudit.sources.rows`, images written once into an
:class:`~vlaudit.sources.rows.ImageFolder`), or the JSONL the rows were made from. :func:`load_source` gives a
reader one parsed value: the JSON value for a ``.json`` file, else the list of row objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import iter_jsonl, read_json
from vlaudit.records import SuiteImage
from vlaudit.sources.rows import ImageFolder, dataset_rows, is_dataset_source
from vlaudit.sources.suites.common import image_path, shape_of

#: reader option shared by every reader that takes a dataset source
IMAGES_OPTION = ("images", "folder the images embedded in a dataset source are written to (a Hub dataset, a "
                 "save_to_disk folder or a Parquet export); without it only their names are derived")


def image_folder(images: ImageFolder | str | Path | None) -> ImageFolder:
    """``images`` as an :class:`ImageFolder` (None: names only, nothing written)."""
    return images if isinstance(images, ImageFolder) else ImageFolder(images)


def load_source(path: str | Path, *, images: ImageFolder | str | Path | None = None,
                image_field: str | None = None) -> tuple[Any, bool]:
    """``(value, is_rows)``: the parsed JSON of a ``.json`` file (``is_rows`` False), or the list of row
    objects of a JSONL file or a dataset source (``is_rows`` True, image columns as file names)."""
    text = str(path)
    if is_dataset_source(text):
        return [row for _, row in dataset_rows(text, images=image_folder(images), image_field=image_field)], True
    if Path(text).suffix.lower() == ".jsonl":
        return [row for _, row in iter_jsonl(text)], True
    return read_json(text), False


def row_label(is_rows: bool, index: int) -> str:
    """How a reader names a record in its errors: ``row N`` (1-based) for rows, ``item N`` (0-based, the
    official loaders' index) for a JSON list."""
    return f"row {index + 1}" if is_rows else f"item {index}"


def number(row: Mapping[str, Any], name: str, *, path: str | Path, record: str) -> float:
    """A finite number field (not a bool); anything else names file, record and field."""
    value = row.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InputError("missing or not a number" if value is None else f"expected a number, got {value!r}",
                         path=path, record=record, field=name)
    return float(value)


def crop_of(row: Mapping[str, Any], *, path: str | Path, record: str) -> tuple[float, float, float, float] | None:
    """ARO's crop ``(bbox_x, bbox_y, bbox_w, bbox_h)``, or the Hub re-upload's ``bbox`` struct ``{x, y, w, h}``;
    None when the row has neither (the image is used whole)."""
    if "bbox_x" in row:
        box = tuple(number(row, f"bbox_{part}", path=path, record=record) for part in "xywh")
    elif isinstance(row.get("bbox"), Mapping):
        box = tuple(number(row["bbox"], part, path=path, record=record) for part in "xywh")
    elif row.get("bbox") is None:
        return None
    else:
        raise InputError("expected an object {x, y, w, h}", path=path, record=record, field="bbox")
    x, y, w, h = box
    if w <= 0 or h <= 0:
        raise InputError(f"the crop has no area (w={w:g}, h={h:g})", path=path, record=record, field="bbox_w")
    return (x, y, w, h)


def suite_image(row: Mapping[str, Any], fields: tuple[str, ...], *, path: str | Path, record: str,
                crop: tuple[float, float, float, float] | None = None) -> SuiteImage:
    """The image named by the first of ``fields`` the row has (a relative file name), with ``crop``."""
    name = next((field for field in fields if field in row), fields[0])
    return SuiteImage(image_path(row.get(name), path=path, record=record, name=name), crop)


def looks_like(data: Any) -> str:
    """What a parsed file most likely is, named (for :func:`~vlaudit.sources.suites.common.refuse`): a sibling
    suite's layout when its fields show, else :func:`~vlaudit.sources.suites.common.shape_of`."""
    if isinstance(data, Mapping) and "annotations" in data:
        return "an object with 'annotations' (the original FOIL-COCO release; VALSE's piece is foil-it.json)"
    records = list(data.values()) if isinstance(data, Mapping) else data if isinstance(data, list) else []
    first = records[0] if records else None
    if isinstance(first, Mapping):
        keys = set(first)
        if isinstance(first.get("caption"), list):
            return "a Karpathy caption file (image, caption: [5 captions])"
        for name, fields in _KINDS:
            if fields <= keys:
                return name
        return f"records with keys {list(first)[:6]}"
    if isinstance(first, list) and len(first) == 4 and all(isinstance(v, str) for v in first):
        return "a list of 4-lists (COLA multi-object: [image1_url, caption1, image2_url, caption2])"
    return shape_of(data)


#: the sibling layouts :func:`looks_like` names, most specific first
_KINDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("a SugarCrepe++ file (caption, caption2, negative_caption)", frozenset({"caption2", "negative_caption"})),
    ("a SugarCrepe file (filename, caption, negative_caption)", frozenset({"caption", "negative_caption"})),
    ("a VALSE piece (caption, foil, mturk)", frozenset({"caption", "foil", "mturk"})),
    ("an ARO Order file", frozenset({"caption_options"})),
    ("an ARO Order file (Hub rows)", frozenset({"correct_caption", "hard_text_1"})),
    ("an ARO VG-Relation file", frozenset({"relation_name", "true_caption"})),
    ("an ARO VG-Attribution file", frozenset({"attributes", "true_caption"})),
    ("a BLA file (image_id, caption_group)", frozenset({"image_id", "caption_group"})),
    ("an SVO-Probes row (sentence, pos_image_id, neg_image_id)",
     frozenset({"sentence", "pos_image_id", "neg_image_id"})),
)
