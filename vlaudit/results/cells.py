"""Typed records as the rows of a CSV table, a value that could not be computed written as its reason.

A record's fields become columns (a nested record or mapping ``key.sub``, a list ``a;b``); a
:class:`~vlaudit.results.missing.Missing` cell is its text ``— (reason)``, so the CSV says why a number is
absent instead of leaving the cell blank. A column that holds such a text and numbers is written as text
(numbers in Python's shortest round-trip form), since a CSV column has one type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from vlaudit.results.missing import Missing


def _items(prefix: str, value: object, keep_missing: bool = False) -> list[tuple[str, object]]:
    if isinstance(value, Missing):
        return [(prefix, value if keep_missing else str(value))]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {str(f.metadata.get("json", f.name)): getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return [kv for sub, x in value.items()
                for kv in _items(f"{prefix}.{sub}" if prefix else str(sub), x, keep_missing)]
    if isinstance(value, list | tuple):
        return [(prefix, ";".join(str(x) for x in value))]
    return [(prefix, value)]


def csv_rows(rows: Sequence[object], **tags: object) -> list[dict[str, object]]:
    """CSV rows of records (or mappings): ``tags`` first (``dataset="vsr"``), every row every column, a missing
    value as ``— (reason)``; a column mixing such texts with numbers all text."""
    flat = [dict(tags) | dict(_items("", row)) for row in rows]
    columns = list(dict.fromkeys(k for row in flat for k in row))
    out = [{k: row.get(k) for k in columns} for row in flat]
    for key in columns:
        values = [row[key] for row in out if row[key] is not None]
        if any(isinstance(v, str) for v in values) and not all(isinstance(v, str) for v in values):
            for row in out:
                if row[key] is not None and not isinstance(row[key], str):
                    row[key] = repr(row[key])
    return out


#: the suffix of the text column beside a numeric column that says why a cell of it is empty
REASON_SUFFIX = "_missing"


def numeric_csv_rows(rows: Sequence[object], **tags: object) -> list[dict[str, object]]:
    """CSV rows like :func:`csv_rows` that keep every numeric column numeric: a
    :class:`~vlaudit.results.missing.Missing` cell is left empty and its reason goes into a text column
    ``<column>_missing`` written right after it (empty where the number exists), so a reader parses the
    numbers as numbers and still reads why one is absent."""
    flat = []
    for row in rows:
        out: dict[str, object] = dict(tags)
        for key, value in _items("", row, keep_missing=True):
            if isinstance(value, Missing):
                out[key], out[key + REASON_SUFFIX] = None, value.reason
            else:
                out[key] = value
        flat.append(out)
    reasons = {k for row in flat for k in row if k.endswith(REASON_SUFFIX)}
    columns: list[str] = []
    for key in dict.fromkeys(k for row in flat for k in row):
        if key in reasons and key[: -len(REASON_SUFFIX)] in columns:
            continue  # placed after its column below
        columns.append(key)
        if key + REASON_SUFFIX in reasons:
            columns.append(key + REASON_SUFFIX)
    return [{k: row.get(k) for k in columns} for row in flat]
