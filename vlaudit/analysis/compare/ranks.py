"""Leaderboard ranks from the paired comparisons of a ``compare`` table (rank from paired,
multiplicity-adjusted differences, :func:`vlaudit.stats.ranking.paired_ranks`).

Within one cell (dataset/interface or benchmark/split, family) and metric, model b outranks model a when the
comparison row of the pair survives the table's multiplicity adjustment (Holm, ``survives``) with b ahead, and
its paired interval, where it has one, lies on b's side of 0: the leaderboard never ranks two models apart that
the table's own columns do not separate. Ranks are set after the adjustment, over the whole table.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from vlaudit.results.compare import (
    BenchmarkComparison,
    CycleComparison,
    CycleLeaderboardRow,
    VcaBandComparison,
    VcaComparison,
    VcaLeaderboardRow,
)
from vlaudit.stats.multiplicity import holm_by_family
from vlaudit.stats.ranking import paired_ranks

#: a leaderboard row of either comparison (a frozen dataclass with ``model``, ``value`` and ``rank``)
Row = TypeVar("Row", VcaLeaderboardRow, CycleLeaderboardRow)
#: a comparison row of either comparison (a frozen dataclass with ``p``, ``holm_family``, ``p_holm``, ``survives``)
Compared = TypeVar("Compared", VcaBandComparison | VcaComparison, CycleComparison | BenchmarkComparison)


def holm_adjusted(comparisons: Sequence[Compared], alpha: float) -> list[Compared]:
    """The rows with ``p_holm`` and ``survives`` set by Holm's adjustment at ``alpha`` within each row's
    ``holm_family`` (:func:`vlaudit.stats.multiplicity.holm_by_family`), in the same order."""
    marks = holm_by_family([row.p for row in comparisons], [row.holm_family for row in comparisons], alpha)
    return [replace(row, p_holm=p_holm, survives=survives)
            for row, (p_holm, survives) in zip(comparisons, marks, strict=True)]


def separates(row: Any) -> tuple[str, str] | None:
    """(better, worse) of a comparison row that says which model is better, else None."""
    if not row.survives or row.difference is None or row.difference == 0:
        return None
    sign = 1.0 if row.difference > 0 else -1.0
    if row.ci is not None and not min(sign * row.ci[0], sign * row.ci[1]) > 0:
        return None
    return (row.model_a, row.model_b) if sign > 0 else (row.model_b, row.model_a)


def ranked(board: Sequence[Row], comparisons: Sequence[Any], cell: Callable[[Any], Hashable]) -> list[Row]:
    """``board`` with every row's ``rank`` from the rows of ``comparisons`` of its cell (``cell(row)``, the
    metric included) and model."""
    wins: dict[Hashable, set[tuple[str, str]]] = {}
    for row in comparisons:
        pair = separates(row)
        if pair is not None:
            wins.setdefault(cell(row), set()).add(pair)
    groups: dict[Hashable, list[int]] = {}
    for k, row in enumerate(board):
        groups.setdefault(cell(row), []).append(k)
    out = list(board)
    for key, members in groups.items():
        models = [board[k].model for k in members]
        values = np.array([np.nan if board[k].value is None else board[k].value
                           for k in members], dtype=np.float64)
        beats = np.array([[(b, a) in wins.get(key, set()) for a in models] for b in models], dtype=bool)
        for k, rank in zip(members, paired_ranks(values, beats), strict=True):
            out[k] = replace(board[k], rank=rank)
    return out
