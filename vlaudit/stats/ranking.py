"""Ranking a binary external target by a continuous score, and macro averages within model (VCA §15, §19).

* AUROC and AUPRC (average precision) via scikit-learn; NaN when the target has a single class.
* High-minus-low tertile difference: mean target among the top third of scores minus that among the bottom
  third, thirds taken on average ranks (ties share a rank, so tied scores never straddle a cut arbitrarily).
* Macro average: compute the metric separately within each model, then take the unweighted mean; raw scores
  are never ranked across models.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.stats import rankdata


def _prepare(scores: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=np.float64)
    target = np.asarray(target, dtype=bool)
    if scores.shape != target.shape:
        raise ValueError(f"scores {scores.shape} and target {target.shape} differ in shape")
    return scores, target


def auroc(scores: np.ndarray, target: np.ndarray) -> float:
    """Area under the ROC curve of ``scores`` for the boolean ``target`` (NaN with one class)."""
    from sklearn.metrics import roc_auc_score

    scores, target = _prepare(scores, target)
    if target.all() or not target.any():
        return float("nan")
    return float(roc_auc_score(target, scores))


def auprc(scores: np.ndarray, target: np.ndarray) -> float:
    """Average precision (area under the precision–recall curve); NaN without positives."""
    from sklearn.metrics import average_precision_score

    scores, target = _prepare(scores, target)
    if not target.any():
        return float("nan")
    return float(average_precision_score(target, scores))


def high_minus_low(scores: np.ndarray, target: np.ndarray) -> float:
    """mean(target | top tertile of scores) − mean(target | bottom tertile); NaN for fewer than 3 items."""
    scores, target = _prepare(scores, target)
    n = scores.size
    if n < 3:
        return float("nan")
    ranks = rankdata(scores, method="average")
    low = ranks <= n / 3.0
    high = ranks > 2.0 * n / 3.0
    if not low.any() or not high.any():
        return float("nan")
    return float(target[high].mean() - target[low].mean())


def macro_within(
    models: Sequence[object] | np.ndarray,
    metric: Callable[..., float],
    *arrays: np.ndarray,
) -> tuple[float, dict[str, float]]:
    """Apply ``metric(*arrays[mask])`` within each model; return (unweighted mean over models, per model).

    NaN per-model values (e.g. a single-class target) are skipped in the mean.
    """
    models = np.asarray(models, dtype=object).astype(str)
    per_model: dict[str, float] = {}
    for model in sorted(set(models.tolist())):
        mask = models == model
        per_model[model] = float(metric(*(np.asarray(a)[mask] for a in arrays)))
    values = [v for v in per_model.values() if not np.isnan(v)]
    return (float(np.mean(values)) if values else float("nan")), per_model


def macro_average(rows: Sequence[dict], keys: Sequence[str], *, by: str = "model") -> dict[str, float]:
    """Unweighted mean over the distinct values of ``by`` of per-row metrics already computed within model.

    Rows sharing a ``by`` value are first averaged together (e.g. one model's interfaces), then models are
    averaged with equal weight. None/NaN values are skipped.
    """
    groups: dict[object, list[dict]] = {}
    for row in rows:
        groups.setdefault(row[by], []).append(row)
    out: dict[str, float] = {}
    for key in keys:
        per_group = []
        for members in groups.values():
            vals = [float(r[key]) for r in members if r.get(key) is not None and not np.isnan(float(r[key]))]
            if vals:
                per_group.append(float(np.mean(vals)))
        out[key] = float(np.mean(per_group)) if per_group else float("nan")
    return out
