"""The cycles table and the scores table of ``vlaudit cycles eval`` (documented schemas).

Cycles table (JSONL or Parquet), one row per block:
    cycle_id, family, image_1, caption_1, image_2, caption_2  (ids; matched pairs are (image_1, caption_1)
    and (image_2, caption_2)); optional ``split``; every other column is carried along in ``Cycle.extra``.
Scores table (CSV, JSONL or Parquet): image_id, caption_id, score. Ids are text in every format (``0001``
stays ``0001``); scores are read as float64 exactly as stored (CSV and JSONL text is parsed with Python's
``float``, the inverse of the shortest-repr text every vlaudit writer emits, so float64 round-trips exactly).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.errors import InputError
from vlaudit.files import id_text, iter_jsonl, read_table, read_unique_records, table_format
from vlaudit.records import Cycle
from vlaudit.results.columns import CYCLES, SCORES
from vlaudit.sources.rows import local_file

#: the columns a cycles row must have and a scores table's columns (:mod:`vlaudit.results.columns`)
CYCLE_COLUMNS = CYCLES.required
SCORE_COLUMNS = SCORES.names


def _id(value: object) -> str:
    return str(id_text(value))


def cycle_from_row(row: dict, *, path: str | Path | None = None, record: object = None) -> Cycle:
    """Validate one row and build a :class:`Cycle` (the two images and two captions must differ)."""
    for field in CYCLE_COLUMNS:
        if row.get(field) is None or row.get(field) == "":
            raise InputError("missing required field", path=path, record=record, field=field)
    cycle = Cycle(
        cycle_id=_id(row["cycle_id"]),
        family=str(row["family"]),
        image_1=_id(row["image_1"]),
        caption_1=_id(row["caption_1"]),
        image_2=_id(row["image_2"]),
        caption_2=_id(row["caption_2"]),
        split=None if row.get("split") is None else str(row["split"]),
        extra={k: v for k, v in row.items() if k not in CYCLE_COLUMNS and k != "split"},
    )
    if cycle.image_1 == cycle.image_2:
        raise InputError("a cycle needs two different images", path=path, record=record, field="image_2")
    if cycle.caption_1 == cycle.caption_2:
        raise InputError("a cycle needs two different captions", path=path, record=record, field="caption_2")
    return cycle


def read_cycles(path: str | Path) -> list[Cycle]:
    """Read and validate a cycles table (JSONL or Parquet); a repeated ``cycle_id`` is an error."""
    path = local_file(path, reads="a cycles file (JSONL or Parquet)")
    return read_unique_records(path, lambda row, record: cycle_from_row(row, path=path, record=record),
                               id_field="cycle_id", noun="cycles")


def _score_columns(path: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """image_id, caption_id and score values in file order, scores as stored (CSV: text, so a bad value is
    reported at its own row instead of turning the whole column into text)."""
    if table_format(path) == "jsonl":
        rows = [record for _, record in iter_jsonl(path)]
        for index, row in enumerate(rows, start=1):
            for field in SCORE_COLUMNS:
                if field not in row:
                    raise InputError("missing required field", path=path, record=f"row {index}", field=field)
        image_ids, caption_ids, scores = ([row[f] for row in rows] for f in SCORE_COLUMNS)
        return image_ids, caption_ids, scores
    table = read_table(path, required=SCORE_COLUMNS, text=("score",))
    image_ids, caption_ids, scores = (table.column(f).to_pylist() for f in SCORE_COLUMNS)
    return image_ids, caption_ids, scores


def _score_value(value: Any, *, path: Path, index: int) -> float:
    if isinstance(value, str):
        try:
            parsed = float(value.strip())
        except ValueError:
            parsed = None
        if parsed is not None and math.isfinite(parsed):
            return parsed
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    raise InputError(f"score {value!r} is not a finite number", path=path, record=f"row {index}", field="score")


def read_scores(path: str | Path) -> dict[tuple[str, str], float]:
    """Read a scores table into (image_id, caption_id) → float64 score; conflicting duplicates are an error.

    A missing or bad value is reported at its own 1-based row with its own value.
    """
    path = local_file(path, reads="a scores file (JSONL, CSV or Parquet)")
    image_ids, caption_ids, values = _score_columns(path)
    rows = []
    for index, (u, v, s) in enumerate(zip(image_ids, caption_ids, values, strict=True), start=1):
        for field, value in (("image_id", u), ("caption_id", v), ("score", s)):
            if value is None or value == "":
                raise InputError("missing value", path=path, record=f"row {index}", field=field)
        rows.append((_id(u), _id(v), _score_value(s, path=path, index=index)))
    return score_lookup(rows, source=str(path))


def score_lookup(
    rows: Iterable[tuple[str, str, float]], *, source: str | None = None
) -> dict[tuple[str, str], float]:
    """Map (image_id, caption_id) → score. The same pair twice with two different values is an error."""
    table: dict[tuple[str, str], float] = {}
    for index, (image_id, caption_id, score) in enumerate(rows, start=1):
        key = (str(image_id), str(caption_id))
        value = float(score)
        if not np.isfinite(value):
            raise InputError(f"score {value!r} is not finite", path=source, record=f"row {index} {key}",
                             field="score")
        previous = table.get(key)
        if previous is not None and previous != value:
            raise InputError(
                f"duplicated (image_id, caption_id) = {key} with two different scores {previous!r} and {value!r}",
                path=source, record=f"row {index}", field="score",
            )
        table[key] = value
    return table
