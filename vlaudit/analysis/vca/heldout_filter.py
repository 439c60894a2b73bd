"""Held-out benchmark filtering (VCA §16): ``vlaudit vca filter``.

For each held-out model h, every filter is built from the *other* models (reference panel) and evaluated on h:

* panels (per item, then averaged over the group's statements; a group is a same-image true/false relation
  group, an ungrouped item is its own group):

  - ``shortcut``  Shortcut Score adaptation S = T − V (:func:`proxies.shortcut_score`), raw mean over the
    reference models; the filter keeps the *lowest* S (least answerable without the image; uses labels)
  - ``visnec``    VisNec-style gold-answer loss reduction text → original, raw mean; keeps the highest
  - ``confidence`` σ(|m_o|), rank-normalized within each reference model; keeps the highest (label-free)
  - ``vca``       the headline G_img, rank-normalized within each reference model; keeps the highest
    (label-free)
  - ``prob_gap``  the contrast of §16: the probability gap σ(r_o) − max_c σ(r_c) averaged *without* rank
    normalization (the ``prob_max`` aggregation variant of §18)

  Rank normalization is the percentile rank of the item within the reference model, exact ties ordered by
  (group id, item id); groups are kept in order of score, ties broken by group id. Coverage c keeps
  round(c·G) of the G groups (at least one) and both statements of each kept group.
* held-out metrics on the kept items: Acc (original), Blind Gap = text-only accuracy − ½, Visual Gain = Acc −
  text-only accuracy, Dep (the held-out model's G_img > 0, unused by every filter); macro = unweighted mean
  over held-out models.
* Jaccard overlap of the kept group sets, VCA against each other panel, macro over held-out models.
* relation-group bootstrap at the primary coverage: one plan resamples groups (each drawn group brings its
  kept statements in every held-out model); differences VCA − each other panel of macro Acc, Blind Gap and
  Visual Gain with percentile intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlaudit.analysis.vca.scored_runs import RunScores, run_info
from vlaudit.errors import InputError
from vlaudit.metrics.vca import proxies, robustness, support
from vlaudit.metrics.vca.robustness import jaccard
from vlaudit.results.missing import known
from vlaudit.results.vca.filter import (
    FilterDataset,
    FilterRow,
    FilterSettings,
    HeldOutRow,
    JaccardRow,
    PanelDifference,
    Selection,
)
from vlaudit.results.vca.outputs import VcaFilterResult
from vlaudit.stats.bootstrap import ClusterBootstrap, percentile_intervals
from vlaudit.stats.clusters import GROUP_UNIT
from vlaudit.stats.ranking import percentile_ranks

PANELS = ("shortcut", "visnec", "confidence", "vca", "prob_gap")
PANEL_NAMES = {"shortcut": "Shortcut Score", "visnec": "VisNec-style", "confidence": "Confidence panel",
               "vca": "VCA panel", "prob_gap": "Direct prob-gap avg"}
RANK_NORMALIZED = ("confidence", "vca")
METRICS = ("acc", "blind_gap", "visual_gain", "dep")


@dataclass
class ModelTable:
    """One model's per-item arrays over the dataset's common items (sorted by item id)."""

    model: str
    scores: dict[str, np.ndarray]
    correct: np.ndarray
    correct_text: np.ndarray
    dep: np.ndarray


def model_tables(scores: Sequence[RunScores], controls: Sequence[str]) -> tuple[list[ModelTable], np.ndarray,
                                                                                np.ndarray, int]:
    """Align the runs of one dataset on their common items: (tables, item ids, group ids, items dropped)."""
    common = sorted(set.intersection(*(set(map(str, s.run.item_ids)) for s in scores)))
    if not common:
        raise InputError(f"the runs of dataset {scores[0].run.dataset!r} share no items", field="item_id")
    dropped = max(s.run.n for s in scores) - len(common)
    tables: list[ModelTable] = []
    groups: np.ndarray | None = None
    for s in scores:
        run = s.run
        if run.labels is None:
            raise InputError(f"{run.model!r} on {run.dataset!r} has no labels: the filter metrics (Acc, Blind "
                             "Gap, Visual Gain) and the Shortcut/VisNec panels need gold answers", path=run.source,
                             field="label")
        if "text" not in run.margins:
            raise InputError(f"{run.model!r} on {run.dataset!r} has no text-only context", path=run.source,
                             field="context")
        index = s.index()
        take = np.array([index[i] for i in common])
        m = {c: np.asarray(v)[take] for c, v in run.margins.items()}
        labels = run.labels[take]
        if np.isnan(m["text"]).any():
            raise InputError(f"{run.model!r} on {run.dataset!r} lacks the text-only margin for some items",
                             path=run.source, field="context")
        g = np.array([f"i:{i}" if run.group_ids is None or run.group_ids[k] is None else f"g:{run.group_ids[k]}"
                      for i, k in zip(common, take, strict=True)], dtype=object)
        groups = g if groups is None else groups
        tables.append(ModelTable(
            model=run.model,
            scores={"shortcut": -proxies.shortcut_score(m, labels), "visnec": proxies.visnec_style(m, labels),
                    "confidence": s.confidence[take], "vca": s.events.gap[take],
                    "prob_gap": robustness.aggregation_gaps(m, controls)["prob_max"]},
            correct=np.asarray(s.events.correct)[take],
            correct_text=support.correctness(support.prediction_direction(m["text"]), labels),
            dep=s.events.dep[take]))
    assert groups is not None  # set by the first run; there is one (the intersection above needs it)
    return tables, np.array(common, dtype=object), groups, dropped


def panel_group_scores(references: Sequence[ModelTable], panel: str, item_ids: np.ndarray,
                       group_codes: np.ndarray, n_groups: int, group_keys: np.ndarray) -> np.ndarray:
    """The panel's score per group: mean over reference models (rank-normalized where the panel is) and over
    the group's statements."""
    tie = np.array([f"{g}\x00{i}" for g, i in zip(group_keys[group_codes], item_ids, strict=True)], dtype=object)
    per_model = [percentile_ranks(t.scores[panel], tie_break=tie) if panel in RANK_NORMALIZED else t.scores[panel]
                 for t in references]
    item_score = np.mean(np.stack(per_model), axis=0)
    sums = np.bincount(group_codes, weights=item_score, minlength=n_groups)
    return sums / np.bincount(group_codes, minlength=n_groups)


