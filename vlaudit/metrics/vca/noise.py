"""The numerical noise floor of a backend and the decisions inside it (VCA §3 decisions, §19 statistics).

A credit decision is a sign: correctness is the sign of the margin m_o, Dep the sign of G_img (VCA §3). When
re-scoring the same (item, context) under a perturbation that leaves the mathematics unchanged (batch size,
padding side, dtype, attention kernel, prefix cache) moves the margin by Δ, a decision closer to zero than the
typical |Δ| is not resolved by the model's numbers.

* :func:`delta_summary` — median / p99 / max |Δ margin| and the margin sign flips of one perturbation;
* :func:`quantile_upper_bound` — a distribution-free upper confidence bound of a quantile from order
  statistics: for n independent values X_(1) ≤ … ≤ X_(n), P(X_(u) ≥ ξ_q) = P(Bin(n, q) ≤ u − 1), so X_(u)
  with u the smallest order whose probability reaches the confidence level is an upper bound of the q-quantile
  ξ_q at that level (Hahn & Meeker, *Statistical Intervals*, §5.3; David & Nagaraja, *Order Statistics*,
  §7.1). It exists only from :func:`units_for_bound` values on: 1 − q^n ≥ level, 299 for the p99 at 95%.
  With fewer, the largest value X_(n) is the best the sample gives, and it covers ξ_q only with probability
  1 − q^n (14% for 15 values): the result says so (``bounded`` False, ``coverage``);
* :func:`noise_floor` — τ = the largest, over the perturbations, of that upper bound of the p99 of |Δ margin|
  over the re-scored units of the perturbation (each unit counted once; all contexts together). The maximum,
  not a pooled quantile, so that adding an exact perturbation never lowers the floor. A NaN |Δ| is an error
  (a τ computed from it would flag nothing without saying so);
* :func:`noise_flags` — "decision inside the noise": |m_o| ≤ τ; "credit inside the noise": |G_img| ≤ 2τ
  (G_img is a difference of two margins, each moved by up to τ). At τ = 0 nothing is flagged; a NaN τ is an
  error;
* :func:`noise_band` — Acc, Dep and D-CC with every flagged decision set both ways: the lowest value (every
  flagged decision wrong, every flagged credit absent) and the highest (right, present).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from vlaudit.metrics.vca.support import prediction_direction
from vlaudit.settings import CONFIDENCE_LEVEL

FLOOR_QUANTILE = 0.99


def delta_summary(base: np.ndarray, perturbed: np.ndarray) -> dict[str, float | int | None]:
    """n, median / p99 / max of |Δ| = |m_perturbed − m_base| and how many margins changed sign (d of VCA §3:
    m ≥ 0 is "yes"); None statistics for no records."""
    base = np.asarray(base, dtype=np.float64)
    delta = np.abs(np.asarray(perturbed, dtype=np.float64) - base)
    if not delta.size:
        return {"n": 0, "median": None, "p99": None, "max": None, "sign_flips": 0}
    flips = int((prediction_direction(base) != prediction_direction(perturbed)).sum())
    return {"n": int(delta.size), "median": float(np.median(delta)),
            "p99": float(np.quantile(delta, FLOOR_QUANTILE)), "max": float(delta.max()), "sign_flips": flips}


@dataclass(frozen=True)
class QuantileBound:
    """An upper confidence bound of a quantile (:func:`quantile_upper_bound`): the ``value``, the ``order`` u of
    the order statistic it is (1-based, of ``n``), its ``coverage`` P(X_(u) ≥ ξ_q) and whether that reaches the
    level asked (``bounded``; False: fewer than :func:`units_for_bound` values, ``value`` is the maximum)."""

    value: float
    n: int
    order: int
    coverage: float
    bounded: bool


def units_for_bound(q: float = FLOOR_QUANTILE, level: float = CONFIDENCE_LEVEL) -> int:
    """The fewest values whose maximum is an upper ``level`` bound of the q-quantile: ⌈log(1 − level)/log q⌉
    (299 for the p99 at 95%)."""
    return int(math.ceil(math.log(1.0 - level) / math.log(q) - 1e-12))


def quantile_upper_bound(values: np.ndarray, q: float = FLOOR_QUANTILE,
                         level: float = CONFIDENCE_LEVEL) -> QuantileBound:
    """The order-statistic upper ``level`` confidence bound of the q-quantile of ``values`` (see the module
    docstring); the maximum, ``bounded`` False, when there are too few values. Needs at least one value."""
    x = np.sort(np.asarray(values, dtype=np.float64).ravel())
    if x.size == 0:
        raise ValueError("an upper bound of a quantile needs at least one value")
    if np.isnan(x).any():
        raise ValueError("the values hold NaN")
    n = int(x.size)
    # P(X_(u) ≥ ξ_q) = P(Bin(n, q) ≤ u − 1), increasing in u: the first u whose coverage reaches the level
    coverage = binom.cdf(np.arange(n), n, q)
    reached = np.flatnonzero(coverage >= level)
    if reached.size:
        u = int(reached[0]) + 1
        return QuantileBound(float(x[u - 1]), n, u, float(coverage[u - 1]), True)
    return QuantileBound(float(x[-1]), n, n, float(coverage[-1]), False)


def noise_floor_bounds(abs_deltas: Mapping[str, np.ndarray]) -> dict[str, QuantileBound]:
    """The p99 upper bound of each perturbation's |Δ margin| (perturbations without a unit left out); a NaN
    |Δ| raises ValueError naming the perturbation."""
    out = {}
    for name, deltas in abs_deltas.items():
        d = np.asarray(deltas, dtype=np.float64)
        if not d.size:
            continue
        if np.isnan(d).any():
            raise ValueError(f"perturbation {name}: {int(np.isnan(d).sum())} of {d.size} |delta margin| are NaN "
                             "(a margin is not a number); the noise floor is not computable")
        out[name] = quantile_upper_bound(d)
    return out


def noise_floor(abs_deltas: Mapping[str, np.ndarray]) -> float:
    """τ = max over perturbations of the order-statistic upper bound of the p99 of |Δ margin| (see the module
    docstring; 0.0 with no perturbation or no unit)."""
    return max((b.value for b in noise_floor_bounds(abs_deltas).values()), default=0.0)


def noise_flags(m_original: np.ndarray, gap: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """(decision inside the noise: |m_o| ≤ τ, credit inside the noise: |G_img| ≤ 2τ); all False at τ = 0;
    ValueError for a τ that is NaN or negative."""
    m_original = np.asarray(m_original, dtype=np.float64)
    gap = np.asarray(gap, dtype=np.float64)
    if not tau >= 0:
        raise ValueError(f"the noise floor must be a non-negative number, not {tau!r}")
    if tau == 0:
        return np.zeros(m_original.shape, dtype=bool), np.zeros(gap.shape, dtype=bool)
    return np.abs(m_original) <= tau, np.abs(gap) <= 2.0 * tau


def noise_band(correct: np.ndarray | None, dep: np.ndarray, decision: np.ndarray,
               credit: np.ndarray) -> dict[str, list[float] | None]:
    """[low, high] of Acc, Dep and D-CC = mean(correct ∧ Dep) with each flagged decision set both ways
    (VCA §3 rates): low counts a flagged decision wrong and a flagged credit absent, high the reverse; each
    flag is set independently of the others. Acc and D-CC are None without labels."""
    dep = np.asarray(dep, dtype=bool)
    credit = np.asarray(credit, dtype=bool)
    dep_lo, dep_hi = dep & ~credit, dep | credit
    out: dict[str, list[float] | None] = {"dep": [float(dep_lo.mean()), float(dep_hi.mean())],
                                          "acc": None, "dcc": None}
    if correct is not None:
        correct = np.asarray(correct, dtype=bool)
        decision = np.asarray(decision, dtype=bool)
        lo, hi = correct & ~decision, correct | decision
        out["acc"] = [float(lo.mean()), float(hi.mean())]
        out["dcc"] = [float((lo & dep_lo).mean()), float((hi & dep_hi).mean())]
    return out
