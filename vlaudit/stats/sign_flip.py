"""The exact paired sign-flip (permutation) test on per-unit differences, clustered (VCA §19's paired design).

Two models scored on the same units give a difference d_i per record (A's credit minus B's). Under the null
hypothesis that the two models are exchangeable within each cluster (the resampling unit: a cycle, a stem, an
image), the sign of each cluster's total D_k = Σ_{i ∈ k} d_i is + or − with probability ½, independently. The
statistic is T = Σ_k D_k and the two-sided p-value

    p = P(|Σ_k s_k D_k| ≥ |T|),   s_k independent uniform on {−1, +1},

taken over all 2^K sign vectors (Fisher's randomisation test; Good, *Permutation Tests*, §3). Clusters with
D_k = 0 change nothing and a cluster's ½ credits are what they are: no continuous extension of a binomial is
involved, so the test has size ≤ α at every n and every share of ties (the old "½-win" sign test's did not).

How p is computed (``method`` says which):

* ``exact``: when every D_k is a multiple of ``resolution`` (credits 1 / ½ / 0 give multiples of ½), the
  distribution of Σ s_k D_k is counted exactly — clusters of equal |D_k| = v·resolution with multiplicity c
  contribute v·(2·Bin(c, ½) − c), and those distributions are convolved. This is the full enumeration of the
  2^K sign vectors, grouped by the sum they give; it is used while the convolutions take at most
  :data:`EXACT_LATTICE_WORK` multiply-adds (10,000 item-level cycles take a tenth of that);
* ``exact``: otherwise, with at most :data:`ENUMERATE_CLUSTERS` nonzero clusters, the 2^K sign vectors are
  enumerated one by one;
* ``monte-carlo``: otherwise ``n_permutations`` seeded random sign vectors, p = (1 + #{|T*| ≥ |T|}) / (B + 1)
  (never 0; the Monte Carlo standard error is about √(p(1 − p)/B)).

With every record its own cluster (the default) the test is the item-level sign-flip test; ten ½-wins and no
losses give p = 2 / 2^10 = 0.00195.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.stats import binom

from vlaudit.settings import BOOTSTRAP_SEED, COMPARE_PERMUTATIONS
from vlaudit.stats.paired import canonical_clusters, cluster_totals

#: the largest number of nonzero clusters whose 2^K sign vectors are enumerated one by one (off the lattice)
ENUMERATE_CLUSTERS = 16
#: the most multiply-adds the exact lattice distribution may take (about a third of a second)
EXACT_LATTICE_WORK = 300_000_000
#: relative float tolerance: a resampled |T*| equal to |T| up to rounding counts as extreme
_TOLERANCE = 1e-12

SignFlipMethod = Literal["exact", "monte-carlo"]


@dataclass(frozen=True)
class SignFlipTest:
    """The result of :func:`sign_flip_test`: two-sided ``p``, the observed total ``statistic`` Σ D_k, how p was
    computed, the number of clusters and of clusters with a nonzero total, and the Monte Carlo draws (0 when
    exact)."""

    p: float
    statistic: float
    method: SignFlipMethod
    n_clusters: int
    n_nonzero: int
    n_permutations: int


def sign_flip_test(differences: Sequence[float] | np.ndarray, clusters: Sequence[object] | np.ndarray | None = None,
                   *, resolution: float | None = 0.5, n_permutations: int = COMPARE_PERMUTATIONS,
                   seed: int = BOOTSTRAP_SEED) -> SignFlipTest:
    """The paired sign-flip test of the module docstring on record-level ``differences``.

    ``clusters``: one label per record (default: every record its own cluster); ``resolution``: the lattice
    the cluster totals lie on (½ for credit differences; None: none assumed)."""
    d = np.asarray(differences, dtype=np.float64).ravel()
    if not np.isfinite(d).all():
        raise ValueError("sign-flip test: the differences must be finite")
    codes, k = canonical_clusters(np.arange(d.size) if clusters is None else clusters, d.size)
    totals = cluster_totals(codes, k, d)[:, 0] if d.size else np.zeros(0)
    statistic = float(totals.sum())
    scale = max(float(np.abs(totals).sum()), 1.0)
    nonzero = np.abs(totals[np.abs(totals) > _TOLERANCE * scale])
    if nonzero.size == 0:
        return SignFlipTest(1.0, statistic, "exact", k, 0, 0)
    lattice = _on_lattice(nonzero, resolution)
    if lattice is not None and resolution and _lattice_work(lattice) <= EXACT_LATTICE_WORK:
        p = _lattice_p(lattice, abs(int(np.rint(statistic / resolution))))
        return SignFlipTest(p, statistic, "exact", k, int(nonzero.size), 0)
    if nonzero.size <= ENUMERATE_CLUSTERS:
        return SignFlipTest(_enumerated_p(nonzero, abs(statistic)), statistic, "exact", k, int(nonzero.size), 0)
    p = _monte_carlo_p(nonzero, abs(statistic), n_permutations, seed)
    return SignFlipTest(p, statistic, "monte-carlo", k, int(nonzero.size), n_permutations)


def _on_lattice(magnitudes: np.ndarray, resolution: float | None) -> np.ndarray | None:
    """|D_k| / resolution as integers, or None when some total is not a multiple of ``resolution``."""
    if not resolution:
        return None
    steps = magnitudes / resolution
    whole = np.rint(steps)
    if np.any(np.abs(steps - whole) > 1e-6):
        return None
    return whole.astype(np.int64)


def _lattice_work(steps: np.ndarray) -> int:
    """Multiply-adds of :func:`_lattice_p`: each convolution costs its two supports' product."""
    work, length = 0, 1
    for value, count in zip(*np.unique(steps, return_counts=True), strict=True):
        part = 2 * int(value) * int(count) + 1
        work += length * part
        length += part - 1
    return work


