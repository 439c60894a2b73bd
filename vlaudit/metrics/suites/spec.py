"""SPEC's official figures: i2t and t2i accuracy, argmax over the K candidates, mean over subsets.

Definition (wjpoom/SPEC @ ad982a4 : spec/models/clip_wrapper.py, ``i2t_evaluate`` / ``t2i_evaluate``; the mean
in spec/eval.py, ``main``): a sample is right when ``scores.argmax(dim=-1) == label`` over its K candidates in the
file's order — **a tie goes to the first candidate** (the first index of the maximum). Per subset, accuracy =
correct samples / samples (the code prints percentages; here fractions); the figure is the unweighted mean over
the subsets (``i2t_acc / subset_num``).

An item of :mod:`vlaudit.sources.suites.spec` is a K×K test case (each image's row is one i2t sample, each text's
column one t2i sample) or a single sample; ``outcomes`` counts, per item, the samples right (``i2t_correct``,
``t2i_correct``) and the samples (``i2t_samples``, ``t2i_samples``) of its direction (NaN for the other), so the
per-subset accuracy is a ratio of sums, as the official loop is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores, first_argmax
from vlaudit.records import SuiteItem
from vlaudit.results.missing import Missing
from vlaudit.results.suites import OfficialFigure

SOURCE = "wjpoom/SPEC @ ad982a4 : spec/models/clip_wrapper.py (i2t_evaluate, t2i_evaluate), spec/eval.py (main)"
TIE_RULE = "argmax over the K candidates in the file's order; a tie goes to the first candidate"
NAMES = ("i2t_correct", "i2t_samples", "t2i_correct", "t2i_samples")


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """Per item: samples right and samples, in the item's direction (:attr:`SuiteItem.direction`; i2t if
    unset)."""
    scores.check(items)
    values = np.full((len(items), 4), np.nan, dtype=np.float64)
    for k, (item, matrix) in enumerate(zip(items, scores.pairs, strict=True)):
        matrix = np.asarray(matrix, dtype=np.float64)
        if item.direction != "t2i":  # each positive's image row: argmax over the texts
            right = sum(first_argmax(matrix[i]) == j for i, j in item.positives)
            values[k, 0:2] = (right, len(item.positives))
        else:  # each positive's text column: argmax over the images
            right = sum(first_argmax(matrix[:, j]) == i for i, j in item.positives)
            values[k, 2:4] = (right, len(item.positives))
    return Outcomes(NAMES, values)


def _figure(items: Sequence[SuiteItem], outcomes: Outcomes, direction: str, label: str) -> OfficialFigure:
    correct, samples = outcomes.column(f"{direction}_correct"), outcomes.column(f"{direction}_samples")
    sums: dict[str, list[float]] = {}
    for item, right, n in zip(items, correct, samples, strict=True):
        if np.isfinite(n):
            total = sums.setdefault(item.subset, [0.0, 0.0])
            total[0] += right
            total[1] += n
    per_subset = {name: right / n for name, (right, n) in sums.items() if n}
    value: float | Missing = (float(np.mean(list(per_subset.values()))) if per_subset
                              else Missing(f"no {direction} samples"))
    return OfficialFigure(key=f"{direction}_accuracy", label=label, value=value,
                          n=int(sum(n for _, n in sums.values())),
                          aggregation="per subset: correct samples / samples; mean over subsets", tie_rule=TIE_RULE,
                          source=SOURCE, subsets=per_subset, n_subsets=len(per_subset))


def aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """The i2t and t2i accuracies, each the mean over subsets of the per-subset accuracy."""
    return [_figure(items, outcomes, "i2t", "SPEC image-to-text accuracy (mean over subsets)"),
            _figure(items, outcomes, "t2i", "SPEC text-to-image accuracy (mean over subsets)")]
