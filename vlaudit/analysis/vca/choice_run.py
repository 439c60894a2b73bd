"""A letter run of the MARGINS table made ready for the audit (definitions: :mod:`vlaudit.metrics.vca.choice`).

:func:`aligned_run` replaces a letter run's margins by the prediction-aligned support r_c of VCA §3 and its
labels by "d = gold", so that the yes/no code computes G_img, Dep, D-CC, Strict, survival, the permutation
calibration and the bootstrap for it unchanged; :func:`letter_strata_of` gives its strata by letter.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vlaudit.metrics.vca.choice import letter_strata, option_support, predicted_option
from vlaudit.sources.letter_margins import LetterChoices
from vlaudit.sources.margins import MarginRun


def aligned_run(run: MarginRun) -> MarginRun:
    """A letter run with margins r_c per context and labels "d = gold" (see the module docstring)."""
    choices = run.choices
    if choices is None:
        return run
    d = predicted_option(choices.logp["original"])
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
    return np.array([choices.letters[i] for i in predicted_option(choices.logp["original"])], dtype=object)


def letter_strata_of(choices: LetterChoices, dep: np.ndarray, correct: np.ndarray | None,
                     strict: np.ndarray) -> dict[str, dict[str, dict[str, float | None]]]:
    """The run's strata by predicted letter and (with labels) by gold letter (VCA §12)."""
    gold = None if choices.gold is None else gold_index(choices)
    return letter_strata(choices.letters, predicted_option(choices.logp["original"]), gold, dep, correct, strict)
