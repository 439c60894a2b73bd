"""MMVP-VLM's official figures: a pair is right when both statements pick their image; per pattern.

Definition (tsb0601/MMVP @ 7635005 : scripts/evaluate_vlm.py, ``benchmark_model``), with ``S[i, j]`` the score
(the model's logit) of image i and statement j: for each statement the script takes the **softmax over the two
images**, ``P = softmax([S[0, j], S[1, j]])[0]``, and predicts image 1 when ``P > 0.5``, else image 2 — **a tie
(P = 0.5) goes to the second image**. The prediction is compared with the ground truth (``positives``: the
script's ``qid % 2 == 1`` → image 1). A pair counts when **both** statements are right. The softmax is computed
as torch computes it (``exp(x - max x) / sum``, here in float64), so a difference below float64's resolution
ties as it does there.

Aggregation: per pattern, correct pairs over the pattern's pairs (the script divides by ``num_pairs // 9``,
which is the pattern's own count on the published 9 × 15 pairs; on a partial file vlaudit divides by the
pattern's own count — the script's intent — and says so); the headline is the unweighted mean over patterns (the
"average" of the paper's MMVP-VLM table). The script prints percentages; the figures here are fractions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.metrics.suites.means import subset_means
from vlaudit.records import SuiteItem
from vlaudit.results.suites import OfficialFigure

SOURCE = "tsb0601/MMVP @ 7635005 : scripts/evaluate_vlm.py (benchmark_model)"
TIE_RULE = "softmax over the two images, image 1 when P > 0.5; a tie (P = 0.5) goes to the second image"
PUBLISHED_PAIRS = 9 * 15
NAMES = ("statement_1_correct", "statement_2_correct", "pair_correct")


def first_image_probability(scores: np.ndarray) -> float:
    """``softmax([a, b])[0]`` as torch computes it: ``exp(x - max) / sum(exp(x - max))`` (float64)."""
    logits = np.asarray(scores, dtype=np.float64)
    shifted = np.exp(logits - logits.max())
    return float(shifted[0] / shifted.sum())


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """Per pair: each statement right (0/1) and both right."""
    scores.check(items)
    values = np.zeros((len(items), 3), dtype=np.float64)
    for k, (item, matrix) in enumerate(zip(items, scores.pairs, strict=True)):
        truth = {j: i for i, j in item.positives}
        for j in (0, 1):
            predicted = 0 if first_image_probability(np.asarray(matrix)[:, j]) > 0.5 else 1
            values[k, j] = float(predicted == truth[j])
        values[k, 2] = values[k, 0] * values[k, 1]
    return Outcomes(NAMES, values)


def aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """The per-pattern pair accuracies (``subsets``) and their mean over patterns."""
    figure = subset_means(items, outcomes.column("pair_correct"), key="average", label="MMVP-VLM average",
                          tie_rule=TIE_RULE, source=SOURCE,
                          aggregation="per pattern: pairs with both statements right / pairs; mean over patterns")
    if figure.n and figure.n != PUBLISHED_PAIRS:
        figure = replace(figure, note=(
            f"{figure.n} pairs, not the published 9 × 15: each pattern is divided by its own pair count (the "
            "official script divides every pattern by num_pairs // 9)"))
    return [figure]
