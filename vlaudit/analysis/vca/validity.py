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
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold

from vlaudit.analysis.vca.incremental import incremental_rows
from vlaudit.analysis.vca.scored_runs import (
    RunScores,
    fit_predict,
    ranking_rows,
    run_info,
    src_records,
    unit_fields,
)
from vlaudit.metrics.vca import support
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
                    settings: ValiditySettings) -> list[dict[str, Any]]:
    """The "Standalone predictive validity" table: SRC per dataset with groups, Swap strict and flip+vis."""
    rows: list[dict[str, Any]] = []
    kw: dict[str, Any] = {"n_resamples": settings.n_resamples, "seed": settings.seed, "level": settings.level,
                          "hl_resamples": settings.hl_resamples}
    if edits is not None and len(edits["model"]):
        for check, target in (("Swap strict", "strict"), ("Swap flip+vis.", "flip_vis")):
            rows += [{"check": check, "dataset": str(edits["dataset"][0])} | r
                     for r in ranking_rows(edits["gap"], edits[target], edits["model"], edits["edit_id"], **kw,
                                           unit="edit")]
    for dataset in sorted({s.run.dataset for s in scores}):
        src = [(s.run.model, r) for s in scores
               if s.run.dataset == dataset and (r := src_records(s)) is not None]
        if not src:
            continue
        cat = {k: np.concatenate([r[k] for _, r in src]) for k in ("gap", "rel_o", "group_id")}
        models = np.concatenate([[m] * len(r["gap"]) for m, r in src])
        rows += [{"check": "SRC", "dataset": dataset} | r for r in ranking_rows(
            cat["gap"], cat["rel_o"], models, cat["group_id"].astype(str), **kw, unit=GROUP_UNIT)]
    return rows


def _rate(values: np.ndarray) -> float | None:
    return float(np.mean(values)) if len(values) else None


def confidence_high(confidence: np.ndarray) -> np.ndarray:
    """The high-confidence stratum of one run: confidence ≥ its median (VCA §15, ties at the median high).

    With n records and no ties the high stratum holds ⌈n/2⌉; each record tied at the median joins it.
    """
    confidence = np.asarray(confidence, dtype=np.float64)
    return confidence >= np.median(confidence)


def discordance(scores: Sequence[RunScores], edits: Mapping[str, np.ndarray] | None) -> dict[str, Any]:
    """Confidence (median split within run) × Dep quadrants, pooled over runs, with joined edit outcomes."""
    quadrant_of: dict[tuple[str, str, str], str] = {}
    records = []
    per_run: list[dict[str, Any]] = []
    for s in scores:
        high = confidence_high(s.confidence)
        dep = s.events.dep
        names = np.where(high, np.where(dep, QUADRANTS[0], QUADRANTS[1]), np.where(dep, QUADRANTS[2], QUADRANTS[3]))
        for item, q in zip(s.run.item_ids, names, strict=True):
            quadrant_of[(s.run.model, s.run.dataset, str(item))] = str(q)
        correct = s.events.correct
        records.append((names, correct))
        per_run.append({"model": s.run.model, "dataset": s.run.dataset, "n": s.run.n,
                        "n_high": int(high.sum()), "n_low": int((~high).sum()),
                        "median_confidence": float(np.median(s.confidence))}
                       | {q: float((names == q).mean()) for q in QUADRANTS})
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
        row: dict[str, Any] = {"quadrant": q, "n": int(mask.sum()), "share": float(mask.mean()),
                               "acc": _rate(correct[mask]) if correct is not None else None}
        if swap_q is not None and edits is not None:
            sel = swap_q == q
            row |= {"swap_n": int(sel.sum()), "flip_vis": _rate(edits["flip_vis"][sel]),
                    "strict": _rate(edits["strict"][sel])}
        rows.append(row)
    hcu = [r[QUADRANTS[1]] for r in per_run]
    n_high = sum(r["n_high"] for r in per_run)
    return {"rows": rows, "per_run": per_run, "n": int(names.size), "n_high": n_high,
            "n_low": int(names.size) - n_high, "split_rule": "high = confidence >= median within run",
            "high_conf_uncredited_range": [float(min(hcu)), float(max(hcu))]}


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


