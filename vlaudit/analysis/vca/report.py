"""The Visual Credit Audit report over a MARGINS table (VCA §3, §9, §12, §13, §18, §19).

:func:`compute_report` turns validated :class:`~vlaudit.sources.margins.MarginRun` objects into a
:class:`VcaReport`: one summary per (model, dataset, interface) run — headline rates with paired
cluster-bootstrap CIs, taxonomy, strata, decision survival, raw-gap distribution, permutation calibration,
relation axis and robustness — plus cross-interface checks and macro averages within model, and the per-item
and per-group rows that other analyses read (``items.csv``, ``groups.csv``).

Partial contexts (vlaudit's rule; the paper scores every item in every context): the headline (original +
controls) uses every item that has all headline controls; an item missing one is excluded from everything
with a warning and counted. Relation groups need all their members in the headline.
Each optional axis uses the headline items that have its context, with its own n and excluded count:
``mismatch`` (permutation calibration, Dep+M, Strict+M), ``mean`` (the text+mean control set), ``rele`` and
``irre`` (box-erasure diagnostics). ``coverage`` in each run lists every such n.

Statistics (§19): one ``(n_resamples, n_clusters)`` count matrix per run, drawn once with the seed and reused
by every quantity (so differences such as Δ_DCC^perm are paired); clusters are the resampling unit the items
declare (a factorial stem, an edit, an image; :mod:`vlaudit.analysis.vca.units`), else ``group_id`` when the
run has relation groups (ungrouped items form their own clusters), else ``item_id``; ``--cluster COLUMN``
overrides it. Below :data:`~vlaudit.settings.MIN_CLUSTERS` clusters the run carries a small-sample warning. A rate over an axis subset is
Σ numerator / Σ subset indicator over the drawn clusters. The intervals are expanded percentile intervals
(:data:`~vlaudit.stats.bootstrap.EXPANDED`: the small-k correction that holds coverage at few clusters).
The Wilson intervals of credited precision and decision survival are design-effect corrected over the same
clusters (:func:`~vlaudit.stats.intervals.clustered_wilson_interval`), so their unit is the run's too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vlaudit.analysis.vca import axes as vca_axes
from vlaudit.analysis.vca import choice_run, report_rows, run_sections
from vlaudit.analysis.vca.benchmark import add_leakage, benchmark_figures, check_base_llms, is_text_only
from vlaudit.analysis.vca.events import ReportSettings as ReportSettings
from vlaudit.analysis.vca.events import RunEvents as RunEvents
from vlaudit.analysis.vca.no_answer import no_answer_warning
from vlaudit.analysis.vca.noise_report import noise_summary
from vlaudit.analysis.vca.units import override_warning, paper_departure, run_unit
from vlaudit.errors import InputError
from vlaudit.metrics.vca import choice, permutation, relation, support
from vlaudit.results.vca.audit import (
    AuditSettings,
    BootstrapPlan,
    HeadlineIntervals,
    MacroAverage,
    Robustness,
    RunAudit,
    Taxonomy,
    TieCounts,
    interval,
    rate,
)
from vlaudit.results.vca.coverage import ScoringCoverage
from vlaudit.results.vca.outputs import VcaReportResult
from vlaudit.results.vca.run_sections import InterfaceCheck
from vlaudit.results.versioned import Interval
from vlaudit.settings import TIE_TOL
from vlaudit.sources.margins import MarginRun, describe_missing
from vlaudit.sources.noise_floor import NoiseFloor
from vlaudit.stats.bootstrap import EXPANDED, ClusterBootstrap, percentile_intervals
from vlaudit.stats.clusters import small_sample_warning
from vlaudit.stats.intervals import clustered_wilson_interval
from vlaudit.stats.ranking import macro_average

GROUP_RATES = ("rel_o", "pair_credit", "pair_d", "joint", "g_int_mean")


@dataclass(frozen=True)
class VcaReport:
    """Everything ``vlaudit vca report`` writes: ``result`` is ``vca.json`` (typed to the leaves); ``items`` and
    ``groups`` are ``items.csv`` and ``groups.csv``; ``gaps`` each run's G_img per item (the gap plot)."""

    result: VcaReportResult
    items: list[dict[str, object]] = field(default_factory=list)
    groups: list[dict[str, object]] = field(default_factory=list)
    gaps: dict[tuple[str, str, str], np.ndarray] = field(default_factory=dict)

    @property
    def runs(self) -> list[RunAudit]:
        """One audit per (model, dataset, interface) run."""
        return self.result.runs

    @property
    def interfaces(self) -> list[InterfaceCheck]:
        """The cross-interface checks per (model, dataset)."""
        return self.result.interfaces

    @property
    def macro(self) -> list[MacroAverage]:
        """Macro averages over models per (dataset, interface)."""
        return self.result.macro

    @property
    def settings(self) -> AuditSettings:
        """The report's options."""
        return self.result.settings

    @property
    def warnings(self) -> list[str]:
        """Every run's exclusion warnings."""
        return self.result.warnings


