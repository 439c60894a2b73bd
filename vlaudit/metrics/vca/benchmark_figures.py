"""The benchmarks' own figures, shown beside the audit (pure functions on per-item events; fractions in [0, 1]).

* POPE (Li et al., 2023): accuracy, precision, recall and F1 of the answer "yes" as the positive class, and
  the yes-ratio (share of "yes" predictions), per category (random / popular / adversarial).
* MME (Fu et al., 2023): ``acc`` = share of correct questions; ``acc+`` = share of images whose two
  questions are both correct; the subtask score is 100·(acc + acc+).
* MMStar (Chen et al., 2024, §4): multimodal gain MG = S_v − S_wv (accuracy with the image minus accuracy of
  the same model without it — here the ``text`` context), and multimodal leakage ML = max(0, S_wv − S_t) with
  S_t the accuracy of the model's text-only base LLM.
  The totals Perception (10 subtasks, max 2000) and Cognition (4, max 800) are sums of subtask scores.
* MMBench CircularEval (Liu et al., 2023): an item counts only if it is answered correctly in every rotation
  of its options; vlaudit adds "credited in every rotation" = correct ∧ Dep (VCA §3) in every rotation.
* HallusionBench (Guan et al., 2024): aAcc per question, fAcc per figure, qAcc per question across figures.
* MMStar per capability and l2 axis: accuracy within each.
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


def circular_figures(base_ids: Labels, rotations: Sequence[int | None] | np.ndarray, correct: np.ndarray,
                     dep: np.ndarray, categories: Labels | None = None,
                     n_options: Sequence[int] | np.ndarray | None = None) -> dict[str, Any]:
    """CircularEval as VLMEvalKit's ``mcq_circular_eval`` counts it: a question is one group (its
    ``base_ids``), counted only when its rotation-0 row is there (a group without one is dropped,
    ``n_dropped``, ids in ``dropped``), and hit when every row of the group is correct. Per rotation: acc and
    D-CC (rows whose rotation is None are in their group only); per category (the rotation-0 row's, as
    ``report_acc`` groups ``data_main``): the circular accuracy; and vlaudit's "credited in every rotation"
    (correct ∧ Dep, VCA §3).

    A kept group that lacks one of its rotations 0..K−1 (K: the rotation-0 row's ``n_options``; without them,
    every rotation the table holds) is counted as VLMEvalKit counts it, over the rotations it has, and listed:
    ``n_incomplete`` and ``incomplete`` (its id, the rotations it has and K), so that "every rotation" never
    silently means fewer."""
    correct, dep = np.asarray(correct, dtype=bool), np.asarray(dep, dtype=bool)
    per_item: dict[object, list[int]] = {}
    for k, base in enumerate(base_ids):
        per_item.setdefault(base, []).append(k)
    kept = {base: ks for base, ks in per_item.items() if any(rotations[k] == 0 for k in ks)}
    every = sorted({int(t) for t in rotations if t is not None})
    incomplete = []
    for base, ks in kept.items():
        has = sorted({int(t) for t in (rotations[k] for k in ks) if t is not None})
        first = next(k for k in ks if rotations[k] == 0)
        expected = list(range(int(n_options[first]))) if n_options is not None else every
        if has != expected:
            incomplete.append({"circular_id": str(base), "rotations": has, "of": len(expected)})
    all_correct = {base: bool(correct[ks].all()) for base, ks in kept.items()}
    all_credited = [bool((correct[ks] & dep[ks]).all()) for ks in kept.values()]
    per_rotation = []
    for r in sorted({int(t) for t in rotations if t is not None}):
        mask = np.array([t is not None and int(t) == r for t in rotations], dtype=bool)
        per_rotation.append({"rotation": r, "n": int(mask.sum()), "acc": float(correct[mask].mean()),
                             "dcc": float((correct[mask] & dep[mask]).mean())})
    out: dict[str, Any] = {"n_items": len(kept), "n_dropped": len(per_item) - len(kept),
                           "dropped": sorted(str(base) for base in per_item if base not in kept),
                           "n_incomplete": len(incomplete), "incomplete": incomplete,
                           "circular_acc": _ratio(sum(all_correct.values()), len(kept)),
                           "credited_every_rotation": _ratio(sum(all_credited), len(kept)),
                           "per_rotation": per_rotation}
    if categories is not None:
        category_of = {base: str(categories[next(k for k in ks if rotations[k] == 0)]) for base, ks in kept.items()}
        out["per_category"] = [
            {"category": c, "n_items": len(members), "circular_acc": _ratio(sum(all_correct[b] for b in members),
                                                                              len(members))}
            for c in sorted(set(category_of.values()))
            for members in [[b for b, cat in category_of.items() if cat == c]]]
    return out


#: MME's two totals (its eval_tool/calculation.py ``eval_type_dict``): sums of subtask scores, max 2000 and 800
MME_PERCEPTION = ("existence", "count", "position", "color", "posters", "celebrity", "scene", "landmark", "artwork",
                  "OCR")
MME_COGNITION = ("commonsense_reasoning", "numerical_calculation", "text_translation", "code_reasoning")


def mme_totals(subtask_scores: dict[str, float | None]) -> list[dict[str, Any]]:
    """MME's Perception and Cognition totals: the sum of the scores (100·(acc + acc+)) of their subtasks
    present, with how many of the 10 / 4 subtasks that is; a total with none of its subtasks is left out."""
    rows = []
    for name, subtasks in (("Perception", MME_PERCEPTION), ("Cognition", MME_COGNITION)):
        present = [s for s in subtasks if subtask_scores.get(s) is not None]
        if present:
            rows.append({"total": name, "score": float(sum(float(subtask_scores[s] or 0.0) for s in present)),
                         "subtasks": len(present), "of": len(subtasks), "max": 200.0 * len(subtasks)})
    return rows


def hallusion_figures(correct: np.ndarray, figures: Labels, questions: Labels) -> dict[str, Any]:
    """HallusionBench's three accuracies (VLMEvalKit ``Hallusion_rating``; the authors' ``evaluation.py``):
    aAcc = share of questions answered correctly; fAcc = share of figures (subcategory, set, figure) whose
    every question is correct; qAcc = share of questions (subcategory, set, question) answered correctly
    on every figure they are asked of."""
    correct = np.asarray(correct, dtype=bool)

    def grouped(keys: Labels) -> float | None:
        members: dict[object, list[bool]] = {}
        for key, ok in zip(keys, correct, strict=True):
            members.setdefault(key, []).append(bool(ok))
        return _ratio(sum(all(v) for v in members.values()), len(members))

    return {"n": int(correct.size), "n_figures": len(set(figures)), "n_questions": len(set(questions)),
            "aacc": _ratio(int(correct.sum()), correct.size), "facc": grouped(figures), "qacc": grouped(questions)}


def mmstar_axes(correct: np.ndarray, categories: Labels, axes: Labels) -> list[dict[str, Any]]:
    """MMStar's accuracy per core capability and per l2 axis (its ``MMStar_eval``): correct / questions of the
    axis; a capability's accuracy here is over its questions scored (the evaluator divides by a fixed 250,
    the same on the full release)."""
    correct = np.asarray(correct, dtype=bool)
    cats = np.asarray([str(c) for c in categories], dtype=object)
    l2 = np.asarray([str(a) for a in axes], dtype=object)
    rows = []
    for c in sorted(set(cats.tolist())):
        in_c = cats == c
        rows.append({"category": c, "l2_category": None, "n": int(in_c.sum()), "acc": float(correct[in_c].mean())})
        for a in sorted(set(l2[in_c].tolist())):
            mask = in_c & (l2 == a)
            rows.append({"category": c, "l2_category": a, "n": int(mask.sum()), "acc": float(correct[mask].mean())})
    return rows


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
