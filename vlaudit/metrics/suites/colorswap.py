"""ColorSwap's official figures: the text, image and group scores of each 2×2 example (strict).

Definition (Top34051/colorswap @ 4f2c9e4 : vlm_eval.py, the ``__main__`` scores; README.md "Evaluations"; the
ITM models' Colab it links is not in the repository), with ``S[i, j]`` the score of image i and caption j:

* **text score**: each image picks its own caption, ``S[0, 0] > S[0, 1] and S[1, 1] > S[1, 0]`` (the script's
  ``log_1.correct_answer == chosen_image_1 and log_2.correct_answer == chosen_image_2``);
* **image score**: each caption picks its own image, ``S[0, 0] > S[1, 0] and S[1, 1] > S[0, 1]``;
* **group score**: both. Strict: a tie (the script's ``None``, no answer) counts wrong.

Each is a mean over examples. **A known bug, followed by its intent**: the script builds ``text_scores`` and
``image_scores`` from two result files, each skipping its own ``"error"`` samples, then pairs them with
``zip(text_scores, image_scores)`` — by position, not by example id, so one error in one run shifts every later
pair to another example's (and ``zip`` drops the tail). vlaudit pairs the text and image outcomes **of the same
example**, and the group score is over the examples that have both (an outcome is NaN where its scores are
missing). Where neither run has an error both readings agree (tests/test_suite_colorswap.py runs both).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.metrics.suites.means import item_mean
from vlaudit.records import SuiteItem
from vlaudit.results.suites import OfficialFigure

SOURCE = "Top34051/colorswap @ 4f2c9e4 : vlm_eval.py (text, image and group scores)"
TIE_RULE = "strict: a tie counts wrong (the script's no-answer None)"
NAMES = ("text_correct", "image_correct", "group_correct")


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """Per example: text, image and group correct (0/1; NaN where a needed score is NaN)."""
    scores.check(items)
    values = np.full((len(items), 3), np.nan, dtype=np.float64)
    for k, matrix in enumerate(scores.pairs):
        s = np.asarray(matrix, dtype=np.float64)
        if np.isfinite(s).all():
            text = float(s[0, 0] > s[0, 1] and s[1, 1] > s[1, 0])
            image = float(s[0, 0] > s[1, 0] and s[1, 1] > s[0, 1])
            values[k] = (text, image, text * image)
    return Outcomes(NAMES, values)


def aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """The text, image and group scores: means over the examples (group: those with both outcomes)."""
    text, image = outcomes.column("text_correct"), outcomes.column("image_correct")
    group = np.where(np.isfinite(text) & np.isfinite(image), text * image, np.nan)
    note = "paired by example id (the script's zip pairs by position: a known bug, its intent followed)"
    return [item_mean(text, key="text_score", label="ColorSwap text score", tie_rule=TIE_RULE, source=SOURCE),
            item_mean(image, key="image_score", label="ColorSwap image score", tie_rule=TIE_RULE, source=SOURCE),
            item_mean(group, key="group_score", label="ColorSwap group score", tie_rule=TIE_RULE, source=SOURCE,
                      note=note)]
