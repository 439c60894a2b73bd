"""Sections of a :class:`~vlaudit.results.vca.audit.RunAudit` whose entries follow the run's controls and the
report's quantiles (VCA §3, §12): decision survival, the raw-gap distribution and the noise floor. Each is a
list of typed rows keyed by a field (``control``, ``q``, ``eps``), not an object keyed by dynamic names.

:func:`upgrade_run` reads a run written before these sections were typed (``text_same``, ``q05``,
``near_zero_0.1``, ``{"measured": false, "note": ...}``) into today's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from vlaudit.results.missing import Missing
from vlaudit.results.vca.benchmark import upgrade_benchmark
from vlaudit.results.versioned import Interval, record_from_dict

Figure = float | Missing


@dataclass(frozen=True)
class Stratum:
    """The run's rates within one stratum (VCA §12): ``by`` ``prediction`` or ``gold`` (the letters of a
    multiple-choice run: ``predicted letter``/``gold letter``), the ``stratum`` (``yes``, ``no``, a letter),
    its ``n`` items, Acc, Dep, D-CC, C-U and the strict isolation rate."""

    by: str
    stratum: str
    n: int
    acc: Figure
    dep: Figure
    dcc: Figure
    cu: Figure
    strict: Figure


@dataclass(frozen=True)
class Balanced:
    """The equal-weight average over the strata of one ``by`` (VCA §12): Acc, D-CC, C-U = balanced Acc −
    balanced D-CC, and Dep."""

    by: str
    acc: Figure
    dcc: Figure
    cu: Figure
    dep: Figure


@dataclass(frozen=True)
class ControlSurvival:
    """Among credited items, the share whose decision the ``control`` alone preserves (VCA §12; a tied control
    preserves it), with its Wilson interval over the credited items (design-effect corrected over the run's
    clusters)."""

    control: str
    same: Figure
    wilson: Interval | Missing


@dataclass(frozen=True)
class Survival:
    """Decision survival among the ``n_dep`` credited items (VCA §12): per control, then ``both_same`` (no
    control changes the answer) with its Wilson interval (design-effect corrected over the run's clusters), and
    ``any_changes`` = 1 − both_same."""

    n_dep: int
    controls: list[ControlSurvival]
    both_same: Figure
    both_same_wilson: Interval | Missing
    any_changes: Figure


@dataclass(frozen=True)
class GapQuantile:
    """The ``q`` quantile (a fraction: 0.05, 0.5, ...) of the raw image gap G_img (margin units)."""

    q: float
    value: float


@dataclass(frozen=True)
class NearZero:
    """The share of items with |G_img| ≤ ``eps`` (the near-zero mass before thresholding, VCA §12)."""

    eps: float
    share: float


@dataclass(frozen=True)
class GapSummary:
    """The raw-gap distribution of the run before thresholding (VCA §12): mean, min, max (margin units),
    quantiles and near-zero shares."""

    mean: float
    min: float
    max: float
    quantiles: list[GapQuantile]
    near_zero: list[NearZero]


@dataclass(frozen=True)
class NoiseBand:
    """Acc, Dep and D-CC with every decision inside the noise floor set both ways: [low, high] (VCA §3 rates;
    Acc and D-CC need labels)."""

    acc: Interval | Missing
    dep: Interval
    dcc: Interval | Missing


@dataclass(frozen=True)
class ErasureGeometry:
    """VCA Table 11 ("Erasure Geometry") over the run's items, in % of image area: the mean RelE erased area
    and padded-union area over the ``n_rele`` RelE views, the mean IrrE erased area over the ``n_irre`` IrrE
    views and the % of IrrE views with no erased pixel inside the protected union."""

    n_rele: int
    rele_erased_pct: Figure
    union_pct: Figure
    n_irre: int
    irre_erased_pct: Figure
    irre_zero_overlap_pct: Figure
    #: the constants the views were built with: vlaudit's own, the paper states none (None in an older file)
    constants: ErasureConstants | None = None


@dataclass(frozen=True)
class ErasureConstants:
    """What Table 11's geometry rests on — vlaudit's constants (VCA §11 fixes the views' roles, not these):
    the subject–object union padded by ``pad_fraction`` · max(W, H) pixels (at least ``pad_min_px``); IrrE fills
    the farthest tiles of an ``irre_grid`` × ``irre_grid`` grid up to ``irre_area_fraction`` of the image, and
    its tiles may overlap the padded union (``irre_may_overlap_union``; the zero-overlap column counts the views
    that do not; ``irre-disjoint`` is the variant that never does)."""

    pad_fraction: float
    pad_min_px: int
    irre_grid: int
    irre_area_fraction: float
    irre_may_overlap_union: bool
    source: str = "vlaudit.contexts.image_contexts (not paper settings)"


@dataclass(frozen=True, kw_only=True)
class RunNoise:
    """The run's decisions inside the backend's noise floor τ (``vca stability``'s ``stability.json``,
    ``source``): decisions with |m_o| ≤ τ and credits with |G_img| ≤ 2τ, counted and listed by item id, and the
    noise band of Acc, Dep and D-CC. A run without a floor holds ``Missing`` saying how to measure one."""

    measured: Literal[True] = True
    tau: float
    source: str
    n_decision: int
    n_credit: int
    decision_items: list[str]
    credit_items: list[str]
    band: NoiseBand
    definition: str


@dataclass(frozen=True)
class InterfaceCheck:
    """One (model, dataset) scored through both interfaces, on the ``n`` items they share (VCA §18): the
    mean-margin ensemble's Acc, Dep, D-CC and C-U; its agreement with canonical Yes/No (original prediction,
    Dep, D-CC) and True/False's; and, where both runs hold the same ``groups``, the item flip (Dep
    disagreement), pair flip (PairCredit disagreement) and PairCredit Jaccard across interfaces."""

    model: str
    dataset: str
    n: int
    ensemble_acc: Figure
    ensemble_dep: Figure
    ensemble_dcc: Figure
    ensemble_cu: Figure
    ensemble_pred_agreement: Figure
    ensemble_dep_agreement: Figure
    ensemble_dcc_agreement: Figure
    truefalse_pred_agreement: Figure
    truefalse_dep_agreement: Figure
    truefalse_dcc_agreement: Figure
    groups: int | Missing
    item_flip: Figure
    pair_flip: Figure
    pair_jaccard: Figure


#: the fields of :class:`InterfaceCheck` that hold a figure
INTERFACE_FIGURES = tuple(name for name in InterfaceCheck.__dataclass_fields__ if name not in ("model", "dataset", "n"))


def upgrade_interface(row: Mapping[str, object]) -> dict[str, object]:
    """An ``interfaces`` row of any version: a figure an older file left out (a ``note`` row, pair stability
    without shared groups) as Missing with the row's note."""
    reason = str(row.get("note") or "not in this file (an older vlaudit)")
    return {k: v for k, v in row.items() if k != "note"} | {
        k: {"missing": reason} for k in INTERFACE_FIGURES if k not in row}


