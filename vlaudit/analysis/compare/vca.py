"""Paired comparison of Visual Credit Audits of several models on the same items (VCA §3, §9, §13, §19).

Per (dataset, interface) and per relation family (``all``, then each family when there are several), on the
items every model shares (:mod:`vlaudit.analysis.compare.inputs`), every model's per-item events are those of
``vca report`` (:func:`vlaudit.analysis.vca.report.run_events` and :func:`~vlaudit.analysis.vca.report.item_matrix`):
Acc, Dep, D-CC, C-U = Acc − D-CC, Strict, with a ``mismatch`` margin on every item Dep_perm, D-CC_perm,
Dep+M and Strict+M (VCA §12), and on relation groups Rel_o, PairCredit, PairD, Joint and mean
G_int (each group's value carried by its true statement's record, so the group is one cluster).

For every pair of models and every metric both can compute: value A, value B, A − B, a paired clustered
bootstrap interval (one count matrix — clusters = group id, else item — shared by every model and metric,
:func:`vlaudit.stats.paired.paired_bootstrap`), and a p-value: the exact McNemar test on the discordant items
for the binary events correct, Dep and D-CC when items are independent (no relation groups), else the paired
cluster permutation test. Holm's adjustment runs across every comparison of the table; ``survives`` says
whether the adjusted p-value is at most the family-wise α. When a run folder holds ``stability.json``, each
model's compared decisions inside its noise floor are counted and Acc, Dep and D-CC differences get a noise
band (:mod:`vlaudit.analysis.compare.noise`). The leaderboard ranks models per metric with ties
where intervals overlap (rank 1 = highest value).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlaudit.analysis.compare.inputs import ModelRuns, check_fingerprints, member_mask, shared_items
from vlaudit.analysis.compare.noise import (
    BAND_METRICS,
    ModelNoise,
    difference_bands,
    model_noise,
    noise_entry,
)
from vlaudit.analysis.vca.report import cluster_labels, item_matrix, run_events
from vlaudit.errors import InputError
from vlaudit.metrics.vca import support
from vlaudit.relations import relation_family
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    COMPARE_FAMILYWISE_ALPHA,
    COMPARE_PERMUTATIONS,
    CONFIDENCE_LEVEL,
)
from vlaudit.stats.paired import (
    cluster_permutation_pvalues,
    exact_mcnemar,
    mark_holm,
    paired_bootstrap,
    rank_with_ties,
)

ITEM_METRICS = ("acc", "dep", "dcc", "cu", "strict")
GROUP_METRICS = ("rel_o", "pair_credit", "pair_d", "joint", "g_int_mean")
MISMATCH_METRICS = ("dep_perm", "dcc_perm", "dep_m", "strict_m")  # the permutation axis (VCA §12)
MCNEMAR_METRICS = ("acc", "dep", "dcc")  # binary per-item events
ALL_FAMILIES = "all"
NEEDS = {"acc": "labels", "dcc": "labels", "cu": "labels", **{m: "relation groups" for m in GROUP_METRICS},
         **{m: "a mismatch margin on every shared item" for m in MISMATCH_METRICS},
         "dcc_perm": "labels and a mismatch margin on every shared item"}


@dataclass(frozen=True)
class CompareSettings:
    """Prespecified options of a comparison; the defaults are the report's (§19) and :mod:`vlaudit.settings`."""

    controls: tuple[str, ...] = support.DEFAULT_CONTROLS
    n_resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    level: float = CONFIDENCE_LEVEL
    n_permutations: int = COMPARE_PERMUTATIONS
    alpha: float = COMPARE_FAMILYWISE_ALPHA


def model_labels(inputs: Sequence[ModelRuns]) -> list[str]:
    """One name per input: its model, with the input's path added where two inputs hold the same model."""
    models = [sorted({run.model for run in mr.runs}) for mr in inputs]
    base = ["+".join(m) for m in models]
    return [b if base.count(b) == 1 else f"{b} ({mr.source})" for b, mr in zip(base, inputs, strict=True)]


