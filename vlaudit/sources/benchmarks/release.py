"""What every benchmark reader shares: the release's rows, typed field access, option answers, the result.

Rows come from :func:`release_rows`: a JSONL file (numbered by line), a JSON file (a list of objects, an
object of objects keyed by id, or SEED-Bench's ``{"questions": [...]}``; numbered by entry; JSON lines in a
``.json`` file, as POPE ships them, are read as JSONL), an
OpenCompass/VLMEvalKit TSV (numbered by data row; a base64 ``image`` cell is decoded and written once, named by
content; a short number in it refers to the row of that ``index``, earlier or later, as VLMEvalKit stores
repeated images), or a
dataset source (:func:`vlaudit.sources.rows.dataset_rows`: Parquet, ``save_to_disk`` folders, ``hf-dataset:``;
Image columns become file names in the images folder).
"""

from __future__ import annotations

import ast
import base64
import binascii
import csv
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import iter_jsonl, read_json
from vlaudit.sources.items import BenchmarkItem, option_letters, parse_yes_no
from vlaudit.sources.rows import (
    HF_PREFIX,
    ImageFolder,
    dataset_rows,
    image_suffix,
    is_dataset_source,
    parse_hf_spec,
    source_stem,
)

Rows = Iterator[tuple[int, dict[str, Any]]]
_MISSING_TEXT = {"", "nan"}  # pandas writes an empty cell back as "nan" (the peers read it as absent)
_LETTER = re.compile(r"\(?([A-Z])\)?\.?")
_DIGITS = re.compile(r"[0-9]+")
_COLUMN_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: the cell texts pandas' ``read_csv`` (VLMEvalKit's TSV loader) reads as missing, beyond the empty cell
PANDAS_NA_TEXT = frozenset({"#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                            "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


@dataclass
class BenchmarkRead:
    """The items a reader kept and the rows it excluded (``{"record", "reason"}``), with its notes."""

    benchmark: str
    items: list[BenchmarkItem]
    excluded: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: what changes how the items read against the release (options relabelled, CircularEval rotations that
    #: are missing or unread): printed as ``warning:``, where a note is only said
    warnings: list[str] = field(default_factory=list)

    def categories(self) -> dict[str, int]:
        """Kept items per ``category`` (``(none)`` for items without one), most frequent first."""
        return dict(Counter(item.category or "(none)" for item in self.items).most_common())

    def excluded_by_reason(self) -> dict[str, int]:
        """Excluded rows per reason, most frequent first."""
        return dict(Counter(entry["reason"] for entry in self.excluded).most_common())


class Row:
    """Typed access to one release row; every failure is one :class:`InputError` naming source, row and field."""

    def __init__(self, raw: object, source: str, record: str) -> None:
        if not isinstance(raw, Mapping):
            raise InputError("each row must be an object", path=source, record=record)
        self.raw, self.source, self.record = raw, source, record

    def error(self, message: str, name: str | None = None) -> InputError:
        return InputError(message, path=self.source, record=self.record, field=name)

    def has(self, name: str) -> bool:
        return not _missing(self.raw.get(name))

    def text(self, name: str, *, required: bool = True) -> str | None:
        """A non-empty string (an integer is taken as its digits, as ids are); None for an absent optional."""
        value = self.raw.get(name)
        if _missing(value):
            if required:
                raise self.error("missing required field", name)
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise self.error(f"expected text, got {type(value).__name__} {_short(value)}", name)
        return value.strip()

    def required(self, name: str) -> str:
        """:meth:`text` of a required field."""
        value = self.text(name)
        assert value is not None  # text() raised for a missing required field
        return value

    def first(self, names: Sequence[str], *, required: bool = True) -> str | None:
        """The first of ``names`` present (a release spells a column several ways); errors name the first."""
        for name in names:
            if self.has(name):
                return self.text(name)
        if required:
            raise self.error("missing required field", names[0])
        return None

    def image(self, name: str, *, required: bool = True) -> str | None:
        """An image file name relative to the images folder (a dataset's images are named already)."""
        value = self.raw.get(name)
        if isinstance(value, list):  # SEED-Bench's Hub release holds a list of images
            value = next((v for v in value if not _missing(v)), None)
        if _missing(value):
            if required:
                raise self.error("missing required field", name)
            return None
        if not isinstance(value, str):
            raise self.error(f"expected an image file name, got {type(value).__name__} {_short(value)}", name)
        return self.relative_path(value, name)

    def relative_path(self, value: str, name: str) -> str:
        """``value`` as a path inside the images folder (a leading ``./`` dropped); one leaving it is refused."""
        cleaned = value.strip().replace("\\", "/")
        while cleaned.startswith("./"):
            cleaned = cleaned[2:]
        parts = PurePosixPath(cleaned)
        if not cleaned or parts.is_absolute() or ".." in parts.parts or re.match(r"^[A-Za-z]:", cleaned):
            raise self.error(f"image path {value!r:.60} leaves the images folder", name)
        return cleaned

    def yes_no(self, name: str) -> str:
        """A yes/no answer (yes/no, true/false, 1/0) as ``yes``/``no``."""
        answer = parse_yes_no(self.raw.get(name), path=self.source, record=self.record, field=name)
        if answer is None:
            raise self.error("missing required field", name)
        return answer

    def option_list(self, name: str) -> tuple[str, ...]:
        """A list of option texts as stored: a list, or its Python text (MMMU stores ``"['a', 'b']"``)."""
        value = self.raw.get(name)
        if isinstance(value, str):
            try:
                value = ast.literal_eval(value.strip())
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
                raise self.error(f"options are not a list: {_short(self.raw.get(name))}", name) from exc
        if value is None:
            raise self.error("missing required field", name)
        return self.checked_options(value, name)

    def checked_options(self, values: object, name: str) -> tuple[str, ...]:
        """2 to 26 option texts, each a string."""
        if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
            raise self.error(f"options must be a list of texts, got {_short(values)}", name)
        if not 2 <= len(values) <= 26:
            raise self.error(f"a multiple-choice item needs 2 to 26 options, got {len(values)}", name)
        return tuple(str(v).strip() for v in values)

    def column_options(self) -> tuple[tuple[str, ...], dict[str, str]]:
        """Options stored one per column ``A`` … ``Z`` as VLMEvalKit reads them (``build_choices``): every
        letter column with a value, in order, an empty one skipped (``A, B, D``). Returns the options, lettered
        A, B, … here, and each column's letter → its letter here (D → C in that example)."""
        found = [letter for letter in _COLUMN_LETTERS if self.has(letter)]
        options = self.checked_options([self.required(letter) for letter in found], found[0] if found else "A")
        return options, dict(zip(found, option_letters(len(found)), strict=True))

    def gold_letter(self, name: str, options: Sequence[str], *, unknown: Sequence[str] = (),
                    columns: Mapping[str, str] | None = None) -> str | None:
        """The gold option's letter from a letter (``B``, ``(B)``, ``B.``) or an option's exact text; None when
        the release hides the answer (absent, or one of ``unknown``). Anything else is an error. ``columns``:
        the option columns' letters → their letters here (:meth:`column_options`)."""
        value = self.raw.get(name)
        if _missing(value):
            return None
        if not isinstance(value, str):
            raise self.error(f"expected an option letter, got {type(value).__name__} {_short(value)}", name)
        text = value.strip()
        if text in unknown:
            return None
        letters = option_letters(len(options))
        match = _LETTER.fullmatch(text)
        if match and columns is not None:
            if match.group(1) in columns:
                return columns[match.group(1)]
        elif match and match.group(1) in letters:
            return match.group(1)
        same = [letter for letter, option in zip(letters, options, strict=True) if option == text]
        if len(same) == 1:
            return same[0]
        shown = ", ".join(columns if columns is not None else letters)
        raise self.error(f"answer {text!r:.40} is none of the options ({shown} or their texts)", name)

    def index_letter(self, name: str, options: Sequence[str]) -> str:
        """The gold option's letter from a 0-based index (an integer or its digits, as ScienceQA and AI2D)."""
        value = self.raw.get(name)
        if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
            value = int(value.strip())
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"expected the gold option's index, got {_short(value)}", name)
        if not 0 <= value < len(options):
            raise self.error(f"answer index {value} is none of the {len(options)} options", name)
        return option_letters(len(options))[value]


def _missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in _MISSING_TEXT


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def split_name(source: str | Path) -> str:
    """The ITEMS ``split`` of a source: the named dataset split, else the file or folder stem."""
    text = str(source)
    if text.startswith(HF_PREFIX):
        spec = parse_hf_spec(text)
        if spec.split:
            return spec.split
    return source_stem(source)


def release_rows(source: str | Path, images: ImageFolder,
                 wanted: Callable[[dict[str, Any]], bool] | None = None) -> tuple[Rows, str]:
    """The rows of a release (see the module docstring) and the noun that numbers them; a dataset row that
    ``wanted`` refuses (the reader will exclude it) gets no image written."""
    if is_dataset_source(source):
        return dataset_rows(source, images=images, wanted=wanted), "row"
    path = Path(source)
    if not path.exists():
        raise InputError("file not found", path=path)
    if not path.is_file():
        raise InputError("not a file", path=path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return iter_jsonl(path), "line"
    if suffix == ".json":
        if _json_lines_inside(path):  # POPE's coco_pope_{category}.json are JSON lines
            return iter_jsonl(path), "line"
        return _json_rows(path), "entry"
    if suffix == ".tsv":
        return _tsv_rows(path, images), "row"
    raise InputError(f"a benchmark release is read from JSON, JSONL, TSV or Parquet (or a dataset folder), not "
                     f"{suffix or 'a file without a suffix'}", path=path)


def release_records(source: str | Path, images: ImageFolder | None = None,
                    wanted: Callable[[dict[str, Any]], bool] | None = None) -> Iterator[tuple[int, Row]]:
    """:func:`release_rows` as ``(number, Row)``: each row's :class:`Row` names the source and its record
    (``line 3``, ``entry 7``, ``row 12``); the source is opened now, each row checked as it is reached.
    ``images`` None: a release whose images are paths (an empty :class:`ImageFolder`)."""
    rows, noun = release_rows(source, images if images is not None else ImageFolder(None), wanted)
    name = str(source)
    return ((number, Row(raw, name, f"{noun} {number}")) for number, raw in rows)


def items_per_row(source: str | Path, images: ImageFolder | None,
                  item_of: Callable[[int, Row, str], BenchmarkItem]) -> list[BenchmarkItem]:
    """One item per release row, ``item_of(number, row, split)`` (:func:`release_records`, :func:`split_name`),
    their ids checked unique (:func:`unique_ids`)."""
    rows = release_records(source, images)
    split = split_name(source)
    items, records = [], []
    for number, row in rows:
        items.append(item_of(number, row, split))
        records.append(row.record)
    return unique_ids(items, records, str(source))


def _json_lines_inside(path: Path) -> bool:
    """Whether a ``.json`` file holds JSON lines: its first line is a whole row object and another follows."""
    with path.open("rb") as handle:
        lines = (line for line in handle if line.strip())
        first, second = next(lines, b""), next(lines, None)
    try:
        value = json.loads(first)
    except ValueError:
        return False
    # one line holding entries (SEED-Bench's {"questions": [...]}, ScienceQA's id → problem) is not a row
    is_row = isinstance(value, dict) and not any(
        isinstance(v, dict) or (isinstance(v, list) and any(isinstance(e, dict) for e in v)) for v in value.values())
    return isinstance(value, dict) and (second is not None or is_row)


def _json_rows(path: Path) -> Rows:
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("questions"), list):
        data = data["questions"]  # SEED-Bench's SEED-Bench.json
    if isinstance(data, dict):
        entries = []
        for key, value in data.items():
            if isinstance(value, dict):
                value = {"id": key, **value} if "id" not in value else value
            entries.append(value)
        data = entries
    if not isinstance(data, list):
        raise InputError(f"expected a JSON list or object of entries, got {type(data).__name__}", path=path)
    for number, entry in enumerate(data, start=1):
        if not isinstance(entry, dict):
            raise InputError("each entry must be an object", path=path, record=f"entry {number}")
        yield number, entry


def _tsv_rows(path: Path, images: ImageFolder) -> Rows:
    """The TSV's rows, each ``image`` cell a file name. Two passes, as VLMEvalKit maps every row's ``index`` to
    its image before it reads one row: the first decodes each base64 cell (written once, named by content),
    the second resolves a short number in ``image`` to that row's image, before or after it."""
    names: list[str | None] = []
    by_index: dict[str, str] = {}
    for number, row in _tsv_cells(path):
        cell = row.get("image")
        name = None
        if cell is not None and not _is_reference(str(cell)):
            name = _tsv_image(str(cell), images, path, f"row {number}")
            if row.get("index") is not None:
                by_index[str(row["index"]).strip()] = name
        names.append(name)
    for (number, row), name in zip(_tsv_cells(path), names, strict=True):
        cell = row.get("image")
        if cell is not None:
            reference = str(cell).strip()
            if name is None and reference not in by_index:
                raise InputError(f"image refers to row index {reference}, which no row with an image has",
                                 path=path, record=f"row {number}", field="image")
            row["image"] = name if name is not None else by_index[reference]
        yield number, row


def _tsv_cells(path: Path) -> Rows:
    csv.field_size_limit(min(sys.maxsize, 2 ** 31 - 1))  # a base64 image cell is megabytes long
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle, delimiter="\t")
            for number, raw in enumerate(reader, start=1):
                if None in raw:
                    raise InputError("more cells than header columns", path=path, record=f"row {number}")
                yield number, {k: (None if v is None or v == "" else v) for k, v in raw.items()}
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=path) from exc
    except csv.Error as exc:
        raise InputError(f"malformed TSV: {exc}", path=path) from exc