def shared_margin_rows(scores: Sequence[RunScores], settings: ValiditySettings) -> list[dict[str, Any]]:
    """The "Direct shared-margin control" table per dataset with groups: rows Rel_o and false-only."""
    rows = []
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
            per_model: list[dict[str, Any]] = []
            deltas: list[np.ndarray] = []
            for k, (model, r) in enumerate(src):
                mask = np.ones(len(r["gap"]), dtype=bool) if target_name == "rel_o" else r["true_accepted"]
                y, gap, margin = r["rel_o"][mask], r["gap"][mask], r["true_margin"][mask]
                w = weights[:, offsets[k]:offsets[k + 1]][:, mask]
                row = {"model": model, "n": int(mask.sum()), "base_rate": _rate(y),
                       **unit_fields(GROUP_UNIT, clusters[offsets[k]:offsets[k + 1]], mask),
                       "true_margin_auroc": auroc(margin, y), "gap_auroc": auroc(gap, y),
                       "conditional_gap_auroc": conditional_auroc(gap, y, margin, settings.bins)}
                kw: dict[str, Any] = {"folds": settings.folds, "repeats": settings.repeats,
                                      "seed": settings.seed, "ridge": settings.ridge}
                base = repeated_oof(margin[:, None], y, **kw)
                aug = repeated_oof(np.column_stack([margin, gap]), y, **kw)
                if base is None or aug is None:
                    row |= {"cv_base_auroc": None, "cv_aug_auroc": None, "cv_delta": None}
                else:
                    a_base = np.mean([auroc(p, y) for p in base])
                    a_aug = np.mean([auroc(p, y) for p in aug])
                    row |= {"cv_base_auroc": float(a_base), "cv_aug_auroc": float(a_aug),
                            "cv_delta": float(a_aug - a_base)}
                    samples = np.mean([weighted_auroc(pa, y, w) - weighted_auroc(pb, y, w)
                                       for pa, pb in zip(aug, base, strict=True)], axis=0)
                    lo, hi = percentile_intervals(samples, settings.level)[0]
                    row |= {"cv_delta_lo": float(lo), "cv_delta_hi": float(hi)}
                    deltas.append(samples)
                per_model.append(row)
            base_rates = [r["base_rate"] for r in per_model if r["base_rate"] is not None]
            macro = {"model": f"Macro ({len(per_model)} models)", "n": sum(r["n"] for r in per_model),
                     "base_rate": float(np.mean(base_rates)) if base_rates else None,
                     **unit_fields(GROUP_UNIT, clusters)}
            for key in ("true_margin_auroc", "gap_auroc", "conditional_gap_auroc", "cv_base_auroc",
                        "cv_aug_auroc", "cv_delta"):
                values = [r[key] for r in per_model if r.get(key) is not None and not np.isnan(r[key])]
                macro[key] = float(np.mean(values)) if values else None
            if deltas:
                lo, hi = percentile_intervals(np.nanmean(np.stack(deltas), axis=0), settings.level)[0]
                macro |= {"cv_delta_lo": float(lo), "cv_delta_hi": float(hi)}
            rows += [{"dataset": dataset, "target": target_name} | r for r in (*per_model, macro)]
    return rows


def compute_validity(scores: Sequence[RunScores], edits: Mapping[str, np.ndarray] | None,
                     settings: ValiditySettings | None = None) -> dict[str, Any]:
    """Every §15 table over the runs' scores and (optionally) the joined edit outcomes."""
    settings = settings or ValiditySettings()
    out: dict[str, Any] = {
        "standalone": standalone_rows(scores, edits, settings),
        "discordance": discordance(scores, edits),
        "shared_margin": shared_margin_rows(scores, settings),
        "incremental": incremental_rows(edits, settings) if edits is not None else [],
        "settings": {k: (list(v) if isinstance(v, tuple) else v) for k, v in settings.__dict__.items()},
        "runs": [run_info(s) for s in scores],
    }
    if edits is not None:
        out["edits"] = {"dataset": str(edits["dataset"][0]) if len(edits["model"]) else None,
                        "records": int(len(edits["model"])), "edits": int(len(set(edits["edit_id"].tolist())))}
    return out
