"""The benchmark ITEMS table: what the scoring runner reads and the data builders write.

Schema (JSONL or Parquet; one row per yes/no query):

============  =========  ===================================================================================
column        required   meaning
============  =========  ===================================================================================
item_id       yes        unique id of the query (string)
image         yes        image path relative to ``--images``; empty/null for a text-only item
question      yes        the statement/question placed in the fixed prompt template
label         no         gold answer: yes/no (also accepted: true/false, 1/0); null when unknown
dataset       no         benchmark name (e.g. ``vsr-random``); defaults to the file stem
split         no         split name; the mismatch context permutes images within a split
group_id      no         same-image true/false relation group (VCA §13)
statement     no         ``true`` or ``false`` within a group (exactly one true per group)
relation      no         relation phrase (e.g. ``left of``)
subject       no         subject object name
object        no         object name
boxes         no         ``{"subject": [x, y, w, h], "object": [x, y, w, h]}`` in pixels (COCO xywh)
options       no         multiple-choice items: the option texts in order, lettered A, B, C, ...; the label
                         is then the gold option's letter
hint          no         multiple-choice items: the benchmark's hint/context text, shown before the question
category      no         the benchmark's own category (POPE's random/popular/adversarial, MMStar's category)
cluster       no         the resampling unit's id: items sharing it are resampled and permuted together
                         (a factorial stem, an edit, an image; :mod:`vlaudit.stats.clusters`)
cluster_unit  no         what a cluster is (``stem``, ``edit``, ``image``); without a cluster, the item
============  =========  ===================================================================================

A yes/no item has no ``options``; a multiple-choice item has two or more, and its label (when known) must be
one of their letters. ``options``, ``hint``, ``category`` and the cluster are written only when set, so a
yes/no ITEMS file without clusters has the columns above ``options`` and nothing more.

Any other column is carried along in :attr:`BenchmarkItem.extra`. One of them has a meaning: ``images``, the
item's images in order when it has several (MMMU's ``image_1`` … ``image_7``; ``image`` is then the first),
which every context shows in order (:func:`item_images`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import read_unique_records, write_table
from vlaudit.results.columns import ITEMS

#: the ITEMS columns in the order written (:data:`vlaudit.results.columns.ITEMS`)
ITEM_COLUMNS = ITEMS.names
_YES = {"yes", "true", "1", "y", "t"}
_NO = {"no", "false", "0", "n", "f"}


def parse_yes_no(value: object, *, path: str | Path | None = None, record: object = None,
                 field: str = "label") -> str | None:
    """Normalise a yes/no label (yes/no, true/false, 1/0, booleans) to ``"yes"``/``"no"``; None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and value in (0, 1):
        return "yes" if value == 1 else "no"
    text = str(value).strip().lower()
    if text in _YES:
        return "yes"
    if text in _NO:
        return "no"
    raise InputError(f"unparsable label {value!r} (expected yes/no, true/false or 1/0)", path=path,
                     record=record, field=field)


@dataclass(frozen=True)
class BenchmarkItem:
    """One yes/no query about one image (or none, for a text-only item). See the module docstring."""

    item_id: str
    image: str | None
    question: str
    label: str | None = None
    dataset: str | None = None
    split: str | None = None
    group_id: str | None = None
    statement: str | None = None
    relation: str | None = None
    subject: str | None = None
    object: str | None = None
    boxes: Mapping[str, list[float]] | None = None
    options: tuple[str, ...] | None = None
    hint: str | None = None
    category: str | None = None
    cluster: str | None = None
    cluster_unit: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def letters(self) -> tuple[str, ...]:
        """The option letters of a multiple-choice item (A, B, ...); empty for a yes/no item."""
        return option_letters(len(self.options or ()))

    @property
    def images(self) -> tuple[str, ...]:
        """Every image of the item in order: ``extra["images"]`` when it lists several, else ``image`` alone
        (empty for a text-only item)."""
        return item_images(self)

    def to_row(self) -> dict[str, Any]:
        """A flat row for the ITEMS table (extra columns after the schema's; unset optional MCQ fields omitted)."""
        row = asdict(self)
        extra = row.pop("extra")
        for name in _OPTIONAL_WRITTEN:
            if row[name] is None:
                del row[name]
        if row.get("options") is not None:
            row["options"] = list(row["options"])
        return {**row, **extra}


