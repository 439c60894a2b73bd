"""What users hold → vlaudit's records: paths, pandas DataFrames, pyarrow Tables, lists of dicts or records.

Every conversion goes through the same row validators as the file readers, so a bad row raises the same
:class:`~vlaudit.errors.InputError` (naming the record and field) in a notebook as on the command line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.errors import InputError
from vlaudit.records import Cycle
from vlaudit.sources.cycle_tables import cycle_from_row, read_cycles, read_scores, score_lookup
from vlaudit.sources.items import BenchmarkItem, item_from_row, read_items
from vlaudit.sources.margins import read_margins, runs_from_rows


def rows_of(data: Any, *, what: str) -> list[dict[str, Any]] | None:
    """Rows of a DataFrame, pyarrow Table or sequence of dicts; None for a path (read by the caller)."""
    if isinstance(data, (str, Path)):
        return None
    if hasattr(data, "to_pylist"):  # pyarrow.Table
        return data.to_pylist()
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # pandas.DataFrame
        return data.to_dict(orient="records")
    if isinstance(data, Sequence) and all(isinstance(row, Mapping) for row in data):
        return [dict(row) for row in data]
    raise InputError(f"{what}: expected a path, a pandas DataFrame, a pyarrow Table or a list of rows, "
                     f"not {type(data).__name__}")


def _records(data: Any, kind: type, read: Callable[[Any], list[Any]], from_row: Callable[..., Any],
             what: str) -> list[Any]:
    """``data`` as a list of ``kind`` records: itself when it is one, else read from its path, or validated row by
    row (the file readers' validators, so a bad row names the same record and field)."""
    if isinstance(data, Sequence) and data and all(isinstance(record, kind) for record in data):
        return list(data)
    rows = rows_of(data, what=what)
    if rows is None:
        return read(data)
    return [from_row(row, path=f"<{what}>", record=f"row {i}") for i, row in enumerate(rows, start=1)]


def as_cycles(cycles: Any) -> list[Any]:
    """A list of :class:`~vlaudit.records.Cycle` from a cycles path, table, frame, row list or Cycle list."""
    return _records(cycles, Cycle, read_cycles, cycle_from_row, "cycles")


def as_scores(scores: Any, cycles: Sequence[Any]) -> dict[tuple[str, str], float]:
    """(image_id, caption_id) → score from a scores path/table/frame/mapping, or a callable scorer.

    A callable is called once, ``s(image_ids, caption_ids)``, with the distinct pairs the cycles use
    (matched pairs and swaps), and must return one score per pair (list, numpy array or torch tensor).
    """
    if callable(scores) and not isinstance(scores, Mapping):
        pairs = list(dict.fromkeys((u, v) for c in cycles for u, v, _ in c.entries()))
        values = scores([u for u, _ in pairs], [v for _, v in pairs])
        if hasattr(values, "detach"):
            values = values.detach().cpu().numpy()
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if values.shape[0] != len(pairs):
            raise InputError(f"the scorer returned {values.shape[0]} scores for {len(pairs)} pairs", field="scores")
        return score_lookup(((u, v, s) for (u, v), s in zip(pairs, values.tolist(), strict=True)),
                            source="<scorer>")
    if isinstance(scores, Mapping):
        return score_lookup(((str(u), str(v), s) for (u, v), s in scores.items()), source="<scores>")
    rows = rows_of(scores, what="scores")
    if rows is None:
        return read_scores(scores)
    for index, row in enumerate(rows, start=1):
        for name in ("image_id", "caption_id", "score"):
            if row.get(name) is None:
                raise InputError("missing value", path="<scores>", record=f"row {index}", field=name)
    return score_lookup(((str(r["image_id"]), str(r["caption_id"]), r["score"]) for r in rows), source="<scores>")


def as_items(items: Any) -> list[Any]:
    """A list of :class:`~vlaudit.sources.items.BenchmarkItem` from a path, table, frame or rows."""
    return _records(items, BenchmarkItem, read_items, item_from_row, "items")


def as_margin_runs(margins: Any) -> list[Any]:
    """Validated :class:`~vlaudit.sources.margins.MarginRun` list from a margins path, table, frame or rows
    (or a :class:`~vlaudit.api.vca.Margins` result)."""
    path = getattr(margins, "path", None)
    if path is not None:
        margins = path
    rows = rows_of(margins, what="margins")
    if rows is None:
        return read_margins(margins)
    return runs_from_rows(rows, path="<margins>")


def as_matrix(values: Any, *, what: str) -> Any:
    """A float32 numpy matrix from a numpy array, torch tensor or nested list."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    matrix = np.asarray(values, dtype=np.float32)
    if matrix.ndim != 2:
        raise InputError(f"{what} must be a 2-D matrix (rows × dimensions), got shape {matrix.shape}", field=what)
    return matrix
