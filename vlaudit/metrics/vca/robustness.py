"""Robustness checks of the support and relation events (VCA §18).

* Answer-interface ensemble: average the aligned Yes/No and True/False margins per context, then apply the
  unchanged rule; report its agreement with the canonical Yes/No run (original prediction, Dep, D-CC).
* Pair-centred differencing: G_int cancels offsets shared by true and false statements; across interfaces
  report the item flip rate (Dep disagreement), pair flip rate (PairCredit disagreement) and PairCredit
  Jaccard |A ∩ B| / |A ∪ B|.
* Alternate control sets (text+blank, text+mean, text+blank+mismatch): per-item Dep agreement with the
  headline set, C-U Jaccard and Spearman ρ of the gaps.
* Control aggregation: r_o − r_t, r_o − r_b, r_o − mean(r_t, r_b), r_o − max(r_t, r_b) and the probability
  max p_o − max(p_t, p_b) with p_c = σ(r_c), the two-way softmax probability of the original decision
  (monotone in r_c, so it preserves every binary event but not the ranking).
* Box erasures (``rele``, ``irre``): decision survival and aligned-support drop r_o − r_c of the erased view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.special import expit
from scipy.stats import spearmanr

from vlaudit.metrics.vca.relation import short
from vlaudit.metrics.vca.support import (
    DEFAULT_CONTROLS,
    aligned_support,
    keeps_decision,
    prediction_direction,
)

ALTERNATE_CONTROL_SETS: tuple[tuple[str, ...], ...] = (
    ("text", "blank"), ("text", "mean"), ("text", "blank", "mismatch"),
)


def ensemble_margins(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The fixed two-interface mean-margin ensemble: (m_c^A + m_c^B) / 2 for every context both runs have."""
    return {c: (np.asarray(a[c], dtype=np.float64) + np.asarray(b[c], dtype=np.float64)) / 2.0
            for c in a if c in b}


def agreement(x: np.ndarray, y: np.ndarray) -> float:
    """Share of items where two per-item events (or decisions) agree; NaN for no items."""
    x, y = np.asarray(x), np.asarray(y)
    return float((x == y).mean()) if x.size else float("nan")


def jaccard(x: np.ndarray, y: np.ndarray) -> float:
    """|x ∧ y| / |x ∨ y| of two boolean item sets; NaN when both are empty."""
    x, y = np.asarray(x, dtype=bool), np.asarray(y, dtype=bool)
    union = int((x | y).sum())
    return float((x & y).sum() / union) if union else float("nan")


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman ρ; NaN when either input is constant or has fewer than two items."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(spearmanr(x, y).statistic)


def aggregation_gaps(
    margins: Mapping[str, np.ndarray], controls: Sequence[str] = DEFAULT_CONTROLS
) -> dict[str, np.ndarray]:
    """Every control-aggregation variant of the gap, keyed ``r_o-r_t``, ``r_o-r_b``, ``r_o-mean``,
    ``r_o-max`` (the headline G_img) and ``prob_max`` (VCA §18)."""
    d = prediction_direction(margins["original"])
    r_o = aligned_support(d, margins["original"])
    rs = {c: aligned_support(d, margins[c]) for c in controls}
    stacked = np.stack(list(rs.values()))
    out = {f"r_o-r_{short(c)}": r_o - r for c, r in rs.items()}
    out["r_o-mean"] = r_o - stacked.mean(axis=0)
    out["r_o-max"] = r_o - stacked.max(axis=0)
    out["prob_max"] = expit(r_o) - expit(stacked).max(axis=0)
    return out


def compare_gaps(
    reference_gap: np.ndarray, gap: np.ndarray, correct: np.ndarray | None = None
) -> dict[str, float | None]:
    """A variant gap against the reference: its Dep rate (and D-CC, C-U), per-item Dep agreement, Spearman ρ
    of the gaps and, with labels, the C-U Jaccard with the reference C-U set."""
    dep_ref, dep = np.asarray(reference_gap) > 0, np.asarray(gap) > 0
    out: dict[str, float | None] = {
        "dep": float(dep.mean()), "agreement": agreement(dep_ref, dep), "spearman": spearman(reference_gap, gap),
        "dcc": None, "cu": None, "cu_jaccard": None,
    }
    if correct is not None:
        correct = np.asarray(correct, dtype=bool)
        out |= {"dcc": float((correct & dep).mean()), "cu": float((correct & ~dep).mean()),
                "cu_jaccard": jaccard(correct & ~dep_ref, correct & ~dep)}
    return out


