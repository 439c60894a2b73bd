"""The inputs the public functions accept, by name: what a notebook can hand vlaudit besides a file path.

Every data argument takes a path (read with the command line's reader), a pyarrow Table, a pandas DataFrame,
a list of row mappings (the file's columns as keys), or the records themselves. Tables and frames are read by
what they can do (:class:`ArrowTable`: ``to_pylist()``; :class:`DataFrame`: ``to_dict(orient="records")``),
so neither pandas nor pyarrow is imported to check them. Rows go through the file readers' validators: a bad
row is the same one-line :class:`~vlaudit.errors.InputError`, naming the row and field.

- :data:`CyclesInput` — cycles (``cycle_id, family, image_1, caption_1, image_2, caption_2`` rows, or
  :class:`~vlaudit.records.Cycle` records).
- :data:`ScoresInput` — pair scores (``image_id, caption_id, score`` rows, a ``{(image_id, caption_id):
  score}`` mapping, or a :data:`Scorer` called once with the pairs the cycles use).
- :data:`ItemsInput` — ITEMS rows (:mod:`vlaudit.sources.items`) or
  :class:`~vlaudit.sources.items.BenchmarkItem` records.
- :data:`MarginsInput` — margin rows (:mod:`vlaudit.sources.margins`), or a scoring run's result (anything
  with a ``path`` to its ``margins.parquet``, such as :class:`~vlaudit.api.margins.Margins`).
- :data:`MatrixInput` — a 2-D matrix: numpy array, torch tensor (moved to the CPU) or nested lists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeAlias, runtime_checkable

from numpy.typing import ArrayLike

from vlaudit.records import Cycle
from vlaudit.sources.items import BenchmarkItem


@runtime_checkable
class ArrowTable(Protocol):
    """A table read row by row with ``to_pylist()`` (a ``pyarrow.Table``)."""

    def to_pylist(self) -> list[dict[str, object]]: ...


@runtime_checkable
class DataFrame(Protocol):
    """A table with ``columns`` read row by row with ``to_dict(orient="records")`` (a ``pandas.DataFrame``)."""

    @property
    def columns(self) -> object: ...

    def to_dict(self, orient: str) -> object: ...


@runtime_checkable
class Tensor(Protocol):
    """An array that must leave its device first (a ``torch.Tensor``): ``detach().cpu().numpy()``."""

    def detach(self) -> Tensor: ...

    def cpu(self) -> Tensor: ...

    def numpy(self) -> ArrayLike: ...


@runtime_checkable
class MarginsFolder(Protocol):
    """A finished scoring run: ``path`` is its ``margins.parquet`` (:class:`vlaudit.api.margins.Margins`)."""

    @property
    def path(self) -> Path: ...


#: one row per record: column name → value, as a JSON or Parquet row holds it
Row: TypeAlias = Mapping[str, object]
#: rows in any of the table shapes the API reads: a pyarrow Table, a pandas DataFrame or a list of rows
RowsInput: TypeAlias = ArrowTable | DataFrame | Sequence[Row]
#: cycles: a cycles file (JSONL / Parquet), a table of its rows, or the :class:`~vlaudit.records.Cycle` records
CyclesInput: TypeAlias = str | Path | RowsInput | Sequence[Cycle]
#: ITEMS: an ITEMS file, a table of its rows, or the :class:`~vlaudit.sources.items.BenchmarkItem` records
ItemsInput: TypeAlias = str | Path | RowsInput | Sequence[BenchmarkItem]
#: the scores a scorer returns, one per (image, caption) pair, in the order asked
ScoreValues: TypeAlias = Sequence[float] | ArrayLike | Tensor
#: ``scorer(image_ids, caption_ids)`` → one score per pair
Scorer: TypeAlias = Callable[[list[str], list[str]], ScoreValues]
#: pair scores: a scores file, a table of its rows, a (image_id, caption_id) → score mapping, or a scorer
ScoresInput: TypeAlias = str | Path | RowsInput | Mapping[tuple[str, str], float] | Scorer
#: margins: a margins file (Parquet / JSONL), a table of its rows, or a finished scoring run
MarginsInput: TypeAlias = str | Path | RowsInput | MarginsFolder
#: a 2-D matrix (rows × dimensions)
MatrixInput: TypeAlias = ArrayLike | Tensor