def run_events(run: MarginRun, controls: Sequence[str] = support.DEFAULT_CONTROLS) -> RunEvents:
    """d, G_img, Dep, correctness, strict isolation, the mismatch axis and relation groups of one run, on the
    items that have every headline control (the others are excluded, named in ``warnings``). A letter run is
    first given its prediction-aligned support r_c as margins (:func:`vlaudit.analysis.vca.choice_run.aligned_run`)."""
    run = choice_run.aligned_run(run)
    missing = [c for c in controls if c not in run.margins]
    if missing:
        raise InputError(f"run (model={run.model!r}, dataset={run.dataset!r}, interface={run.interface!r}) has "
                         f"no {missing} context; it has {list(run.contexts)}", path=run.source, field="context")
    keep = run.available(*controls)
    excluded = {c: [str(i) for i in run.item_ids[~run.available(c)]] for c in controls}
    excluded = {c: ids for c, ids in excluded.items() if ids}
    warnings = []
    if not keep.all():
        lacking = "; ".join(describe_missing(run, c, ids) for c, ids in excluded.items())
        warnings.append(f"{int((~keep).sum())} of {run.n} items of {run.name} lack a headline control and are "
                        f"excluded from every quantity ({lacking})")
    if not keep.any():
        raise InputError(f"no item of {run.name} has every headline control {list(controls)}", path=run.source,
                         field="context")
    answerless = no_answer_warning(run)
    if answerless is not None:
        warnings.append(answerless)
    sub = run.subset(keep) if not keep.all() else run
    d = support.prediction_direction(sub.margins["original"])
    gap = support.image_gap(sub.margins, controls)
    dep = support.dependence(gap)
    correct = None if sub.labels is None else support.correctness(d, sub.labels)
    events = RunEvents(sub, d, gap, dep, correct, support.strict_isolation(sub.margins, controls),
                       n_total=run.n, excluded=excluded, warnings=warnings,
                       ties=support.tie_counts(sub.margins, gap, controls))
    warning = tie_warning(run.name, events.ties, sub.n, labelled=correct is not None)
    if warning:
        warnings.append(warning)
    if "mismatch" in sub.margins and "mismatch" not in controls:
        has = sub.available("mismatch")
        if has.any():
            m = {c: sub.margins[c][has] for c in ("original", "mismatch", *controls)}
            events.has_mismatch = has
            for name, values in (("dep_perm", permutation.permutation_dependence(m, controls)),
                                 ("dep_m", support.dependence(support.image_gap(m, (*controls, "mismatch")))),
                                 ("strict_m", support.strict_isolation(m, (*controls, "mismatch")))):
                full = np.zeros(sub.n, dtype=bool)
                full[has] = values
                setattr(events, name, full)
    if sub.has_groups:
        # a run with groups carries group ids and statements, and so does every subset of it
        assert run.group_ids is not None and sub.group_ids is not None and sub.statements is not None
        group_ids, events.groups_excluded = complete_groups(run.group_ids, sub.group_ids)
        if any(g is not None for g in group_ids):
            grouped = np.array([g is not None for g in group_ids])
            # rel_t and rel_b are part of the report contract even under other headline controls
            extra = [c for c in ("text", "blank") if c in sub.margins and sub.available(c)[grouped].all()]
            events.groups = relation.relation_groups(group_ids, sub.statements, sub.margins, dep, controls,
                                                     extra_contexts=extra)
    return events


