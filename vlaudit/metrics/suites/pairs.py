"""The figures of vlaudit's own ``pairs-suite`` layout: Winoground's text, image and group scores, generalised.

For an item with score matrix S (S[i, j] = s(images[i], texts[j])) and positives P:

* **text score** (i2t) — 1 when, for every image i that has a positive and a negative, every positive
  S[i, j] (i, j) ∈ P is strictly above every negative S[i, j'] (i, j') ∉ P of that image; else 0; NaN when no
  image of the item has both;
* **image score** (t2i) — the same per text: every positive S[i, j] strictly above every negative S[i', j];
* **group score** — 1 when both apply and both are 1 (NaN when either is NaN).

A tie counts wrong (strict ``>``), as Winoground's ``text_correct``/``image_correct`` do
(facebookresearch/winoground's README, "Evaluation"): on a 2×2 item with positives (0, 0), (1, 1) these are
exactly Winoground's three scores. The official figure of each is the mean over the items where it applies,
per subset and over all items.

Source: this module (vlaudit @ its release : vlaudit/metrics/suites/pairs.py); the layout is vlaudit's own,
there is no external official code.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.records import SuiteItem
from vlaudit.results.missing import Missing
from vlaudit.results.suites import OfficialFigure

NAMES = ("text", "image", "group")
SOURCE = "vlaudit @ this release : vlaudit/metrics/suites/pairs.py (vlaudit's own layout; no external code)"
TIE_RULE = "strict: a tie counts wrong"
_NONE = {"text": "no image of any item has both a positive and a negative text",
         "image": "no text of any item has both a positive and a negative image",
         "group": "no item has both a text and an image score"}
_LABELS = {"text": "text score (i2t)", "image": "image score (t2i)", "group": "group score"}


def _side(matrix: np.ndarray, positive: np.ndarray) -> float:
    """1.0 when, along every row with a positive and a negative, min(positives) > max(negatives); NaN when no
    row has both."""
    verdicts = []
    for row, mask in zip(matrix, positive, strict=True):
        if mask.any() and (~mask).any():
            verdicts.append(bool(row[mask].min() > row[~mask].max()))
    return float(all(verdicts)) if verdicts else float("nan")


def item_outcome(item: SuiteItem, matrix: np.ndarray) -> tuple[float, float, float]:
    """(text, image, group) of one item (module docstring)."""
    scores = np.asarray(matrix, dtype=np.float64)
    positive = np.zeros(scores.shape, dtype=bool)
    for i, j in item.positives:
        positive[i, j] = True
    text, image = _side(scores, positive), _side(scores.T, positive.T)
    group = float("nan") if np.isnan(text) or np.isnan(image) else float(text == 1.0 and image == 1.0)
    return text, image, group


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """Per item: the text, image and group scores (module docstring), float64, NaN where one does not apply."""
    scores.check(items)
    values = np.array([item_outcome(item, matrix) for item, matrix in zip(items, scores.pairs, strict=True)],
                      dtype=np.float64).reshape(len(items), len(NAMES))
    return Outcomes(NAMES, values)


def aggregate(items: Sequence[SuiteItem], result: Outcomes) -> list[OfficialFigure]:
    """The mean of each score over the items where it applies, overall and per subset (``subsets``)."""
    subsets = np.array([item.subset for item in items], dtype=object)
    figures = []
    for name in NAMES:
        column = result.column(name)
        defined = ~np.isnan(column)
        per_subset = {str(s): float(column[defined & (subsets == s)].mean())
                      for s in dict.fromkeys(subsets.tolist()) if (defined & (subsets == s)).any()}
        value: float | Missing = (float(column[defined].mean()) if defined.any()
                                  else Missing(_NONE[name]))
        figures.append(OfficialFigure(key=name, label=_LABELS[name], value=value, n=int(defined.sum()),
                                      aggregation="mean over items", tie_rule=TIE_RULE, source=SOURCE,
                                      subsets=per_subset, n_subsets=len(per_subset)))
    return figures
