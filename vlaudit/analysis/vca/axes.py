"""The optional axes of the VCA report (VCA §11, §18), each on the headline items that have its context.

:func:`~vlaudit.analysis.vca.report.run_events` keeps the headline items (original + every control);
the functions here add, per run:

* ``perm`` — matched image-permutation calibration on the items with a ``mismatch`` margin (Δ_DCC^perm is
  D-CC − D-CC_perm on those same items);
* ``sensitivity`` — Table 28: Dep and Strict T/B on the headline items, Dep+M (mismatch added to the
  maximum-support controls) and Strict+M (opposite-answer isolation under every control and the mismatch)
  on the mismatch items, with headline Dep on those items for a paired reading, and mean G_img;
* ``robustness.control_sets`` — alternate control sets (text+mean is the mean-colour axis), each on the
  items that have its contexts, with the headline Dep and D-CC on the same items;
* ``erasure`` — ``rele``/``irre`` decision survival and support drop on the items that have each view;
* ``erasure_geometry`` — Table 11: RelE and IrrE erased area, padded-union area (% of the image) and the %
  of IrrE views with zero erased pixels inside the protected union, from the geometry columns ``vca score``
  writes with the erasure contexts (None for a run without them);
* ``stress`` — the same two numbers for the stress probes ``blur`` and ``patch-shuffle`` (VCA §18: they retain
  or degrade content, so they never enter G_img, Dep or any control set; own rows, own n);
* ``coverage`` — n and excluded count of every quantity above (also ``coverage.csv``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from vlaudit.analysis.vca.events import ReportSettings, RunEvents
from vlaudit.contexts.image_contexts import IRRE_AREA_FRACTION, IRRE_GRID, PAD_FRACTION, PAD_MIN_PX
from vlaudit.metrics.vca import permutation, robustness, support
from vlaudit.results.missing import Missing, known
from vlaudit.results.vca.audit import (
    AggregationCheck,
    ControlSetCheck,
    Coverage,
    ErasureCheck,
    PermutationAxis,
    Sensitivity,
    interval,
    rate,
)
from vlaudit.results.vca.run_sections import (
    INTERFACE_FIGURES,
    ErasureConstants,
    ErasureGeometry,
    InterfaceCheck,
)
from vlaudit.results.versioned import Interval

#: the pair-centred stability figures of an interface check (they need the same relation groups in both runs)
PAIR_FIGURES = ("item_flip", "pair_flip", "pair_jaccard")

AXIS_ROLES = {"mismatch": "permutation calibration, Dep+M, Strict+M", "mean": "mean-colour control set",
              "rele": "relation-region erasure", "irre": "irrelevant-region erasure",
              "irre-disjoint": "irrelevant-region erasure, disjoint tiles (not the paper's)",
              "blur": "stress probe (never a control)", "patch-shuffle": "stress probe (never a control)"}
ERASURES = ("rele", "irre", "irre-disjoint")
STRESS = ("blur", "patch-shuffle")


def _ci(cis: dict[str, tuple[float, float]], name: str) -> Interval | None:
    """The named interval; None when the rate is not computable (absent, or an end that is not finite)."""
    return interval(cis.get(name))


def mismatch_axes(ev: RunEvents, cis: dict[str, tuple[float, float]]) -> tuple[PermutationAxis | None, Sensitivity]:
    """The ``perm`` (None without mismatch margins) and ``sensitivity`` records of the run (see the module
    docstring)."""
    n = ev.run.n
    sensitivity = Sensitivity(
        n=n, dep=rate(ev.dep.mean()), strict=rate(ev.strict.mean()), gap_mean=rate(ev.gap.mean()),
        ci_dep=_ci(cis, "dep"), ci_strict=_ci(cis, "strict"), n_m=0, n_m_excluded=n, dep_m=None, strict_m=None,
        dep_on_m_items=None, ci_dep_m=None, ci_strict_m=None)
    if ev.has_mismatch is None:
        return None, sensitivity
    # the mismatch axis sets its indicator and its three event columns together (report.run_events)
    assert ev.dep_perm is not None and ev.dep_m is not None and ev.strict_m is not None
    has = ev.has_mismatch
    n_m = int(has.sum())
    correct = None if ev.correct is None else ev.correct[has]
    perm = {"dcc": None if correct is None else float((correct & ev.dep[has]).mean())} | \
        permutation.permutation_summary(ev.dep[has], ev.dep_perm[has], correct)
    axis = PermutationAxis(
        n=n_m, n_excluded=n - n_m, **{k: rate(perm.get(k)) for k in (
            "dcc", "dep_perm", "dcc_perm", "delta_dcc", "cu_perm", "orig_only", "perm_only")},
        ci_delta_dcc=_ci(cis, "delta_dcc"), ci_dcc_perm=_ci(cis, "dcc_perm"), ci_dep_perm=_ci(cis, "dep_perm"))
    return axis, replace(sensitivity, n_m=n_m, n_m_excluded=n - n_m, dep_m=rate(ev.dep_m[has].mean()),
                         strict_m=rate(ev.strict_m[has].mean()), dep_on_m_items=rate(ev.dep[has].mean()),
                         ci_dep_m=_ci(cis, "dep_m"), ci_strict_m=_ci(cis, "strict_m"))


def control_set_rows(ev: RunEvents, settings: ReportSettings) -> list[ControlSetCheck]:
    """Alternate control sets against the headline gap, each on the items that have its contexts (§18)."""
    margins = ev.run.margins
    rows = []
    for controls in settings.control_sets:
        if not all(c in margins for c in controls):
            continue
        have = ev.run.available(*controls)
        if not have.any():
            continue
        m = {c: margins[c][have] for c in dict.fromkeys(("original", *controls))}
        alt = support.image_gap(m, controls)
        correct = None if ev.correct is None else ev.correct[have]
        reference = support.decomposition(ev.dep[have], correct)
        compared = robustness.compare_gaps(ev.gap[have], alt, correct)
        rows.append(ControlSetCheck(
            control_set="+".join(controls), n=int(have.sum()), n_excluded=int((~have).sum()),
            dep_reference=rate(reference["dep"]), dcc_reference=rate(reference["dcc"]),
            **{k: rate(compared[k]) for k in ("dep", "agreement", "spearman", "dcc", "cu", "cu_jaccard")},
            strict=rate(support.strict_isolation(m, controls).mean())))
    return rows


def aggregation_rows(ev: RunEvents, settings: ReportSettings) -> list[AggregationCheck]:
    """Control-aggregation variants of G_img against the headline gap (VCA §18)."""
    rows = []
    for name, gap in robustness.aggregation_gaps(ev.run.margins, settings.controls).items():
        compared = robustness.compare_gaps(ev.gap, gap, ev.correct)
        rows.append(AggregationCheck(variant=name, **{k: rate(compared[k]) for k in (
            "dep", "agreement", "spearman", "dcc", "cu", "cu_jaccard")}))
    return rows


def erasure_rows(ev: RunEvents, contexts: tuple[str, ...] = ERASURES) -> list[ErasureCheck]:
    """Box-erasure (or, with ``contexts=STRESS``, stress-probe) diagnostics per view on the items that have it
    (never part of Dep, §11, §18)."""
    rows = []
    for context in contexts:
        have = ev.run.available(context)
        if not have.any():
            continue
        m = {c: ev.run.margins[c][have] for c in ("original", context)}
        effect = robustness.erasure_effect(m, context, ev.dep[have])
        rows.append(ErasureCheck(context=context, n=int(have.sum()), n_excluded=int((~have).sum()),
                                 **{k: rate(effect.get(k)) for k in ("same", "drop_mean", "drop_positive",
                                                                     "same_dep")}))
    return rows


GEOMETRY = ("union_pct", "rele_erased_pct", "irre_erased_pct", "irre_erased_in_union_pct")


def erasure_geometry(ev: RunEvents) -> ErasureGeometry | None:
    """Table 11 over the run's headline items (see the module docstring); None without geometry columns."""
    if not all(name in ev.run.extra for name in GEOMETRY):
        return None

    def column(name: str) -> np.ndarray:
        return np.array([np.nan if v is None else float(v) for v in ev.run.extra[name]], dtype=np.float64)

    g = robustness.erasure_geometry_summary(*(column(name) for name in GEOMETRY))
    no_rele, no_irre = Missing("no RelE view"), Missing("no IrrE view")

    def pct(key: str, reason: Missing) -> float | Missing:
        value = g[key]
        return reason if value is None else float(value)

    return ErasureGeometry(int(g["n_rele"] or 0), pct("rele_erased_pct", no_rele), pct("union_pct", no_rele),
                           int(g["n_irre"] or 0), pct("irre_erased_pct", no_irre),
                           pct("irre_zero_overlap_pct", no_irre), constants=erasure_constants())


