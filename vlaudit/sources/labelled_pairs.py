"""Labelled pair tables for ``vlaudit cycles audit-pairs``: one reader per benchmark format, chosen by content.

Formats (``fmt``; ``auto`` detects them):

* ``table`` — JSONL / CSV / Parquet rows with ``image_id``, ``label`` (1/0, true/false) and ``caption_id`` or,
  without ids, the caption text in ``caption`` or ``text``;
* ``sugarcrepe`` — SugarCrepe JSON (:mod:`vlaudit.sources.sugarcrepe`);
* ``whatsup-controlled`` — What's Up Controlled-A/B JSON: option 0 is the image's positive, the others its
  negatives (:func:`vlaudit.sources.whatsup.read_whatsup_controlled`);
* ``whatsup-spatial`` — What's Up COCO-Spatial ``[image_id, true, false]`` lists
  (:func:`vlaudit.sources.whatsup.read_whatsup_spatial`);
* ``cycles`` — a cycles file: the matched pairs as positives, the swaps as negatives (an exact-cycle set).

A compositionality suite's file (COLA multi-object 4-lists, VL-CheckList ``[path, {POS, NEG}]``) is refused by
the suite's name (they are read by :mod:`vlaudit.sources.suites`); a list of lists is What's Up only as 3-lists.

Captions without ids are keyed by their text, so the same sentence written for two images is one caption.
"""

from __future__ import annotations

from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.files import read_json, read_records
from vlaudit.records import LabelledPair
from vlaudit.sources.cycle_tables import _id, read_cycles
from vlaudit.sources.rows import dataset_rows, is_dataset_source
from vlaudit.sources.sugarcrepe import is_sugarcrepe, read_sugarcrepe
from vlaudit.sources.suites.cola import looks_like_cola
from vlaudit.sources.suites.common import shape_of
from vlaudit.sources.suites.vl_checklist import looks_like_vl_checklist
from vlaudit.sources.whatsup import read_whatsup_controlled, read_whatsup_spatial, repeated_entries

FORMATS = ("auto", "table", "sugarcrepe", "whatsup-controlled", "whatsup-spatial", "cycles")
_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f"}


def detect_format(path: str | Path) -> str:
    """The format of ``path`` from its content (JSON shapes) or its first row (cycles vs. pair table)."""
    path = Path(path)
    if is_dataset_source(path):
        columns = set(next(dataset_rows(path))[1])
        for fmt, needed in _DATASET_COLUMNS:
            if needed <= columns:
                return fmt
        return "table"
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.suffix.lower() == ".json":
        data = read_json(path)
        if is_sugarcrepe(data):
            return "sugarcrepe"
        if isinstance(data, list) and data and isinstance(data[0], dict) and "caption_options" in data[0]:
            return "whatsup-controlled"
        for looks_like, title, name in _SUITE_LOOKALIKES:
            if looks_like(data):
                raise InputError(f"this looks like a {title} file ({shape_of(data)}), not a pair table: read it "
                                 f"as the compositionality suite '{name}'", path=path)
        if isinstance(data, list) and data and isinstance(data[0], list):
            if len(data[0]) == 3:
                return "whatsup-spatial"
            raise InputError(f"unknown JSON pair format: {shape_of(data)}; What's Up COCO-Spatial is a list of "
                             "[image_id, true_caption, false_caption] 3-lists", path=path)
        raise InputError("unknown JSON pair format: expected SugarCrepe or What's Up; for your own pairs use a "
                         "JSONL/CSV/Parquet table with image_id, caption_id or caption, label", path=path)
    rows = read_records(path)
    if rows and {"image_1", "caption_1", "image_2", "caption_2"} <= set(rows[0]):
        return "cycles"
    return "table"


# compositionality suite files that a list-of-lists test would take for What's Up COCO-Spatial
_SUITE_LOOKALIKES = ((looks_like_cola, "COLA multi-object", "cola-multi-object"),
                     (looks_like_vl_checklist, "VL-CheckList", "vl-checklist"))

# the columns that tell a dataset's format (a dataset row per JSON entry); anything else is a pair table
_DATASET_COLUMNS = (("sugarcrepe", {"caption", "negative_caption"}), ("whatsup-controlled", {"caption_options"}),
                    ("whatsup-spatial", {"true_caption", "false_caption"}))


def _label(value: object, path: Path, index: int) -> int:
    text = str(value).strip().lower()
    if isinstance(value, bool):
        return int(value)
    if text in _TRUE:
        return 1
    if text in _FALSE:
        return 0
    raise InputError(f"label {value!r} is not 1/0 or true/false", path=path, record=f"row {index}", field="label")


def read_pair_table(path: str | Path) -> list[LabelledPair]:
    """The ``table`` format (see the module docstring)."""
    path = Path(path)
    pairs = []
    if is_dataset_source(path):
        rows = [row for _, row in dataset_rows(path, image_field="image_id")]
        for index, row in enumerate(rows, start=1):
            for name in ("image_id", "label"):
                if row.get(name) is None:
                    raise InputError("missing required field", path=path, record=f"row {index}", field=name)
    else:
        rows = read_records(path, required=("image_id", "label"))
    for index, row in enumerate(rows, start=1):
        text = row.get("caption", row.get("text"))
        key = row.get("caption_id")
        if key is None and not isinstance(text, str):
            raise InputError("needs caption_id or the caption text (caption / text)", path=path,
                             record=f"row {index}", field="caption_id")
        pairs.append(LabelledPair(_id(row["image_id"]), _id(key) if key is not None else str(text),
                                  _label(row["label"], path, index), text if isinstance(text, str) else None))
    if not pairs:
        raise InputError("no rows", path=path)
    return pairs


def read_labelled_pairs(path: str | Path, fmt: str = "auto", *, warnings: list[str] | None = None
                        ) -> tuple[str, list[LabelledPair]]:
    """(format, pairs) of ``path`` in ``fmt`` (one of :data:`FORMATS`); ``path`` may be a dataset source
    (:mod:`vlaudit.sources.rows`, images named by content). One-line warnings are appended to ``warnings``."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}", field="--format")
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt == "sugarcrepe":
        return fmt, read_sugarcrepe(path, warnings=warnings if warnings is not None else [])
    if fmt == "whatsup-controlled":
        controlled = read_whatsup_controlled(path)
        if warnings is not None:
            warnings.extend(f"{path}: {line}" for line in repeated_entries(controlled))
        return fmt, [LabelledPair(row.image_path, option, int(k == 0), option)
                     for row in controlled for k, option in enumerate(row.caption_options)]
    if fmt == "whatsup-spatial":
        spatial = read_whatsup_spatial(path)
        if warnings is not None:
            warnings.extend(f"{path}: {line}" for line in repeated_entries(spatial))
        return fmt, [pair for row in spatial for pair in (
            LabelledPair(str(row.image_id), row.true_caption, 1, row.true_caption),
            LabelledPair(str(row.image_id), row.false_caption, 0, row.false_caption))]
    if fmt == "cycles":
        pairs = []
        for cycle in read_cycles(path):
            texts = {cycle.caption_1: cycle.extra.get("text_1"), cycle.caption_2: cycle.extra.get("text_2")}
            pairs += [LabelledPair(u, v, label, texts[v] if isinstance(texts[v], str) else None)
                      for u, v, label in cycle.entries()]
        return fmt, pairs
    return fmt, read_pair_table(path)