@dataclass(frozen=True)
class RelationContext:
    """One context of the same-image relation groups (VCA §13): the share of groups whose pair is correct
    under it (Rel_c; ``short`` is the paper's subscript: o, t, b, m, x) and the mean pair support H_c."""

    context: str
    short: str
    rel: Figure
    h_mean: Figure


@dataclass(frozen=True)
class GroupIntervals:
    """Paired cluster-bootstrap percentile intervals of the group rates (VCA §19); None when not computable."""

    rel_o: Interval | None
    pair_credit: Interval | None
    pair_d: Interval | None
    joint: Interval | None
    g_int_mean: Interval | None


@dataclass(frozen=True)
class GapRanking:
    """How well the true statement's G_img ranks Rel_o over the run's groups: AUROC, AUPRC, the high-minus-low
    tertile difference and Rel_o's base rate (an internal check of the §15 ranking statistics)."""

    auroc: Figure
    auprc: Figure
    high_minus_low: Figure
    base_rate: Figure


@dataclass(frozen=True)
class RelationSummary:
    """The run's same-image relation groups (VCA §13): ``groups`` kept (``groups_excluded`` lacking a member),
    Rel_c and mean H_c per context, PairCredit, PairD, Joint, mean G_int and their intervals, and the gap's
    ranking of Rel_o."""

    groups: int
    groups_excluded: int
    contexts: list[RelationContext]
    pair_credit: float
    pair_d: float
    joint: float
    g_int_mean: float
    ci_g_int_mean: Interval | None
    ci: GroupIntervals
    gap_ranks_rel_o: GapRanking