def erasure_constants() -> ErasureConstants:
    """The constants of :mod:`vlaudit.contexts.image_contexts` that Table 11's views were built with."""
    return ErasureConstants(pad_fraction=PAD_FRACTION, pad_min_px=PAD_MIN_PX, irre_grid=IRRE_GRID,
                            irre_area_fraction=IRRE_AREA_FRACTION, irre_may_overlap_union=True)


def erasure_constants_line(constants: ErasureConstants) -> str:
    """One line naming the constants beside Table 11."""
    return (f"Table 11 rests on vlaudit's constants, not the paper's (it states none): the subject–object union "
            f"padded by {constants.pad_fraction:.0%} of max(W, H) (at least {constants.pad_min_px} px); IrrE fills "
            f"the farthest tiles of a grid of {constants.irre_grid}×{constants.irre_grid} up to "
            f"{constants.irre_area_fraction:.0%} of the image, and its tiles may overlap the protected union "
            f"(zero overlap: the share of IrrE views that do not)")


def coverage_rows(ev: RunEvents, settings: ReportSettings) -> list[Coverage]:
    """n and excluded count of the headline, the relation groups and every optional axis of the run."""
    headline = "+".join(("original", *settings.controls))
    rows = [Coverage("headline", headline, ev.run.n, ev.n_total - ev.run.n,
                     ", ".join(f"{c}: {len(ids)}" for c, ids in ev.excluded.items()))]
    if ev.run.has_groups:
        n_groups = 0 if ev.groups is None else ev.groups.n_groups
        rows.append(Coverage("relation groups", headline, n_groups, ev.groups_excluded,
                             "a member" if ev.groups_excluded else ""))
    for context, role in AXIS_ROLES.items():
        if context in settings.controls or context not in ev.run.margins:
            continue
        n = int(ev.run.available(context).sum())
        rows.append(Coverage(role, context, n, ev.run.n - n, f"{context}: {ev.run.n - n}" if n < ev.run.n else ""))
    return rows


