"""Cached-context proxies and control robustness (VCA §18): ``vlaudit vca proxies``.

* **Proxy table**: each per-item signal of :mod:`vlaudit.metrics.vca.proxies` (and confidence, and the raw
  gap) ranks SRC (Rel_o of the group, from the group's true statement) and, with ``--edits``, the Swap
  targets (strict composite, flip+visibility) — AUROC/AUPRC per model and macro within model. A signal that
  needs an optional context (``mismatch``, ``rele``, ``irre``) uses the items that have it, with its n.
* **Aggregates per run**: Perceptual Score = acc(original) − acc(mismatch) (the mean of the item scores) and
  Visual Dependence = (acc_o − mean(acc_t, acc_b)) / acc_o (normalization in :mod:`.proxies`).
* **Control aggregation**: r_o − r_t, r_o − r_b, r_o − mean, r_o − max (headline), probability max and
  minimum Jensen–Shannon: per run Dep agreement and Spearman ρ with the headline gap
  (:func:`robustness.compare_gaps`; JS > 0 is its event), summarized as mean and minimum agreement and mean ρ
  over runs, with SRC and Swap (flip+visibility) macro AUROC.
* **Three-control-set stability** (micro-pooled over every run's records that have ``mean`` and
  ``mismatch``): per set Dep ("credit"), C-U, agreement and C-U Jaccard with the headline text+blank set;
  across the three sets the stable-assignment share, C-U intersection and union, headline C-U retained in
  the intersection, and per-run ranges of stable assignment and C-U retention.
* **Relation families** (Table 19 layout): per model, dataset and family n, Acc, Dep, D-CC, C-U, strict and
  mean G_img; the family is the item's ``meta_category`` column, else its relation mapped by ``--meta``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from vlaudit.analysis.vca.events import ResamplingSettings
from vlaudit.analysis.vca.scored_runs import RunScores, has_context, ranking_rows, run_info, src_records
from vlaudit.metrics.vca import proxies, robustness, support
from vlaudit.metrics.vca.robustness import jaccard
from vlaudit.results.missing import Missing, known
from vlaudit.results.vca.outputs import VcaProxiesResult
from vlaudit.results.vca.proxies import (
    AggregationRow,
    ControlSetRow,
    ControlSetRun,
    ControlSetStability,
    FamilyRow,
    ModelRanking,
    ModelRankingRho,
    ProxyAggregate,
    ProxyRow,
    TargetAuroc,
)
from vlaudit.results.vca.validity import Figure, RankingRow
from vlaudit.results.versioned import JsonObject
from vlaudit.stats.clusters import GROUP_UNIT

Signal = Callable[[RunScores], np.ndarray]


def _labelled(fn: Callable[..., np.ndarray]) -> Signal:
    return lambda s: fn(s.run.margins, s.run.labels)


# name → (needed contexts, needs labels, item score); higher = more visual credit / grounding
SIGNALS: dict[str, tuple[tuple[str, ...], bool, Signal]] = {
    "Confidence": ((), False, lambda s: s.confidence),
    "VisNec-style": (("text",), True, _labelled(proxies.visnec_style)),
    "Perceptual Score": (("mismatch",), True, _labelled(proxies.perceptual_score)),
    "Permutation drop": (("mismatch",), False, lambda s: proxies.permutation_drop(s.run.margins)),
    "FPVG-style": (("rele", "irre"), False, lambda s: proxies.fpvg_style(s.run.margins)),
    "−Sufficiency": (("irre",), False, lambda s: -proxies.sufficiency(s.run.margins)),
    "Comprehensiveness": (("rele",), False, lambda s: proxies.comprehensiveness(s.run.margins)),
    "Comp.–Suff.": (("rele", "irre"), False,
                    lambda s: proxies.comprehensiveness(s.run.margins) - proxies.sufficiency(s.run.margins)),
    "Raw image gap": ((), False, lambda s: s.events.gap),
}
VARIANT_NAMES = {"r_o-r_t": "r_o − r_t", "r_o-r_b": "r_o − r_b", "r_o-mean": "r_o − mean", "r_o-max": "r_o − max",
                 "prob_max": "Probability max", "min_js": "Minimum JS"}


@dataclass(frozen=True)
class ProxySettings(ResamplingSettings):
    """Prespecified options of the proxy comparison: the resampling options and the alternate control sets."""

    control_sets: tuple[tuple[str, ...], ...] = robustness.ALTERNATE_CONTROL_SETS


def signal_values(s: RunScores, name: str) -> np.ndarray | None:
    """The signal per item of the run, NaN where a needed context is missing; None if unavailable."""
    contexts, needs_labels, fn = SIGNALS[name]
    if (needs_labels and s.run.labels is None) or any(c not in s.run.margins for c in contexts):
        return None
    have = has_context(s.run, *contexts)
    if not have.any():
        return None
    with np.errstate(invalid="ignore"):
        values = np.asarray(fn(s), dtype=np.float64)
    return np.where(have, values, np.nan)


def external_auroc(values: Mapping[tuple[str, str], np.ndarray], scores: Sequence[RunScores],
                   edits: Mapping[str, np.ndarray] | None, settings: ProxySettings, signal: str,
                   targets: Sequence[str] = ("strict", "flip_vis")) -> list[ProxyRow]:
    """Macro-within-model AUROC/AUPRC of per-item ``values`` (keyed by (model, dataset)) for SRC per grouped
    dataset and the Swap targets; items with a NaN value are left out (n per model in ``per_model``)."""
    kw = {"n_resamples": settings.n_resamples, "seed": settings.seed, "level": settings.level, "pooled": False,
          "make": RankingRow}
    out = []
    for dataset in sorted({s.run.dataset for s in scores}):
        parts = []
        for s in scores:
            src = src_records(s) if s.run.dataset == dataset else None
            if src is None or (s.run.model, dataset) not in values:
                continue
            v = values[(s.run.model, dataset)][src["item"]]
            ok = ~np.isnan(v)
            parts.append((s.run.model, v[ok], src["rel_o"][ok], src["group_id"][ok].astype(str)))
        if parts:
            out.append(_summary(signal, f"SRC {dataset}", parts, kw))
    if edits is not None and len(edits["model"]):
        index = {(s.run.model, s.run.dataset): s.index() for s in scores}
        v = np.array([values[(m, d)][index[(m, d)][i]] if (m, d) in values else np.nan for m, d, i in zip(
            edits["model"], edits["dataset"], edits["source_item_id"], strict=True)])
        ok = ~np.isnan(v)
        for target in targets:
            parts = [(m, v[ok & (edits["model"] == m)], edits[target][ok & (edits["model"] == m)],
                      edits["edit_id"][ok & (edits["model"] == m)]) for m in sorted(set(edits["model"][ok]))]
            out.append(_summary(signal, f"Swap {target}", parts, kw))
    return out


def _summary(signal: str, check: str, parts: Sequence[tuple], kw: Mapping[str, Any]) -> ProxyRow:
    if not parts:
        gone = Missing("no record has the signal")
        return ProxyRow(signal, check, 0, gone, gone, gone, gone)
    cat = [np.concatenate([p[k] for p in parts]) for k in (1, 2, 3)]
    models = np.concatenate([[p[0]] * len(p[1]) for p in parts])
    rows = ranking_rows(cat[0], cat[1], models, cat[2], **kw, unit=GROUP_UNIT if check.startswith("SRC") else "edit")
    macro = rows[-1]
    return ProxyRow(signal, check, int(cat[0].size), macro.auroc, macro.auprc, macro.auroc_lo, macro.auroc_hi,
                    {r.model: ModelRanking(r.n, r.auroc, r.auprc) for r in rows[:-1]}, macro.unit, macro.n_clusters)


def proxy_rows(scores: Sequence[RunScores], edits: Mapping[str, np.ndarray] | None,
               settings: ProxySettings) -> list[ProxyRow]:
    """The §18 proxy comparison: one row per (signal, check)."""
    rows = []
    for name in SIGNALS:
        values = {(s.run.model, s.run.dataset): v for s in scores if (v := signal_values(s, name)) is not None}
        if not values:
            contexts, labels, _ = SIGNALS[name]
            gone = Missing(f"no run has {' + '.join((*contexts, 'labels') if labels else contexts)}")
            rows.append(ProxyRow(name, "unavailable", 0, gone, gone, gone, gone))
            continue
        rows += external_auroc(values, scores, edits, settings, name)
    return rows


def aggregate_rows(scores: Sequence[RunScores]) -> list[ProxyAggregate]:
    """Per run: accuracy, Perceptual Score (on the items with a mismatch margin) and Visual Dependence."""
    rows = []
    for s in scores:
        run, labels = s.run, s.run.labels
        no_labels = Missing("no labels")
        perceptual: Figure = no_labels if labels is None else Missing("no mismatch context")
        n_perceptual = 0
        ps = signal_values(s, "Perceptual Score")
        if ps is not None:
            ok = ~np.isnan(ps)
            perceptual, n_perceptual = float(ps[ok].mean()), int(ok.sum())
        vd: Figure = no_labels if labels is None else Missing("no text or blank context")
        n_vd = 0
        nulls = [c for c in ("text", "blank") if c in run.margins]
        if labels is not None and nulls:
            have = has_context(run, *nulls)
            m = {c: run.margins[c][have] for c in ("original", *nulls)}
            vd = known(proxies.visual_dependence(m, labels[have], nulls), "no item answered correctly")
            n_vd = int(have.sum())
        acc = no_labels if s.events.correct is None else float(s.events.correct.mean())
        dcc = no_labels if s.events.correct is None else float((s.events.correct & s.events.dep).mean())
        rows.append(ProxyAggregate(run.model, run.dataset, run.n, acc, perceptual, n_perceptual, vd, n_vd, dcc=dcc))
    return rows


#: the per-run proxies whose cross-model ranking is compared with D-CC's (VCA §18), by their record field
RANKED_PROXIES = {"Perceptual Score": "perceptual_score", "Visual Dependence": "visual_dependence", "Acc": "acc"}
#: the fewest models a cross-model ranking ρ is computed over
MIN_RANKED_MODELS = 3


def model_ranking_rows(aggregates: Sequence[ProxyAggregate]) -> list[ModelRankingRho]:
    """Per dataset and proxy of :data:`RANKED_PROXIES`: Spearman ρ between the models' ranking by the proxy and
    by D-CC, over the models that have both (VCA §18 compares its four models' rankings); Missing with fewer
    than :data:`MIN_RANKED_MODELS` models or a constant column."""
    rows = []
    for dataset in dict.fromkeys(a.dataset for a in aggregates):
        runs = [a for a in aggregates if a.dataset == dataset]
        for proxy, name in RANKED_PROXIES.items():
            pairs = [(a.model, getattr(a, name), a.dcc) for a in runs
                     if isinstance(getattr(a, name), float) and isinstance(a.dcc, float)]
            models = [model for model, _, _ in pairs]
            rho: Figure
            if len(pairs) < MIN_RANKED_MODELS:
                rho = Missing(f"{len(pairs)} model(s) with {proxy} and D-CC; a ranking ρ needs {MIN_RANKED_MODELS}")
            else:
                x, y = (np.array([p[k] for p in pairs], dtype=np.float64) for k in (1, 2))
                rho = Missing("a constant column") if np.ptp(x) == 0 or np.ptp(y) == 0 else \
                    float(spearmanr(x, y).statistic)
            rows.append(ModelRankingRho(dataset=dataset, proxy=proxy, against="D-CC", models=models, rho=rho))
    return rows


def aggregation_rows(scores: Sequence[RunScores], edits: Mapping[str, np.ndarray] | None,
                     settings: ProxySettings) -> list[AggregationRow]:
    """Control-aggregation variants against the headline gap, summarized over runs (VCA §18)."""
    variants: dict[str, dict[tuple[str, str], np.ndarray]] = {k: {} for k in VARIANT_NAMES}
    per_run: dict[str, list[dict[str, Any]]] = {k: [] for k in VARIANT_NAMES}
    for s in scores:
        gaps = robustness.aggregation_gaps(s.run.margins, settings.controls)
        gaps["min_js"] = proxies.min_js(s.run.margins, settings.controls)
        for key, gap in gaps.items():
            if key not in variants:
                continue
            variants[key][(s.run.model, s.run.dataset)] = gap
            per_run[key].append(robustness.compare_gaps(s.events.gap, gap, s.events.correct))
    rows = []
    for key, name in VARIANT_NAMES.items():
        if not per_run[key]:
            continue
        agree = [r["agreement"] for r in per_run[key]]
        rhos = [r["spearman"] for r in per_run[key] if not np.isnan(r["spearman"])]
        external = external_auroc(variants[key], scores, edits, settings, name, ("flip_vis",))
        rows.append(AggregationRow(name, len(agree), float(np.mean(agree)), float(np.min(agree)),
                                   float(np.mean(rhos)) if rhos else Missing("every run's gaps are constant"),
                                   [TargetAuroc(r.check, r.auroc) for r in external]))
    return rows


def control_set_stability(scores: Sequence[RunScores], settings: ProxySettings) -> ControlSetStability:
    """Micro-pooled Dep/C-U stability across the alternate control sets (the first set is the reference),
    over the records that have every context of the sets available in all labelled runs (the others are
    listed in ``unavailable_sets``)."""
    labelled = [s for s in scores if s.events.correct is not None]
    sets = [cs for cs in settings.control_sets if labelled and all(c in s.run.margins for s in labelled for c in cs)]
    unavailable = ["+".join(cs) for cs in settings.control_sets if cs not in sets]
    if not sets:
        return _no_stability(unavailable, "no control set has its contexts in every labelled run")
    needed = sorted({c for cs in sets for c in cs})
    deps: list[list[np.ndarray]] = [[] for _ in sets]
    cus: list[list[np.ndarray]] = [[] for _ in sets]
    per_run: list[ControlSetRun] = []
    for s in scores:
        if s.events.correct is None:
            continue
        have = has_context(s.run, *needed)
        if not have.any():
            continue
        m = {c: v[have] for c, v in s.run.margins.items()}
        correct = s.events.correct[have]
        run_dep = [support.dependence(support.image_gap(m, cs)) for cs in sets]
        run_cu = [correct & ~d for d in run_dep]
        for k in range(len(sets)):
            deps[k].append(run_dep[k])
            cus[k].append(run_cu[k])
        stable = np.all([d == run_dep[0] for d in run_dep], axis=0)
        inter = np.all(run_cu, axis=0)
        per_run.append(ControlSetRun(s.run.model, s.run.dataset, int(have.sum()), float(stable.mean()),
                                     float(inter.sum() / run_cu[0].sum()) if run_cu[0].any()
                                     else Missing("no headline C-U item")))
    if not per_run:
        return _no_stability(unavailable, f"no labelled record has every context of {needed}")
    dep = [np.concatenate(d) for d in deps]
    cu = [np.concatenate(c) for c in cus]
    rows = [ControlSetRow("+".join(cs), float(dep[k].mean()), float(cu[k].mean()),
                          known(robustness.agreement(dep[0], dep[k]), "no records"),
                          known(jaccard(cu[0], cu[k]), "no C-U item under either set"))
            for k, cs in enumerate(sets)]
    stable = np.all([d == dep[0] for d in dep], axis=0)
    inter, union = np.all(cu, axis=0), np.any(cu, axis=0)
    retention = [r.cu_retention for r in per_run if isinstance(r.cu_retention, float)]
    no_cu = Missing("no headline C-U item")
    return ControlSetStability(
        n=int(dep[0].size), sets=rows, per_run=per_run, unavailable_sets=unavailable, stable=float(stable.mean()),
        stable_n=int(stable.sum()), cu_intersection=int(inter.sum()), cu_union=int(union.sum()),
        cu_intersection_share=float(inter.mean()), cu_union_share=float(union.mean()), headline_cu=int(cu[0].sum()),
        headline_cu_retained=float(inter.sum() / cu[0].sum()) if cu[0].any() else no_cu,
        stable_range=(min(r.stable for r in per_run), max(r.stable for r in per_run)),
        cu_retention_range=(min(retention), max(retention)) if retention else no_cu)


def _no_stability(unavailable: list[str], reason: str) -> ControlSetStability:
    gone = Missing(reason)
    return ControlSetStability(n=0, sets=[], per_run=[], unavailable_sets=unavailable, stable=gone, stable_n=0,
                               cu_intersection=0, cu_union=0, cu_intersection_share=gone, cu_union_share=gone,
                               headline_cu=0, headline_cu_retained=gone, stable_range=gone, cu_retention_range=gone)


def family_rows(scores: Sequence[RunScores], meta: Mapping[str, str] | None) -> list[FamilyRow]:
    """Table 19 layout: per (model, dataset, family) n, Acc, Dep, D-CC, C-U, strict and mean G_img."""
    rows = []
    for s in scores:
        run = s.run
        if "meta_category" in run.extra:
            families = np.array([str(f) if f is not None else "Unknown" for f in run.extra["meta_category"]])
        elif meta is not None and run.relations is not None:
            families = np.array([meta.get(str(r), "Unknown") for r in run.relations])
        else:
            continue
        for family in sorted(set(families.tolist())):
            mask = families == family
            rates = support.decomposition(s.events.dep[mask], None if s.events.correct is None
                                          else s.events.correct[mask])
            acc, dcc, cu = (known(rates[k], "no labels") for k in ("acc", "dcc", "cu"))
            rows.append(FamilyRow(run.model, run.dataset, family, int(mask.sum()), acc, float(s.events.dep[mask].mean()),
                                  dcc, cu, float(s.events.strict[mask].mean()), float(s.events.gap[mask].mean())))
    return rows


def compute_proxies(scores: Sequence[RunScores], edits: Mapping[str, np.ndarray] | None,
                    settings: ProxySettings | None = None, meta: Mapping[str, str] | None = None) -> VcaProxiesResult:
    """``proxies.json``: every §18 table; the settings and the runs as the result's extra keys."""
    settings = settings or ProxySettings()
    extra: JsonObject = {"settings": {"controls": list(settings.controls), "n_resamples": settings.n_resamples,
                                      "seed": settings.seed, "level": settings.level,
                                      "control_sets": ["+".join(cs) for cs in settings.control_sets]},
                         "runs": [run_info(s) for s in scores]}
    aggregates = aggregate_rows(scores)
    return VcaProxiesResult(proxies=proxy_rows(scores, edits, settings), aggregates=aggregates,
                            aggregation=aggregation_rows(scores, edits, settings),
                            control_sets=control_set_stability(scores, settings), families=family_rows(scores, meta),
                            model_rankings=model_ranking_rows(aggregates), extra=extra)
