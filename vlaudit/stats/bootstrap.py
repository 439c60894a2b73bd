"""Seeded percentile bootstrap with one index matrix reused by every quantity (VCA §19).

Resampling is vectorised: draw a ``(n_resamples, n_units)`` index matrix once, then every statistic is a
gather and a reduction over it. Clustered resampling draws whole clusters (e.g. same-image groups) and
weights each cluster by its count, which keeps all records of a cluster together.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DEFAULT_RESAMPLES = 5000


def bootstrap_indices(n_units: int, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """A ``(n_resamples, n_units)`` matrix of indices drawn uniformly with replacement (numpy PCG64)."""
    if n_units <= 0:
        raise ValueError("cannot bootstrap an empty sample")
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_units, size=(n_resamples, n_units))


def cluster_codes(clusters: Sequence[object] | np.ndarray) -> tuple[np.ndarray, int]:
    """Map cluster labels to dense codes ``0..k-1`` in order of first appearance; returns (codes, k)."""
    _, first, inverse = np.unique(np.asarray(clusters, dtype=object).astype(str), return_index=True,
                                  return_inverse=True)
    order = np.argsort(np.argsort(first))  # rank of each unique label by first appearance
    codes = order[inverse]
    return codes.astype(np.int64), int(len(first))


def resample_counts(indices: np.ndarray, n_units: int) -> np.ndarray:
    """How often each unit is drawn in each resample: ``(n_resamples, n_units)`` float64 weights."""
    n_resamples = indices.shape[0]
    counts = np.zeros((n_resamples, n_units), dtype=np.float64)
    rows = np.repeat(np.arange(n_resamples), indices.shape[1])
    np.add.at(counts, (rows, indices.ravel()), 1.0)
    return counts


def bootstrap_means(
    values: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    clusters: Sequence[object] | np.ndarray | None = None,
) -> np.ndarray:
    """Bootstrap distribution of the mean of ``values`` (float64), resampling items or whole clusters.

    With clusters, each resample draws k clusters with replacement and returns
    Σ_drawn cluster sums / Σ_drawn cluster sizes (the item-level mean of the resampled clusters).
    """
    values = np.asarray(values, dtype=np.float64)
    if clusters is None:
        idx = bootstrap_indices(values.size, n_resamples, seed)
        return values[idx].mean(axis=1)
    codes, k = cluster_codes(clusters)
    sums = np.bincount(codes, weights=values, minlength=k)
    sizes = np.bincount(codes, minlength=k).astype(np.float64)
    weights = resample_counts(bootstrap_indices(k, n_resamples, seed), k)
    return (weights @ sums) / (weights @ sizes)


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Two-sided percentile interval of a bootstrap distribution (NaNs ignored)."""
    alpha = (1.0 - level) / 2.0
    lo, hi = np.nanquantile(np.asarray(samples, dtype=np.float64), [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def bootstrap_mean_ci(
    values: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
    clusters: Sequence[object] | np.ndarray | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``values``."""
    return percentile_interval(
        bootstrap_means(values, n_resamples=n_resamples, seed=seed, clusters=clusters), level
    )
