"""External validity of the raw VCA gap (VCA §15): ``vlaudit vca validity``.

* **Standalone predictive validity**: the raw G_img of a relation group's true statement ranks SRC (Rel_o of
  the same group) and the raw G_img of an edit's source true statement ranks the edited outcome (Swap
  strict, Swap flip+visibility): AUROC, AUPRC and the high-minus-low tertile difference per model, macro over
  models, and rank-pooled over models after within-model percentile ranks. Intervals: SRC resamples relation
  pairs, Swap resamples edit ids (each drawn edit brings all of its model records).
* **Confidence–VCA discordance** ("Confidence–VCA discordance", §15): σ(|m_o|) split at its median within
  each (model, dataset) run — high = confidence ≥ median, so records tied at the median are high (the
  paper's 4,288 high of 8,516: strictly-above could hold at most 4,256, see :func:`confidence_high`) —
  crossed with Dep = G_img > 0; per quadrant the share of all records, the accuracy, and the joined edit
  outcomes (flip+visibility, strict) of the edits whose source item falls in it; both strata's n overall
  and per run.
* **Direct shared-margin control**: the true statement's original margin m_o(q+) against the gap as rankers
  of Rel_o; the false-only target (Rel_o among groups whose true statement is accepted); the conditional gap
  (AUROC within true-margin quantile bins, averaged with bin-size weights over bins holding both classes);
  and the cross-validated increment of adding the gap to the true margin (repeated stratified K-fold
  logistic regression on standardized features; Δ = mean over repeats of AUROC(out-of-fold, margin + gap) −
  AUROC(out-of-fold, margin)), with a relation-pair bootstrap interval of the macro Δ.
* **Edit-grouped incremental control**: :mod:`vlaudit.analysis.vca.incremental`.

Every AUROC is computed within model; macro rows average models with equal weight (§19).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold

from vlaudit.analysis.vca.incremental import incremental_rows
from vlaudit.analysis.vca.scored_runs import (
    RunScores,
    fit_predict,
    outcome_reason,
    ranking_rows,
    run_info,
    src_records,
    unit_fields,
)
from vlaudit.metrics.vca import support
from vlaudit.results.missing import Missing, known
from vlaudit.results.vca.outputs import VcaValidityResult
from vlaudit.results.vca.validity import (
    Discordance,
    DiscordanceRun,
    Figure,
    QuadrantRow,
    SharedMarginRow,
    StandaloneRow,
)
from vlaudit.results.versioned import JsonObject
from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, HL_RESAMPLES
from vlaudit.stats.bootstrap import ClusterBootstrap, percentile_intervals
from vlaudit.stats.clusters import GROUP_UNIT
from vlaudit.stats.ranking import auroc, percentile_ranks, weighted_auroc

QUADRANTS = ("high conf, credited", "high conf, uncredited", "low conf, credited", "low conf, uncredited")


@dataclass(frozen=True)
class ValiditySettings:
    """Prespecified options of ``vlaudit vca validity`` (defaults: 5,000 resamples, 2,000 for the H–L
    intervals, seed of §19)."""

    controls: tuple[str, ...] = support.DEFAULT_CONTROLS
    n_resamples: int = BOOTSTRAP_RESAMPLES
    hl_resamples: int = HL_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    level: float = CONFIDENCE_LEVEL
    folds: int = 5
    repeats: int = 10
    ridge: float = 1.0
    ridges: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0, 10.0)
    bins: int = 5


def standalone_rows(scores: Sequence[RunScores], edits: Mapping[str, np.ndarray] | None,
                    settings: ValiditySettings) -> list[StandaloneRow]:
    """The "Standalone predictive validity" table: SRC per dataset with groups, Swap strict and flip+vis."""
    rows: list[StandaloneRow] = []
    kw: dict[str, Any] = {"n_resamples": settings.n_resamples, "seed": settings.seed, "level": settings.level,
                          "hl_resamples": settings.hl_resamples}
    if edits is not None and len(edits["model"]):
        for check, target in (("Swap strict", "strict"), ("Swap flip+vis.", "flip_vis")):
            rows += ranking_rows(edits["gap"], edits[target], edits["model"], edits["edit_id"], **kw, unit="edit",
                                 make=partial(StandaloneRow, check=check, dataset=str(edits["dataset"][0])))
    for dataset in sorted({s.run.dataset for s in scores}):
        src = [(s.run.model, r) for s in scores
               if s.run.dataset == dataset and (r := src_records(s)) is not None]
        if not src:
            continue
        cat = {k: np.concatenate([r[k] for _, r in src]) for k in ("gap", "rel_o", "group_id")}
        models = np.concatenate([[m] * len(r["gap"]) for m, r in src])
        rows += ranking_rows(cat["gap"], cat["rel_o"], models, cat["group_id"].astype(str), **kw, unit=GROUP_UNIT,
                             make=partial(StandaloneRow, check="SRC", dataset=dataset))
    return rows


def _rate(values: np.ndarray, reason: str = "no records") -> Figure:
    return float(np.mean(values)) if len(values) else Missing(reason)


def confidence_high(confidence: np.ndarray) -> np.ndarray:
    """The high-confidence stratum of one run: confidence ≥ its median (VCA §15, ties at the median high).

    With n records and no ties the high stratum holds ⌈n/2⌉; each record tied at the median joins it.
    """
    confidence = np.asarray(confidence, dtype=np.float64)
    return confidence >= np.median(confidence)


def discordance(scores: Sequence[RunScores], edits: Mapping[str, np.ndarray] | None) -> Discordance:
    """Confidence (median split within run) × Dep quadrants, pooled over runs, with joined edit outcomes."""
    quadrant_of: dict[tuple[str, str, str], str] = {}
    records = []
    per_run: list[DiscordanceRun] = []
    for s in scores:
        high = confidence_high(s.confidence)
        dep = s.events.dep
        names = np.where(high, np.where(dep, QUADRANTS[0], QUADRANTS[1]), np.where(dep, QUADRANTS[2], QUADRANTS[3]))
        for item, q in zip(s.run.item_ids, names, strict=True):
            quadrant_of[(s.run.model, s.run.dataset, str(item))] = str(q)
        correct = s.events.correct
        records.append((names, correct))
        shares = [float((names == q).mean()) for q in QUADRANTS]
        per_run.append(DiscordanceRun(s.run.model, s.run.dataset, s.run.n, int(high.sum()), int((~high).sum()),
                                      float(np.median(s.confidence)), *shares))
    names = np.concatenate([n for n, _ in records])
    labelled = all(c is not None for _, c in records)
    correct = np.concatenate([c for _, c in records]) if labelled else None
    swap_q = None
    if edits is not None:
        swap_q = np.array([quadrant_of[(m, d, i)] for m, d, i in zip(
            edits["model"], edits["dataset"], edits["source_item_id"], strict=True)], dtype=object)
    rows = []
    for q in QUADRANTS:
        mask = names == q
        acc = _rate(correct[mask], "no record in the quadrant") if correct is not None else Missing("no labels")
        row = QuadrantRow(q, int(mask.sum()), float(mask.mean()), acc)
        if swap_q is not None and edits is not None:
            sel = swap_q == q
            row = replace(row, swap_n=int(sel.sum()), flip_vis=_rate(edits["flip_vis"][sel], "no edit"),
                          strict=_rate(edits["strict"][sel], "no edit"))
        rows.append(row)
    hcu = [r.high_uncredited for r in per_run]
    n_high = sum(r.n_high for r in per_run)
    return Discordance(rows, per_run, int(names.size), n_high, int(names.size) - n_high,
                       "high = confidence >= median within run", (float(min(hcu)), float(max(hcu))))


def conditional_auroc(scores: np.ndarray, target: np.ndarray, condition: np.ndarray, bins: int) -> float:
    """AUROC of ``scores`` within quantile bins of ``condition`` (percentile ranks, ``bins`` equal bins),
    averaged with bin-size weights over the bins that hold both classes; NaN if none does."""
    bin_of = np.minimum((np.ceil(percentile_ranks(condition) * bins) - 1).astype(int), bins - 1)
    values, sizes = [], []
    for b in range(bins):
        mask = bin_of == b
        value = auroc(scores[mask], target[mask]) if mask.any() else float("nan")
        if not np.isnan(value):
            values.append(value)
            sizes.append(int(mask.sum()))
    return float(np.average(values, weights=sizes)) if values else float("nan")


def repeated_oof(features: np.ndarray, target: np.ndarray, *, folds: int, repeats: int, seed: int,
                 ridge: float) -> np.ndarray | None:
    """Out-of-fold P(target) from repeated stratified K-fold: ``(repeats, n)``; None when a class has fewer
    than two members (no fold split can hold both classes)."""
    target = np.asarray(target, dtype=bool)
    minority = int(min(target.sum(), (~target).sum()))
    if minority < 2:
        return None
    k = min(folds, minority)
    out = np.empty((repeats, target.size))
    for r in range(repeats):
        for train, test in StratifiedKFold(k, shuffle=True, random_state=seed + r).split(features, target):
            out[r, test] = fit_predict(features[train], target[train], features[test], ridge)
    return out


def shared_margin_rows(scores: Sequence[RunScores], settings: ValiditySettings) -> list[SharedMarginRow]:
    """The "Direct shared-margin control" table per dataset with groups: rows Rel_o and false-only."""
    rows: list[SharedMarginRow] = []
    for dataset in sorted({s.run.dataset for s in scores}):
        src = [(s.run.model, r) for s in scores
               if s.run.dataset == dataset and (r := src_records(s)) is not None]
        if not src:
            continue
        clusters = np.concatenate([r["group_id"].astype(str) for _, r in src])
        plan = ClusterBootstrap.draw(clusters.size, clusters=clusters, n_resamples=settings.n_resamples,
                                     seed=settings.seed)
        weights = plan.counts[:, plan.codes]
        offsets = np.cumsum([0] + [len(r["gap"]) for _, r in src])
        for target_name in ("rel_o", "false_only"):
            per_model: list[SharedMarginRow] = []
            deltas: list[np.ndarray] = []
            for k, (model, r) in enumerate(src):
                mask = np.ones(len(r["gap"]), dtype=bool) if target_name == "rel_o" else r["true_accepted"]
                y, gap, margin = r["rel_o"][mask], r["gap"][mask], r["true_margin"][mask]
                w = weights[:, offsets[k]:offsets[k + 1]][:, mask]
                why = outcome_reason(np.asarray(y, dtype=bool))
                cv: dict[str, Any] = dict.fromkeys(CV_FIGURES, Missing(f"{why}: a class has fewer than two records"))
                kw: dict[str, Any] = {"folds": settings.folds, "repeats": settings.repeats,
                                      "seed": settings.seed, "ridge": settings.ridge}
                base = repeated_oof(margin[:, None], y, **kw)
                aug = repeated_oof(np.column_stack([margin, gap]), y, **kw)
                if base is not None and aug is not None:
                    a_base = np.mean([auroc(p, y) for p in base])
                    a_aug = np.mean([auroc(p, y) for p in aug])
                    samples = np.mean([weighted_auroc(pa, y, w) - weighted_auroc(pb, y, w)
                                       for pa, pb in zip(aug, base, strict=True)], axis=0)
                    lo, hi = percentile_intervals(samples, settings.level)[0]
                    cv = {"cv_base_auroc": known(float(a_base), why), "cv_aug_auroc": known(float(a_aug), why),
                          "cv_delta": known(float(a_aug - a_base), why), "cv_delta_lo": known(lo, why),
                          "cv_delta_hi": known(hi, why)}
                    deltas.append(samples)
                per_model.append(SharedMarginRow(
                    dataset, target_name, model, int(mask.sum()), _rate(y), known(auroc(margin, y), why),
                    known(auroc(gap, y), why), known(conditional_auroc(gap, y, margin, settings.bins),
                                                     "no true-margin bin holds both outcomes"), **cv,
                    **unit_fields(GROUP_UNIT, clusters[offsets[k]:offsets[k + 1]], mask)))
            rows += [*per_model, _macro(dataset, target_name, per_model, deltas, settings.level,
                                        unit_fields(GROUP_UNIT, clusters)["n_clusters"])]
    return rows


CV_FIGURES = ("cv_base_auroc", "cv_aug_auroc", "cv_delta", "cv_delta_lo", "cv_delta_hi")


def _macro(dataset: str, target: str, per_model: Sequence[SharedMarginRow], deltas: Sequence[np.ndarray],
           level: float, n_clusters: int) -> SharedMarginRow:
    """The unweighted mean over models of each figure (over the models where it is computed, §19)."""
    def mean(key: str) -> Figure:
        values = [v for r in per_model if isinstance(v := getattr(r, key), float) and not np.isnan(v)]
        return float(np.mean(values)) if values else Missing("no model where it is computed")

    interval: tuple[Figure, Figure] = (Missing("no model where it is computed"),) * 2
    if deltas:
        lo, hi = percentile_intervals(np.nanmean(np.stack(deltas), axis=0), level)[0]
        interval = (known(lo, "no finite resample"), known(hi, "no finite resample"))
    return SharedMarginRow(dataset, target, f"Macro ({len(per_model)} models)", sum(r.n for r in per_model),
                           mean("base_rate"), mean("true_margin_auroc"), mean("gap_auroc"),
                           mean("conditional_gap_auroc"), mean("cv_base_auroc"), mean("cv_aug_auroc"),
                           mean("cv_delta"), *interval, GROUP_UNIT, n_clusters)


def compute_validity(scores: Sequence[RunScores], edits: Mapping[str, np.ndarray] | None,
                     settings: ValiditySettings | None = None) -> VcaValidityResult:
    """Every §15 table over the runs' scores and (optionally) the joined edit outcomes; the settings, the runs
    and the edits joined as the result's extra keys."""
    settings = settings or ValiditySettings()
    extra: JsonObject = {
        "settings": {k: (list(v) if isinstance(v, tuple) else v) for k, v in settings.__dict__.items()},
        "runs": [run_info(s) for s in scores],
    }
    if edits is not None:
        extra["edits"] = {"dataset": str(edits["dataset"][0]) if len(edits["model"]) else None,
                          "records": int(len(edits["model"])), "edits": int(len(set(edits["edit_id"].tolist())))}
    return VcaValidityResult(
        standalone=standalone_rows(scores, edits, settings), discordance=discordance(scores, edits),
        shared_margin=shared_margin_rows(scores, settings),
        incremental=incremental_rows(edits, settings) if edits is not None else [],
        extra=extra)
