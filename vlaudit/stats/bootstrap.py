"""Seeded percentile bootstrap with one index matrix reused by every quantity (VCA §19).

Resampling is vectorised: draw a ``(n_resamples, n_units)`` index matrix once, then every statistic is a
gather and a reduction over it. Clustered resampling draws whole clusters (e.g. same-image groups) and
weights each cluster by its count, which keeps all records of a cluster together.

:class:`ClusterBootstrap` turns the index matrix into a ``(n_resamples, n_clusters)`` count matrix once per
run; every rate is then Σ counts·numerator / Σ counts·denominator over cluster sums, i.e. one matrix product
for all quantities together, paired across quantities by construction; the product runs over blocks of
resamples redrawn from the seed, so memory does not grow with resamples × clusters. Defaults: 5,000 resamples, seed
20260719 (VCA §19; :mod:`vlaudit.settings`); the older helpers keep their ``seed=0`` default for the cycle metrics.

**Few clusters.** The plain percentile interval of k resampled clusters is too narrow when k is small: the
bootstrap variance of a mean is (k − 1)/k times the usual estimate, and the normal quantile ignores that the
spread itself is estimated from k clusters. The **expanded percentile** interval (Hesterberg 2015, "What
Teachers Should Know About the Bootstrap", *The American Statistician* 69(4), §4.4) keeps the percentile
interval's shape but reads the bootstrap distribution at the tail probability α' with

    Φ⁻¹(α'/2) = −√(k / (k − 1)) · t_{k−1, 1−α/2}

(:func:`expanded_tail`), a t-based small-k correction that tends to the percentile interval as k grows (at k =
50 it reads the 2.1% and 97.9% quantiles instead of 2.5% and 97.5%). ``method="expanded percentile"``
(:data:`EXPANDED`) is the default of ``vca report``, ``compare`` and the factorial's stem bootstrap; its
coverage, measured by :mod:`vlaudit.stats.coverage`, is printed in docs/concepts/statistics.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Final, Literal

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL

IntervalMethod = Literal["percentile", "expanded percentile"]
#: the plain two-sided percentile interval (the α/2 and 1 − α/2 quantiles)
PERCENTILE: Final[IntervalMethod] = "percentile"
#: Hesterberg's expanded percentile interval, the small-k correction of the module docstring
EXPANDED: Final[IntervalMethod] = "expanded percentile"

_BINCOUNT_CELLS = 1 << 16  # bins counted at a time by resample_counts (512 KB of int64)
CHUNK_CELLS = 1 << 22  # counts per block of resamples (32 MB float64): bounds the bootstrap's memory


def bootstrap_indices(n_units: int, n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> np.ndarray:
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


def resample_counts(indices: np.ndarray, n_units: int, *, chunk: int | None = None) -> np.ndarray:
    """How often each unit is drawn in each resample: ``(n_resamples, n_units)`` float64 weights."""
    indices = np.asarray(indices, dtype=np.int64)
    n_resamples = indices.shape[0]
    out = np.empty((n_resamples, n_units), dtype=np.float64)
    # one flat bincount per block of resamples (rows offset into their own bins), sized so that the bins stay
    # in cache: at 100k units one row at a time is 20x faster than 256
    chunk = chunk or max(1, min(256, _BINCOUNT_CELLS // max(n_units, 1)))
    offsets = (np.arange(chunk, dtype=np.int64) * n_units)[:, None]
    for start in range(0, n_resamples, chunk):
        block = indices[start:start + chunk]
        rows = block.shape[0]
        flat = np.bincount((block + offsets[:rows]).ravel(), minlength=rows * n_units)
        out[start:start + rows] = flat.reshape(rows, n_units)
    return out


def bootstrap_means(
    values: np.ndarray,
    *,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
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


def percentile_interval(samples: np.ndarray, level: float = CONFIDENCE_LEVEL) -> tuple[float, float]:
    """Two-sided percentile interval of a bootstrap distribution (NaNs ignored)."""
    alpha = (1.0 - level) / 2.0
    lo, hi = np.nanquantile(np.asarray(samples, dtype=np.float64), [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def expanded_tail(level: float, n_clusters: int) -> float:
    """The lower tail probability α'/2 at which the expanded percentile interval reads the bootstrap
    distribution: Φ(−√(k/(k − 1))·t_{k−1}(1 − α/2)), α = 1 − level (module docstring). With k ≤ 1 there is
    no spread to correct and the plain α/2 is returned (the interval is then degenerate anyway)."""
    alpha = (1.0 - level) / 2.0
    if n_clusters <= 1:
        return alpha
    k = float(n_clusters)
    return float(norm.cdf(-np.sqrt(k / (k - 1.0)) * student_t.ppf(1.0 - alpha, k - 1.0)))


def interval_tail(level: float, n_clusters: int | None, method: IntervalMethod = PERCENTILE) -> float:
    """The lower tail probability of ``method``: α/2 for :data:`PERCENTILE`, :func:`expanded_tail` for
    :data:`EXPANDED` (which needs the number of clusters)."""
    if method == PERCENTILE:
        return (1.0 - level) / 2.0
    if method != EXPANDED:
        raise ValueError(f"unknown interval method {method!r}; expected {PERCENTILE!r} or {EXPANDED!r}")
    if n_clusters is None:
        raise ValueError("the expanded percentile interval needs the number of clusters")
    return expanded_tail(level, n_clusters)


def percentile_intervals(samples: np.ndarray, level: float = CONFIDENCE_LEVEL, *, n_clusters: int | None = None,
                         method: IntervalMethod = PERCENTILE) -> np.ndarray:
    """Column-wise percentile intervals of a ``(n_resamples, q)`` matrix: a ``(q, 2)`` array (NaNs ignored);
    ``method=EXPANDED`` with ``n_clusters`` reads the expanded tails (:func:`interval_tail`).

    A column that is NaN in every resample (e.g. a rate over an empty stratum) gives ``[nan, nan]``.
    """
    return column_intervals(samples, level, n_clusters, method, _percentile_bounds)


#: the (lo, hi) bounds of each column of a ``(n_resamples, k)`` matrix with some finite value, at tail ``alpha``
ColumnBounds = Callable[[np.ndarray, float], tuple[np.ndarray, np.ndarray]]


def _percentile_bounds(finite: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The α and 1 − α quantiles of each column, NaNs ignored."""
    lo, hi = np.nanquantile(finite, [alpha, 1.0 - alpha], axis=0)
    return lo, hi