def interface_agreement(
    canonical_direction: np.ndarray, canonical_dep: np.ndarray, direction: np.ndarray, dep: np.ndarray,
    correct_canonical: np.ndarray | None = None, correct: np.ndarray | None = None,
) -> dict[str, float | None]:
    """Agreement of another interface (or the ensemble) with canonical Yes/No on the same items:
    original prediction, Dep and (with labels) D-CC."""
    out: dict[str, float | None] = {
        "pred_agreement": agreement(canonical_direction, direction),
        "dep_agreement": agreement(canonical_dep, dep),
        "dcc_agreement": None,
    }
    if correct_canonical is not None and correct is not None:
        out["dcc_agreement"] = agreement(correct_canonical & canonical_dep, correct & dep)
    return out


def pair_stability(
    dep_a: np.ndarray, dep_b: np.ndarray, pair_credit_a: np.ndarray, pair_credit_b: np.ndarray
) -> dict[str, float]:
    """Item flip (Dep disagreement), pair flip (PairCredit disagreement) and PairCredit Jaccard (VCA §18)."""
    return {
        "item_flip": 1.0 - agreement(dep_a, dep_b),
        "pair_flip": 1.0 - agreement(pair_credit_a, pair_credit_b),
        "pair_jaccard": jaccard(pair_credit_a, pair_credit_b),
    }


def erasure_effect(
    margins: Mapping[str, np.ndarray], context: str, dep: np.ndarray | None = None
) -> dict[str, float]:
    """A box-erasure view c (``rele``/``irre``) against the original, d fixed by m_o (VCA §11, §18).

    ``same`` = share of items whose decision survives (m_c does not decide against d; a tie keeps it);
    ``drop_mean`` = mean of
    r_o − r_c; ``drop_positive`` = share with r_o − r_c > 0 (the erased view supports the decision less);
    with ``dep``, ``same_dep`` = survival among credited items. Diagnostics only: erasures never enter
    G_img, Dep or D-CC. NaN for no items.
    """
    d = prediction_direction(margins["original"])
    drop = aligned_support(d, margins["original"]) - aligned_support(d, margins[context])
    same = keeps_decision(d, margins[context])
    nan = float("nan")
    out = {"same": float(same.mean()) if same.size else nan,
           "drop_mean": float(drop.mean()) if drop.size else nan,
           "drop_positive": float((drop > 0).mean()) if drop.size else nan}
    if dep is not None:
        dep = np.asarray(dep, dtype=bool)
        out["same_dep"] = float(same[dep].mean()) if dep.any() else nan
    return out


def erasure_geometry_summary(union_pct: np.ndarray, rele_pct: np.ndarray, irre_pct: np.ndarray,
                             irre_in_union_pct: np.ndarray) -> dict[str, float | int | None]:
    """Table 11 (VCA §11 "Erasure Geometry") over one benchmark's items, in % of image area.

    Per-item inputs are NaN where the view does not exist (no boxes; irre-disjoint without a free tile). Returns the
    mean RelE erased area and padded-union area over the RelE views (``n_rele``), the mean IrrE erased area
    over the IrrE views (``n_irre``) and ``irre_zero_overlap_pct``, the % of IrrE views with no erased pixel
    inside the protected union. None where a view has no item.
    """
    def mean(values: np.ndarray) -> float | None:
        values = np.asarray(values, dtype=np.float64)
        values = values[~np.isnan(values)]
        return float(values.mean()) if values.size else None

    rele = ~np.isnan(np.asarray(rele_pct, dtype=np.float64))
    irre_in = np.asarray(irre_in_union_pct, dtype=np.float64)
    irre = ~np.isnan(irre_in)
    return {"n_rele": int(rele.sum()), "rele_erased_pct": mean(rele_pct),
            "union_pct": mean(np.asarray(union_pct, dtype=np.float64)[rele]),
            "n_irre": int(irre.sum()), "irre_erased_pct": mean(irre_pct),
            "irre_zero_overlap_pct": float(100.0 * np.mean(irre_in[irre] == 0.0)) if irre.any() else None}