def tie_warning(name: str, ties: Mapping[str, int], n: int, *, labelled: bool) -> str | None:
    """One line when ties (|m| ≤ tol, no decision: :mod:`vlaudit.metrics.vca.support`) decide a metric of the
    run: the items whose Strict or (with labels) Acc a tie decides; None when none. A tied gap is counted
    (``ties.dep``) but not warned about: a gap of zero is no image advantage, whichever interface reads it."""
    parts = [f"{metric} on {ties[key]} of {n} items" for key, metric in (("strict", "Strict"), ("acc", "Acc"))
             if ties.get(key) and (key != "acc" or labelled)]
    if not parts:
        return None
    return (f"ties decide {', '.join(parts)} of {name} (|margin| <= {TIE_TOL:g} is no decision: a tied "
            "control does not reverse the answer; a tied original answer is read as yes / the first letter)")


def complete_groups(all_ids: np.ndarray, kept_ids: np.ndarray) -> tuple[list[object], int]:
    """Kept items' group ids with None for a group that lost a member to exclusion, and how many groups did."""
    sizes: dict[object, int] = {}
    for g in all_ids:
        if g is not None:
            sizes[g] = sizes.get(g, 0) + 1
    kept: dict[object, int] = {}
    for g in kept_ids:
        if g is not None:
            kept[g] = kept.get(g, 0) + 1
    broken = {g for g, k in sizes.items() if kept.get(g, 0) != k}
    return [None if g in broken else g for g in kept_ids], len(broken)


