"""Inputs shared by the VCA analyses of §15, §16 and §18 (``vlaudit vca validity|filter|proxies``).

* :func:`run_scores` computes the per-item events of every run with :func:`vca_report.run_events` (so G_img,
  Dep and correctness are the report's own), plus the original-answer confidence.
* :func:`src_records` gives the same-record consistency (SRC) rows: one per relation group, predictor from the
  group's true statement, target Rel_o (§15).
* :func:`join_edits` attaches the edited outcomes written by ``vlaudit data edits analyze`` (flip+visibility,
  strict, Rel_o of the source pair; read with :func:`vlaudit.sources.edit_outcomes.read_edit_outcomes`) to
  the source true statement's scores of the same model (§15 Swap).
* :func:`ranking_rows` is the standalone-validity row set for one target: AUROC, AUPRC and H–L per model with
  cluster-bootstrap intervals, their macro mean over models, and the rank-pooled row (within-model
  percentile ranks first; raw scores are never ranked across models).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression

from vlaudit.analysis.vca.report import RunEvents, run_events
from vlaudit.errors import InputError
from vlaudit.metrics.vca import proxies, support
from vlaudit.results.missing import known
from vlaudit.results.vca.validity import Figure, RankingRow
from vlaudit.settings import CONFIDENCE_LEVEL
from vlaudit.sources.margins import MarginRun
from vlaudit.stats.bootstrap import ClusterBootstrap, percentile_intervals
from vlaudit.stats.ranking import (
    auprc,
    auroc,
    high_minus_low,
    percentile_ranks,
    weighted_auprc,
    weighted_auroc,
    weighted_high_minus_low,
)

HORIZONTAL = ("left of", "right of")
VERTICAL = ("above", "below")


@dataclass
class RunScores:
    """The report's events of one run plus the original-answer confidence (aligned with ``events.run``)."""

    events: RunEvents
    confidence: np.ndarray

    @property
    def run(self) -> MarginRun:
        return self.events.run

    def index(self) -> dict[str, int]:
        return {str(i): k for k, i in enumerate(self.run.item_ids)}


def run_scores(runs: Sequence[MarginRun], controls: Sequence[str] = support.DEFAULT_CONTROLS) -> list[RunScores]:
    """Per-item events of every run under the headline controls (VCA §3)."""
    out = []
    for run in runs:
        ev = run_events(run, controls)
        out.append(RunScores(ev, proxies.confidence(ev.run.margins["original"])))
    return out


def run_info(scores: RunScores) -> dict[str, Any]:
    """What a result was computed on: model, dataset, n (after headline exclusions), the splits named in the
    MARGINS ``split`` column (``["unsplit"]`` without one; every number names its split), contexts, groups."""
    run = scores.run
    splits = run.extra.get("split")
    names = sorted({str(x) for x in splits if x not in (None, "")}) if splits is not None else []
    return {"model": run.model, "dataset": run.dataset, "n": run.n, "splits": names or ["unsplit"],
            "contexts": list(run.contexts),
            "groups": 0 if scores.events.groups is None else scores.events.groups.n_groups}


def has_context(run: MarginRun, *contexts: str) -> np.ndarray:
    """Items of ``run`` with a finite margin for every one of ``contexts`` (a missing context is NaN)."""
    mask = np.ones(run.n, dtype=bool)
    for c in contexts:
        mask &= ~np.isnan(run.margins[c]) if c in run.margins else False
    return mask


def src_records(scores: RunScores) -> dict[str, np.ndarray] | None:
    """SRC rows of one run (VCA §15): per relation group the true statement's item index, its raw gap, its
    original margin and confidence, Rel_o and whether the true statement is accepted (m_o ≥ 0).

    Rel_o = true accepted ∧ every false rejected, so among groups whose true statement is accepted Rel_o is
    the false-only target of §15 (the shared-margin control conditions on ``true_accepted``).
    """
    groups = scores.events.groups
    if groups is None:
        return None
    t = groups.true_index
    m_o = np.asarray(scores.run.margins["original"], dtype=np.float64)
    return {"group_id": np.asarray(groups.group_ids, dtype=object), "item": t, "gap": scores.events.gap[t],
            "true_margin": m_o[t], "confidence": scores.confidence[t], "rel_o": groups.rel["original"],
            "true_accepted": m_o[t] >= 0}


def _flag(value: Any, *, path: str, record: str, name: str) -> bool:
    text = str(value).strip().lower()
    if text in ("1", "1.0", "true", "yes"):
        return True
    if text in ("0", "0.0", "false", "no", "none", ""):
        return False
    raise InputError(f"not a 0/1 outcome: {value!r}", path=path, record=record, field=name)


#: edit outcomes joined with the source statement's scores: one column (numpy array) per field
JoinedEdits = dict[str, np.ndarray]


