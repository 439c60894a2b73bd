"""Closed-form intervals for proportions (VCA §19), item-level and corrected for clustering.

* :func:`wilson_interval`: the Wilson score interval of successes/n — right when the n records are
  independent (VCA §19 uses it for the factorial's model-level conditional proportions).
* :func:`clustered_wilson_interval`: the same interval over the *effective* sample size of clustered records
  (design-effect-corrected Wilson; Kish's effective n, Korn & Graubard 1998, *Survey Methodology* 24(2);
  evaluated for clustered surveys by Dean & Pagano 2015, *J. Survey Statistics and Methodology* 3(4)):

      p̂ = Σ_j y_j / Σ_j m_j                          (y_j successes, m_j counted records of cluster j)
      v  = k/(k − 1) · Σ_j (y_j − p̂·m_j)² / (Σ_j m_j)²  (the ratio estimator's with-replacement variance)
      n_eff = min(n, p̂(1 − p̂) / v)                   (n / design effect; never above n)

  and the Wilson interval of p̂ over n_eff with the t_{k−1} quantile in place of z (the spread is estimated
  from k clusters). With p̂ ∈ {0, 1} (v = 0) n_eff = n. With every record its own cluster the correction
  only swaps z for t_{n−1}. Simulated at intra-cluster correlation 0.3 with 9 records per cluster
  (:func:`vlaudit.stats.coverage.item_wilson_coverage`), the plain Wilson interval over the records covers
  about 70% at nominal 95%, the corrected one about 95% at 16 and 50 clusters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from vlaudit.settings import CONFIDENCE_LEVEL


def wilson_interval(successes: int, n: int, level: float = CONFIDENCE_LEVEL) -> tuple[float, float]:
    """Two-sided Wilson score interval for a binomial proportion successes/n (NaNs when n = 0).

    centre = (p̂ + z²/2n) / (1 + z²/n), half-width = z·sqrt(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n).
    """
    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= successes <= n:
        raise ValueError(f"successes={successes} must lie in [0, n={n}]")
    z = float(norm.ppf(0.5 + level / 2.0))
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson_bounds(successes: np.ndarray, n: np.ndarray, level: float = CONFIDENCE_LEVEL,
                  z: float | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`wilson_interval` elementwise over arrays (real-valued ``successes`` and ``n`` allowed, as an
    effective sample size gives them); ``z`` overrides the normal quantile. NaN where n ≤ 0."""
    x = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    q = float(norm.ppf(0.5 + level / 2.0)) if z is None else np.asarray(z, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = x / m
        denom = 1.0 + q * q / m
        centre = (p + q * q / (2 * m)) / denom
        half = q * np.sqrt(np.maximum(p * (1 - p), 0.0) / m + q * q / (4 * m * m)) / denom
    # p̂ = 0 (1) gives a lower (upper) bound of exactly 0 (1); the formula leaves a rounding residue there
    lo = np.where(m > 0, np.where(x <= 0, 0.0, np.maximum(0.0, centre - half)), np.nan)
    hi = np.where(m > 0, np.where(x >= m, 1.0, np.minimum(1.0, centre + half)), np.nan)
    return lo, hi


def clustered_wilson_bounds(cluster_successes: np.ndarray, cluster_sizes: np.ndarray,
                            level: float = CONFIDENCE_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """The design-effect-corrected Wilson interval (module docstring) along the last axis: ``(…, k)``
    successes y_j and counted records m_j per cluster (a cluster with m_j = 0 counts for nothing) → ``(…)``
    lower and upper bounds; NaN where no record is counted. k is the number of clusters with m_j > 0."""
    y = np.asarray(cluster_successes, dtype=np.float64)
    m = np.asarray(cluster_sizes, dtype=np.float64)
    n = m.sum(axis=-1)
    k = (m > 0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = y.sum(axis=-1) / n
        spread = ((y - p[..., None] * m) ** 2).sum(axis=-1)
        v = np.where(k > 1, k / np.maximum(k - 1, 1) * spread / (n * n), 0.0)
        n_eff = np.where(v > 0, np.minimum(n, p * (1.0 - p) / v), n)
    alpha = (1.0 - level) / 2.0
    z = np.where(k > 1, student_t.ppf(1.0 - alpha, np.maximum(k - 1, 1)), norm.ppf(1.0 - alpha))
    return wilson_bounds(p * n_eff, n_eff, level, z)


def clustered_wilson_interval(successes: Sequence[float] | np.ndarray, counted: Sequence[float] | np.ndarray,
                              clusters: Sequence[object] | np.ndarray,
                              level: float = CONFIDENCE_LEVEL) -> tuple[float, float]:
    """The design-effect-corrected Wilson interval of Σ successes / Σ counted over record-level columns
    (``counted`` the denominator indicator, e.g. Dep for credited precision) with one cluster label per
    record; (NaN, NaN) when nothing is counted."""
    y = np.asarray(successes, dtype=np.float64)
    m = np.asarray(counted, dtype=np.float64)
    labels = np.asarray(clusters, dtype=object).astype(str)
    if not (y.shape == m.shape == labels.shape):
        raise ValueError(f"{y.size} successes, {m.size} counted and {labels.size} cluster labels differ")
    _, codes = np.unique(labels, return_inverse=True)
    k = int(codes.max()) + 1 if codes.size else 0
    lo, hi = clustered_wilson_bounds(np.bincount(codes, weights=y * m, minlength=k),
                                     np.bincount(codes, weights=m, minlength=k), level)
    return float(lo), float(hi)
