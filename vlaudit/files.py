"""Reading and writing the tables passed between stages (JSONL, CSV, Parquet) — atomically.

Every writer goes through :func:`atomic_write`: the data is written to a temporary file in the target's
folder, flushed to disk and renamed over the target, so a killed process never leaves a half-written file.
Every reader reports bad input as :class:`~vlaudit.errors.InputError` naming the file, the 1-based row and
the field. Id columns (:func:`is_id_column`) are read as strings in every format, so a zero-padded ``0001``
stays ``0001`` and an integer id ``139`` becomes ``"139"`` whether the file is CSV, JSONL or Parquet.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from vlaudit.errors import InputError
from vlaudit.results.manifest import MANIFEST_FILE, RunManifest
from vlaudit.results.versioned import VersionedResult

# mkstemp creates files 0600; outputs should get the ordinary permissions the user's umask gives.
_UMASK = os.umask(0o022)
os.umask(_UMASK)

T = TypeVar("T")

TABLE_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet", ".pq")


def table_format(path: str | Path) -> str:
    """The format of a table file from its suffix: ``jsonl``, ``csv`` or ``parquet``."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise InputError(f"unknown table format '{suffix}' (expected one of {', '.join(TABLE_SUFFIXES)})", path=path)


_ID_COLUMN = re.compile(r"(?:.*_)?id|(?:image|caption)_\d+")


def is_id_column(name: str) -> bool:
    """Whether a column holds identifiers: ``id``, ``*_id`` (``image_id``, ``cycle_id``, …) or the cycles
    table's ``image_1``/``caption_2``; such columns are read as text, never as numbers. Tokenizer ids
    (``yes_token_id``) are numbers, not names, and stay numeric."""
    name = str(name)
    return _ID_COLUMN.fullmatch(name) is not None and not name.endswith("token_id")


def id_text(value: Any) -> Any:
    """An id value as text: ``139`` → ``"139"``, an integral float (a widened int column) ``139.0`` → ``"139"``;
    strings and None are returned as they are."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _ids_as_text(record: dict[str, Any]) -> dict[str, Any]:
    # numbers only: a list of ids (VSR's vote_*_validator_id) stays a list
    for key, value in record.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and is_id_column(key):
            record[key] = id_text(value)
    return record


def _csv_header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
        return next(csv.reader(handle), [])


def _loads():
    return orjson.loads


def read_json(path: str | Path) -> Any:
    """The value of a whole JSON file, parsed with orjson.

    Raises :class:`InputError` naming the file: ``file not found``, ``cannot read: …`` (an OS error, e.g. a
    folder) or ``invalid JSON: …``. The value's shape is the caller's to check."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", path=path) from exc
    refuse_compressed(raw[:4], path)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}", path=path) from exc


# the magic bytes of compressed files a JSON or JSONL reader is sometimes handed by mistake
_COMPRESSED = {b"\x1f\x8b": "gzip (gunzip it first)", b"BZh": "bzip2 (bunzip2 it first)",
               b"\xfd7zXZ": "xz (unxz it first)", b"PK\x03\x04": "a zip archive (unzip it first)",
               b"\x28\xb5\x2f\xfd": "zstd (unzstd it first)"}