def item_images(item: BenchmarkItem) -> tuple[str, ...]:
    """The image paths of ``item`` in order (see :attr:`BenchmarkItem.images`)."""
    if item.image is None:
        return ()
    listed: Any = item.extra.get("images")
    values = listed.tolist() if hasattr(listed, "tolist") else listed  # a numpy array from a Parquet row
    if isinstance(values, (list, tuple)) and len(values) > 1 and all(isinstance(v, str) and v for v in values):
        return tuple(values)
    return (item.image,)


#: the ITEMS columns written only when set (multiple-choice and category fields)
_OPTIONAL_WRITTEN = ("options", "hint", "category", "cluster", "cluster_unit")


def option_letters(k: int) -> tuple[str, ...]:
    """The first ``k`` option letters, ``A`` .. (at most 26)."""
    if not 0 <= k <= 26:
        raise ValueError(f"at most 26 options are lettered, got {k}")
    return tuple(chr(ord("A") + i) for i in range(k))


def _checked_options(row: Mapping[str, Any], *, path: str | Path | None,
                     record: object) -> tuple[tuple[str, ...] | None, str | None]:
    """``(options, label letter)`` of a multiple-choice row, ``(None, None)`` for a yes/no row.

    The label must be the letter of one of the options (or null): an answer outside the options is an error,
    never a guess."""
    raw = row.get("options")
    if raw is None:
        return None, None
    values = raw.tolist() if hasattr(raw, "tolist") else raw
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise InputError(f"options must be a list of strings, got {raw!r:.60}", path=path, record=record,
                         field="options")
    if not 2 <= len(values) <= 26:
        raise InputError(f"a multiple-choice item needs 2 to 26 options, got {len(values)}", path=path,
                         record=record, field="options")
    letters = option_letters(len(values))
    label = row.get("label")
    if label is None or (isinstance(label, str) and label.strip() == ""):
        return tuple(values), None
    letter = str(label).strip().upper()
    if letter not in letters:
        raise InputError(f"answer {label!r} is not one of the options' letters {', '.join(letters)}", path=path,
                         record=record, field="label")
    return tuple(values), letter


def _checked_boxes(boxes: object, *, path: str | Path | None, record: object) -> Mapping | None:
    """``{name: [x, y, w, h]}`` with finite numbers and non-negative sizes, else :class:`InputError`."""
    if boxes is None:
        return None
    if not isinstance(boxes, Mapping):
        raise InputError("boxes must be an object {name: [x, y, w, h]}", path=path, record=record, field="boxes")
    for name, box in boxes.items():
        if box is None:  # Parquet gives every row every box key; a missing box is null
            continue
        values = box.tolist() if hasattr(box, "tolist") else box  # a numpy array from a DataFrame row
        if not (isinstance(values, (list, tuple)) and len(values) == 4
                and all(isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
                        for v in values)):
            raise InputError(f"box '{name}' must be [x, y, w, h] of finite numbers, got {box!r:.60}", path=path,
                             record=record, field="boxes")
        if values[2] < 0 or values[3] < 0:
            raise InputError(f"box '{name}' has a negative width or height: {list(values)}", path=path,
                             record=record, field="boxes")
    return boxes