def _is_reference(cell: str) -> bool:
    """A short number in an ``image`` cell: the index of the row whose image this row shares (VLMEvalKit)."""
    cell = cell.strip()
    return len(cell) < 64 and _DIGITS.fullmatch(cell) is not None


def _tsv_image(cell: str, images: ImageFolder, path: Path, record: str) -> str:
    """A base64 image cell → its content-addressed file name."""
    cell = cell.strip()
    try:
        data = base64.b64decode(cell, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InputError("image is not base64", path=path, record=record, field="image") from exc
    if image_suffix(data, None) == ".img":
        raise InputError("image is not a PNG, JPEG, GIF, BMP or WebP file", path=path, record=record, field="image")
    name = images.name_for({"bytes": data, "path": None}, source=str(path), record=record, field="image")
    assert name is not None  # bytes were given
    return name


def unique_ids(items: list[BenchmarkItem], records: list[str], source: str) -> list[BenchmarkItem]:
    """``items`` when their ids are unique; else the first repeat is an error naming both rows."""
    seen: dict[str, str] = {}
    for item, record in zip(items, records, strict=True):
        if item.item_id in seen:
            raise InputError(f"item id {item.item_id!r} repeats {seen[item.item_id]}", path=source, record=record)
        seen[item.item_id] = record
    return items
