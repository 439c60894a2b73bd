"""VALSE's official figures (Heidelberg-NLP/VALSE @ 2152d90 : lxmert_valse_eval.py), per piece.

The script scores each valid sample's ``[caption, foil]`` and prints, per piece:

* **acc_r**, the pairwise ranking accuracy: ``cross_score[0, 1] > cross_score[1, 1]`` — the caption's match
  score strictly above the foil's (**a tie counts wrong**). With vlaudit's one pair score ``s(image, text)``
  this is ``s(caption) > s(foil)``: the figure every model (dual encoder or yes/no MLLM) has.
* p_c ("caption fits": ``cross_score[0, 0] < cross_score[0, 1]``), p_f ("foil detected":
  ``cross_score[1, 0] >= cross_score[1, 1]``) and acc ``= (p_c + p_f) / 2`` (``foil_accuracy / count * 50``):
  the image-text matching head's decisions. They exist only where the pair score is a decision margin (the
  match logit minus the no-match logit, a yes/no MLLM's margin): vlaudit reads ``s > 0`` as "fits", so for a
  dual encoder's cosine these three say nothing and are labelled so.

The script skips (counts in no figure) a sample whose foil has ``cross_score[1, 0] == cross_score[1, 1]``
("something is wrong with the tokenisation"). vlaudit follows that for p_c, p_f and acc (a foil margin of
exactly 0), and counts every valid sample in acc_r: the check guards LXMERT's tokeniser, not the ranking, and a
cosine of exactly 0 is no tokenisation error. Per piece, the script prints one line; vlaudit's figure value is
the unweighted mean over the pieces read (the piece itself when one is read), with each piece in ``subsets``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores, strict_greater
from vlaudit.records import SuiteItem
from vlaudit.results.missing import Missing
from vlaudit.results.suites import OfficialFigure

SOURCE = "Heidelberg-NLP/VALSE @ 2152d90 : lxmert_valse_eval.py"
TIE = "strict s(caption) > s(foil): a tie counts wrong"
_MARGIN_NOTE = "a decision at s > 0: meaningful only where the pair score is a match margin (ITM head, yes/no MLLM)"


def outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """Per item: ``acc_r`` (s(caption) > s(foil)), ``caption_fits`` (s(caption) > 0), ``foil_detected``
    (s(foil) <= 0) and ``counted`` (s(foil) != 0, the script's skip rule for the margin figures)."""
    scores.check(items)
    rows = []
    for matrix in scores.pairs:
        caption, foil = np.asarray(matrix, dtype=np.float64)[0, :2]
        rows.append([strict_greater(caption, foil), float(caption > 0), float(foil <= 0), float(foil != 0)])
    return Outcomes(("acc_r", "caption_fits", "foil_detected", "counted"),
                    np.array(rows, dtype=np.float64).reshape(len(items), 4))


def _per_piece(items: Sequence[SuiteItem], values: np.ndarray, mask: np.ndarray) -> tuple[dict[str, float], int]:
    pieces = np.array([item.subset for item in items], dtype=object)
    out = {}
    for piece in dict.fromkeys(pieces.tolist()):
        chosen = (pieces == piece) & mask
        if chosen.any():
            out[str(piece)] = float(np.mean(values[chosen]))
    return out, int(mask.sum())


def _figure(key: str, label: str, items: Sequence[SuiteItem], values: np.ndarray, mask: np.ndarray,
            tie: str, note: str | None) -> OfficialFigure:
    subsets, n = _per_piece(items, values, mask)
    value: float | Missing = float(np.mean(list(subsets.values()))) if subsets else Missing("no sample counted")
    return OfficialFigure(key, label, value, n, "per piece (value: unweighted mean over the pieces read)", tie,
                          SOURCE, subsets, len(subsets), note)


def aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """acc_r per piece, then p_c, p_f and acc over the samples the script counts (module docstring)."""
    everyone = np.ones(len(items), dtype=bool)
    counted = outcomes.column("counted") == 1.0
    fits, detected = outcomes.column("caption_fits"), outcomes.column("foil_detected")
    return [
        _figure("acc_r", "VALSE pairwise ranking accuracy acc_r", items, outcomes.column("acc_r"), everyone, TIE,
                None),
        _figure("p_c", "VALSE caption fits p_c", items, fits, counted, "s(caption) > 0 counts as fitting",
                _MARGIN_NOTE),
        _figure("p_f", "VALSE foil detected p_f", items, detected, counted, "s(foil) <= 0 counts as detected",
                _MARGIN_NOTE),
        _figure("acc", "VALSE foil detection accuracy acc", items, (fits + detected) / 2, counted,
                "(p_c + p_f) / 2", _MARGIN_NOTE),
    ]
