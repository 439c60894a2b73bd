"""What users hold → vlaudit's records: paths, pandas DataFrames, pyarrow Tables, lists of dicts or records.

Every conversion goes through the same row validators as the file readers, so a bad row raises the same
:class:`~vlaudit.errors.InputError` (naming the record and field) in a notebook as on the command line. The
input shapes are named in :mod:`vlaudit.api.inputs`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from vlaudit.api.inputs import (
    ArrowTable,
    CyclesInput,
    DataFrame,
    ItemsInput,
    MarginsFolder,
    MarginsInput,
    MatrixInput,
    RowsInput,
    ScoresInput,
    Tensor,
)
from vlaudit.errors import InputError
from vlaudit.records import Cycle
from vlaudit.sources.cycle_tables import cycle_from_row, read_cycles, read_scores, score_lookup
from vlaudit.sources.items import BenchmarkItem, item_from_row, read_items
from vlaudit.sources.margins import MarginRun, read_margins, runs_from_rows

Record = TypeVar("Record")
Built = TypeVar("Built", covariant=True)


class _FromRow(Protocol[Built]):
    def __call__(self, row: dict[str, object], *, path: str, record: str) -> Built: ...


def table_rows(data: object, *, what: str) -> list[dict[str, object]]:
    """Rows of a DataFrame, pyarrow Table or sequence of dicts; anything else is an :class:`InputError`."""
    if isinstance(data, ArrowTable):
        return [dict(row) for row in data.to_pylist()]
    if isinstance(data, DataFrame):
        records = data.to_dict(orient="records")
        if isinstance(records, list) and all(isinstance(row, Mapping) for row in records):
            return [{str(key): value for key, value in row.items()} for row in records]
    elif isinstance(data, Sequence) and not isinstance(data, str) and all(isinstance(row, Mapping) for row in data):
        return [dict(row) for row in data if isinstance(row, Mapping)]
    raise InputError(f"{what}: expected a path, a pandas DataFrame, a pyarrow Table or a list of rows, "
                     f"not {type(data).__name__}")


def _records(data: str | Path | RowsInput | Sequence[Record], kind: type[Record],
             read: Callable[[str | Path], list[Record]], from_row: _FromRow[Record], what: str) -> list[Record]:
    """``data`` as a list of ``kind`` records: read from its path, itself when it is a list of them, or validated
    row by row (the file readers' validators, so a bad row names the same record and field)."""
    if isinstance(data, (str, Path)):
        return read(data)
    if isinstance(data, Sequence) and data and all(isinstance(record, kind) for record in data):
        return [record for record in data if isinstance(record, kind)]
    rows = table_rows(data, what=what)
    return [from_row(row, path=f"<{what}>", record=f"row {i}") for i, row in enumerate(rows, start=1)]


def as_cycles(cycles: CyclesInput) -> list[Cycle]:
    """A list of :class:`~vlaudit.records.Cycle` from a cycles path, table, frame, row list or Cycle list."""
    return _records(cycles, Cycle, read_cycles, cycle_from_row, "cycles")


def _float_vector(values: MatrixInput) -> NDArray[np.float64]:
    if isinstance(values, Tensor):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.float64).reshape(-1)


def as_scores(scores: ScoresInput, cycles: Sequence[Cycle]) -> dict[tuple[str, str], float]:
    """(image_id, caption_id) → score from a scores path/table/frame/mapping, or a callable scorer.

    A callable is called once, ``s(image_ids, caption_ids)``, with the distinct pairs the cycles use
    (matched pairs and swaps), and must return one score per pair (list, numpy array or torch tensor).
    """
    if callable(scores) and not isinstance(scores, Mapping):
        pairs = list(dict.fromkeys((u, v) for c in cycles for u, v, _ in c.entries()))
        values = _float_vector(scores([u for u, _ in pairs], [v for _, v in pairs]))
        if values.shape[0] != len(pairs):
            raise InputError(f"the scorer returned {values.shape[0]} scores for {len(pairs)} pairs", field="scores")
        return score_lookup(((u, v, s) for (u, v), s in zip(pairs, values.tolist(), strict=True)),
                            source="<scorer>")
    if isinstance(scores, Mapping):
        return score_lookup(((str(u), str(v), float(s)) for (u, v), s in scores.items()), source="<scores>")
    if isinstance(scores, (str, Path)):
        return read_scores(scores)
    rows = table_rows(scores, what="scores")
    for index, row in enumerate(rows, start=1):
        for name in ("image_id", "caption_id", "score"):
            if row.get(name) is None:
                raise InputError("missing value", path="<scores>", record=f"row {index}", field=name)
    return score_lookup(((str(r["image_id"]), str(r["caption_id"]), _score(r["score"], index))
                         for index, r in enumerate(rows, start=1)), source="<scores>")


