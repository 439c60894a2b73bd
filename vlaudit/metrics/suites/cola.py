"""COLA multi-object's official figure: the image score of each 2×2 item (strict, text → image).

Definition (arijitray1993/COLA @ 1fa52fb : scripts/eval.py, ``ColaMultiObjAcc``), with ``S[i, j]`` the score
of image i and caption j: an item is right when **each caption scores higher on its own image than on the
other image**, ``S[0, 0] > S[1, 0] and S[1, 1] > S[0, 1]`` — strict, so a tie counts wrong. The figure is the
mean over items (``np.mean(batch_acc)``). No text → image column comparison (the "text score") is official.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.metrics.suites.means import item_mean
from vlaudit.records import SuiteItem
from vlaudit.results.suites import OfficialFigure

SOURCE = "arijitray1993/COLA @ 1fa52fb : scripts/eval.py (ColaMultiObjAcc)"
TIE_RULE = "strict: S[0,0] > S[1,0] and S[1,1] > S[0,1]; a tie counts wrong"
NAMES = ("image_correct",)


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """``image_correct`` per item: 1.0 when both captions pick their own image strictly, else 0.0."""
    scores.check(items)
    values = np.zeros((len(items), 1), dtype=np.float64)
    for k, matrix in enumerate(scores.pairs):
        preds = np.asarray(matrix, dtype=np.float64)
        values[k, 0] = float(preds[0, 0] > preds[1, 0] and preds[1, 1] > preds[0, 1])
    return Outcomes(NAMES, values)


def aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """The multi-object accuracy: the mean of ``image_correct`` over items."""
    return [item_mean(outcomes.column("image_correct"), key="multiobject_accuracy",
                      label="COLA multi-object accuracy (image score)", tie_rule=TIE_RULE, source=SOURCE)]