def item_matrix(ev: RunEvents) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Record-level numerator and denominator columns whose ratios are the bootstrapped rates (float64).

    Headline rates have denominator 1 on every item; credited precision D-CC / Dep; the mismatch-axis rates
    the ``has_mismatch`` indicator (the items that have a mismatch margin).
    """
    ones = np.ones(ev.run.n)
    cols: dict[str, tuple[np.ndarray, np.ndarray]] = {"dep": (ev.dep, ones), "strict": (ev.strict, ones)}
    if ev.correct is not None:
        c = ev.correct
        cols |= {"acc": (c, ones), "dcc": (c & ev.dep, ones), "cu": (c & ~ev.dep, ones),
                 "wrong_dep": (~c & ev.dep, ones), "credited_precision": (c & ev.dep, ev.dep)}
    if ev.has_mismatch is not None:
        # the mismatch axis sets its indicator and its three event columns together (run_events)
        assert ev.dep_perm is not None and ev.dep_m is not None and ev.strict_m is not None
        has = ev.has_mismatch.astype(np.float64)
        cols |= {"dep_perm": (ev.dep_perm, has), "dep_m": (ev.dep_m, has), "strict_m": (ev.strict_m, has),
                 "dep_on_m": (ev.dep & ev.has_mismatch, has)}
        if ev.correct is not None:
            dcc_perm = ev.correct & ev.dep_perm
            cols |= {"dcc_perm": (dcc_perm, has), "cu_perm": (ev.correct & ~ev.dep_perm & ev.has_mismatch, has),
                     "delta_dcc": (((ev.correct & ev.dep).astype(np.float64) - dcc_perm) * has, has)}
    names = list(cols)
    num = np.column_stack([np.asarray(cols[k][0], dtype=np.float64) for k in names])
    den = np.column_stack([np.asarray(cols[k][1], dtype=np.float64) for k in names])
    return names, num, den


def cluster_labels(run: MarginRun, column: str | None = None) -> np.ndarray:
    """Each item's cluster (:func:`vlaudit.analysis.vca.units.run_unit`: the declared cluster, else the
    relation group — an ungrouped item its own cluster — else the item)."""
    return run_unit(run, column).labels


def bootstrap_run(ev: RunEvents, settings: ReportSettings) -> dict[str, tuple[float, float]]:
    """Paired cluster-bootstrap CIs (expanded percentile over the run's clusters) for every rate of the run,
    from one shared count matrix."""
    plan = ClusterBootstrap.draw(ev.run.n, clusters=cluster_labels(ev.run, settings.cluster),
                                 n_resamples=settings.n_resamples,
                                 seed=settings.seed)
    names, num, den = item_matrix(ev)
    # every numerator and denominator of the run as cluster-level columns, resampled by one matrix product
    q = num.shape[1]
    columns = [plan.cluster_sums(num), plan.cluster_sums(den)]
    n_group_cols = 0
    if ev.groups is not None:
        g = ev.groups
        cluster_of_group = plan.codes[g.true_index]
        values = np.column_stack([g.rel["original"], g.pair_credit, g.pair_d, g.joint, g.g_int]).astype(np.float64)
        per_cluster = np.zeros((plan.n_clusters, values.shape[1] + 1))
        per_cluster[cluster_of_group, :-1] = values
        per_cluster[cluster_of_group, -1] = 1.0  # group clusters only: ungrouped items carry no group value
        columns.append(per_cluster)
        n_group_cols = values.shape[1] + 1
    sums = plan.resample_cluster_values(np.column_stack(columns))
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = [sums[:, :q] / sums[:, q:2 * q]]
        if n_group_cols:
            names.extend(GROUP_RATES)
            samples.append(sums[:, -n_group_cols:-1] / sums[:, -1:])
    intervals = percentile_intervals(np.column_stack(samples), settings.level, n_clusters=plan.n_clusters,
                                     method=EXPANDED)
    return {name: (float(lo), float(hi)) for name, (lo, hi) in zip(names, intervals, strict=True)}


def _ci(cis: dict[str, tuple[float, float]], name: str) -> Interval | None:
    """The named interval; None when the rate is not computable (absent, or an end that is not finite)."""
    return interval(cis.get(name))


def summarize_run(ev: RunEvents, settings: ReportSettings, floor: NoiseFloor | None = None,
                  text_llms: Sequence[MarginRun] = (), scoring: ScoringCoverage | None = None) -> RunAudit:
    """The audit of one run (fractions in [0, 1]; an axis the run lacks is None; schema:
    :class:`vlaudit.results.vca.audit.RunAudit`, each section constructed where it is computed); ``floor``:
    its measured noise floor; ``text_llms``: the text-only runs of which ``settings.base_llms`` names the one
    that gives MMStar's leakage; ``scoring``: the run's recorded scoring coverage (a run below
    ``settings.min_coverage`` is warned of first: its numbers are not a result)."""
    run, controls = ev.run, settings.controls
    low = scoring is not None and scoring.below(settings.min_coverage)
    if low:
        assert scoring is not None
        ev.warnings.insert(0, scoring.shortfall(run.name, settings.min_coverage))
    rates = support.decomposition(ev.dep, ev.correct)
    cis = bootstrap_run(ev, settings)
    unit = run_unit(run, settings.cluster)
    wilson = None
    if ev.correct is not None:
        # Wilson over the run's clusters (design-effect corrected): the unit of every other interval of the run
        wilson = interval(clustered_wilson_interval(ev.correct & ev.dep, ev.dep, unit.labels, settings.level))
    taxonomy = Taxonomy(correct_dep=rate(rates["dcc"]), correct_nodep=rate(rates["cu"]),
                        wrong_dep=rate(rates["wrong_dep"]), wrong_nodep=rate(rates["wrong_nodep"]),
                        credited_precision=rate(rates["credited_precision"]),
                        ci_credited_precision=_ci(cis, "credited_precision"), wilson_credited_precision=wilson)
    if run.choices is not None:
        strata = choice_run.letter_strata_of(run.choices, ev.dep, ev.correct, ev.strict)
        balanced = choice.balanced_letters
    else:
        strata = support.stratified(ev.direction, ev.dep, ev.correct, ev.strict, run.labels)
        balanced = support.balanced
    perm, sensitivity = vca_axes.mismatch_axes(ev, cis)
    rel = None if ev.groups is None else run_sections.relation_groups(ev.groups, ev.gap, ev.groups_excluded, {
        k: _ci(cis, k) for k in GROUP_RATES})
    figures = add_leakage(benchmark_figures(ev), run, text_llms, dict(settings.base_llms))
    geometry = vca_axes.erasure_geometry(ev)
    return RunAudit(
        model=run.model, dataset=run.dataset, interface=run.interface, n=run.n, n_total=ev.n_total,
        n_excluded=ev.n_total - run.n, excluded_items=sorted({i for ids in ev.excluded.values() for i in ids}),
        labelled=ev.correct is not None, contexts=list(run.contexts), controls=list(controls),
        acc=rate(rates["acc"]), dep=rate(rates["dep"]), dcc=rate(rates["dcc"]), cu=rate(rates["cu"]),
        wrong_dep=rate(rates["wrong_dep"]), strict=rate(float(ev.strict.mean())),
        ties=TieCounts(tol=TIE_TOL, **ev.ties),
        ci=HeadlineIntervals(**{k: _ci(cis, k) for k in ("acc", "dep", "dcc", "cu", "wrong_dep", "strict")}),
        taxonomy=taxonomy, stratified=run_sections.strata(strata),
        balanced=run_sections.balanced(strata, balanced) if ev.correct is not None else [],
        survival=run_sections.survival(run.margins, ev.dep, controls, settings.level, unit.labels),
        gap=run_sections.gap_distribution(ev.gap), perm=perm, sensitivity=sensitivity, relation=rel,
        robustness=Robustness(control_sets=vca_axes.control_set_rows(ev, settings),
                              aggregation=vca_axes.aggregation_rows(ev, settings)),
        erasure=vca_axes.erasure_rows(ev), erasure_geometry=geometry,
        stress=vca_axes.erasure_rows(ev, vca_axes.STRESS), coverage=vca_axes.coverage_rows(ev, settings),
        benchmark=figures, noise=noise_summary(run, ev.gap, ev.dep, ev.correct, floor),
        warnings=list(ev.warnings),
        bootstrap=BootstrapPlan(n_resamples=settings.n_resamples, seed=settings.seed, level=settings.level,
                                cluster=unit.source, unit=unit.unit, n_clusters=unit.n_clusters,
                                small_sample=small_sample_warning(unit.n_clusters, unit.unit, run.name),
                                method=EXPANDED,
                                notes=[n for n in (paper_departure(run, unit, settings.cluster),) if n]),
        scoring=scoring, below_coverage=low)


def macro_rows(summaries: Sequence[RunAudit]) -> list[MacroAverage]:
    """Unweighted means over models of rates computed within model, per (dataset, interface) (§19)."""
    keys = ("acc", "dep", "dcc", "cu", "wrong_dep")
    out = []
    for dataset, interface in sorted({(s.dataset, s.interface) for s in summaries}):
        rows = [{"model": s.model, "delta_dcc": None if s.perm is None else s.perm.delta_dcc}
                | {k: s.rate_of(k) for k in keys} for s in summaries
                if s.dataset == dataset and s.interface == interface]
        means = {k: rate(v) for k, v in macro_average(rows, (*keys, "delta_dcc")).items()}
        out.append(MacroAverage(dataset=dataset, interface=interface, models=len({r["model"] for r in rows}),
                                **means))
    return out


def compute_report(runs: Sequence[MarginRun], settings: ReportSettings | None = None,
                   floors: Mapping[tuple[str, str, str], NoiseFloor] | None = None,
                   coverages: Mapping[tuple[str, str, str], ScoringCoverage] | None = None) -> VcaReport:
    """Compute the whole VCA report for validated runs (see the module docstring); ``floors``: the measured
    noise floor of each (model, dataset, interface) run that has one
    (:func:`vlaudit.sources.noise_floor.read_floors`; without one a run's noise is "not measured");
    ``coverages``: the scoring coverage each run's folder recorded
    (:func:`vlaudit.sources.scoring_coverage.read_coverages`)."""
    settings = settings or ReportSettings()
    text_llms = [run for run in runs if is_text_only(run)]  # blind baselines of MMStar's leakage, not audited
    runs = [run for run in runs if not is_text_only(run)]
    if not runs:
        raise InputError("no runs to report")
    check_base_llms(dict(settings.base_llms), runs, text_llms)
    stress = [c for c in settings.controls if c in vca_axes.STRESS]
    if stress:
        raise InputError(f"{stress} are stress probes that retain or degrade the image's content, never controls "
                         f"(VCA §18); they are reported in stress.csv", field="controls")
    events = [run_events(run, settings.controls) for run in runs]
    for ev in events:
        finer = override_warning(ev.run, settings.cluster)
        if finer:
            ev.warnings.append(finer)
    summaries = [summarize_run(ev, settings, (floors or {}).get(ev.run.key), text_llms,
                               (coverages or {}).get(ev.run.key)) for ev in events]
    interfaces = vca_axes.interface_checks(events, settings)
    result = VcaReportResult(
        runs=summaries, interfaces=interfaces, macro=macro_rows(summaries),
        settings=AuditSettings(controls=list(settings.controls), n_resamples=settings.n_resamples,
                               seed=settings.seed, level=settings.level,
                               control_sets=["+".join(s) for s in settings.control_sets],
                               min_coverage=settings.min_coverage),
        warnings=[w for ev in events for w in ev.warnings],
        margins_files=sorted({str(Path(run.source).resolve()) for run in runs
                              if run.source and Path(run.source).is_file()}))
    return VcaReport(result=result, items=[row for ev in events for row in report_rows.item_rows(ev)],
                     groups=[row for ev in events for row in report_rows.group_rows(ev)],
                     gaps={ev.run.key: ev.gap for ev in events})