def refuse_compressed(head: bytes, path: Path) -> None:
    """An :class:`InputError` naming the file when its first bytes say it is compressed, not text."""
    for magic, what in _COMPRESSED.items():
        if head.startswith(magic):
            raise InputError(f"is compressed, not JSON: {what}", path=path)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(row_number, record)`` for each non-empty line of a JSONL file (row numbers are 1-based)."""
    loads = _loads()
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    with path.open("rb") as handle:
        refuse_compressed(handle.read(4), path)
        handle.seek(0)
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = loads(line)
            except ValueError as exc:
                raise InputError(f"invalid JSON: {exc}", path=path, record=f"line {line_number}") from exc
            if not isinstance(record, dict):
                raise InputError("each line must be a JSON object", path=path, record=f"line {line_number}")
            yield line_number, _ids_as_text(record)


def read_records(path: str | Path, *, required: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Read a JSONL, CSV or Parquet table as a list of dicts, checking that ``required`` fields are present.

    Missing fields and nulls in required fields raise :class:`InputError` with file, row and field.
    """
    path = Path(path)
    fmt = table_format(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    if fmt == "jsonl":
        rows = [record for _, record in iter_jsonl(path)]
    else:
        rows = read_table(path).to_pylist()
    for index, row in enumerate(rows, start=1):
        for field in required:
            value = row.get(field)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                raise InputError("missing required field", path=path, record=f"row {index}", field=field)
    return rows


def read_unique_records(
    path: str | Path, build: Callable[[dict[str, Any], str], T], *, id_field: str, noun: str
) -> list[T]:
    """Validate each row with ``build(row, "row N")``; a repeated ``id_field`` or an empty file is an error."""
    records: list[T] = []
    seen: set[str] = set()
    for index, row in enumerate(read_records(path), start=1):
        record = build(row, f"row {index}")
        key = getattr(record, id_field)
        if key in seen:
            raise InputError(f"duplicate {id_field} '{key}'", path=path, record=f"row {index}", field=id_field)
        seen.add(key)
        records.append(record)
    if not records:
        raise InputError(f"no {noun} in file", path=path)
    return records


def read_table(path: str | Path, *, required: Sequence[str] = (), text: Sequence[str] = ()) -> pa.Table:
    """Read a JSONL, CSV or Parquet file as an Arrow table, checking that ``required`` columns exist.

    Id columns (:func:`is_id_column`) are strings in every format. ``text`` names further CSV columns to keep
    as text instead of inferring their type, so the caller can report a bad value at its own row.
    """
    path = Path(path)
    fmt = table_format(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    try:
        if fmt == "parquet":
            table = pq.read_table(path)
        elif fmt == "csv":
            # An empty CSV field is a missing value, as the writer writes nulls.
            strings = {name: pa.string() for name in _csv_header(path) if is_id_column(name) or name in text}
            table = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(strings_can_be_null=True,
                                                                              column_types=strings))
        else:
            table = rows_to_table([record for _, record in iter_jsonl(path)])
    except InputError:
        raise
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        raise InputError(f"cannot read {fmt} table: {exc}", path=path) from exc
    for index, name in enumerate(table.column_names):
        column = table.column(index)
        if is_id_column(name) and (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
            try:
                values = pa.array([id_text(v) for v in column.to_pylist()], type=pa.string())
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise InputError(f"cannot read id column as text: {exc}", path=path, field=name) from exc
            table = table.set_column(index, name, values)
    missing = [name for name in required if name not in table.column_names]
    if missing:
        raise InputError(
            f"missing required column(s) {missing}; found {table.column_names}", path=path, field=missing[0]
        )
    return table


def _not_a_folder(path: Path) -> Path | None:
    """The nearest of ``path`` and its parents that exists and is not a folder (None when all is well)."""
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return None
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return None


def check_folder_target(path: str | Path, *, field: str | None = None) -> Path:
    """``path`` if it is a folder or can be created as one; else :class:`InputError` naming it.

    An existing file at ``path`` (or at a folder above it) would otherwise surface as a FileExistsError
    traceback halfway through a run; commands call this before any work (see ``commands/_options.py``)."""
    path = Path(path)
    blocker = _not_a_folder(path)
    if blocker is not None:
        what = "exists and is not a folder" if blocker == path else f"cannot be created: {blocker} is a file"
        raise InputError(f"{what}; give a folder path (created if missing)", path=path, field=field)
    return path


def check_file_target(path: str | Path, *, field: str | None = None) -> Path:
    """``path`` if a file can be written there: not an existing folder, and its parent a folder or creatable."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder; give a file path", path=path, field=field)
    blocker = _not_a_folder(path.parent)
    if blocker is not None:
        raise InputError(f"cannot be created: {blocker} is a file, not a folder", path=path, field=field)
    return path


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success fsync and rename it over ``path``.

    On any exception the temporary file is removed and ``path`` is left as it was.
    """
    path = check_file_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_UMASK)
    binary = "b" in mode
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # a write that fails (a full disk) names no file: the user needs to know which
        raise


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot serialize {type(value).__name__} to JSON")


def dumps_json(obj: Any, *, indent: int | None = 2) -> str:
    """JSON text with numpy scalars/arrays converted; NaN is written as null (strict JSON)."""
    return json.dumps(_nan_to_none(obj), indent=indent, default=_json_default, ensure_ascii=False)


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, VersionedResult):  # a typed record the API returned, nested in what a caller writes
        obj = obj.to_dict()
    if isinstance(obj, dict):
        return {key: _nan_to_none(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(value) for value in obj]
    return obj


def write_json(path: str | Path, obj: Any) -> Path:
    """Write ``obj`` as indented JSON, atomically."""
    with atomic_write(path) as handle:
        handle.write(dumps_json(obj))
        handle.write("\n")
    return Path(path)


def write_result(path: str | Path, result: VersionedResult) -> Path:
    """Write a typed result as its JSON file: ``result.to_dict()`` (with ``schema_version``), atomically."""
    return write_json(path, result.to_dict())


def write_manifest(folder: str | Path, manifest: RunManifest) -> Path:
    """Write ``FOLDER/manifest.json`` atomically: the one writer of every manifest (runs and built datasets)."""
    return write_json(Path(folder) / MANIFEST_FILE, manifest.to_dict())


def jsonl_line(row: dict[str, Any]) -> str:
    """One compact JSON object and its newline, as :func:`write_jsonl` writes it (NaN as null)."""
    return json.dumps(_nan_to_none(row), default=_json_default, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write one compact JSON object per line, atomically (keys keep their insertion order)."""
    with atomic_write(path) as handle:
        for row in rows:
            handle.write(jsonl_line(row))
    return Path(path)


def write_parquet(path: str | Path, table: pa.Table) -> Path:
    """Write an Arrow table as Parquet, atomically."""
    with atomic_write(path, "wb") as handle:
        pq.write_table(table, handle)
    return Path(path)


def rows_to_table(rows: list[dict[str, Any]]) -> pa.Table:
    """An Arrow table whose columns are the union of all rows' keys (first-appearance order).

    ``pa.Table.from_pylist`` alone takes its columns from the first row and silently drops the rest.
    """
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return pa.Table.from_pylist([{name: row.get(name) for name in columns} for row in rows])


def write_table(path: str | Path, rows: list[dict[str, Any]] | pa.Table) -> Path:
    """Write rows or an Arrow table in the format the suffix of ``path`` names, atomically."""
    fmt = table_format(path)
    if fmt == "jsonl":
        return write_jsonl(path, rows.to_pylist() if isinstance(rows, pa.Table) else rows)
    table = rows if isinstance(rows, pa.Table) else rows_to_table(rows)
    if fmt == "parquet":
        return write_parquet(path, table)
    with atomic_write(path, "wb") as handle:
        pacsv.write_csv(table, handle)
    return Path(path)
