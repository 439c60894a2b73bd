"""Seeded simulations of the small-sample behaviour of the clustered statistics (the figures of
docs/concepts/statistics.md and of :data:`~vlaudit.settings.SMALL_SAMPLE_COVERAGE`).

Clustered binary data: k clusters of ``size`` records; cluster j has success probability p_j ~ Beta with mean
``rate`` and intra-cluster correlation ``icc`` (Beta(a, b) with a + b = 1/icc − 1); records are Bernoulli(p_j).
Two models differ per cluster but not on average: model A's records are Bernoulli(p_j + δ_j), B's
Bernoulli(p_j − δ_j), δ_j = ±``spread`` with probability ½ each (clipped to [0, 1]), so the paired
differences are correlated within a cluster — the null an item-level test gets wrong.

* :func:`bootstrap_coverage`: how often the two-sided cluster-bootstrap interval of the rate (the interval of
  ``vca report`` and of each model in ``compare``) covers the true rate, for the plain percentile interval or
  the expanded percentile interval (:data:`~vlaudit.stats.bootstrap.EXPANDED`, the default of those outputs).
* :func:`difference_coverage`: the same for the paired difference of two exchangeable models on the same
  clusters (true difference 0; the interval of A − B in ``compare``).
* :func:`item_wilson_coverage`: how often an item-level interval of a clustered rate — the plain Wilson
  interval over all k·size records, or the design-effect-corrected one
  (:func:`vlaudit.stats.intervals.clustered_wilson_interval`) — covers the true rate.
* :func:`sign_flip_size`: the rejection rate at α of the paired cluster sign-flip test under that null.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlaudit.settings import CONFIDENCE_LEVEL, COVERAGE_SIMULATION_RESAMPLES
from vlaudit.stats.bootstrap import EXPANDED, IntervalMethod, interval_tail
from vlaudit.stats.intervals import clustered_wilson_bounds, wilson_bounds
from vlaudit.stats.paired import cluster_permutation_pvalues

#: replicates whose resamples are drawn and reduced together (bounds the simulation's memory)
_REPS_PER_BLOCK = 64


@dataclass(frozen=True)
class Clustered:
    """The simulated design."""

    n_clusters: int
    size: int = 9
    rate: float = 0.7
    icc: float = 0.3
    spread: float = 0.2


def _cluster_probs(rng: np.random.Generator, design: Clustered, reps: int) -> np.ndarray:
    total = 1.0 / design.icc - 1.0
    return rng.beta(design.rate * total, (1.0 - design.rate) * total, size=(reps, design.n_clusters))


def _percentile_cover(stat_sums: np.ndarray, sizes: float, truth: float, rng: np.random.Generator,
                      n_resamples: int, level: float, method: IntervalMethod = EXPANDED) -> float:
    """Share of replicates whose ``method`` interval of Σ cluster sums / (k·size) contains ``truth``.

    Vectorised over blocks of replicates; the multinomial draws are those of one draw per replicate in order
    (numpy fills a ``(reps, B, k)`` request row by row), so the figures do not depend on the block size."""
    reps, k = stat_sums.shape
    alpha = interval_tail(level, k, method)
    covered = 0
    for start in range(0, reps, _REPS_PER_BLOCK):
        block = stat_sums[start:start + _REPS_PER_BLOCK]
        counts = rng.multinomial(k, np.full(k, 1.0 / k), size=(len(block), n_resamples)).astype(np.float64)
        means = np.einsum("rbk,rk->rb", counts, block) / (k * sizes)
        lo, hi = np.quantile(means, [alpha, 1.0 - alpha], axis=1)
        covered += int(((lo <= truth) & (truth <= hi)).sum())
    return covered / reps


def _paired(rng: np.random.Generator, design: Clustered, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-record outcomes ``(reps, k, size)`` of models A and B under the clustered null."""
    delta = design.spread * rng.choice((-1.0, 1.0), size=probs.shape)
    shape = (*probs.shape, design.size)
    a = rng.random(shape) < np.clip(probs + delta, 0.0, 1.0)[..., None]
    b = rng.random(shape) < np.clip(probs - delta, 0.0, 1.0)[..., None]
    return a.astype(np.float64), b.astype(np.float64)


def bootstrap_coverage(design: Clustered, *, reps: int = 1000, n_resamples: int = COVERAGE_SIMULATION_RESAMPLES,
                       seed: int = 0, level: float = CONFIDENCE_LEVEL, method: IntervalMethod = EXPANDED) -> float:
    """Coverage of the ``method`` cluster-bootstrap interval of one model's rate."""
    rng = np.random.default_rng(seed)
    probs = _cluster_probs(rng, design, reps)
    sums = rng.binomial(design.size, probs).astype(np.float64)
    return _percentile_cover(sums, design.size, design.rate, rng, n_resamples, level, method)


def difference_coverage(design: Clustered, *, reps: int = 1000, n_resamples: int = COVERAGE_SIMULATION_RESAMPLES,
                        seed: int = 0, level: float = CONFIDENCE_LEVEL, method: IntervalMethod = EXPANDED) -> float:
    """Coverage of the paired ``method`` cluster-bootstrap interval of A − B (the clustered null, truth 0)."""
    rng = np.random.default_rng(seed)
    a, b = _paired(rng, design, _cluster_probs(rng, design, reps))
    return _percentile_cover((a - b).sum(axis=2), design.size, 0.0, rng, n_resamples, level, method)


def item_wilson_coverage(design: Clustered, *, reps: int = 1000, seed: int = 0, level: float = CONFIDENCE_LEVEL,
                         clustered: bool = True) -> float:
    """Coverage of the Wilson interval of the rate over all k·size records: design-effect corrected over the
    clusters (``clustered``, :func:`~vlaudit.stats.intervals.clustered_wilson_interval`) or the plain
    item-level one (the clusters ignored). Closed form, so every replicate is computed at once."""
    rng = np.random.default_rng(seed)
    sums = rng.binomial(design.size, _cluster_probs(rng, design, reps)).astype(np.float64)
    sizes = np.full_like(sums, float(design.size))
    if clustered:
        lo, hi = clustered_wilson_bounds(sums, sizes, level)
    else:
        lo, hi = wilson_bounds(sums.sum(axis=1), sizes.sum(axis=1), level)
    return float(np.mean((lo <= design.rate) & (design.rate <= hi)))


def sign_flip_size(design: Clustered, *, reps: int = 400, n_permutations: int = 999, seed: int = 0,
                   alpha: float = 0.05, by_item: bool = False) -> float:
    """Rejection rate at ``alpha`` of the paired sign-flip test on A − B under the clustered null: flipping
    whole clusters (the test ``compare`` runs), or each record alone (``by_item``: the unit ignored)."""
    rng = np.random.default_rng(seed)
    a, b = _paired(rng, design, _cluster_probs(rng, design, reps))
    n = design.n_clusters * design.size
    clusters = np.arange(n) if by_item else np.repeat(np.arange(design.n_clusters), design.size)
    rejected = 0
    for r in range(reps):
        d = (a[r] - b[r]).ravel()
        p = cluster_permutation_pvalues(d, clusters, n_permutations=n_permutations, seed=seed + r)[0]
        rejected += int(p <= alpha)
    return rejected / reps