SHORT = {"original": "o", "text": "t", "blank": "b", "mean": "m", "mismatch": "x"}


def _relation(old: Mapping[str, object]) -> dict[str, object]:
    names = {v: k for k, v in SHORT.items()}
    shorts = list(dict.fromkeys([k[4:] for k in old if k.startswith("rel_")]
                                + [k[2:-5] for k in old if k.startswith("h_") and k.endswith("_mean")]))
    contexts = [{"context": names.get(c, c), "short": c, "rel": old.get(f"rel_{c}"), "h_mean": old.get(f"h_{c}_mean")}
                for c in shorts]
    return {k: v for k, v in old.items() if not (k.startswith("rel_") or (k.startswith("h_") and k.endswith("_mean")))
            } | {"contexts": contexts}


def _survival(old: Mapping[str, object]) -> dict[str, object]:
    wilson = old.get("wilson") if isinstance(old.get("wilson"), Mapping) else {}
    assert isinstance(wilson, Mapping)
    controls = [key.removesuffix("_same") for key in old if key.endswith("_same") and key != "both_same"]
    return {"n_dep": old.get("n_dep"),
            "controls": [{"control": c, "same": old.get(f"{c}_same"), "wilson": wilson.get(f"{c}_same")}
                         for c in controls],
            "both_same": old.get("both_same"), "both_same_wilson": wilson.get("both_same"),
            "any_changes": old.get("any_changes")}


def _gap(old: Mapping[str, object]) -> dict[str, object]:
    quantiles = [{"q": int(key[1:]) / 100, "value": v} for key, v in old.items()
                 if key[:1] == "q" and key[1:].isdigit()]
    near = [{"eps": float(key.removeprefix("near_zero_")), "share": v} for key, v in old.items()
            if key.startswith("near_zero_")]
    return {"mean": old.get("mean"), "min": old.get("min"), "max": old.get("max"), "quantiles": quantiles,
            "near_zero": near}


def upgrade_run(run: Mapping[str, object]) -> dict[str, object]:
    """A ``vca.json`` run as this vlaudit writes it: the strata, survival, gap, relation, noise and benchmark
    sections of a file written before they were typed rewritten into their records' shape (the same numbers;
    :func:`~vlaudit.results.vca.benchmark.upgrade_benchmark`); a current run unchanged."""
    out = dict(run)
    stratified, balanced, relation = out.get("stratified"), out.get("balanced"), out.get("relation")
    if isinstance(relation, Mapping) and "contexts" not in relation:
        out["relation"] = _relation(relation)
    if isinstance(stratified, Mapping):
        out["stratified"] = [{"by": by, "stratum": name} | dict(values)
                             for by, strata in stratified.items() if isinstance(strata, Mapping)
                             for name, values in strata.items() if isinstance(values, Mapping)]
    if isinstance(balanced, Mapping):
        out["balanced"] = [{"by": by} | dict(values) for by, values in balanced.items() if isinstance(values, Mapping)]
    survival, gap, noise = out.get("survival"), out.get("gap"), out.get("noise")
    if isinstance(survival, Mapping) and "controls" not in survival:
        out["survival"] = _survival(survival)
    if isinstance(gap, Mapping) and "quantiles" not in gap:
        out["gap"] = _gap(gap)
    if isinstance(noise, Mapping) and noise.get("measured") is False:
        out["noise"] = {"missing": str(noise.get("note") or "noise floor not measured")}
    if "benchmark" in out:
        out["benchmark"] = upgrade_benchmark(out["benchmark"])
    return out


def read_noise(value: object, *, path: str) -> RunNoise | Missing:
    """A run's ``noise`` section as written in any version (a demo summary lists it too): the record, or
    Missing with the file's note; Missing when the section is absent."""
    if not isinstance(value, Mapping):
        return Missing("noise floor not recorded")
    upgraded = upgrade_run({"noise": value})["noise"]
    if isinstance(upgraded, Mapping) and "missing" in upgraded:
        return Missing(str(upgraded["missing"]))
    return record_from_dict(RunNoise, upgraded, path=path, name="noise")