def _lattice_p(steps: np.ndarray, observed: int) -> float:
    """P(|Σ s_k a_k| ≥ observed) for positive integers a_k: the exact distribution by convolution."""
    pmf = np.ones(1)
    for value, count in zip(*np.unique(steps, return_counts=True), strict=True):
        # v·(2j − c), j ~ Bin(c, ½): mass at every 2v-th point of a support of 2vc + 1 points
        part = np.zeros(2 * int(value) * int(count) + 1)
        part[:: 2 * int(value)] = binom.pmf(np.arange(count + 1), count, 0.5)
        pmf = np.convolve(pmf, part)
    half = (pmf.size - 1) // 2
    sums = np.abs(np.arange(pmf.size) - half)
    return float(min(1.0, pmf[sums >= observed].sum()))


def _enumerated_p(magnitudes: np.ndarray, observed: float) -> float:
    """P(|Σ s_k a_k| ≥ observed) over all 2^K sign vectors, one by one."""
    k = magnitudes.size
    signs = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1) * 2.0 - 1.0
    tolerance = _TOLERANCE * max(float(magnitudes.sum()), 1.0)
    return float(np.mean(np.abs(signs @ magnitudes) >= observed - tolerance))


def _monte_carlo_p(magnitudes: np.ndarray, observed: float, n_permutations: int, seed: int) -> float:
    """(1 + #{|Σ s_k a_k| ≥ observed}) / (B + 1) over ``n_permutations`` seeded sign vectors, in blocks."""
    rng = np.random.default_rng(seed)
    tolerance = _TOLERANCE * max(float(magnitudes.sum()), 1.0)
    rows = max(1, 2_000_000 // magnitudes.size)
    extreme = 0
    for start in range(0, n_permutations, rows):
        block = min(rows, n_permutations - start)
        signs = rng.integers(0, 2, size=(block, magnitudes.size)).astype(np.float64) * 2.0 - 1.0
        extreme += int((np.abs(signs @ magnitudes) >= observed - tolerance).sum())
    return (1.0 + extreme) / (n_permutations + 1.0)
