"""Likelihood against generation: does the margin's decision (VCA §3: d = +1 iff m_o ≥ 0) match the answer the
model writes when it decodes greedily under the same prompt?

* :func:`parse_answer` — the first answer word of a generated text: the text is split into words (runs of
  letters and digits, case folded) and the first word that is one of the interface's answer words (yes/no,
  true/false; option letters for a lettered interface) is the answer; None (unparseable) when no word is;
* :func:`agreement_summary` — over (margin decision, generated answer) pairs: agreement among the parsed
  answers, the confusion table margin × generated (with an ``unparseable`` column) and the unparseable rate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_WORD = re.compile(r"[^\W_]+")


def parse_answer(text: str, answer_words: Mapping[str, str]) -> tuple[str | None, int | None]:
    """(answer, index of its word among the text's words) for the first word in ``answer_words`` (word →
    answer, compared case-folded); (None, None) when no word of the text is an answer word."""
    folded = {word.casefold(): answer for word, answer in answer_words.items()}
    for index, word in enumerate(_WORD.findall(text)):
        answer = folded.get(word.casefold())
        if answer is not None:
            return answer, index
    return None, None


def margin_decision(margin: float, positive: str, negative: str) -> str:
    """The margin's answer: ``positive`` when m ≥ 0 (VCA §3: an exact zero is "yes"), else ``negative``."""
    return positive if margin >= 0 else negative


def agreement_summary(pairs: Sequence[tuple[str, str | None]], answers: Sequence[str]) -> dict[str, Any]:
    """n, parsed, agreement = share of parsed answers equal to the margin's (None when nothing parsed),
    unparseable rate, and ``confusion[margin answer][generated answer or "unparseable"]`` counts."""
    confusion = {a: {**dict.fromkeys(answers, 0), "unparseable": 0} for a in answers}
    for decided, generated in pairs:
        confusion[decided]["unparseable" if generated is None else generated] += 1
    parsed = [(d, g) for d, g in pairs if g is not None]
    n = len(pairs)
    return {"n": n, "n_parsed": len(parsed),
            "agreement": sum(d == g for d, g in parsed) / len(parsed) if parsed else None,
            "unparseable_rate": (n - len(parsed)) / n if n else None, "confusion": confusion}
