"""CREPE's official figures: image-to-text recall at 1, 3, 5 and 10 of the true caption among its hard negatives.

Definition (RAIVNLab/CREPE @ 1fa81c4 : crepe_eval_utils.py, ``get_one2many_rank`` and ``get_one2many_metrics``):
the image's scores over ``[caption, *hard_negs]`` are ranked with ``torch.argsort(logits, descending=True)``; the
prediction is the position of the true caption (index 0) in that ranking and ``R@k = mean(pred < k)`` over the
rows of a file, for ``k in [1, 3, 5, 10]``.

**Undefined behaviour, followed by its intent**: ``torch.argsort`` is not stable (``stable=False``), so where the
true caption ties with negatives its position among them is undefined. vlaudit takes every order of the tied
candidates as equally likely and counts the **expected** ``pred < k``: with ``g`` candidates strictly above the
true caption and ``t`` tied with it, ``P(pred < k) = clip((k - g) / (t + 1), 0, 1)``. The two deterministic
readings bound it and are kept per item and in each figure's note: **ties first** (the true caption before its
ties: a stable descending sort, since it is index 0) and **ties last** (after them: a tie counts wrong). Without
ties all three are the code's value. The figures are means over the items of each subset (one CSV and
negatives column), and over the subsets when there are several.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.metrics.suites.means import subset_means
from vlaudit.records import SuiteItem
from vlaudit.results.missing import shown
from vlaudit.results.suites import OfficialFigure

SOURCE = "RAIVNLab/CREPE @ 1fa81c4 : crepe_eval_utils.py (get_one2many_rank, get_one2many_metrics)"
TIE_RULE = ("argsort's order among ties is undefined: a tie with the true caption counts as the expectation over "
            "tie orders (bounds: ties first, ties last)")
KS = (1, 3, 5, 10)
NAMES = tuple(f"r@{k}{reading}" for k in KS for reading in ("", "_ties_first", "_ties_last"))


def recall_at(scores: np.ndarray, truth: int, k: int) -> tuple[float, float, float]:
    """(expected, ties first, ties last) of ``pred < k`` for the true candidate ``truth`` of one score row."""
    row = np.asarray(scores, dtype=np.float64)
    above = int(np.sum(row > row[truth]))
    tied = int(np.sum(row == row[truth])) - 1
    expected = min(max((k - above) / (tied + 1), 0.0), 1.0)
    return expected, float(above < k), float(above + tied < k)


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """Per item: R@k indicators (expected over tie orders, ties first, ties last) for k = 1, 3, 5, 10."""
    scores.check(items)
    values = np.zeros((len(items), len(NAMES)), dtype=np.float64)
    for n, (item, matrix) in enumerate(zip(items, scores.pairs, strict=True)):
        (image, truth), = item.positives
        row = np.asarray(matrix, dtype=np.float64)[image]
        values[n] = [value for k in KS for value in recall_at(row, truth, k)]
    return Outcomes(NAMES, values)


def aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """R@1, R@3, R@5, R@10: per subset the mean over items, then the mean over subsets; bounds in the note."""
    figures = []
    for k in KS:
        def mean(column: str, k: int = k) -> OfficialFigure:
            return subset_means(items, outcomes.column(column), key=f"recall_at_{k}",
                                label=f"CREPE image-to-text R@{k}", tie_rule=TIE_RULE, source=SOURCE,
                                aggregation="per file: mean over rows; mean over files")
        expected, first, last = mean(f"r@{k}"), mean(f"r@{k}_ties_first"), mean(f"r@{k}_ties_last")
        figures.append(replace(expected, note=f"ties first {shown(first.value, '{:.4f}')}, ties last "
                                             f"{shown(last.value, '{:.4f}')}"))
    return figures
