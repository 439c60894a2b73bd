"""Scoring per-pair scores under a suite's metric: which items a scorer solves, and its accuracy with an interval.

An :class:`ItemMetric` is a suite's per-item ``outcomes`` (a registered suite's own, with its tie rule) and
the column that says an item is solved. Where a source has no suite metric, :data:`DEFAULT_METRIC` applies:

    item solved  ⇔  for every image row with a positive and a negative,
                    every positive text scores strictly higher than every negative text of that image

(``s(i, j⁺) > s(i, j⁻)``; a tie counts wrong). This is SugarCrepe's and What's Up's accuracy for one positive
per image, Winoground's *text score* on a 2×2 block, and the cycle paper's text-side pairwise check on a
cycle. An item with no such row has no outcome (NaN) and is left out of the mean.

Accuracies are item means; their interval is the seeded percentile bootstrap over **items** (the resampling
unit; :func:`vlaudit.stats.bootstrap.count_chunks`), all quantities on the same resamples (paired).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.metrics.giveaway.table import PairTable
from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.records import SuiteItem
from vlaudit.results.suites import OfficialFigure
from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL
from vlaudit.stats.bootstrap import count_chunks, percentile_intervals

DEFAULT_TIE_RULE = "strict >: a tie between a positive and a negative counts wrong"
DEFAULT_NAME = "each positive > each negative of its image"


def default_outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """The default metric's per-item outcome (module docstring) from score matrices: column ``correct``."""
    table = PairTable.from_items(items)
    flat = np.concatenate([np.asarray(m, dtype=np.float64).ravel() for m in scores.pairs]) if items else np.zeros(0)
    return Outcomes(("correct",), default_solved(table, flat)[:, None])


def default_solved(table: PairTable, flat: np.ndarray) -> np.ndarray:
    """Per item: 1.0 solved, 0.0 not, NaN without a comparison (the default metric), from per-pair scores."""
    n_items = len(table.items)
    out = np.full(n_items, np.nan)
    positive, negative = table.comparisons()
    if positive.size == 0:
        return out
    win = np.asarray(flat, dtype=np.float64)[positive] > np.asarray(flat, dtype=np.float64)[negative]
    item = table.item[positive]
    total = np.bincount(item, minlength=n_items)
    wins = np.bincount(item, weights=win, minlength=n_items)
    has = total > 0
    out[has] = (wins[has] == total[has]).astype(np.float64)
    return out


@dataclass(frozen=True)
class ItemMetric:
    """A suite's per-item metric: ``outcomes`` (official, with its tie rule), ``column`` the outcome that
    says an item is solved (1.0; default: the first column), optional ``aggregate`` (the official figures)."""

    name: str
    tie_rule: str
    outcomes: Callable[[Sequence[SuiteItem], SuiteScores], Outcomes] | None = None
    aggregate: Callable[[Sequence[SuiteItem], Outcomes], list[OfficialFigure]] | None = None
    column: str | None = None

    def solved(self, table: PairTable, flat: np.ndarray) -> np.ndarray:
        """Per item: 1.0 where the scores solve it, 0.0 where not, NaN where the metric has no outcome."""
        if self.outcomes is None:
            return default_solved(table, flat)
        outcomes = self.outcomes(table.items, SuiteScores(table.matrices(flat)))
        values = outcomes.column(self.column) if self.column else outcomes.values[:, 0]
        return np.where(np.isnan(values), np.nan, (values >= 1.0).astype(np.float64))

    def official(self, table: PairTable, flat: np.ndarray, keep: np.ndarray | None = None) -> float | None:
        """The first official figure's value (on the items ``keep`` selects), or None without an aggregate."""
        if self.outcomes is None or self.aggregate is None:
            return None
        mask = np.ones(len(table.items), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
        if not mask.any():
            return None
        outcomes = self.outcomes(table.items, SuiteScores(table.matrices(flat))).subset(mask)
        figures = self.aggregate([it for it, k in zip(table.items, mask, strict=True) if k], outcomes)
        value = figures[0].value if figures else None
        return float(value) if isinstance(value, float) else None


DEFAULT_METRIC = ItemMetric(DEFAULT_NAME, DEFAULT_TIE_RULE)


@dataclass(frozen=True)
class Rate:
    """An item mean with its bootstrap interval (``unit``: what was resampled) and its item count."""

    value: float
    low: float
    high: float
    n: int


def item_rates(values: np.ndarray, masks: np.ndarray | None = None, *, n_resamples: int = BOOTSTRAP_RESAMPLES,
               seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL) -> list[Rate]:
    """Means of the columns of ``values`` (items × q; NaN = no outcome) over the items each column of
    ``masks`` keeps, with paired percentile intervals from one item bootstrap (the same resamples for every
    column). Memory stays bounded: resamples are drawn in blocks."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n, q = values.shape
    keep = np.ones((n, q), dtype=bool) if masks is None else np.asarray(masks, dtype=bool).reshape(n, q)
    den = (keep & ~np.isnan(values)).astype(np.float64)
    num = np.where(den > 0, values, 0.0)
    point = [float(num[:, c].sum() / den[:, c].sum()) if den[:, c].sum() else float("nan") for c in range(q)]
    if n == 0:
        return [Rate(v, float("nan"), float("nan"), 0) for v in point]
    samples = np.empty((n_resamples, q))
    rows = max(1, (1 << 22) // max(n, 1))
    for start, counts in count_chunks(n, n_resamples, seed, rows):
        with np.errstate(invalid="ignore", divide="ignore"):
            samples[start:start + counts.shape[0]] = (counts @ num) / (counts @ den)
    intervals = percentile_intervals(samples, level)
    return [Rate(point[c], float(intervals[c, 0]), float(intervals[c, 1]), int(den[:, c].sum())) for c in range(q)]


def paired_difference(values: np.ndarray, keep: np.ndarray, *, n_resamples: int = BOOTSTRAP_RESAMPLES,
                      seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL) -> tuple[Rate, Rate, Rate]:
    """(full, filtered, filtered − full) of per-item ``values``: the mean over all items, over the items
    ``keep`` selects, and their difference, each with an interval from the same item resamples (paired)."""
    values = np.asarray(values, dtype=np.float64)
    keep = np.asarray(keep, dtype=bool)
    n = values.size
    valid = ~np.isnan(values)
    num = np.where(valid, values, 0.0)
    den_full, den_kept = valid.astype(np.float64), (valid & keep).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        full = num.sum() / den_full.sum()
        kept = (num * den_kept).sum() / den_kept.sum()
    samples = np.empty((n_resamples, 3))
    rows = max(1, (1 << 22) // max(n, 1))
    for start, counts in count_chunks(n, n_resamples, seed, rows):
        with np.errstate(invalid="ignore", divide="ignore"):
            a = (counts @ num) / (counts @ den_full)
            b = (counts @ (num * den_kept)) / (counts @ den_kept)
        samples[start:start + counts.shape[0]] = np.stack([a, b, b - a], axis=1)
    iv = percentile_intervals(samples, level)
    counts_ = (int(den_full.sum()), int(den_kept.sum()), int(den_kept.sum()))
    points = (float(full), float(kept), float(kept - full))
    full_rate, kept_rate, diff_rate = (Rate(points[c], float(iv[c, 0]), float(iv[c, 1]), counts_[c]) for c in range(3))
    return full_rate, kept_rate, diff_rate
