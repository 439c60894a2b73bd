"""Paired comparison of Visual Credit Audits of several models on the same items (VCA §3, §9, §13, §19).

Per (dataset, interface) and per relation family (``all``, then each family when there are several), on the
items every model shares (:mod:`vlaudit.analysis.compare.inputs`), every model's per-item events are those of
``vca report`` (:func:`vlaudit.analysis.vca.report.run_events` and :func:`~vlaudit.analysis.vca.report.item_matrix`):
Acc, Dep, D-CC, C-U = Acc − D-CC, Strict, with a ``mismatch`` margin on every item Dep_perm, D-CC_perm,
Dep+M and Strict+M (VCA §12), and on relation groups Rel_o, PairCredit, PairD, Joint and mean
G_int (each group's value carried by its true statement's record, so the group is one cluster).

For every pair of models and every metric both can compute: value A, value B, A − B, a paired clustered
bootstrap interval (one count matrix shared by every model and metric,
:func:`vlaudit.stats.paired.paired_bootstrap`; clusters = the resampling unit the items declare — a stem, an
edit, an image — else the relation group, else the item, or ``--cluster COLUMN``:
:mod:`vlaudit.analysis.vca.units`), and a p-value: the exact McNemar test on the discordant items for the
binary events — correct, Dep, D-CC, C-U, Strict, the mismatch axis's Dep_perm, D-CC_perm, Dep+M, Strict+M and
the groups' Rel_o, PairCredit, PairD, Joint — when the units the metric counts are independent (every cluster
holds one item, or for a group metric one group), else the paired cluster sign-flip test of whole clusters:
exact (:func:`vlaudit.stats.sign_flip.sign_flip_test`, every sign vector or its lattice count) with at most
:data:`~vlaudit.settings.EXACT_SIGN_FLIP_CLUSTERS` clusters, else Monte Carlo with B flips (its p is never
below 1/(B + 1)). The intervals are expanded percentile intervals (:data:`~vlaudit.stats.bootstrap.EXPANDED`).
Every row names its unit and cluster count; fewer than :data:`~vlaudit.settings.MIN_CLUSTERS` clusters add a
warning, per (dataset, interface) and per relation family row. Holm's adjustment runs
within each family (:mod:`vlaudit.stats.multiplicity`: one (dataset, interface, relation family) cell and
metric family); ``survives`` says whether the adjusted p-value is at most the family-wise α. When a run folder holds ``stability.json``, each
model's compared decisions inside its noise floor are counted and Acc, Dep and D-CC differences get a noise
band (:mod:`vlaudit.analysis.compare.noise`). The leaderboard ranks models per metric from the paired
comparisons (:mod:`vlaudit.analysis.compare.ranks`): a model outranks another when their comparison survives
the adjustment with it ahead and the paired interval agrees; rank 1 = best, models no comparison separates
share a rank, a model without a value is unranked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.analysis.compare.inputs import check_fingerprints, member_mask, shared_items
from vlaudit.analysis.compare.noise import (
    BAND_METRICS,
    ModelNoise,
    difference_bands,
    model_noise,
    noise_entry,
)
from vlaudit.analysis.compare.ranks import holm_adjusted, ranked
from vlaudit.analysis.vca.events import ResamplingSettings
from vlaudit.analysis.vca.report import RunEvents, item_matrix, run_events
from vlaudit.analysis.vca.units import override_warning, shared_unit
from vlaudit.errors import InputError
from vlaudit.relations import relation_family
from vlaudit.results.compare import (
    ComparedItems,
    CompareVcaResult,
    UncomparedItems,
    VcaBandComparison,
    VcaCompareSettings,
    VcaComparison,
    VcaLeaderboardRow,
    VcaModel,
    VcaSkipped,
    VcaTest,
)
from vlaudit.results.versioned import Interval
from vlaudit.settings import (
    COMPARE_FAMILYWISE_ALPHA,
    COMPARE_PERMUTATIONS,
    EXACT_SIGN_FLIP_CLUSTERS,
)
from vlaudit.sources.compared_runs import ModelRuns
from vlaudit.sources.margins import MarginRun
from vlaudit.stats.bootstrap import EXPANDED
from vlaudit.stats.clusters import ResamplingUnit, small_sample_cells, small_sample_warning
from vlaudit.stats.multiplicity import metric_family
from vlaudit.stats.paired import (
    cluster_permutation_pvalues,
    exact_mcnemar,
    paired_bootstrap,
)
from vlaudit.stats.sign_flip import sign_flip_test

ITEM_METRICS = ("acc", "dep", "dcc", "cu", "strict")
GROUP_METRICS = ("rel_o", "pair_credit", "pair_d", "joint", "g_int_mean")
MISMATCH_METRICS = ("dep_perm", "dcc_perm", "dep_m", "strict_m")  # the permutation axis (VCA §12)
#: binary events per item or per relation group: the exact McNemar test where those units are independent
MCNEMAR_METRICS = ("acc", "dep", "dcc", "cu", "strict", *MISMATCH_METRICS, "rel_o", "pair_credit", "pair_d", "joint")
ALL_FAMILIES = "all"
NEEDS = {"acc": "labels", "dcc": "labels", "cu": "labels", **{m: "relation groups" for m in GROUP_METRICS},
         **{m: "a mismatch margin on every shared item" for m in MISMATCH_METRICS},
         "dcc_perm": "labels and a mismatch margin on every shared item"}


@dataclass(frozen=True)
class CompareSettings(ResamplingSettings):
    """Prespecified options of a comparison; the defaults are the report's (§19) and :mod:`vlaudit.settings`."""

    n_permutations: int = COMPARE_PERMUTATIONS
    alpha: float = COMPARE_FAMILYWISE_ALPHA
    #: ``--cluster COLUMN`` (None: the unit the items declare, :mod:`vlaudit.analysis.vca.units`)
    cluster: str | None = None

    def record(self) -> VcaCompareSettings:
        """The settings as ``compare.json`` writes them."""
        return VcaCompareSettings(controls=list(self.controls), n_resamples=self.n_resamples, seed=self.seed,
                                  level=self.level, n_permutations=self.n_permutations, alpha=self.alpha,
                                  cluster=self.cluster, interval=EXPANDED)


