"""The benchmarks' own figures, shown beside the audit (pure functions on per-item events; fractions in [0, 1]).

* POPE (Li et al., 2023): accuracy, precision, recall and F1 of the answer "yes" as the positive class, and
  the yes-ratio (share of "yes" predictions), per category (random / popular / adversarial).
* MME (Fu et al., 2023): ``acc`` = share of correct questions; ``acc+`` = share of images whose two
  questions are both correct; the subtask score is 100·(acc + acc+).
* MMStar (Chen et al., 2024, §4): multimodal gain MG = S_v − S_wv (accuracy with the image minus accuracy of
  the same model without it — here the ``text`` context), and multimodal leakage ML = max(0, S_wv − S_t) with
  S_t the accuracy of the model's text-only base LLM.
* MMBench CircularEval (Liu et al., 2023): an item counts only if it is answered correctly in every rotation
  of its options; vlaudit adds "credited in every rotation" = correct ∧ Dep (VCA §3) in every rotation.
* Per-category credit: n, Acc, Dep, D-CC, C-U = Acc − D-CC (VCA §12) within each category.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: per-item labels: a list or an object array
Labels = Sequence[object] | np.ndarray


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else float(num / den)


def yes_no_figures(predicted_yes: np.ndarray, gold_yes: np.ndarray) -> dict[str, Any]:
    """POPE's accuracy, precision, recall, F1 (positive = "yes") and yes-ratio; None where a ratio is 0/0."""
    p = np.asarray(predicted_yes, dtype=bool)
    g = np.asarray(gold_yes, dtype=bool)
    tp, fp, fn = int((p & g).sum()), int((p & ~g).sum()), int((~p & g).sum())
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = (None if precision is None or recall is None or precision + recall == 0
          else 2 * precision * recall / (precision + recall))
    return {"n": int(p.size), "accuracy": _ratio(int((p == g).sum()), p.size), "precision": precision,
            "recall": recall, "f1": f1, "yes_ratio": _ratio(int(p.sum()), p.size)}


def mme_figures(correct: np.ndarray, pairs: Labels) -> dict[str, Any]:
    """MME's acc (per question), acc+ (per image pair: both questions correct) and score = 100·(acc + acc+).

    ``pairs`` names each question's image pair; a pair is counted in acc+ only when it has two questions."""
    correct = np.asarray(correct, dtype=bool)
    members: dict[object, list[bool]] = {}
    for pair, ok in zip(pairs, correct, strict=True):
        members.setdefault(pair, []).append(bool(ok))
    complete = [all(v) for v in members.values() if len(v) == 2]
    acc = _ratio(int(correct.sum()), correct.size)
    acc_plus = _ratio(sum(complete), len(complete))
    return {"n": int(correct.size), "n_pairs": len(complete), "acc": acc, "acc_plus": acc_plus,
            "score": None if acc is None or acc_plus is None else 100.0 * (acc + acc_plus)}


def multimodal_gain(acc_image: float, acc_text: float) -> float:
    """MMStar's MG = S_v − S_wv: accuracy with the image minus accuracy without it (MMStar §4)."""
    return float(acc_image - acc_text)


def multimodal_leakage(acc_text: float, acc_llm: float) -> float:
    """MMStar's ML = max(0, S_wv − S_t): what the model answers blind beyond its base LLM (MMStar §4)."""
    return float(max(0.0, acc_text - acc_llm))


def circular_figures(base_ids: Labels, rotations: Sequence[int] | np.ndarray, correct: np.ndarray,
                     dep: np.ndarray) -> dict[str, Any]:
    """CircularEval: per rotation acc and D-CC; over items, the share correct in every rotation (the
    benchmark's CircularEval accuracy) and the share credited (correct ∧ Dep) in every rotation."""
    correct, dep = np.asarray(correct, dtype=bool), np.asarray(dep, dtype=bool)
    turns = np.asarray(rotations, dtype=np.int64)
    per_item: dict[object, list[int]] = {}
    for k, base in enumerate(base_ids):
        per_item.setdefault(base, []).append(k)
    all_correct = [bool(correct[ks].all()) for ks in per_item.values()]
    all_credited = [bool((correct[ks] & dep[ks]).all()) for ks in per_item.values()]
    per_rotation = []
    for r in sorted(set(turns.tolist())):
        mask = turns == r
        per_rotation.append({"rotation": int(r), "n": int(mask.sum()), "acc": float(correct[mask].mean()),
                             "dcc": float((correct[mask] & dep[mask]).mean())})
    return {"n_items": len(per_item), "circular_acc": _ratio(sum(all_correct), len(per_item)),
            "credited_every_rotation": _ratio(sum(all_credited), len(per_item)), "per_rotation": per_rotation}


def category_credit(categories: Labels, correct: np.ndarray | None,
                    dep: np.ndarray) -> list[dict[str, Any]]:
    """Per category: n, Acc, Dep, D-CC and C-U = Acc − D-CC (VCA §12), categories in sorted order."""
    dep = np.asarray(dep, dtype=bool)
    names = np.asarray([str(c) for c in categories], dtype=object)
    rows = []
    for name in sorted(set(names.tolist())):
        mask = names == name
        row: dict[str, Any] = {"category": name, "n": int(mask.sum()), "dep": float(dep[mask].mean())}
        if correct is not None:
            c = np.asarray(correct, dtype=bool)[mask]
            dcc = float((c & dep[mask]).mean())
            row |= {"acc": float(c.mean()), "dcc": dcc, "cu": float(c.mean()) - dcc}
        rows.append(row)
    return rows
