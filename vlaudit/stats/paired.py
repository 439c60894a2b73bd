"""Paired comparison of models scored on the same items (VCA §19's paired clustered bootstrap, two models).

* :func:`paired_bootstrap`: one set of resampled clusters (the group id, else the item) shared by every model
  and every metric. A metric is a ratio Σ numerator / Σ denominator over the drawn clusters (the rates of
  ``vca report``), so a model's value and every difference between two models come from the same count
  matrix, drawn in blocks of resamples (:data:`~vlaudit.stats.bootstrap.CHUNK_CELLS` counts each) so memory
  does not grow with resamples × clusters.
* :func:`exact_mcnemar`: the exact (binomial) McNemar test on the discordant counts of a binary event,
  p = min(1, 2·P[Bin(b + c, ½) ≤ min(b, c)]).
* :func:`cluster_permutation_pvalues`: the paired cluster permutation test: within each cluster the two
  models' labels are swapped with probability ½, i.e. the cluster's difference changes sign; two-sided
  p = (1 + #{|Σ s_k d_k| ≥ |Σ d_k|}) / (n + 1).
* :func:`holm`: Holm's step-down adjustment of one family of p-values (the families:
  :mod:`vlaudit.stats.multiplicity`).
* Leaderboard ranks come from the paired comparisons themselves (:func:`vlaudit.stats.ranking.paired_ranks`).

Clusters are coded in sorted order of their labels and records are summed within a cluster in a canonical
order, so the order of the records changes no bit of any result; an interval of a difference is computed so
that swapping the two models negates it exactly (:func:`antisymmetric_interval`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, COMPARE_PERMUTATIONS, CONFIDENCE_LEVEL
from vlaudit.stats.bootstrap import (
    CHUNK_CELLS,
    EXPANDED,
    PERCENTILE,
    ClusterBootstrap,
    IntervalMethod,
    column_intervals,
)


def canonical_clusters(clusters: Sequence[object] | np.ndarray | None, n_records: int) -> tuple[np.ndarray, int]:
    """Dense cluster codes in sorted order of the labels (each record its own cluster when None)."""
    if clusters is None:
        raise ValueError("clusters are required: pass the item ids when items are independent")
    labels = np.asarray(clusters, dtype=object).astype(str)
    if labels.size != n_records:
        raise ValueError(f"{labels.size} cluster labels for {n_records} records")
    unique, codes = np.unique(labels, return_inverse=True)
    return codes.astype(np.int64), int(unique.size)


def cluster_totals(codes: np.ndarray, n_clusters: int, values: np.ndarray) -> np.ndarray:
    """Σ of record-level ``values`` ``(n, c)`` within each cluster, summed in an order fixed by the values."""
    values = np.asarray(values, dtype=np.float64).reshape(len(codes), -1)
    # a canonical record order (by cluster, then by value) makes every float sum independent of input order
    order = np.lexsort((*values.T[::-1], codes))
    out = np.zeros((n_clusters, values.shape[1]))
    for j in range(values.shape[1]):
        out[:, j] = np.bincount(codes[order], weights=values[order, j], minlength=n_clusters)
    return out


def antisymmetric_interval(samples: np.ndarray, level: float = CONFIDENCE_LEVEL, *, n_clusters: int | None = None,
                           method: IntervalMethod = PERCENTILE) -> np.ndarray:
    """Column-wise percentile intervals ``(q, 2)`` with interval(−x) = −interval(x) reversed, bit for bit.

    lo is the α quantile of x and hi minus the α quantile of −x (α = (1 − level)/2, or the expanded tail of
    :func:`vlaudit.stats.bootstrap.interval_tail` for ``method=EXPANDED`` over ``n_clusters``); NaNs are
    ignored and an all-NaN column gives ``[nan, nan]``.
    """
    return column_intervals(samples, level, n_clusters, method, _antisymmetric_bounds)


def _antisymmetric_bounds(finite: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """lo = the α quantile of each column, hi = minus the α quantile of its negation."""
    # np.quantile equals np.nanquantile without NaNs and is many times faster
    quantile = np.nanquantile if np.isnan(finite).any() else np.quantile
    return quantile(finite, alpha, axis=0), -quantile(-finite, alpha, axis=0)


@dataclass(frozen=True)
class PairedBootstrap:
    """Values, intervals and pairwise differences of ``m`` models × ``q`` metrics on shared resamples.

    ``values[a, j]`` is model a's metric j on the full sample; ``intervals[a, j]`` its percentile interval;
    ``difference[a, b, j]`` = values[a, j] − values[b, j] and ``difference_intervals[a, b, j]`` the interval
    of the resampled difference (exactly the negation of ``[b, a, j]`` reversed; zero on the diagonal).
    """

    values: np.ndarray
    intervals: np.ndarray
    difference: np.ndarray
    difference_intervals: np.ndarray
    n_clusters: int
    n_resamples: int
    seed: int
    #: how the intervals read the resamples (:data:`~vlaudit.stats.bootstrap.EXPANDED` by default)
    method: IntervalMethod = EXPANDED


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def resampled_ratios(num_totals: np.ndarray, den_totals: np.ndarray, codes: np.ndarray, n_clusters: int, *,
                     n_resamples: int, seed: int, chunk_cells: int = CHUNK_CELLS) -> np.ndarray:
    """``(n_resamples, m, q)`` resampled Σ num / Σ den from cluster totals ``(k, m, q)``: one matrix product per
    block of resamples for every model and metric together."""
    k, m, q = num_totals.shape
    plan = ClusterBootstrap(codes, n_clusters, n_resamples, seed, chunk_cells)
    stacked = np.concatenate([num_totals.reshape(k, m * q), den_totals.reshape(k, m * q)], axis=1)
    sums = plan.resample_cluster_values(stacked)
    return _ratio(sums[:, : m * q], sums[:, m * q:]).reshape(n_resamples, m, q)


def paired_bootstrap(numerators: np.ndarray, denominators: np.ndarray, clusters: Sequence[object] | np.ndarray, *,
                     n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED,
                     level: float = CONFIDENCE_LEVEL, chunk_cells: int = CHUNK_CELLS,
                     method: IntervalMethod = EXPANDED) -> PairedBootstrap:
    """Paired clustered bootstrap of ``m`` models' ratio metrics (see the module docstring).

    ``numerators`` and ``denominators`` are ``(m, n, q)`` record-level columns (models × records × metrics),
    aligned on the same records; ``clusters`` the ``n`` cluster labels (the item ids for independent items);
    ``method``: the interval (default the expanded percentile over the k clusters, which holds its coverage at
    few clusters; :data:`~vlaudit.stats.bootstrap.PERCENTILE` the plain one).
    """
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if num.ndim != 3 or num.shape != den.shape:
        raise ValueError(f"numerators {num.shape} and denominators {den.shape} must be the same (m, n, q)")
    m, n, q = num.shape
    codes, k = canonical_clusters(clusters, n)
    num_totals = np.stack([cluster_totals(codes, k, num[a]) for a in range(m)], axis=1)
    den_totals = np.stack([cluster_totals(codes, k, den[a]) for a in range(m)], axis=1)
    values = _ratio(num_totals.sum(axis=0), den_totals.sum(axis=0))
    samples = resampled_ratios(num_totals, den_totals, codes, k, n_resamples=n_resamples, seed=seed,
                               chunk_cells=chunk_cells)
    intervals = antisymmetric_interval(samples.reshape(n_resamples, m * q), level, n_clusters=k, method=method).reshape(m, q, 2)
    difference = values[:, None, :] - values[None, :, :]
    diff_intervals = np.zeros((m, m, q, 2))
    for a in range(m):
        for b in range(a + 1, m):
            diff_intervals[a, b] = antisymmetric_interval(samples[:, a] - samples[:, b], level, n_clusters=k, method=method)
            diff_intervals[b, a] = -diff_intervals[a, b][:, ::-1]
    return PairedBootstrap(values, intervals, difference, diff_intervals, k, n_resamples, seed, method)


def paired_bootstrap_loop(numerators: np.ndarray, denominators: np.ndarray,
                          clusters: Sequence[object] | np.ndarray, *, n_resamples: int = BOOTSTRAP_RESAMPLES,
                          seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL,
                          method: IntervalMethod = EXPANDED) -> PairedBootstrap:
    """The readable reference of :func:`paired_bootstrap`: one resample at a time, as record indices.

    Each resample gathers the records of the drawn clusters (each as often as drawn) and takes Σ num / Σ den
    per model and metric; the draws are the same as the vectorised path's.
    """
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    m, n, q = num.shape
    codes, k = canonical_clusters(clusters, n)
    plan = ClusterBootstrap(codes, k, n_resamples, seed)
    samples = np.empty((n_resamples, m, q))
    for b in range(n_resamples):
        drawn = plan.record_indices(b)
        samples[b] = _ratio(num[:, drawn].sum(axis=1), den[:, drawn].sum(axis=1))
    values = _ratio(num.sum(axis=1), den.sum(axis=1))
    intervals = antisymmetric_interval(samples.reshape(n_resamples, m * q), level, n_clusters=k, method=method).reshape(m, q, 2)
    diff_intervals = np.zeros((m, m, q, 2))
    for a in range(m):
        for b in range(m):
            if a != b:
                diff_intervals[a, b] = antisymmetric_interval(samples[:, a] - samples[:, b], level, n_clusters=k, method=method)
    return PairedBootstrap(values, intervals, values[:, None, :] - values[None, :, :], diff_intervals, k,
                           n_resamples, seed, method)


def exact_mcnemar(a_events: np.ndarray, b_events: np.ndarray) -> float:
    """Exact McNemar p-value of two paired binary events: b = #(A ∧ ¬B), c = #(¬A ∧ B),
    p = min(1, 2·P[Bin(b + c, ½) ≤ min(b, c)]) (1 when no item is discordant)."""
    a = np.asarray(a_events, dtype=bool)
    b = np.asarray(b_events, dtype=bool)
    return mcnemar_from_counts(int((a & ~b).sum()), int((~a & b).sum()))


def mcnemar_from_counts(only_a: int, only_b: int) -> float:
    """The exact McNemar p-value from the two discordant counts (see :func:`exact_mcnemar`)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(only_a, only_b), n, 0.5)))