def join_edits(records: Sequence[Mapping[str, Any]], scores: Sequence[RunScores], *,
               dataset: str | None = None, path: str = "<edits>") -> JoinedEdits:
    """One row per (model, edit) with the source true statement's scores of that model (VCA §15 Swap).

    The source dataset is ``dataset``, else the one dataset whose runs hold the source items. Models of the
    edit table without a run are an error; runs without edit records are left out.
    """
    if not records:
        raise InputError("no edit outcome records", path=path, field="edit_id")
    by_key = {(s.run.model, s.run.dataset): s for s in scores}
    index = {key: s.index() for key, s in by_key.items()}
    datasets = sorted({d for (_, d) in by_key})
    if dataset is None:
        hits = [d for d in datasets if all(str(r["source_item_id"]) in index.get((str(r["model"]), d), {})
                                           for r in records)]
        if len(hits) != 1:
            raise InputError(f"cannot tell which dataset the edits come from ({len(hits)} candidates among "
                             f"{datasets}): give --edits-dataset", path=path, field="source_item_id")
        dataset = hits[0]
    cols: dict[str, list[Any]] = {k: [] for k in (
        "model", "edit_id", "source_item_id", "gap", "confidence", "direction", "margin", "relation",
        "flip_vis", "strict", "rel_o")}
    for k, r in enumerate(records, start=1):
        model, item = str(r["model"]), str(r["source_item_id"])
        s = by_key.get((model, dataset))
        if s is None:
            raise InputError(f"model {model!r} has no run on dataset {dataset!r} among the RUNS", path=path,
                             record=f"row {k}", field="model")
        i = index[(model, dataset)].get(item)
        if i is None:
            raise InputError(f"source item {item!r} is not among the scored items of model {model!r} on {dataset!r}",
                             path=path, record=f"row {k}", field="source_item_id")
        rel = None if s.run.relations is None else s.run.relations[i]
        cols["model"].append(model)
        cols["edit_id"].append(str(r["edit_id"]))
        cols["source_item_id"].append(item)
        cols["gap"].append(s.events.gap[i])
        cols["confidence"].append(s.confidence[i])
        cols["direction"].append(s.events.direction[i])
        cols["margin"].append(s.run.margins["original"][i])
        cols["relation"].append(str(r.get("relation") or rel or "unknown"))
        for name in ("flip_vis", "strict", "rel_o"):
            cols[name].append(_flag(r[name], path=path, record=f"row {k}", name=name))
    out = {k: np.array(v, dtype=object if k in ("model", "edit_id", "source_item_id", "relation") else
                       (bool if k in ("flip_vis", "strict", "rel_o") else np.float64)) for k, v in cols.items()}
    out["dataset"] = np.array([dataset] * len(records), dtype=object)
    # Pair D of the source group (``data edits analyze`` writes it); within Rel_o it equals Joint, so an older
    # table with only ``joint`` still gives it there. Absent from both: the Pair D increment is not computable.
    for name in ("pair_d", "joint"):
        if all(r.get(name) not in (None, "") for r in records):
            out["pair_d"] = np.array([_flag(r[name], path=path, record=f"row {k}", name=name)
                                      for k, r in enumerate(records, start=1)], dtype=bool)
            break
    return out


def within_model_ranks(values: np.ndarray, models: np.ndarray) -> np.ndarray:
    """Percentile ranks of ``values`` computed separately within each model (VCA §15 rank pooling)."""
    values, models = np.asarray(values, dtype=np.float64), np.asarray(models, dtype=object).astype(str)
    out = np.empty(values.size)
    for m in np.unique(models):
        mask = models == m
        out[mask] = percentile_ranks(values[mask])
    return out


def fit_predict(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, ridge: float) -> np.ndarray:
    """P(y = 1) for ``test_x`` from an L2 logistic regression (scikit-learn, C = 1/ridge, Newton–Cholesky)
    fit on ``train_x`` standardized with the training means and standard deviations."""
    mean, std = train_x.mean(axis=0), train_x.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    # the checks sklearn repeats on every call dominate these small fits; inputs are finite by construction
    with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        model = LogisticRegression(C=1.0 / ridge, solver="newton-cholesky", max_iter=200)
        model.fit((train_x - mean) / std, train_y)
        return model.predict_proba((test_x - mean) / std)[:, 1]


def relation_axis(relation: object) -> str:
    """``horizontal`` (left/right of), ``vertical`` (above/below) or ``other``."""
    text = str(relation).strip().lower().removeprefix("to the ")
    return "horizontal" if text in HORIZONTAL else "vertical" if text in VERTICAL else "other"