def select(group_scores: np.ndarray, group_keys: np.ndarray, coverage: float) -> np.ndarray:
    """Boolean mask of the kept groups: the round(coverage% · G) highest scores, ties by group id."""
    k = max(1, int(round(coverage / 100.0 * group_scores.size)))
    order = np.lexsort((group_keys.astype(str), -group_scores))
    keep = np.zeros(group_scores.size, dtype=bool)
    keep[order[:k]] = True
    return keep


def held_out_metrics(table: ModelTable, items: np.ndarray) -> dict[str, float]:
    """Acc, Blind Gap, Visual Gain and Dep of the held-out model on the kept items (fractions)."""
    acc, acc_t = float(table.correct[items].mean()), float(table.correct_text[items].mean())
    return {"acc": acc, "blind_gap": acc_t - 0.5, "visual_gain": acc - acc_t, "dep": float(table.dep[items].mean())}


def _macro(rows: Sequence[FilterRow] | Sequence[dict[str, float]], coverage: float, panel: str) -> FilterRow:
    """The unweighted mean over held-out models of each metric (§16)."""
    def mean(key: str) -> float:
        return float(np.mean([r[key] if isinstance(r, dict) else getattr(r, key) for r in rows]))

    return FilterRow(coverage=coverage, panel=panel, held_out="macro", **{k: mean(k) for k in METRICS})


