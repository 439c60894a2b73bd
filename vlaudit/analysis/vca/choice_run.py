"""A letter run of the MARGINS table made ready for the audit (definitions: :mod:`vlaudit.metrics.vca.choice`).

:func:`aligned_run` replaces a letter run's margins by the prediction-aligned support r_c of VCA §3 and its
labels by "d = gold", so that the yes/no code computes G_img, Dep, D-CC, Strict, survival, the permutation
calibration and the bootstrap for it unchanged; :func:`letter_strata_of` gives its strata by letter.

The decision d is the answer under the image (``original``). A text-only run — a base LLM scored blind, the S_t
of MMStar's multimodal leakage (MMStar §4) — has no ``original`` row at all; its decision is its answer under
``text`` (:func:`decision_context`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from vlaudit.metrics.vca.choice import letter_strata, option_support, predicted_option
from vlaudit.sources.letter_margins import LetterChoices
from vlaudit.sources.margins import MarginRun


def decision_context(contexts: Iterable[str]) -> str:
    """The context whose answer is a run's decision d: ``original``, or ``text`` for a text-only run (no
    ``original`` context, only ``text``)."""
    names = set(contexts)
    return "text" if "original" not in names and "text" in names else "original"


def aligned_run(run: MarginRun) -> MarginRun:
    """A letter run with margins r_c per context and labels "d = gold" (see the module docstring)."""
    choices = run.choices
    if choices is None:
        return run
    d = _decision(choices)
    margins = {c: option_support(choices.logp[c], d) for c in run.margins}
    labels = None if choices.gold is None else gold_index(choices) == d
    return replace(run, margins=margins, labels=labels)


def gold_index(choices: LetterChoices) -> np.ndarray:
    """The gold letters as option indices (requires labels)."""
    assert choices.gold is not None
    position = {letter: i for i, letter in enumerate(choices.letters)}
    return np.array([position[str(g)] for g in choices.gold], dtype=np.int64)


def predicted_letters(choices: LetterChoices) -> np.ndarray:
    """d as letters (object array)."""
    return np.array([choices.letters[i] for i in _decision(choices)], dtype=object)


def letter_strata_of(choices: LetterChoices, dep: np.ndarray, correct: np.ndarray | None,
                     strict: np.ndarray) -> dict[str, dict[str, dict[str, float | None]]]:
    """The run's strata by predicted letter and (with labels) by gold letter (VCA §12)."""
    gold = None if choices.gold is None else gold_index(choices)
    return letter_strata(choices.letters, _decision(choices), gold, dep, correct, strict)


def _decision(choices: LetterChoices) -> np.ndarray:
    """d as option indices, under :func:`decision_context`."""
    return predicted_option(choices.logp[decision_context(choices.logp)])
