"""VL-CheckList's official itc figure: ``POS[0]`` against ``NEG[0]`` on the item's image, strict, first 1,000.

Definition (om-ai-lab/VL-CheckList @ 6f8d6a3 : vl_checklist/evaluate.py, ``Evaluate.eval``, ``task == 'itc'``):
for each item the model scores its image with ``texts_pos[0]`` and ``texts_neg[0]``; the item is right when
``result_pos["probs"][i][1] > result_neg["probs"][i][1]`` — the match score of the positive strictly above the
negative's, **a tie counts wrong** (the ``else`` branch). Here the match score is the pair score
``S[0, j]`` (the official engines return ``[p(no match), p(match)]`` from an ITM head; any score monotone in it
gives the same figure). Accuracy is ``num_t / (num_t + num_f)`` over the **first** ``int(MAX_NUM / 2)`` items of
each file and corpus (``d.data[name][:int(max_number/2)]``; ``MAX_NUM: 2000`` in configs/sample.yaml and the
README → the first 1,000), per subset; with several subsets the headline is their unweighted mean. A second
figure is over every item (the same code with ``MAX_NUM`` unset: ``if max_number:`` is false).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.metrics.suites.means import subset_means
from vlaudit.records import SuiteItem
from vlaudit.results.suites import OfficialFigure

SOURCE = "om-ai-lab/VL-CheckList @ 6f8d6a3 : vl_checklist/evaluate.py (Evaluate.eval, task itc)"
TIE_RULE = "strict: s(image, POS[0]) > s(image, NEG[0]); a tie counts wrong"
MAX_NUM = 2000  # configs/sample.yaml
FIRST = MAX_NUM // 2
NAMES = ("itc_correct",)


def first_texts(item: SuiteItem) -> tuple[int, int]:
    """The text indices of ``POS[0]`` (the first positive text) and ``NEG[0]`` (the first other text)."""
    positive = {j for _, j in item.positives}
    return min(positive), min(j for j in range(len(item.texts)) if j not in positive)


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """``itc_correct`` per item: 1.0 when ``POS[0]`` scores strictly above ``NEG[0]`` on the image."""
    scores.check(items)
    values = np.zeros((len(items), 1), dtype=np.float64)
    for k, (item, matrix) in enumerate(zip(items, scores.pairs, strict=True)):
        pos, neg = first_texts(item)
        row = np.asarray(matrix, dtype=np.float64)[0]
        values[k, 0] = float(row[pos] > row[neg])
    return Outcomes(NAMES, values)


def aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """The itc accuracy over the first 1,000 items of each subset (official), and over every item."""
    column = outcomes.column("itc_correct")
    seen: dict[str, int] = {}
    first = np.zeros(len(items), dtype=bool)
    for k, item in enumerate(items):
        seen[item.subset] = seen.get(item.subset, 0) + 1
        first[k] = seen[item.subset] <= FIRST
    official = subset_means([item for item, keep in zip(items, first, strict=True) if keep], column[first],
                            key="itc_accuracy", label="VL-CheckList itc accuracy (first 1,000 items)",
                            tie_rule=TIE_RULE, source=SOURCE,
                            aggregation=f"per file: mean over its first {FIRST} items (MAX_NUM {MAX_NUM} / 2); "
                                        "mean over files")
    every = subset_means(items, column, key="itc_accuracy_all", label="VL-CheckList itc accuracy (every item)",
                         tie_rule=TIE_RULE, source=SOURCE,
                         aggregation="per file: mean over every item (MAX_NUM unset); mean over files")
    return [official, every]
