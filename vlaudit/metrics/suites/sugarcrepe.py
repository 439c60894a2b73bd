"""The official metrics of SugarCrepe and SugarCrepe++, per file.

* **SugarCrepe** (RAIVNLab/sugar-crepe @ 0047054 : main_eval.py ``text_retrieval``/``evaluate``): an entry is
  right when ``pos_score > neg_score`` — strict, **a tie counts wrong** — and each file's accuracy is
  ``correct_cnt / len(data_dict)``.
* **SugarCrepe++** (Sri-Harsha/scpp @ c083bbf : VLMs/test_Variants_CLIP.py, the loop every VLMs/test_*.py
  shares): with ``cos_p1, cos_p2, cos_neg`` the image's similarity to caption, caption2, negative_caption
  and ``cos_p1p2, cos_p1_neg, cos_p2_neg`` the captions' similarities to each other,
  **ITT** ("Accuracy image-to-text task") = ``cos_p1 > cos_neg and cos_p2 > cos_neg``,
  **TOT** ("Accuracy text-only task") = ``cos_p1p2 > cos_p1_neg and cos_p1p2 > cos_p2_neg``, and
  "Accuracy Image-P1-Neg" / "Image-P2-Neg" the two halves of ITT — all strict, a tie counts wrong, each
  ``correct / total`` per file. TOT needs text-to-text scores (:attr:`SuiteScores.texts`, read at
  ``[0, 1]``, ``[0, 2]``, ``[1, 2]``); a model without them (a yes/no MLLM) has TOT ``Missing``.

A figure's value is the unweighted mean over the files read (the file itself when one is read); each file's
value is in ``subsets``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.suites import Outcomes, SuiteScores, strict_greater
from vlaudit.records import SuiteItem
from vlaudit.results.missing import Missing
from vlaudit.results.suites import OfficialFigure

SC_SOURCE = "RAIVNLab/sugar-crepe @ 0047054 : main_eval.py"
PP_SOURCE = "Sri-Harsha/scpp @ c083bbf : VLMs/test_Variants_CLIP.py"
SC_TIE = "strict s(caption) > s(negative_caption): a tie counts wrong"
PP_TIE = "strict comparisons: a tie counts wrong"
NO_TEXT_ENCODER = "no text encoder"
_PER_FILE = "per file (value: unweighted mean over the files read)"


def per_file(key: str, label: str, items: Sequence[SuiteItem], values: np.ndarray, tie: str, source: str,
             note: str | None = None, missing: str = "no items") -> OfficialFigure:
    """One figure: each file's (subset's) mean of ``values`` (NaN = not defined), and their mean."""
    files = np.array([item.subset for item in items], dtype=object)
    defined = ~np.isnan(values)
    subsets = {str(name): float(np.mean(values[(files == name) & defined]))
               for name in dict.fromkeys(files.tolist()) if ((files == name) & defined).any()}
    value: float | Missing = float(np.mean(list(subsets.values()))) if subsets else Missing(missing)
    return OfficialFigure(key, label, value, int(defined.sum()), _PER_FILE, tie, source, subsets, len(subsets), note)


def sugarcrepe_outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """``correct`` = s(caption) > s(negative_caption)."""
    scores.check(items)
    values = [strict_greater(m[0, 0], m[0, 1]) for m in (np.asarray(p, dtype=np.float64) for p in scores.pairs)]
    return Outcomes(("correct",), np.array(values, dtype=np.float64).reshape(len(items), 1))


def sugarcrepe_aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """The accuracy per file (main_eval.py's ``metrics[c]``)."""
    return [per_file("accuracy", "SugarCrepe accuracy", items, outcomes.column("correct"), SC_TIE, SC_SOURCE)]


def pp_outcomes(items: Sequence[SuiteItem], scores: SuiteScores) -> Outcomes:
    """Per item: ``itt``, ``p1_neg``, ``p2_neg`` from the image scores; ``tot`` from the text scores (NaN
    where :attr:`SuiteScores.texts` is None)."""
    scores.check(items)
    rows = []
    for k, pair in enumerate(scores.pairs):
        image = np.asarray(pair, dtype=np.float64)[0]
        p1, p2, neg = float(image[0]), float(image[1]), float(image[2])
        tot = float("nan")
        if scores.texts is not None:
            text = np.asarray(scores.texts[k], dtype=np.float64)
            tot = float(text[0, 1] > text[0, 2] and text[0, 1] > text[1, 2])
        rows.append([float(p1 > neg and p2 > neg), float(p1 > neg), float(p2 > neg), tot])
    return Outcomes(("itt", "p1_neg", "p2_neg", "tot"), np.array(rows, dtype=np.float64).reshape(len(items), 4))


def pp_aggregate(items: Sequence[SuiteItem], outcomes: Outcomes) -> list[OfficialFigure]:
    """ITT, TOT, Image-P1-Neg and Image-P2-Neg per file (the four lines the official scripts print)."""
    return [
        per_file("itt", "SugarCrepe++ ITT (image-to-text task)", items, outcomes.column("itt"), PP_TIE, PP_SOURCE),
        per_file("tot", "SugarCrepe++ TOT (text-only task)", items, outcomes.column("tot"), PP_TIE, PP_SOURCE,
                 "text-only: the text encoder's caption-caption similarities", missing=NO_TEXT_ENCODER),
        per_file("p1_neg", "SugarCrepe++ Image-P1-Neg", items, outcomes.column("p1_neg"), PP_TIE, PP_SOURCE),
        per_file("p2_neg", "SugarCrepe++ Image-P2-Neg", items, outcomes.column("p2_neg"), PP_TIE, PP_SOURCE),
    ]
