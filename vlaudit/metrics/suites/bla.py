"""BLA's official figure (shin-ee-chen/BLA @ 812685b): the share of texts ranked in the correct half.

evaluation_models/clip/utils.py ``rank_captions`` ranks the four captions ``[True1, True2, False1, False2]``
by score (``clip_score[0].topk(4)``; ``rank[index] = position + 1``) and ``get_accuracy`` /
evaluation_models/blip2/bla_utils.py ``get_sent_acc`` count a caption right when a True caption (index < 2)
has rank <= 2 or a False caption (index >= 2) has rank > 2, divided by 4; ``get_rank_statistics`` prints
``rank_acc`` = the mean of that over items.

Ties. ``torch.topk`` leaves the order of equal scores unspecified, so the script's figure is undefined on a
tie. vlaudit gives both readings: ``rank_acc`` breaks a tie in list order (the earlier caption — a True one
before a False one — ranks higher, what a stable descending sort does) and ``rank_acc_ties_against`` breaks it
against list order (a False caption before a True one). They differ only on items with a tie across the
halves. The CLIP script ranks ``2.5 * max(cos, 0)`` (CLIPScore), which ties every negative cosine at 0;
vlaudit ranks the pair score as given (the same ranks wherever the scores are positive).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.records import SuiteItem
from vlaudit.results.missing import Missing
from vlaudit.results.suites import OfficialFigure

SOURCE = ("shin-ee-chen/BLA @ 812685b : evaluation_models/clip/utils.py (rank_captions, get_accuracy); "
          "evaluation_models/blip2/bla_utils.py (get_rank_statistics)")
TIE = "topk's tie order is unspecified: rank_acc breaks ties in list order (True first), " \
      "rank_acc_ties_against the other way"


def ranks(row: np.ndarray, *, ties_first: bool = True) -> list[int]:
    """``rank[i]`` (1 = highest score) of each caption, a tie broken in list order (or against it)."""
    scores = np.asarray(row, dtype=np.float64)
    order = np.arange(len(scores)) if ties_first else np.arange(len(scores))[::-1]
    indices = order[np.argsort(-scores[order], kind="stable")]
    rank = list(range(len(scores)))
    for i, value in enumerate(indices):
        rank[int(value)] = i + 1
    return rank


def sentence_accuracy(rank: Sequence[int]) -> float:
    """``get_sent_acc``: the share of captions in their correct half (True in the top half, False below)."""
    total = len(rank)
    correct = sum(1 for i, r in enumerate(rank) if (i < total / 2 and r <= total / 2)
                  or (i >= total / 2 and r > total / 2))
    return correct / total


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """Per item: ``rank_acc`` and ``rank_acc_ties_against`` (module docstring)."""
    scores.check(items)
    rows = [[sentence_accuracy(ranks(np.asarray(m)[0], ties_first=first)) for first in (True, False)]
            for m in scores.pairs]
    return Outcomes(("rank_acc", "rank_acc_ties_against"), np.array(rows, dtype=np.float64).reshape(-1, 2))


def _figure(key: str, label: str, items: Sequence[SuiteItem], values: np.ndarray, note: str) -> OfficialFigure:
    tasks = np.array([item.subset for item in items], dtype=object)
    subsets = {str(t): float(np.mean(values[tasks == t])) for t in dict.fromkeys(tasks.tolist())}
    value: float | Missing = float(np.mean(values)) if len(values) else Missing("no items")
    return OfficialFigure(key, label, value, len(values), "mean over items (per task in subsets)", TIE, SOURCE,
                          subsets, len(subsets), note)


def aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """``rank_acc`` in both tie readings."""
    return [_figure("rank_acc", "BLA rank accuracy (texts in the correct half)", items,
                    outcomes.column("rank_acc"), "a tie broken in list order (True1, True2, False1, False2)"),
            _figure("rank_acc_ties_against", "BLA rank accuracy, ties broken against the True captions", items,
                    outcomes.column("rank_acc_ties_against"), "a tie broken against list order")]