def model_labels(inputs: Sequence[ModelRuns]) -> list[str]:
    """One name per input: its model, with the input's path added where two inputs hold the same model."""
    models = [sorted({run.model for run in mr.runs}) for mr in inputs]
    base = ["+".join(m) for m in models]
    return [b if base.count(b) == 1 else f"{b} ({mr.source})" for b, mr in zip(base, inputs, strict=True)]


def _record_columns(ev: RunEvents, metrics: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(n, q)`` numerators and denominators of ``metrics`` for one model (report definitions)."""
    names, num, den = item_matrix(ev)
    n = ev.run.n
    out_num, out_den = np.zeros((n, len(metrics))), np.zeros((n, len(metrics)))
    for j, name in enumerate(metrics):
        if name in names:
            out_num[:, j], out_den[:, j] = num[:, names.index(name)], den[:, names.index(name)]
        else:  # a group rate: the group's value on its true statement's record, denominator 1 there
            g = ev.groups
            assert g is not None  # a group metric is compared only when every model has relation groups
            values = {"rel_o": g.rel["original"], "pair_credit": g.pair_credit, "pair_d": g.pair_d,
                      "joint": g.joint, "g_int_mean": g.g_int}[name]
            out_num[g.true_index, j] = np.asarray(values, dtype=np.float64)
            out_den[g.true_index, j] = 1.0
    return out_num, out_den


def _families(run: MarginRun) -> np.ndarray:
    if "meta_category" in run.extra:
        return np.array([str(f) if f is not None else "Unknown" for f in run.extra["meta_category"]], dtype=object)
    if run.relations is None:
        return np.full(run.n, ALL_FAMILIES, dtype=object)
    return np.array([relation_family(None if r is None else str(r)) for r in run.relations], dtype=object)


def compare_block(labels: Sequence[str], events: Sequence[RunEvents], metrics: Sequence[str],
                  settings: CompareSettings, *, dataset: str, interface: str, family: str, mask: np.ndarray,
                  noises: Sequence[ModelNoise] | None = None, unit: ResamplingUnit | None = None
                  ) -> tuple[list[VcaBandComparison | VcaComparison], list[VcaLeaderboardRow]]:
    """Comparison and leaderboard rows of one (dataset, interface, family) over the records in ``mask``
    (``p_holm`` and ``survives`` None: the Holm adjustment runs over the whole table's families).

    ``unit``: the resampling unit of the runs' records (default :func:`shared_unit` of the runs); the exact
    McNemar test applies to a binary metric only when every cluster in ``mask`` holds one of the units it
    counts (:func:`mcnemar_applies`)."""
    cols = [_record_columns(ev, metrics) for ev in events]
    num = np.stack([c[0][mask] for c in cols])
    den = np.stack([c[1][mask] for c in cols])
    unit = (unit or shared_unit([ev.run for ev in events], settings.cluster)).subset(mask)
    clusters, n_clusters = unit.labels, unit.n_clusters
    boot = paired_bootstrap(num, den, clusters, n_resamples=settings.n_resamples, seed=settings.seed,
                            level=settings.level)
    board: list[VcaLeaderboardRow] = []
    for j, metric in enumerate(metrics):
        n_units = int(den[0, :, j].sum()) if metric in GROUP_METRICS else int(mask.sum())
        for a, label in enumerate(labels):
            board.append(VcaLeaderboardRow(dataset=dataset, interface=interface, family=family, metric=metric,
                                           model=label, n=n_units, value=_num(boot.values[a, j]),
                                           ci=_pair(boot.intervals[a, j]), unit=unit.unit,
                                           n_clusters=n_clusters, rank=None))
    rows: list[VcaBandComparison | VcaComparison] = []
    for a in range(len(labels)):
        for b in range(a + 1, len(labels)):
            diff = num[a] - num[b]
            shared_den = np.array_equal(den[a], den[b])
            perm = cluster_permutation_pvalues(diff, clusters, n_permutations=settings.n_permutations,
                                               seed=settings.seed) if shared_den else None
            exact = _exact_sign_flips(diff, clusters, n_clusters, settings) if shared_den else None
            bands = None if noises is None else difference_bands(events, noises, a, b, mask)
            for j, metric in enumerate(metrics):
                test: VcaTest | None
                p: float | None
                counted = den[a, :, j] > 0
                if metric in MCNEMAR_METRICS and mcnemar_applies(num[[a, b]][:, :, j], den[[a, b]][:, :, j], clusters):
                    test, p = "mcnemar", exact_mcnemar(num[a, counted, j] > 0, num[b, counted, j] > 0)
                elif exact is not None and exact[j] is not None:
                    test, p = "sign-flip", exact[j]
                elif perm is not None:
                    test, p = "permutation", float(perm[j])
                else:
                    test, p = None, None
                row = VcaComparison(
                    dataset=dataset, interface=interface, family=family, metric=metric, model_a=labels[a],
                    model_b=labels[b], n=int(den[0, :, j].sum()) if metric in GROUP_METRICS else int(mask.sum()),
                    unit=unit.unit, n_clusters=n_clusters,
                    value_a=_num(boot.values[a, j]), value_b=_num(boot.values[b, j]),
                    difference=_num(boot.difference[a, b, j]), ci=_pair(boot.difference_intervals[a, b, j]),
                    test=test, p=p, holm_family=f"{dataset}/{interface}/{family}/{metric_family(metric)}",
                    p_holm=None, survives=None)
                rows.append(_with_band(row, None if bands is None else bands[metric])
                            if metric in BAND_METRICS else row)
    return rows, board


def _exact_sign_flips(diff: np.ndarray, clusters: np.ndarray, n_clusters: int,
                      settings: CompareSettings) -> list[float | None] | None:
    """Per metric the exact cluster sign-flip p of ``diff`` ``(n, q)`` when there are at most
    :data:`~vlaudit.settings.EXACT_SIGN_FLIP_CLUSTERS` clusters (None for a metric the test cannot count
    exactly; None for all beyond that many clusters: the Monte Carlo test runs instead)."""
    if n_clusters > EXACT_SIGN_FLIP_CLUSTERS:
        return None
    out: list[float | None] = []
    for j in range(diff.shape[1]):
        test = sign_flip_test(diff[:, j], clusters, n_permutations=settings.n_permutations, seed=settings.seed)
        out.append(test.p if test.method == "exact" else None)
    return out


def mcnemar_applies(num: np.ndarray, den: np.ndarray, clusters: np.ndarray) -> bool:
    """Whether the exact McNemar test is the right test of a metric ``(2, n)`` numerators over ``(2, n)``
    denominators: both models share the denominator, the numerators are 0/1 events on the counted records
    (denominator > 0: every item, or each relation group's true statement) and no two counted records share a
    cluster — the counted units are independent, so the discordant counts are binomial under the null."""
    counted = den[0] > 0
    if not np.array_equal(den[0], den[1]) or not np.isin(num[:, counted], (0.0, 1.0)).all():
        return False
    labels = np.asarray(clusters, dtype=object)[counted].astype(str)
    return bool(np.unique(labels).size == labels.size)


def _with_band(row: VcaComparison, band: Interval | None) -> VcaBandComparison:
    return VcaBandComparison(dataset=row.dataset, interface=row.interface, family=row.family, metric=row.metric,
                             model_a=row.model_a, model_b=row.model_b, n=row.n, unit=row.unit,
                             n_clusters=row.n_clusters, value_a=row.value_a, value_b=row.value_b,
                             difference=row.difference, ci=row.ci, test=row.test, p=row.p,
                             holm_family=row.holm_family, noise_band=band, p_holm=row.p_holm,
                             survives=row.survives)


def _num(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _pair(values: np.ndarray) -> Interval | None:
    return None if np.isnan(values).any() else (float(values[0]), float(values[1]))


def compute_comparison(inputs: Sequence[ModelRuns], settings: CompareSettings | None = None) -> CompareVcaResult:
    """Every comparison of the module docstring (what ``compare vca`` writes as ``compare.json``)."""
    settings = settings or CompareSettings()
    if len(inputs) < 2:
        raise InputError(f"a comparison needs at least two runs; got {len(inputs)}", field="runs")
    labels = model_labels(inputs)
    keys = sorted({(run.dataset, run.interface) for mr in inputs for run in mr.runs})
    comparisons: list[VcaBandComparison | VcaComparison] = []
    leaderboard: list[VcaLeaderboardRow] = []
    skipped: list[VcaSkipped] = []
    warnings: list[str] = []
    datasets: list[dict[str, ComparedItems | UncomparedItems]] = [{} for _ in inputs]
    for dataset, interface in keys:
        present = [(i, run) for i, mr in enumerate(inputs) for run in mr.runs
                   if run.dataset == dataset and run.interface == interface]
        if len({i for i, _ in present}) < 2:
            warnings.append(f"{dataset}/{interface}: only {labels[present[0][0]]} has it; not compared")
            continue
        idx = [i for i, _ in present]
        runs = [run for _, run in present]
        names = [labels[i] for i in idx]
        where = f"{dataset}/{interface}"
        check_fingerprints(runs, names, {str(x) for r in runs for x in r.item_ids},
                           [inputs[i].questions for i in idx], [inputs[i].options for i in idx])
        shared = shared_items(runs, settings.controls, [inputs[i].failed for i in idx])
        n_compared = int(shared.item_ids.size)
        if n_compared == 0:
            for i, dropped in zip(idx, shared.dropped, strict=True):
                datasets[i][where] = UncomparedItems(n_compared=n_compared, dropped=dropped)
            warnings.append(f"{where}: the runs share no item with every headline control")
            continue
        kept = set(shared.item_ids.tolist())
        subs = [run.subset(member_mask(run.item_ids, kept)) for run in runs]
        events = [run_events(sub, settings.controls) for sub in subs]
        warnings.extend(w for ev in events for w in ev.warnings if w.startswith("ties decide"))
        noises = [model_noise(ev, inputs[i].floors.get(run.key)) for i, run, ev in zip(idx, runs, events, strict=True)]
        for i, dropped, noise, ev in zip(idx, shared.dropped, noises, events, strict=True):
            datasets[i][where] = ComparedItems(n_compared=n_compared, dropped=dropped, noise=noise_entry(noise, ev))
        metrics, lacking = _common_metrics(names, events)
        skipped.extend(VcaSkipped(dataset=dataset, interface=interface, metric=m, reason=why) for m, why in lacking)
        families = _families(subs[0])
        tags = [ALL_FAMILIES] + (sorted(set(families.tolist())) if len(set(families.tolist())) > 1 else [])
        warnings.extend(w for w in (override_warning(run, settings.cluster) for run in runs) if w)
        unit = shared_unit([ev.run for ev in events], settings.cluster)
        small = small_sample_warning(unit.n_clusters, unit.unit, where)
        if small:
            warnings.append(small)
        # each relation family's rows on their own clusters, as compare cycles does per cell
        warnings.extend(small_sample_cells({f"{where}/{tag}": unit.subset(families == tag).n_clusters
                                            for tag in tags if tag != ALL_FAMILIES}, unit.unit))
        for tag in tags:
            mask = np.ones(subs[0].n, dtype=bool) if tag == ALL_FAMILIES else families == tag
            rows, board = compare_block(names, events, metrics, settings, dataset=dataset, interface=interface,
                                        family=tag, mask=mask, noises=noises, unit=unit)
            comparisons.extend(rows)
            leaderboard.extend(board)
    adjusted = holm_adjusted(comparisons, settings.alpha)
    return CompareVcaResult(
        models=[VcaModel(model=label, source=mr.source, datasets=held)
                for label, mr, held in zip(labels, inputs, datasets, strict=True)],
        comparisons=adjusted,
        leaderboard=ranked(leaderboard, adjusted, lambda r: (r.dataset, r.interface, r.family, r.metric)),
        skipped=skipped, settings=settings.record(), warnings=warnings)


def _common_metrics(names: Sequence[str], events: Sequence[RunEvents]) -> tuple[list[str], list[tuple[str, str]]]:
    """The metrics every model can compute, and (metric, reason) for each one some model cannot."""
    def can(ev: RunEvents, metric: str) -> bool:
        if metric in GROUP_METRICS:
            return ev.groups is not None
        if metric in MISMATCH_METRICS:
            full = ev.has_mismatch is not None and bool(ev.has_mismatch.all())
            return full and (metric != "dcc_perm" or ev.correct is not None)
        return metric not in NEEDS or ev.correct is not None

    metrics, lacking = [], []
    for metric in (*ITEMS_AND_GROUPS,):
        without = [name for name, ev in zip(names, events, strict=True) if not can(ev, metric)]
        if not without:
            metrics.append(metric)
        elif len(without) < len(events):
            lacking.append((metric, f"needs {NEEDS[metric]}; {', '.join(without)} has none"))
    return metrics, lacking


ITEMS_AND_GROUPS = (*ITEM_METRICS, *MISMATCH_METRICS, *GROUP_METRICS)