def cluster_permutation_pvalues(differences: np.ndarray, clusters: Sequence[object] | np.ndarray, *,
                                n_permutations: int = COMPARE_PERMUTATIONS, seed: int = BOOTSTRAP_SEED,
                                chunk_cells: int = CHUNK_CELLS) -> np.ndarray:
    """Two-sided paired cluster permutation p-values of ``q`` metrics (see the module docstring).

    ``differences`` is ``(n, q)``: record-level numerator of model A minus that of model B, for metrics whose
    denominator the two models share (so the difference of ratios is Σ d / a constant). The sign flips are
    drawn per cluster (sorted label order) from ``seed``, in blocks of about ``chunk_cells`` signs.
    """
    d = np.asarray(differences, dtype=np.float64)
    d = d.reshape(d.shape[0], -1)
    codes, k = canonical_clusters(clusters, d.shape[0])
    totals = cluster_totals(codes, k, d)
    observed = np.abs(totals.sum(axis=0))
    # a float tolerance, so that a resample equal to the observed sum up to rounding counts as extreme
    tolerance = 1e-12 * np.maximum(np.abs(totals).sum(axis=0), 1.0)
    extreme = np.zeros(d.shape[1], dtype=np.int64)
    rng = np.random.default_rng(seed)
    rows = max(1, chunk_cells // k)
    for start in range(0, n_permutations, rows):
        block = min(rows, n_permutations - start)
        signs = rng.integers(0, 2, size=(block, k)).astype(np.float64) * 2.0 - 1.0
        extreme += (np.abs(signs @ totals) >= observed - tolerance).sum(axis=0)
    return (1.0 + extreme) / (n_permutations + 1.0)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values (None stays None and is not counted among the comparisons):
    sorted ascending, p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j))."""
    present = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    m = len(present)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (m - rank) * float(p)))
        out[i] = running
    return out


