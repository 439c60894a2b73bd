"""The two-way (image_1 × image_2) cluster bootstrap of paired ratio metrics: the pigeonhole bootstrap.

A cycle (cycle paper §2.1) links two images, ``image_1`` and ``image_2``; cycles that share an image on either
side are dependent, and joining every two cycles that share one (``--cluster image``: connected components)
can leave a handful of clusters, or one. The pigeonhole bootstrap (Owen 2007, "The pigeonhole bootstrap",
*Annals of Applied Statistics* 1(2)) keeps both sources of dependence without merging them: each resample
draws the k₁ ``image_1`` values and, independently, the k₂ ``image_2`` values with replacement, and weights
cycle c by the product of its two images' draw counts,

    W_bc = u_b[image_1(c)] · v_b[image_2(c)],   a resampled ratio = Σ_c W_bc·num_c / Σ_c W_bc·den_c,

so a cycle is drawn as often as both its images are (never when either is not drawn). Owen shows its variance
estimate is mildly conservative for the mean of a crossed two-way random-effects design. Every model and metric
uses the same u, v (paired across models); intervals are read from the resamples as
:func:`vlaudit.stats.paired.paired_bootstrap` reads its own (expanded percentile over min(k₁, k₂) clusters by
default: the smaller factor bounds what the data can say).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL
from vlaudit.stats.bootstrap import CHUNK_CELLS, EXPANDED, IntervalMethod, cluster_codes, resample_counts
from vlaudit.stats.paired import PairedBootstrap, antisymmetric_interval


def two_way_weights(first: np.ndarray, second: np.ndarray, k1: int, k2: int, n_resamples: int, seed: int,
                    rows: int) -> list[np.ndarray]:
    """Blocks of ``(rows, n)`` cycle weights u[first]·v[second] (``first``/``second`` dense image codes): u
    drawn from the generator seeded ``[seed, 1]``, v from ``[seed, 2]``, so the draws do not depend on the
    block size."""
    draw_u, draw_v = np.random.default_rng([seed, 1]), np.random.default_rng([seed, 2])
    out = []
    for start in range(0, n_resamples, rows):
        block = min(rows, n_resamples - start)
        u = resample_counts(draw_u.integers(0, k1, size=(block, k1)), k1)
        v = resample_counts(draw_v.integers(0, k2, size=(block, k2)), k2)
        out.append(u[:, first] * v[:, second])
    return out


def two_way_bootstrap(numerators: np.ndarray, denominators: np.ndarray, image_1: Sequence[object] | np.ndarray,
                      image_2: Sequence[object] | np.ndarray, *, n_resamples: int = BOOTSTRAP_RESAMPLES,
                      seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL,
                      method: IntervalMethod = EXPANDED, chunk_cells: int = CHUNK_CELLS) -> PairedBootstrap:
    """The pigeonhole bootstrap of the module docstring for ``(m, n, q)`` record-level numerators and
    denominators (models × cycles × metrics), ``image_1``/``image_2`` the n cycles' two images.

    Returns a :class:`~vlaudit.stats.paired.PairedBootstrap` whose ``n_clusters`` is min(k₁, k₂)."""
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if num.ndim != 3 or num.shape != den.shape:
        raise ValueError(f"numerators {num.shape} and denominators {den.shape} must be the same (m, n, q)")
    m, n, q = num.shape
    first, k1 = cluster_codes(image_1)
    second, k2 = cluster_codes(image_2)
    if first.size != n or second.size != n:
        raise ValueError(f"{first.size} image_1 and {second.size} image_2 labels for {n} cycles")
    stacked = np.concatenate([num.transpose(1, 0, 2).reshape(n, m * q), den.transpose(1, 0, 2).reshape(n, m * q)],
                             axis=1)
    sums = np.empty((n_resamples, 2 * m * q))
    start = 0
    for weights in two_way_weights(first, second, k1, k2, n_resamples, seed, max(1, chunk_cells // max(n, 1))):
        sums[start:start + len(weights)] = weights @ stacked
        start += len(weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = (sums[:, : m * q] / sums[:, m * q:]).reshape(n_resamples, m, q)
        values = num.sum(axis=1) / den.sum(axis=1)
    k = min(k1, k2)
    intervals = antisymmetric_interval(samples.reshape(n_resamples, m * q), level, n_clusters=k,
                                       method=method).reshape(m, q, 2)
    diff_intervals = np.zeros((m, m, q, 2))
    for a in range(m):
        for b in range(a + 1, m):
            diff_intervals[a, b] = antisymmetric_interval(samples[:, a] - samples[:, b], level, n_clusters=k,
                                                          method=method)
            diff_intervals[b, a] = -diff_intervals[a, b][:, ::-1]
    return PairedBootstrap(values, intervals, values[:, None, :] - values[None, :, :], diff_intervals, k,
                           n_resamples, seed, method)
