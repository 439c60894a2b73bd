"""The numerical noise floor of a backend and the decisions inside it (VCA §3 decisions, §19 statistics).

A credit decision is a sign: correctness is the sign of the margin m_o, Dep the sign of G_img (VCA §3). When
re-scoring the same (item, context) under a perturbation that leaves the mathematics unchanged (batch size,
padding side, dtype, attention kernel, prefix cache) moves the margin by Δ, a decision closer to zero than the
typical |Δ| is not resolved by the model's numbers.

* :func:`delta_summary` — median / p99 / max |Δ margin| and the margin sign flips of one perturbation;
* :func:`noise_floor` — τ = the largest, over the perturbations, of the p99 of |Δ margin| over every
  re-scored record of that perturbation (all contexts together; numpy's linear quantile). The maximum, not
  a pooled quantile, so that adding an exact perturbation never lowers the floor;
* :func:`noise_flags` — "decision inside the noise": |m_o| ≤ τ; "credit inside the noise": |G_img| ≤ 2τ
  (G_img is a difference of two margins, each moved by up to τ). At τ = 0 nothing is flagged;
* :func:`noise_band` — Acc, Dep and D-CC with every flagged decision set both ways: the lowest value (every
  flagged decision wrong, every flagged credit absent) and the highest (right, present).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from vlaudit.metrics.vca.support import prediction_direction

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


def noise_floor(abs_deltas: Mapping[str, np.ndarray]) -> float:
    """τ = max over perturbations of the p99 of |Δ margin| (0.0 with no perturbation or no record)."""
    quantiles = [float(np.quantile(np.asarray(d, dtype=np.float64), FLOOR_QUANTILE))
                 for d in abs_deltas.values() if np.asarray(d).size]
    return max(quantiles, default=0.0)


def noise_flags(m_original: np.ndarray, gap: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """(decision inside the noise: |m_o| ≤ τ, credit inside the noise: |G_img| ≤ 2τ); all False at τ = 0."""
    m_original = np.asarray(m_original, dtype=np.float64)
    gap = np.asarray(gap, dtype=np.float64)
    if not tau > 0:
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