def filter_dataset(scores: Sequence[RunScores], settings: FilterSettings) -> FilterDataset:
    """Leave-one-model-out filtering of one dataset's runs (see the module docstring)."""
    if len(scores) < 2:
        raise InputError(f"dataset {scores[0].run.dataset!r} has one model; leave-one-model-out filtering needs "
                         "two or more", field="model")
    tables, item_ids, group_labels, dropped = model_tables(scores, settings.controls)
    group_keys, codes = np.unique(group_labels.astype(str), return_inverse=True)
    n_groups = group_keys.size
    coverages = sorted(set(settings.coverages) | {settings.primary})
    rows = [_macro([held_out_metrics(t, np.ones(item_ids.size, dtype=bool)) for t in tables], 100.0,
                   "Full benchmark")]
    per_held: list[HeldOutRow] = []
    kept: dict[tuple[str, float, str], np.ndarray] = {}
    for h, table in enumerate(tables):
        refs = [t for k, t in enumerate(tables) if k != h]
        group_scores = {p: panel_group_scores(refs, p, item_ids, codes, n_groups, group_keys) for p in PANELS}
        for cov in coverages:
            for panel in PANELS:
                mask = select(group_scores[panel], group_keys, cov)
                kept[(table.model, cov, panel)] = mask
                per_held.append(HeldOutRow(coverage=cov, panel=PANEL_NAMES[panel], held_out=table.model,
                                           groups=int(mask.sum()), items=int(mask[codes].sum()),
                                           **held_out_metrics(table, mask[codes])))
    for cov in coverages:
        for panel in PANELS:
            sub = [r for r in per_held if r.coverage == cov and r.panel == PANEL_NAMES[panel]]
            rows.append(_macro(sub, cov, PANEL_NAMES[panel]))
    overlaps = []
    for cov in coverages:
        for other in PANELS:
            if other == "vca":
                continue
            values = [jaccard(kept[(t.model, cov, "vca")], kept[(t.model, cov, other)]) for t in tables]
            overlaps.append(JaccardRow(cov, PANEL_NAMES[other], float(np.mean(values)),
                                       {t.model: v for t, v in zip(tables, values, strict=True)}))
    primary = {r.panel: r for r in rows if r.coverage == settings.primary}
    return FilterDataset(
        dataset=scores[0].run.dataset, models=[t.model for t in tables],
        splits=sorted({x for s in scores for x in run_info(s)["splits"]}), items=int(item_ids.size),
        groups=int(n_groups), items_not_shared=int(dropped), rows=rows, per_held_out=per_held, jaccard=overlaps,
        bootstrap=bootstrap_differences(tables, codes, n_groups, kept, primary, settings),
        selections=[Selection(m, c, PANEL_NAMES[p],
                              [str(g)[2:] if str(g)[:2] in ("g:", "i:") else str(g) for g in group_keys[mask]])
                    for (m, c, p), mask in kept.items()])


def bootstrap_differences(tables: Sequence[ModelTable], codes: np.ndarray, n_groups: int,
                          kept: dict[tuple[str, float, str], np.ndarray], primary: Mapping[str, FilterRow],
                          settings: FilterSettings) -> list[PanelDifference]:
    """Relation-group bootstrap of macro VCA − other panel at the primary coverage (Acc, Blind Gap, Visual
    Gain), one plan shared by every model and panel so the differences are paired; the point differences
    from the ``primary`` coverage's macro rows (by panel name)."""
    plan = ClusterBootstrap.draw(n_groups, n_resamples=settings.n_resamples, seed=settings.seed)
    samples: dict[str, dict[str, np.ndarray]] = {}
    for panel in PANELS:
        per_model = []
        for t in tables:
            items = kept[(t.model, settings.primary, panel)][codes]
            cols = np.column_stack([items * t.correct, items * t.correct_text, items]).astype(np.float64)
            group_sums = np.column_stack([np.bincount(codes, weights=cols[:, j], minlength=n_groups)
                                          for j in range(3)])
            sums = plan.resample_cluster_values(group_sums)
            with np.errstate(invalid="ignore", divide="ignore"):
                acc, acc_t = sums[:, 0] / sums[:, 2], sums[:, 1] / sums[:, 2]
            per_model.append(np.column_stack([acc, acc_t - 0.5, acc - acc_t]))
        with np.errstate(invalid="ignore"):
            macro = np.nanmean(np.stack(per_model), axis=0)
        samples[panel] = {"acc": macro[:, 0], "blind_gap": macro[:, 1], "visual_gain": macro[:, 2]}
    out = []
    vca = primary[PANEL_NAMES["vca"]]
    for other in PANELS:
        if other == "vca":
            continue
        figures: dict[str, Any] = {}
        for metric in ("acc", "blind_gap", "visual_gain"):
            diff = samples["vca"][metric] - samples[other][metric]
            lo, hi = percentile_intervals(diff, settings.level)[0]
            figures |= {metric: getattr(vca, metric) - getattr(primary[PANEL_NAMES[other]], metric),
                        f"{metric}_lo": known(lo, "no resample keeps an item"),
                        f"{metric}_hi": known(hi, "no resample keeps an item")}
        out.append(PanelDifference(coverage=settings.primary, contrast=f"VCA − {PANEL_NAMES[other]}", **figures,
                                   unit=GROUP_UNIT, n_clusters=n_groups))
    return out


def compute_filter(scores: Sequence[RunScores], settings: FilterSettings | None = None) -> VcaFilterResult:
    """``filter.json``: one leave-one-model-out filtering result per dataset (datasets never pooled)."""
    settings = settings or FilterSettings()
    datasets = sorted({s.run.dataset for s in scores})
    return VcaFilterResult(datasets=[filter_dataset([s for s in scores if s.run.dataset == d], settings)
                                     for d in datasets], settings=settings)
