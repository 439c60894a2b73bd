"""SVO-Probes' official figures (deepmind/svo_probes @ 206219e : probing_image_text_models.ipynb).

The notebook takes a model's **match decisions** (``sentence|image_id`` → 1 if the sentence matches the image,
else 0) and, per frame (the subject, verb and object negatives, and All = the three concatenated):

    neg = frame[['sentence', 'neg_image_id', 'neg_scores']].drop_duplicates()
    pos = frame[['sentence', 'pos_image_id', 'pos_scores']].drop_duplicates()
    neg_acc = mean(neg_scores == 0); pos_acc = mean(pos_scores == 1); acc = (neg_acc + pos_acc) / 2

so each distinct (sentence, image) pair counts once. vlaudit's pair score is one decision where it is a
margin (an MLLM's yes/no margin, an ITM head's logit difference): **match iff s > 0** (a score of exactly 0 is
"no match"). A dual encoder's cosine has no such boundary, so for it these three figures say little; the
benchmark's intent — given a sentence, the positive image scores above the negative one — is
``pairwise_accuracy``: ``s(pos, sentence) > s(neg, sentence)`` per row, strict (a tie counts wrong), the
reading later score-based evaluations use. Each figure's value is All; ``subsets`` holds subj/verb/obj.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores, strict_greater
from vlaudit.records import SuiteItem
from vlaudit.results.missing import Missing
from vlaudit.results.suites import OfficialFigure

SOURCE = "deepmind/svo_probes @ 206219e : probing_image_text_models.ipynb"
SUBSETS = ("subj", "verb", "obj")
DECISION = "match iff s > 0 (s = 0 is no match)"
PAIRWISE_TIE = "strict s(pos image) > s(neg image): a tie counts wrong"
_DECISION_NOTE = ("the notebook's 1/0 match decisions, read as s > 0: meaningful where the pair score is a match "
                  "margin (yes/no MLLM, ITM head), not for a dual encoder's cosine")


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """Per row: ``pos_match`` (s(pos) > 0), ``neg_rejected`` (s(neg) <= 0), ``pairwise`` (s(pos) > s(neg))."""
    scores.check(items)
    rows = []
    for matrix in scores.pairs:
        pos, neg = np.asarray(matrix, dtype=np.float64)[:2, 0]
        rows.append([float(pos > 0), float(neg <= 0), strict_greater(pos, neg)])
    return Outcomes(("pos_match", "neg_rejected", "pairwise"), np.array(rows, dtype=np.float64).reshape(-1, 3))


def _distinct_mean(items: Sequence[SuiteItem], values: np.ndarray, chosen: list[int], image: int) -> float:
    """The mean of ``values`` over the distinct (sentence, image) pairs of the chosen rows (first one kept)."""
    seen: dict[tuple[str, str], float] = {}
    for k in chosen:
        seen.setdefault((items[k].texts[0], items[k].images[image].path), float(values[k]))
    return float(np.mean(list(seen.values())))


def aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """Avg, Pos and Neg accuracy (the notebook's table) and the pairwise accuracy: All, then per subset."""
    frames = {name: [k for k, item in enumerate(items) if item.subset == name] for name in SUBSETS}
    frames = {name: rows for name, rows in frames.items() if rows}
    every = [k for rows in frames.values() for k in rows]
    pos_match, neg_rejected = outcomes.column("pos_match"), outcomes.column("neg_rejected")
    pairwise = outcomes.column("pairwise")

    def accuracies(rows: list[int]) -> tuple[float, float, float]:
        pos = _distinct_mean(items, pos_match, rows, 0)
        neg = _distinct_mean(items, neg_rejected, rows, 1)
        return (pos + neg) / 2, pos, neg

    table = {name: accuracies(rows) for name, rows in frames.items()}
    every_row = accuracies(every) if every else None
    figures = []
    for column, (key, label) in enumerate((("accuracy", "SVO-Probes average accuracy (pos_acc + neg_acc) / 2"),
                                           ("pos_accuracy", "SVO-Probes positive accuracy"),
                                           ("neg_accuracy", "SVO-Probes negative accuracy"))):
        value: float | Missing = every_row[column] if every_row else Missing("no items")
        figures.append(OfficialFigure(key, label, value, len(every), "All = subj, verb and obj rows together; "
                                      "each distinct (sentence, image) once", DECISION, SOURCE,
                                      {name: row[column] for name, row in table.items()}, len(table),
                                      _DECISION_NOTE))
    pair_value: float | Missing = float(np.mean(pairwise[every])) if every else Missing("no items")
    figures.append(OfficialFigure(
        "pairwise_accuracy", "SVO-Probes pairwise accuracy (positive image above negative)", pair_value,
        len(every), "mean over rows; All = subj, verb and obj rows together", PAIRWISE_TIE, SOURCE,
        {name: float(np.mean(pairwise[rows])) for name, rows in frames.items()}, len(frames),
        "the benchmark's intent for similarity scores (not printed by the notebook, which takes decisions)"))
    return figures