def column_intervals(samples: np.ndarray, level: float, n_clusters: int | None, method: IntervalMethod,
                     bounds: ColumnBounds) -> np.ndarray:
    """The ``(q, 2)`` intervals of the columns of a ``(n_resamples, q)`` matrix (a vector: one column) as
    ``bounds`` reads them at the lower tail α of :func:`interval_tail`; a column that is NaN in every resample
    gives ``[nan, nan]`` and is never passed to ``bounds``."""
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim == 1:
        samples = samples[:, None]
    alpha = interval_tail(level, n_clusters, method)
    out = np.full((samples.shape[1], 2), np.nan)
    finite = ~np.all(np.isnan(samples), axis=0)
    if finite.any():
        out[finite, 0], out[finite, 1] = bounds(samples[:, finite], alpha)
    return out


def count_chunks(n_units: int, n_resamples: int, seed: int, rows: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(start, counts)`` blocks of at most ``rows`` resamples, in order, whose concatenation is
    ``resample_counts(bootstrap_indices(n_units, n_resamples, seed), n_units)``: one generator drawn block by
    block gives the same stream as one draw of the whole matrix."""
    if n_units <= 0:
        raise ValueError("cannot bootstrap an empty sample")
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, rows):
        block = min(rows, n_resamples - start)
        yield start, resample_counts(rng.integers(0, n_units, size=(block, n_units)), n_units)


@dataclass(frozen=True)
class ClusterBootstrap:
    """One seeded resampling plan shared by every quantity of a run (paired bootstrap, VCA §19).

    ``codes[i]`` is the cluster of record i (a ``group_id``, or the record itself); ``counts[b, k]`` is how
    often cluster k is drawn in resample b. A resampled record-level mean is Σ_k counts·sums_k / Σ_k
    counts·sizes_k, i.e. the plain mean over the records of the drawn clusters, so every quantity computed
    from the same plan is paired with every other one.

    The count matrix is never held whole by the resampling methods: they redraw it in blocks of resamples
    (about :data:`CHUNK_CELLS` counts each) from the seed, so memory stays constant in resamples × clusters
    and the result is the same as from the whole matrix. :attr:`counts` materialises it for the callers that
    index it directly.
    """

    codes: np.ndarray
    n_clusters: int
    n_resamples: int
    seed: int
    chunk_cells: int = CHUNK_CELLS

    @classmethod
    def draw(
        cls,
        n_records: int,
        *,
        clusters: Sequence[object] | np.ndarray | None = None,
        n_resamples: int = BOOTSTRAP_RESAMPLES,
        seed: int = BOOTSTRAP_SEED,
        chunk_cells: int | None = None,
    ) -> ClusterBootstrap:
        """The plan for ``(n_resamples, n_clusters)`` counts (clusters in order of first appearance), drawn in
        blocks of about ``chunk_cells`` counts (default :data:`CHUNK_CELLS`)."""
        if clusters is None:
            codes, k = np.arange(n_records, dtype=np.int64), n_records
        else:
            codes, k = cluster_codes(clusters)
            if codes.size != n_records:
                raise ValueError(f"{codes.size} cluster labels for {n_records} records")
        if k <= 0:
            raise ValueError("cannot bootstrap an empty sample")
        return cls(codes, int(k), int(n_resamples), int(seed), CHUNK_CELLS if chunk_cells is None else chunk_cells)

    def chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        """``(start, counts[start:start + rows])`` blocks of the count matrix, in order."""
        if "counts" in self.__dict__:  # already materialised: no need to redraw
            yield 0, self.__dict__["counts"]
            return
        yield from count_chunks(self.n_clusters, self.n_resamples, self.seed,
                                max(1, self.chunk_cells // self.n_clusters))

    @cached_property
    def counts(self) -> np.ndarray:
        """The whole ``(n_resamples, n_clusters)`` float64 count matrix (memory grows with both)."""
        return np.concatenate([block for _, block in self.chunks()])

    def cluster_sums(self, values: np.ndarray) -> np.ndarray:
        """Sum record-level values (``(n,)`` or ``(n, q)``) within each cluster: ``(k,)`` or ``(k, q)``."""
        values = np.asarray(values, dtype=np.float64)
        if values.ndim == 1:
            return np.bincount(self.codes, weights=values, minlength=self.n_clusters)
        return np.column_stack([np.bincount(self.codes, weights=values[:, j], minlength=self.n_clusters)
                                for j in range(values.shape[1])]).reshape(self.n_clusters, values.shape[1])

    def cluster_sizes(self) -> np.ndarray:
        """Number of records in each cluster, float64 ``(k,)``."""
        return np.bincount(self.codes, minlength=self.n_clusters).astype(np.float64)

    def resample_cluster_values(self, values: np.ndarray) -> np.ndarray:
        """Σ_k counts[b, k]·values[k] for cluster-level ``values`` ``(k,)``/``(k, q)``: one matrix product.

        Stack every numerator and denominator a run needs into one ``values`` matrix to resample them all
        with a single product (the fastest path; :meth:`means` and :meth:`ratios` are conveniences).
        """
        values = np.asarray(values, dtype=np.float64)
        out = np.empty((self.n_resamples, *values.shape[1:]))
        for start, block in self.chunks():
            out[start:start + len(block)] = block @ values
        return out

    def sums(self, values: np.ndarray) -> np.ndarray:
        """Resampled sums of record-level values: ``(n_resamples,)`` or ``(n_resamples, q)``."""
        return self.resample_cluster_values(self.cluster_sums(values))

    def means(self, values: np.ndarray) -> np.ndarray:
        """Resampled record-level means (NaN where a resample has no records)."""
        sums = self.sums(values)
        sizes = self.resample_cluster_values(self.cluster_sizes())
        with np.errstate(invalid="ignore", divide="ignore"):
            return sums / (sizes[:, None] if sums.ndim == 2 else sizes)

    def ratios(self, numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
        """Resampled Σ numerator / Σ denominator per column (conditional rates; NaN for a zero denominator)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sums(numerators) / self.sums(denominators)

    def record_indices(self, resample: int) -> np.ndarray:
        """The record indices of one resample, each cluster repeated as drawn (for readable reference loops)."""
        order = np.argsort(self.codes, kind="stable")
        starts = np.searchsorted(self.codes[order], np.arange(self.n_clusters))
        sizes = np.bincount(self.codes, minlength=self.n_clusters)
        drawn = np.repeat(np.arange(self.n_clusters), self.counts[resample].astype(np.int64))
        return np.concatenate([order[starts[k]:starts[k] + sizes[k]] for k in drawn]) if drawn.size else \
            np.zeros(0, dtype=np.int64)
