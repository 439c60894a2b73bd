"""Edit-grouped incremental control of the VCA gap (VCA §15): does G_img add to what confidence predicts?

Records are (model, accepted edit) pairs joined to the source true statement's scores. For every held-out
edit, all of its model records are left out together; a logistic model (scikit-learn, standardized
features, L2 penalty ``ridge`` = 1/C) is fit on the other edits and predicts the held-out records.

* baseline features: model and relation indicators, the original direction d, the within-model percentile
  rank of the confidence σ(|m_o|)
* augmented: the baseline plus the within-model percentile rank of the headline G_img (no erasure or mismatch
  score enters)
* targets: flip+visibility, the strict composite, and flip+visibility given the original pair (Rel_o records)
* Δ = AUROC(augmented) − AUROC(baseline) over all held-out predictions, with an edit-id bootstrap interval
  (resampling edits with all their model records; the predictions are fixed, §19), and per model Δ.
* the Pair D increment (§15 "Independent edit outcomes by audit stratum": "A leave-one-edit-out model
  restricted to Rel.o and controlling relation, model, original direction, and within-model confidence rank
  changes AUROC from 82.01 to 82.03 when Pair D is added: +0.03 [−1.41, +1.41]"): the same baseline on the
  Rel_o records, augmented by the source group's Pair D indicator instead of the G_img rank; target
  flip+visibility; the same edit-id interval.
* sensitivity rows (flip+visibility): ridge over ``settings.ridges``; the within-model signed-margin rank in
  place of confidence + direction; leave-one-model-out (the analysis without one model's records); and
  horizontal vs vertical relations.

Within-model ranks are taken over the model's joined records. Target-supervised fits here diagnose external
validity only; they never change the label-free VCA definition.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from vlaudit.analysis.vca.scored_runs import fit_predict, outcome_reason, relation_axis, within_model_ranks
from vlaudit.results.missing import Missing, known
from vlaudit.results.vca.validity import IncrementalRow
from vlaudit.stats.bootstrap import ClusterBootstrap, percentile_intervals
from vlaudit.stats.ranking import auroc, weighted_auroc

ADDED = {"gap": "G_img rank", "pair_d": "Pair D"}
PAIR_D_ANALYSIS = "Pair D within Rel_o"


def _indicators(values: np.ndarray) -> np.ndarray:
    """One-hot columns for every level but the first (an intercept is fit separately)."""
    levels = sorted(set(values.tolist()))
    return np.column_stack([values == level for level in levels[1:]]).astype(np.float64) if len(levels) > 1 \
        else np.zeros((values.size, 0))


def design(edits: Mapping[str, np.ndarray], mask: np.ndarray, kind: str = "confidence", *,
           added: str = "gap") -> tuple[np.ndarray, np.ndarray]:
    """(baseline, augmented) feature matrices of the records in ``mask`` (see the module docstring).

    ``kind="signed"`` replaces direction + confidence rank by the within-model rank of the signed m_o.
    ``added`` is what the augmented model adds: ``"gap"`` (the within-model rank of G_img) or ``"pair_d"``
    (the 0/1 Pair D indicator).
    """
    models = edits["model"][mask].astype(str)
    parts = [_indicators(models), _indicators(edits["relation"][mask].astype(str))]
    if kind == "signed":
        parts.append(within_model_ranks(edits["margin"][mask], models)[:, None])
    else:
        parts += [edits["direction"][mask][:, None], within_model_ranks(edits["confidence"][mask], models)[:, None]]
    base = np.column_stack(parts)
    extra = (np.asarray(edits["pair_d"][mask], dtype=np.float64) if added == "pair_d"
             else within_model_ranks(edits["gap"][mask], models))
    return base, np.column_stack([base, extra])


def leave_one_edit_out(features: np.ndarray, target: np.ndarray, edit_ids: np.ndarray, ridge: float) -> np.ndarray:
    """Held-out P(target) per record, fitting once per edit on the records of every other edit.

    A training set with one class predicts its own rate (no fit is possible).
    """
    target = np.asarray(target, dtype=bool)
    out = np.empty(target.size)
    for edit in np.unique(edit_ids):
        test = edit_ids == edit
        train = ~test
        y = target[train]
        if y.all() or not y.any():
            out[test] = float(y.mean()) if y.size else 0.5
            continue
        out[test] = fit_predict(features[train], y, features[test], ridge)
    return out


def increment(edits: Mapping[str, np.ndarray], target: str, mask: np.ndarray, *, ridge: float, kind: str,
              n_resamples: int, seed: int, level: float, analysis: str, target_name: str,
              added: str = "gap") -> IncrementalRow:
    """One row: edits/records, baseline and augmented held-out AUROC, Δ with its edit-id interval, per-model Δ."""
    y = np.asarray(edits[target], dtype=bool)[mask]
    edit_ids = edits["edit_id"][mask].astype(str)
    models = edits["model"][mask].astype(str)
    n_edits = int(len(set(edit_ids.tolist())))
    head = IncrementalRow(analysis, target_name, ADDED[added], n_edits, int(mask.sum()),
                          *(Missing("no records"),) * 6, unit="edit", n_clusters=n_edits)
    if y.size == 0 or y.all() or not y.any():
        gone = Missing(outcome_reason(y))
        return replace(head, base_rate=float(y.mean()) if y.size else gone, baseline=gone, augmented=gone,
                       delta=gone, delta_lo=gone, delta_hi=gone)
    base_x, aug_x = design(edits, mask, kind, added=added)
    p_base = leave_one_edit_out(base_x, y, edit_ids, ridge)
    p_aug = leave_one_edit_out(aug_x, y, edit_ids, ridge)
    a_base, a_aug = auroc(p_base, y), auroc(p_aug, y)
    plan = ClusterBootstrap.draw(y.size, clusters=edit_ids, n_resamples=n_resamples, seed=seed)
    w = plan.counts[:, plan.codes]
    lo, hi = percentile_intervals(weighted_auroc(p_aug, y, w) - weighted_auroc(p_base, y, w), level)[0]
    per_model = {m: known(auroc(p_aug[models == m], y[models == m]) - auroc(p_base[models == m], y[models == m]),
                          outcome_reason(y[models == m]))
                 for m in sorted(set(models.tolist()))}
    return replace(head, base_rate=float(y.mean()), baseline=float(a_base), augmented=float(a_aug),
                   delta=float(a_aug - a_base),
                   delta_lo=known(lo, "no finite resample"), delta_hi=known(hi, "no finite resample"),
                   per_model_delta=per_model)


def incremental_rows(edits: Mapping[str, np.ndarray], settings: Any) -> list[IncrementalRow]:
    """The §15 "Edit-grouped incremental control" table and its sensitivity rows."""
    if not len(edits["model"]):
        return []
    kw: dict[str, Any] = {"n_resamples": settings.n_resamples, "seed": settings.seed, "level": settings.level}
    every = np.ones(len(edits["model"]), dtype=bool)
    rows = []
    for name, target, mask in (("Flip+visibility", "flip_vis", every), ("Strict composite", "strict", every),
                               ("Flip given orig. pair", "flip_vis", np.asarray(edits["rel_o"], dtype=bool))):
        rows.append(increment(edits, target, mask, ridge=settings.ridge, kind="confidence", analysis="primary",
                              target_name=name, **kw))
    rows.append(pair_d_increment(edits, settings))

    def flip(analysis: str, mask: np.ndarray, ridge: float = settings.ridge, kind: str = "confidence") -> None:
        rows.append(increment(edits, "flip_vis", mask, ridge=ridge, kind=kind, analysis=analysis,
                              target_name="Flip+visibility", **kw))

    for ridge in settings.ridges:
        if ridge != settings.ridge:
            flip(f"ridge {ridge:g}", every, ridge)
    flip("signed-margin rank", every, kind="signed")
    models = edits["model"].astype(str)
    if len(set(models.tolist())) > 2:
        for model in sorted(set(models.tolist())):
            flip(f"without {model}", models != model)
    axes = np.array([relation_axis(r) for r in edits["relation"]])
    for axis in ("horizontal", "vertical"):
        if (axes == axis).any():
            flip(axis, axes == axis)
    return rows


def pair_d_increment(edits: Mapping[str, np.ndarray], settings: Any) -> IncrementalRow:
    """§15's adjusted Pair D increment: Rel_o records, flip+visibility, baseline + Pair D (module docstring)."""
    rel_o = np.asarray(edits["rel_o"], dtype=bool)
    if "pair_d" not in edits:
        gone = Missing("the edit outcomes have no pair_d (or joint) column")
        n_edits = int(len(set(edits["edit_id"][rel_o].tolist())))
        return IncrementalRow(PAIR_D_ANALYSIS, "Flip+visibility", ADDED["pair_d"], n_edits, int(rel_o.sum()),
                              *(gone,) * 6, unit="edit", n_clusters=n_edits)
    return increment(edits, "flip_vis", rel_o, ridge=settings.ridge, kind="confidence",
                     n_resamples=settings.n_resamples, seed=settings.seed, level=settings.level,
                     analysis=PAIR_D_ANALYSIS, target_name="Flip+visibility", added="pair_d")