def interface_checks(events: Sequence[RunEvents], settings: ReportSettings) -> list[InterfaceCheck]:
    """For each (model, dataset) with both interfaces: the mean-margin ensemble against canonical Yes/No, and
    pair-centred stability of Dep and PairCredit across interfaces (VCA §18)."""
    by_key = {ev.run.key: ev for ev in events}
    out = []
    for (model, dataset, interface), yn in sorted(by_key.items()):
        tf = by_key.get((model, dataset, "truefalse"))
        if interface != "yesno" or tf is None:
            continue
        common, ia, ib = np.intersect1d(yn.run.item_ids.astype(str), tf.run.item_ids.astype(str),
                                        return_indices=True)
        contexts = [c for c in ("original", *settings.controls) if c in yn.run.margins and c in tf.run.margins]
        if len(contexts) < 1 + len(settings.controls) or not common.size:
            gone = Missing("the interfaces share no items or contexts")
            out.append(InterfaceCheck(model, dataset, int(common.size), *(gone,) * len(INTERFACE_FIGURES)))
            continue
        ens = robustness.ensemble_margins({c: yn.run.margins[c][ia] for c in contexts},
                                          {c: tf.run.margins[c][ib] for c in contexts})
        d_e = support.prediction_direction(ens["original"])
        dep_e = support.dependence(support.image_gap(ens, settings.controls))
        labels = None if yn.run.labels is None else yn.run.labels[ia]
        corr_e = None if labels is None else support.correctness(d_e, labels)
        corr_yn = None if yn.correct is None else yn.correct[ia]
        corr_tf = None if tf.correct is None else tf.correct[ib]
        figures: dict[str, float | None] = {f"ensemble_{k}": v for k, v in support.decomposition(dep_e, corr_e).items()
                                            if k in ("acc", "dep", "dcc", "cu")}
        figures |= {f"ensemble_{k}": v for k, v in robustness.interface_agreement(
            yn.direction[ia], yn.dep[ia], d_e, dep_e, corr_yn, corr_e).items()}
        figures |= {f"truefalse_{k}": v for k, v in robustness.interface_agreement(
            yn.direction[ia], yn.dep[ia], tf.direction[ib], tf.dep[ib], corr_yn, corr_tf).items()}
        groups: int | Missing = Missing("the interfaces' runs hold different relation groups")
        if yn.groups is not None and tf.groups is not None and common.size == yn.run.n == tf.run.n:
            pos = {g: i for i, g in enumerate(tf.groups.group_ids)}
            order = np.array([pos.get(g, -1) for g in yn.groups.group_ids])
            if (order >= 0).all() and order.size == tf.groups.n_groups:
                grouped = yn.groups.codes >= 0
                groups = yn.groups.n_groups
                figures |= robustness.pair_stability(yn.dep[ia][grouped[ia]], tf.dep[ib][grouped[ia]],
                                                     yn.groups.pair_credit, tf.groups.pair_credit[order])
        unpaired = groups.reason if isinstance(groups, Missing) else "no credited pair in either interface"
        out.append(InterfaceCheck(model, dataset, int(common.size), groups=groups, **{
            k: known(figures.get(k), unpaired if k in PAIR_FIGURES else "no labels")
            for k in INTERFACE_FIGURES if k != "groups"}))
    return out