def _score(value: object, index: int) -> float:
    """A row's score as a float; text is parsed, a bool or anything else is refused (as the file reader does)."""
    if isinstance(value, (str, numbers.Real)) and not isinstance(value, bool):
        try:
            return float(value)
        except ValueError:
            pass
    raise InputError(f"score {value!r} is not a number", path="<scores>", record=f"row {index}", field="score")


def as_items(items: ItemsInput) -> list[BenchmarkItem]:
    """A list of :class:`~vlaudit.sources.items.BenchmarkItem` from a path, table, frame or rows."""
    return _records(items, BenchmarkItem, read_items, item_from_row, "items")


def as_margin_runs(margins: MarginsInput) -> list[MarginRun]:
    """Validated :class:`~vlaudit.sources.margins.MarginRun` list from a margins path, table, frame or rows
    (or a :class:`~vlaudit.api.margins.Margins` result)."""
    if isinstance(margins, MarginsFolder):
        margins = margins.path
    if isinstance(margins, (str, Path)):
        return read_margins(margins_file(margins))
    return runs_from_rows(table_rows(margins, what="margins"), path="<margins>")


def margins_file(path: str | Path) -> Path:
    """A MARGINS file, or the ``margins.parquet`` of a ``vca score`` run folder (``vca report RUN``
    reads a run folder as ``compare`` and ``report`` do)."""
    path = Path(path)
    if not path.is_dir():
        return path
    if not (path / "margins.parquet").is_file():
        raise InputError("is a folder without margins.parquet: give a vca score run folder or a MARGINS file "
                         "(Parquet, CSV or JSONL)", path=path)
    return path / "margins.parquet"


def enclosing_run(folder: str | Path) -> Path | None:
    """The scoring run folder (``manifest.json`` of ``vca score``/``score-dual`` beside ``margins.parquet``)
    that ``folder`` is or lies inside, if any."""
    start = Path(folder).expanduser().resolve()
    for candidate in (start, *start.parents):
        if (candidate / "margins.parquet").is_file() and (candidate / "manifest.json").is_file():
            return candidate
    return None


def refuse_foreign_report_folder(out: str | Path, sources: Sequence[str | None]) -> None:
    """Refuse (one line, before anything is written) a report folder inside a run folder whose margins are
    not the report's own: ``vlaudit report RUN`` would show them under that run."""
    run = enclosing_run(out)
    if run is None:
        return
    own = {Path(source).resolve().parent for source in sources if source and Path(source).is_file()}
    if own != {run}:
        read = ", ".join(sorted(str(s) for s in sources if s)) or "margins given in memory"
        raise InputError(f"lies inside the run folder {run}, whose margins are not the ones reported ({read}); "
                         "choose an --out outside it or the run's own margins", path=out, field="--out")


def as_matrix(values: MatrixInput, *, what: str) -> NDArray[np.float32]:
    """A float32 numpy matrix from a numpy array, torch tensor or nested list."""
    if isinstance(values, Tensor):
        values = values.detach().cpu().numpy()
    matrix = np.asarray(values, dtype=np.float32)
    if matrix.ndim != 2:
        raise InputError(f"{what} must be a 2-D matrix (rows × dimensions), got shape {matrix.shape}", field=what)
    return matrix
