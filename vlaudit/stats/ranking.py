"""Ranking a binary external target by a continuous score, and macro averages within model (VCA §15, §19).

* AUROC and AUPRC (average precision) via scikit-learn; NaN when the target has a single class.
* High-minus-low tertile difference: mean target among the top third of scores minus that among the bottom
  third, thirds taken on average ranks (ties share a rank, so tied scores never straddle a cut arbitrarily).
* Macro average: compute the metric separately within each model, then take the unweighted mean; raw scores
  are never ranked across models.
* Leaderboard ranks from paired comparisons (:func:`paired_ranks`): model b outranks model a when their
  paired, multiplicity-adjusted comparison says b is better; a model's rank is 1 + the number of models that
  outrank it. Two models their comparison does not separate share a rank however far apart their own intervals
  lie, and two it separates do not, however much their own intervals overlap (both answered the same items, so
  only the paired difference says which is better; VCA §19's paired design). A model without a value is
  unranked (None).
"""

from __future__ import annotations

from collections.abc import Sequence

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
    from sklearn.metrics import roc_auc_score  # sklearn is heavy; only AUROC needs it

    scores, target = _prepare(scores, target)
    if target.all() or not target.any():
        return float("nan")
    return float(roc_auc_score(target, scores))


def auprc(scores: np.ndarray, target: np.ndarray) -> float:
    """Average precision (area under the precision–recall curve); NaN without positives."""
    from sklearn.metrics import average_precision_score  # sklearn is heavy; only AP needs it

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


def percentile_ranks(values: np.ndarray, *, tie_break: Sequence[object] | np.ndarray | None = None) -> np.ndarray:
    """Within-sample percentile ranks in (0, 1]: rank / n (VCA §15 rank pooling, §16 rank normalization).

    Ties share their average rank unless ``tie_break`` is given: then ranks are ordinal, ties ordered by
    ``tie_break`` (e.g. the relation-group id, §16), so the result never depends on input order.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n == 0:
        return values.copy()
    if tie_break is None:
        return rankdata(values, method="average") / n
    keys = np.asarray(tie_break, dtype=object).astype(str)
    order = np.lexsort((keys, values))
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.arange(1, n + 1, dtype=np.float64)
    return ranks / n


def _weighted_setup(scores: np.ndarray, target: np.ndarray, weights: np.ndarray):
    """Records sorted by score: (target ``(n, 1)``, weights transposed to ``(n, B)``, tie-block codes)."""
    scores, target = _prepare(scores, target)
    weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    if weights.shape[1] != scores.size:
        raise ValueError(f"weights {weights.shape} do not match {scores.size} scores")
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    block = np.concatenate([[0], np.cumsum(s[1:] != s[:-1])]) if s.size else np.zeros(0, dtype=np.int64)
    # records along axis 0: the block sums and cumulative sums below run over contiguous rows
    return target[order][:, None], np.ascontiguousarray(weights.T[order]), block


def _block_sums(values: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Sum ``(n, B)`` values within tie blocks (contiguous, ascending ``block`` codes): ``(k, B)``."""
    if not block.size:
        return np.zeros((0, values.shape[1]))
    if block[-1] == block.size - 1:
        return values  # no ties: every record is its own block
    starts = np.flatnonzero(np.concatenate([[True], block[1:] != block[:-1]]))
    return np.add.reduceat(values, starts, axis=0)


def weighted_auroc(scores: np.ndarray, target: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUROC under record weights, one value per row of ``weights`` ``(B, n)`` (ties count ½).

    With integer weights (bootstrap counts) this equals :func:`auroc` on the sample that repeats each record
    as often as its weight; the vectorized form lets one resampling plan give every interval of §15 at once.
    NaN where a row has no positive or no negative weight.
    """
    t, w, block = _weighted_setup(scores, target, weights)
    pos = _block_sums(w * t, block)
    neg = _block_sums(w * ~t, block)
    below = np.cumsum(neg, axis=0) - neg  # negative weight strictly below each tie block
    with np.errstate(invalid="ignore", divide="ignore"):
        return (pos * (below + 0.5 * neg)).sum(axis=0) / (pos.sum(axis=0) * neg.sum(axis=0))


def weighted_auprc(scores: np.ndarray, target: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Average precision under record weights (the step-wise sum of scikit-learn's
    ``average_precision_score``, thresholds at distinct scores), one value per row of ``weights``."""
    t, w, block = _weighted_setup(scores, target, weights)
    pos = _block_sums(w * t, block)[::-1]  # descending thresholds
    tot = _block_sums(w, block)[::-1]
    tp, predicted = np.cumsum(pos, axis=0), np.cumsum(tot, axis=0)
    total_pos = tp[-1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(predicted > 0, tp / predicted, 0.0)
        return (pos / total_pos * precision).sum(axis=0) * np.where(total_pos[0] > 0, 1.0, np.nan)


def weighted_high_minus_low(scores: np.ndarray, target: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`high_minus_low` under record weights (a record of weight w is w tied records), per row."""
    t, w, block = _weighted_setup(scores, target, weights)
    tot = _block_sums(w, block)
    hit = _block_sums(w * t, block)
    n = tot.sum(axis=0, keepdims=True)
    avg_rank = np.cumsum(tot, axis=0) - tot + (tot + 1.0) / 2.0
    low = (avg_rank <= n / 3.0) & (tot > 0)
    high = (avg_rank > 2.0 * n / 3.0) & (tot > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (hit * high).sum(0) / (tot * high).sum(0) - (hit * low).sum(0) / (tot * low).sum(0)
    return np.where(n[0] >= 3, out, np.nan)


def paired_ranks(values: np.ndarray, outranks: np.ndarray) -> list[int | None]:
    """Rank of each of ``m`` models (1 = best; see the module docstring) from ``(m,)`` ``values`` and the
    ``(m, m)`` boolean ``outranks[b, a]``: the paired comparison says b is better than a.
    rank(a) = 1 + #{b with a value : outranks[b, a]}; None where the value is NaN."""
    values = np.asarray(values, dtype=np.float64).ravel()
    beats = np.asarray(outranks, dtype=bool).reshape(values.size, values.size)
    valued = ~np.isnan(values)
    return [None if not valued[a] else 1 + int(np.sum(beats[:, a] & valued & (np.arange(values.size) != a)))
            for a in range(values.size)]