def _ci_fields(name: str, point: float, samples: np.ndarray, level: float, reason: str) -> dict[str, Figure]:
    lo, hi = percentile_intervals(samples, level)[0]
    return {name: known(point, reason), f"{name}_lo": known(lo, reason), f"{name}_hi": known(hi, reason)}


def outcome_reason(target: np.ndarray) -> str:
    """Why a ranking metric of a boolean outcome is not computable on these records."""
    if target.size == 0:
        return "no records"
    return "one outcome class" if target.all() or not target.any() else "not defined on these records"


METRICS = (("auroc", auroc, weighted_auroc), ("auprc", auprc, weighted_auprc),
           ("hl", high_minus_low, weighted_high_minus_low))

Row = TypeVar("Row", bound=RankingRow)


def unit_fields(unit: str, clusters: np.ndarray | Sequence[object], mask: np.ndarray | None = None
                ) -> dict[str, Any]:
    """``{"unit", "n_clusters"}`` of a row whose intervals resample ``clusters`` (the records in ``mask``)."""
    labels = np.asarray(clusters, dtype=object).astype(str)
    return {"unit": unit, "n_clusters": int(np.unique(labels if mask is None else labels[mask]).size)}


def ranking_rows(scores: np.ndarray, target: np.ndarray, models: np.ndarray, clusters: np.ndarray, *,
                 n_resamples: int, seed: int, level: float = CONFIDENCE_LEVEL, pooled: bool = True,
                 hl_resamples: int | None = None, unit: str = "cluster", make: Callable[..., Row]) -> list[Row]:
    """AUROC, AUPRC and H–L of ``scores`` for the boolean ``target`` per model, macro over models and (with
    ``pooled``) rank-pooled, each with a percentile interval from one cluster bootstrap (``clusters``: relation
    pairs for SRC, edit ids for Swap; a drawn cluster brings the records of every model, §19). ``make`` builds
    each row: :class:`RankingRow`, or a subclass given its other fields by ``functools.partial``. Every row
    names the resampling ``unit`` and its ``n_clusters`` (the clusters its records fall in).

    ``hl_resamples``: the H–L intervals' own number of resamples (VCA §19: "semantic H–L intervals use
    2,000"), drawn with the same seed; None uses ``n_resamples`` for all three metrics.
    """
    scores, target = np.asarray(scores, dtype=np.float64), np.asarray(target, dtype=bool)
    models = np.asarray(models, dtype=object).astype(str)
    weights_of: dict[int, np.ndarray] = {}
    for count in {n_resamples, hl_resamples or n_resamples}:
        plan = ClusterBootstrap.draw(scores.size, clusters=np.asarray(clusters, dtype=object), n_resamples=count,
                                     seed=seed)
        weights_of[count] = plan.counts[:, plan.codes]
    metric_weights = {name: weights_of[hl_resamples or n_resamples if name == "hl" else n_resamples]
                      for name, _, _ in METRICS}
    rows: list[Row] = []
    base_rates: list[float] = []
    per_model: dict[str, list[tuple[float, np.ndarray]]] = {name: [] for name, _, _ in METRICS}
    for model in sorted(set(models.tolist())):
        mask = models == model
        figures: dict[str, Figure] = {}
        for name, point, weighted in METRICS:
            samples = weighted(scores[mask], target[mask], metric_weights[name][:, mask])
            per_model[name].append((point(scores[mask], target[mask]), samples))
            figures |= _ci_fields(name, per_model[name][-1][0], samples, level, outcome_reason(target[mask]))
        base_rates.append(float(target[mask].mean()))
        rows.append(make(model=model, n=int(mask.sum()), base_rate=base_rates[-1], **figures,
                         **unit_fields(unit, clusters, mask)))
    # the macro base rate averages the per-model base rates, like every macro metric (SRC macro 53.01, §15)
    figures = {}
    for name, _, _ in METRICS:
        points = [p for p, _ in per_model[name] if not np.isnan(p)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample where every model is NaN
            samples = np.nanmean(np.stack([s for _, s in per_model[name]]), axis=0)
        figures |= _ci_fields(name, float(np.mean(points)) if points else float("nan"), samples, level,
                              "no model where it is defined")
    rows.append(make(model=f"Macro ({len(rows)} models)", n=int(scores.size), base_rate=float(np.mean(base_rates)),
                     **figures, **unit_fields(unit, clusters)))
    if pooled and len(per_model["auroc"]) > 1:
        ranks = within_model_ranks(scores, models)
        figures = {}
        for name, point, weighted in METRICS:
            figures |= _ci_fields(name, point(ranks, target), weighted(ranks, target, metric_weights[name]), level,
                                  outcome_reason(target))
        rows.append(make(model="Rank-pooled", n=int(scores.size), base_rate=float(target.mean()), **figures,
                         **unit_fields(unit, clusters)))
    return rows