def _record_columns(ev: Any, metrics: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(n, q)`` numerators and denominators of ``metrics`` for one model (report definitions)."""
    names, num, den = item_matrix(ev)
    n = ev.run.n
    out_num, out_den = np.zeros((n, len(metrics))), np.zeros((n, len(metrics)))
    for j, name in enumerate(metrics):
        if name in names:
            out_num[:, j], out_den[:, j] = num[:, names.index(name)], den[:, names.index(name)]
        else:  # a group rate: the group's value on its true statement's record, denominator 1 there
            g = ev.groups
            values = {"rel_o": g.rel["original"], "pair_credit": g.pair_credit, "pair_d": g.pair_d,
                      "joint": g.joint, "g_int_mean": g.g_int}[name]
            out_num[g.true_index, j] = np.asarray(values, dtype=np.float64)
            out_den[g.true_index, j] = 1.0
    return out_num, out_den


def _families(run: Any) -> np.ndarray:
    if "meta_category" in run.extra:
        return np.array([str(f) if f is not None else "Unknown" for f in run.extra["meta_category"]], dtype=object)
    if run.relations is None:
        return np.full(run.n, ALL_FAMILIES, dtype=object)
    return np.array([relation_family(None if r is None else str(r)) for r in run.relations], dtype=object)


def compare_block(labels: Sequence[str], events: Sequence[Any], metrics: Sequence[str], settings: CompareSettings,
                  *, dataset: str, interface: str, family: str, mask: np.ndarray,
                  noises: Sequence[ModelNoise] | None = None
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Comparison and leaderboard rows of one (dataset, interface, family) over the records in ``mask``."""
    cols = [_record_columns(ev, metrics) for ev in events]
    num = np.stack([c[0][mask] for c in cols])
    den = np.stack([c[1][mask] for c in cols])
    run = events[0].run
    clusters = cluster_labels(run)
    clusters = (run.item_ids.astype(str) if clusters is None else clusters)[mask]
    grouped = run.has_groups
    boot = paired_bootstrap(num, den, clusters, n_resamples=settings.n_resamples, seed=settings.seed,
                            level=settings.level)
    where: dict[str, Any] = {"dataset": dataset, "interface": interface, "family": family}
    board: list[dict[str, Any]] = []
    for j, metric in enumerate(metrics):
        n_units = int(den[0, :, j].sum()) if metric in GROUP_METRICS else int(mask.sum())
        ranks = rank_with_ties(boot.intervals[:, j])
        for a, label in enumerate(labels):
            board.append(where | {"metric": metric, "model": label, "n": n_units,
                                  "value": _num(boot.values[a, j]), "ci": _pair(boot.intervals[a, j]),
                                  "rank": ranks[a]})
    rows: list[dict[str, Any]] = []
    for a in range(len(labels)):
        for b in range(a + 1, len(labels)):
            diff = num[a] - num[b]
            shared_den = np.array_equal(den[a], den[b])
            perm = cluster_permutation_pvalues(diff, clusters, n_permutations=settings.n_permutations,
                                               seed=settings.seed) if shared_den else None
            bands = None if noises is None else difference_bands(events, noises, a, b, mask)
            for j, metric in enumerate(metrics):
                if metric in MCNEMAR_METRICS and not grouped:
                    test, p = "mcnemar", exact_mcnemar(num[a, :, j] > 0, num[b, :, j] > 0)
                elif perm is not None:
                    test, p = "permutation", float(perm[j])
                else:
                    test, p = None, None
                rows.append(where | {
                    "metric": metric, "model_a": labels[a], "model_b": labels[b],
                    "n": int(den[0, :, j].sum()) if metric in GROUP_METRICS else int(mask.sum()),
                    "value_a": _num(boot.values[a, j]), "value_b": _num(boot.values[b, j]),
                    "difference": _num(boot.difference[a, b, j]), "ci": _pair(boot.difference_intervals[a, b, j]),
                    "test": test, "p": p})
                if metric in BAND_METRICS:
                    rows[-1]["noise_band"] = None if bands is None else bands[metric]
    return rows, board


def _num(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _pair(values: np.ndarray) -> list[float] | None:
    return None if np.isnan(values).any() else [float(values[0]), float(values[1])]


def compute_comparison(inputs: Sequence[ModelRuns], settings: CompareSettings | None = None) -> dict[str, Any]:
    """Every comparison of the module docstring: ``{models, comparisons, leaderboard, skipped, settings,
    warnings}`` (the JSON ``compare vca`` writes)."""
    settings = settings or CompareSettings()
    if len(inputs) < 2:
        raise InputError(f"a comparison needs at least two runs; got {len(inputs)}", field="runs")
    labels = model_labels(inputs)
    keys = sorted({(run.dataset, run.interface) for mr in inputs for run in mr.runs})
    comparisons: list[dict[str, Any]] = []
    leaderboard: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    warnings: list[str] = []
    models: list[dict[str, Any]] = [{"model": label, "source": mr.source, "datasets": {}}
                                    for label, mr in zip(labels, inputs, strict=True)]
    for dataset, interface in keys:
        present = [(i, run) for i, mr in enumerate(inputs) for run in mr.runs
                   if run.dataset == dataset and run.interface == interface]
        if len({i for i, _ in present}) < 2:
            warnings.append(f"{dataset}/{interface}: only {labels[present[0][0]]} has it; not compared")
            continue
        idx = [i for i, _ in present]
        runs = [run for _, run in present]
        names = [labels[i] for i in idx]
        check_fingerprints(runs, names, {str(x) for r in runs for x in r.item_ids},
                           [inputs[i].questions for i in idx])
        shared = shared_items(runs, settings.controls, [inputs[i].failed for i in idx])
        for i, dropped in zip(idx, shared.dropped, strict=True):
            models[i]["datasets"][f"{dataset}/{interface}"] = {"n_compared": int(shared.item_ids.size),
                                                               "dropped": dropped}
        if shared.item_ids.size == 0:
            warnings.append(f"{dataset}/{interface}: the runs share no item with every headline control")
            continue
        kept = set(shared.item_ids.tolist())
        subs = [run.subset(member_mask(run.item_ids, kept)) for run in runs]
        events = [run_events(sub, settings.controls) for sub in subs]
        noises = [model_noise(ev) for ev in events]
        for i, noise, ev in zip(idx, noises, events, strict=True):
            models[i]["datasets"][f"{dataset}/{interface}"]["noise"] = noise_entry(noise, ev)
        metrics, lacking = _common_metrics(names, events)
        skipped.extend({"dataset": dataset, "interface": interface, "metric": m, "reason": why}
                       for m, why in lacking)
        families = _families(subs[0])
        tags = [ALL_FAMILIES] + (sorted(set(families.tolist())) if len(set(families.tolist())) > 1 else [])
        for tag in tags:
            mask = np.ones(subs[0].n, dtype=bool) if tag == ALL_FAMILIES else families == tag
            rows, board = compare_block(names, events, metrics, settings, dataset=dataset, interface=interface,
                                        family=tag, mask=mask, noises=noises)
            comparisons.extend(rows)
            leaderboard.extend(board)
    mark_holm(comparisons, settings.alpha)
    return {"models": models, "comparisons": comparisons, "leaderboard": leaderboard, "skipped": skipped,
            "settings": {"controls": list(settings.controls), "n_resamples": settings.n_resamples,
                         "seed": settings.seed, "level": settings.level, "n_permutations": settings.n_permutations,
                         "alpha": settings.alpha, "adjustment": "holm"},
            "warnings": warnings}


def _common_metrics(names: Sequence[str], events: Sequence[Any]) -> tuple[list[str], list[tuple[str, str]]]:
    """The metrics every model can compute, and (metric, reason) for each one some model cannot."""
    def can(ev: Any, metric: str) -> bool:
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
