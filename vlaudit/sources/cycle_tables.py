"""The cycles table and the scores table of ``vlaudit cycles eval`` (documented schemas).

Cycles table (JSONL or Parquet), one row per block:
    cycle_id, family, image_1, caption_1, image_2, caption_2  (ids; matched pairs are (image_1, caption_1)
    and (image_2, caption_2)); optional ``split``; every other column is carried along in ``Cycle.extra``.
Scores table (CSV, JSONL or Parquet): image_id, caption_id, score.
"""

from __future__ import annotations

import math
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.metrics.cycles import score_lookup
from vlaudit.records import Cycle
from vlaudit.tables import read_table, read_unique_records

CYCLE_COLUMNS = ("cycle_id", "family", "image_1", "caption_1", "image_2", "caption_2")
SCORE_COLUMNS = ("image_id", "caption_id", "score")


def _id(value: object) -> str:
    # Integral floats come from CSV/Parquet readers that widened an int column; write them as ints.
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


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
    """Read and validate a cycles table; a repeated ``cycle_id`` is an error."""
    return read_unique_records(path, lambda row, record: cycle_from_row(row, path=path, record=record),
                               id_field="cycle_id", noun="cycles")


def read_scores(path: str | Path) -> dict[tuple[str, str], float]:
    """Read a scores table into (image_id, caption_id) → score; conflicting duplicates are an error."""
    table = read_table(path, required=SCORE_COLUMNS)
    image_ids = table.column("image_id").to_pylist()
    caption_ids = table.column("caption_id").to_pylist()
    values = table.column("score").to_pylist()
    for index, (u, v, s) in enumerate(zip(image_ids, caption_ids, values, strict=True), start=1):
        for field, value in (("image_id", u), ("caption_id", v), ("score", s)):
            if value is None:
                raise InputError("missing value", path=path, record=f"row {index}", field=field)
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
            raise InputError(f"score {s!r} is not a finite number", path=path, record=f"row {index}",
                             field="score")
    return score_lookup(
        ((_id(u), _id(v), s) for u, v, s in zip(image_ids, caption_ids, values, strict=True)), source=str(path)
    )
