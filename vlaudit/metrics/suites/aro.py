"""ARO's official metrics (mertyg/vision-language-models-are-bows @ 81fdd20).

* VG-Relation / VG-Attribution (dataset_zoo/aro_datasets.py ``evaluate_scores``): per item
  ``preds = np.argmax(scores_i2t[:, 0, :], axis=-1)`` over the captions ``[false, true]`` and
  ``correct = preds == 1`` — a tie takes index 0, the false caption, so **a tie counts wrong**. VG-R keeps every
  relation; its headline (notebooks/Replicate ARO! VG-Relation, VG-Attribution.ipynb) is the mean of the
  per-relation accuracies after dropping :data:`SYMMETRIC_RELATIONS`, the notebook's list, verbatim. VG-A keeps
  the attribute pairs with at least 25 items (``if attr_mask.sum() < 25: continue``) and averages theirs.
* COCO-Order / Flickr30k-Order (``evaluate_scores``): ``correct = argmax == 0`` over ``[true, 4 perturbed]``
  — a tie takes index 0, the true caption, so **a tie counts right**; the figure is the mean over items
  ("Precision@1").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores, first_argmax
from vlaudit.records import SuiteItem
from vlaudit.results.missing import Missing
from vlaudit.results.suites import OfficialFigure

SOURCE = "mertyg/vision-language-models-are-bows @ 81fdd20 : dataset_zoo/aro_datasets.py"
NOTEBOOK = ("mertyg/vision-language-models-are-bows @ 81fdd20 : notebooks/Replicate ARO! VG-Relation, "
            "VG-Attribution.ipynb")
VG_TIE = "argmax over [false, true]: a tie picks the false caption (counts wrong)"
ORDER_TIE = "argmax over [true, perturbed x4]: a tie picks the true caption (counts right)"
MIN_ATTRIBUTE_ITEMS = 25

#: the relations the official notebook drops before the VG-Relation macro accuracy (verbatim, its order)
SYMMETRIC_RELATIONS: tuple[str, ...] = (
    'adjusting', 'attached to', 'between', 'bigger than', 'biting', 'boarding', 'brushing', 'chewing',
    'cleaning', 'climbing', 'close to', 'coming from', 'coming out of', 'contain', 'crossing', 'dragging',
    'draped over', 'drinking', 'drinking from', 'driving', 'driving down', 'driving on', 'eating from',
    'eating in', 'enclosing', 'exiting', 'facing', 'filled with', 'floating in', 'floating on', 'flying',
    'flying above', 'flying in', 'flying over', 'flying through', 'full of', 'going down', 'going into',
    'going through', 'grazing in', 'growing in', 'growing on', 'guiding', 'hanging from', 'hanging in',
    'hanging off', 'hanging over', 'higher than', 'holding onto', 'hugging', 'in between', 'jumping off',
    'jumping on', 'jumping over', 'kept in', 'larger than', 'leading', 'leaning over', 'leaving', 'licking',
    'longer than', 'looking in', 'looking into', 'looking out', 'looking over', 'looking through',
    'lying next to', 'lying on top of', 'making', 'mixed with', 'mounted on', 'moving', 'on the back of',
    'on the edge of', 'on the front of', 'on the other side of', 'opening', 'painted on', 'parked at',
    'parked beside', 'parked by', 'parked in', 'parked in front of', 'parked near', 'parked next to',
    'perched on', 'petting', 'piled on', 'playing', 'playing in', 'playing on', 'playing with', 'pouring',
    'reaching for', 'reading', 'reflected on', 'riding on', 'running in', 'running on', 'running through',
    'seen through', 'sitting behind', 'sitting beside', 'sitting by', 'sitting in front of', 'sitting near',
    'sitting next to', 'sitting under', 'skiing down', 'skiing on', 'sleeping in', 'sleeping on',
    'smiling at', 'sniffing', 'splashing', 'sprinkled on', 'stacked on', 'standing against',
    'standing around', 'standing behind', 'standing beside', 'standing in front of', 'standing near',
    'standing next to', 'staring at', 'stuck in', 'surrounding', 'swimming in', 'swinging', 'talking to',
    'topped with', 'touching', 'traveling down', 'traveling on', 'tying', 'typing on', 'underneath',
    'wading in', 'waiting for', 'walking across', 'walking by', 'walking down', 'walking next to',
    'walking through', 'working in', 'working on', 'worn on', 'wrapped around', 'wrapped in', 'by', 'of',
    'near', 'next to', 'with', 'beside', 'on the side of', 'around')


def _argmax_is(items: Sequence[SuiteItem], scores: SuiteScores, index: int) -> Outcomes:
    scores.check(items)
    values = np.array([[float(first_argmax(np.asarray(matrix, dtype=np.float64)[0]) == index)]
                       for matrix in scores.pairs], dtype=np.float64).reshape(len(items), 1)
    return Outcomes(("correct",), values)


def vg_outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """``correct`` = 1.0 where the argmax over ``[false, true]`` is the true caption (a tie counts wrong)."""
    return _argmax_is(items, scores, 1)


def order_outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """``correct`` = 1.0 where the argmax over ``[true, perturbed...]`` is the true caption (a tie counts right)."""
    return _argmax_is(items, scores, 0)


def _per_subset(items: Sequence[SuiteItem], correct: np.ndarray) -> dict[str, tuple[float, int]]:
    """``{subset: (accuracy, count)}`` in ``np.unique`` order (sorted), as evaluate_scores iterates."""
    names = np.array([item.subset for item in items], dtype=object)
    out: dict[str, tuple[float, int]] = {}
    for name in sorted(set(names.tolist())):
        if name == "":
            continue
        mask = names == name
        out[str(name)] = (float(np.mean(correct[mask])), int(mask.sum()))
    return out


def _macro(key: str, label: str, per: dict[str, tuple[float, int]], aggregation: str, source: str,
           note: str | None) -> OfficialFigure:
    subsets = {name: accuracy for name, (accuracy, _) in per.items()}
    n = sum(count for _, count in per.values())
    value: float | Missing = (float(np.mean(list(subsets.values()))) if subsets
                              else Missing("no subset left after the official filter"))
    return OfficialFigure(key, label, value, n, aggregation, VG_TIE, source, subsets, len(subsets), note)


def _micro(label: str, correct: np.ndarray, tie: str, note: str | None) -> OfficialFigure:
    value: float | Missing = float(np.mean(correct)) if len(correct) else Missing("no items")
    return OfficialFigure("accuracy", label, value, len(correct), "mean over items", tie, SOURCE, note=note)


def vg_relation_aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """The VG-Relation macro accuracy (symmetric relations dropped), then the per-item accuracy
    ``metrics["Accuracy"]`` evaluate_scores computes (and does not return)."""
    correct = outcomes.column("correct")
    per = {name: value for name, value in _per_subset(items, correct).items() if name not in SYMMETRIC_RELATIONS}
    return [_macro("macro_accuracy", "VG-Relation macro accuracy", per,
                   "mean over relations, the notebook's symmetric relations dropped", f"{SOURCE}; {NOTEBOOK}",
                   None),
            _micro("VG-Relation accuracy over items", correct, VG_TIE,
                   "computed by evaluate_scores as metrics['Accuracy'] but not the paper's figure")]


def vg_attribution_aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """The VG-Attribution macro accuracy over attribute pairs with at least 25 items, then the per-item
    accuracy (not an official figure; for comparison with re-implementations that print it)."""
    correct = outcomes.column("correct")
    per = {name: value for name, value in _per_subset(items, correct).items() if value[1] >= MIN_ATTRIBUTE_ITEMS}
    return [_macro("macro_accuracy", "VG-Attribution macro accuracy", per,
                   f"mean over attribute pairs with >= {MIN_ATTRIBUTE_ITEMS} items", f"{SOURCE}; {NOTEBOOK}", None),
            _micro("VG-Attribution accuracy over items", correct, VG_TIE,
                   "not printed by the official code (re-implementations such as mteb's text_acc print it)")]


def order_aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """The Order sets' ``Precision@1``: the mean of ``argmax == 0`` over items."""
    correct = outcomes.column("correct")
    value: float | Missing = float(np.mean(correct)) if len(correct) else Missing("no items")
    return [OfficialFigure("precision_at_1", "Precision@1", value, len(correct), "mean over items", ORDER_TIE,
                           SOURCE)]
