"""Holm families: which p-values one Holm step-down adjustment runs over (docs/concepts/statistics.md).

A comparison table holds rows that are not one family of hypotheses: a dataset's ``all`` row and its
relation-family rows are nested subsets of the same items, C-U is Acc − D-CC, and two datasets answer two
questions. Adjusting them all together makes the adjustment depend on how many breakdowns were printed, so an
interval can exclude 0 while the adjusted p is 1. A *Holm family* is therefore one (dataset, interface,
relation family) cell and one metric family:

* ``headline`` — Acc, Dep, D-CC, C-U, Strict (VCA §3, §9);
* ``mismatch`` — Dep_perm, D-CC_perm, Dep+M, Strict+M (the permutation axis, VCA §12);
* ``groups`` — Rel_o, PairCredit, PairD, Joint, mean G_int (relation groups, VCA §13);

with every pair of models in it; for cycles, one (benchmark or CycleAcc, split, family) cell. Holm controls
the family-wise error rate within each family at α. The intervals printed beside the adjusted p-values are
*unadjusted* (marginal 95%) and are labelled so: an interval excluding 0 with an adjusted p above α is a
marginal, not a family-wise, finding.
"""

from __future__ import annotations

from collections.abc import Sequence

from vlaudit.stats.paired import holm

METRIC_FAMILIES = {
    **dict.fromkeys(("acc", "dep", "dcc", "cu", "strict"), "headline"),
    **dict.fromkeys(("dep_perm", "dcc_perm", "dep_m", "strict_m"), "mismatch"),
    **dict.fromkeys(("rel_o", "pair_credit", "pair_d", "joint", "g_int_mean"), "groups"),
}


def metric_family(metric: str) -> str:
    """The metric family of a VCA metric (a metric outside the three is its own family)."""
    return METRIC_FAMILIES.get(metric, metric)


def holm_by_family(pvalues: Sequence[float | None], families: Sequence[str], alpha: float
                   ) -> list[tuple[float | None, bool | None]]:
    """Per p-value its Holm-adjusted p within its family and whether it survives (p_holm ≤ ``alpha``);
    (None, None) where a row has no p-value."""
    if len(pvalues) != len(families):
        raise ValueError(f"{len(pvalues)} p-values for {len(families)} family labels")
    out: list[tuple[float | None, bool | None]] = [(None, None)] * len(pvalues)
    for family in dict.fromkeys(families):
        index = [i for i, f in enumerate(families) if f == family]
        for i, p_holm in zip(index, holm([pvalues[i] for i in index]), strict=True):
            out[i] = (p_holm, None if p_holm is None else bool(p_holm <= alpha))
    return out