def item_from_row(row: Mapping[str, Any], *, path: str | Path | None = None, record: object = None,
                  default_dataset: str | None = None) -> BenchmarkItem:
    """Validate one ITEMS row (required fields, label, statement) and build a :class:`BenchmarkItem`."""
    for name in ("item_id", "question"):
        if row.get(name) is None or str(row.get(name)).strip() == "":
            raise InputError("missing required field", path=path, record=record, field=name)
    if "image" not in row:
        raise InputError("missing required field (use null for a text-only item)", path=path, record=record,
                         field="image")
    statement = row.get("statement")
    if statement is not None:
        answer = parse_yes_no(statement, path=path, record=record, field="statement")
        # an empty statement is a missing one, as for labels (it used to raise a KeyError)
        statement = None if answer is None else {"yes": "true", "no": "false"}[answer]
    if isinstance(row.get("image"), float) and math.isnan(row["image"]):  # pandas writes a missing image as NaN
        row = {**row, "image": None}
    for name in ("question", "image"):
        # a number would be scored as its Python text ("3.5"): not what the row means
        if row.get(name) is not None and not isinstance(row[name], str):
            raise InputError(f"expected a string, got {type(row[name]).__name__} {row[name]!r:.40}", path=path,
                             record=record, field=name)
    boxes = _checked_boxes(row.get("boxes"), path=path, record=record)
    options, letter = _checked_options(row, path=path, record=record)
    image = row.get("image")
    return BenchmarkItem(
        item_id=str(row["item_id"]),
        image=None if image in (None, "") else str(image),
        question=str(row["question"]),
        label=letter if options is not None else parse_yes_no(row.get("label"), path=path, record=record),
        dataset=str(row.get("dataset") or default_dataset) if (row.get("dataset") or default_dataset) else None,
        split=None if row.get("split") is None else str(row["split"]),
        group_id=None if row.get("group_id") is None else str(row["group_id"]),
        statement=statement,
        relation=row.get("relation"),
        subject=row.get("subject"),
        object=row.get("object"),
        boxes=boxes,
        options=options,
        hint=None if row.get("hint") in (None, "") else str(row["hint"]),
        category=None if row.get("category") in (None, "") else str(row["category"]),
        cluster=None if row.get("cluster") in (None, "") else str(row["cluster"]),
        cluster_unit=None if row.get("cluster_unit") in (None, "") else str(row["cluster_unit"]),
        extra={k: v for k, v in row.items() if k not in ITEM_COLUMNS},
    )


def with_clusters(items: Iterable[BenchmarkItem], unit: str, key: Callable[[BenchmarkItem], object]
                  ) -> list[BenchmarkItem]:
    """The items with their resampling unit declared: ``cluster`` = ``key(item)`` (an item whose key is None
    stays its own cluster), ``cluster_unit`` = ``unit``."""
    out = []
    for item in items:
        value = key(item)
        out.append(item if value is None else replace(item, cluster=str(value), cluster_unit=unit))
    return out


def image_clusters(items: Iterable[BenchmarkItem]) -> list[BenchmarkItem]:
    """Items clustered by their image file (the unit of benchmarks that ask several questions of one image:
    VSR, What's Up, POPE, MME); a text-only item stays its own cluster."""
    return with_clusters(items, "image", lambda item: item.image)


def read_items(path: str | Path) -> list[BenchmarkItem]:
    """Read and validate an ITEMS table; a repeated ``item_id`` is an error."""
    path = Path(path)
    return read_unique_records(
        path, lambda row, record: item_from_row(row, path=path, record=record, default_dataset=path.stem),
        id_field="item_id", noun="items",
    )


#: the files an ITEMS table is written as: its options and boxes are lists and objects, which CSV cannot hold
ITEMS_SUFFIXES = (".jsonl", ".parquet")


def check_items_target(path: str | Path, *, field: str = "--out") -> None:
    """Refuse (one line, before any work) an ITEMS file name that is neither JSONL nor Parquet."""
    if Path(path).suffix.lower() not in ITEMS_SUFFIXES:
        raise InputError(f"an ITEMS table is written as .jsonl or .parquet (its options and boxes are lists, "
                         f"which {Path(path).suffix or 'a file without a suffix'} cannot hold); give "
                         f"{Path(path).with_suffix('.jsonl').name}", path=path, field=field)


def write_items(path: str | Path, items: Iterable[BenchmarkItem]) -> Path:
    """Write an ITEMS table (JSONL or Parquet by suffix), atomically."""
    check_items_target(path)
    return write_table(path, [item.to_row() for item in items])
