"""Runs that gave no answer: a warning when the audit's numbers measure a tie rule, not the model.

A margin of exactly 0 under the image (yes/no: NLL(no) = NLL(yes); letters: the chosen option's
log-probability equals the best other one's, r_o = 0, VCA §3) is no decision: the prediction is whatever the
tie rule picks. When most of a run's items are tied so, Acc, D-CC and the benchmark figures (POPE's yes-ratio
and F1, MMStar's MG) are the tie rule's, and the report says so. It happens with a model asked what it cannot
read — a planted ``ref:`` model on items it was not built for gives m = 0 in every context (``vlaudit models
list`` says which items each understands) — or with a broken prompt or verbalizer.
"""

from __future__ import annotations

import numpy as np

from vlaudit.analysis.vca.choice_run import decision_context
from vlaudit.sources.margins import MarginRun

#: the share of a run's items tied under the image from which the run is called answerless
NO_ANSWER_SHARE = 0.5


def no_answer_warning(run: MarginRun) -> str | None:
    """One line when at least :data:`NO_ANSWER_SHARE` of ``run``'s items have a tied margin under the image
    (``run``: yes/no margins, or a letter run's prediction-aligned support r_c; a text-only run: under text); None otherwise."""
    decision = decision_context(run.margins)
    original = np.asarray(run.margins[decision], dtype=np.float64)
    scored = run.available(decision)
    tied = scored & (original == 0.0)
    n, k = int(scored.sum()), int(tied.sum())
    if n == 0 or k < NO_ANSWER_SHARE * n:
        return None
    every = all(bool(np.all(np.asarray(run.margins[c], dtype=np.float64)[run.available(c)] == 0.0))
                for c in run.margins)
    if run.choices is None:
        what = "margin m = 0"
    elif every and all(_uniform(logp) for logp in run.choices.logp.values()):
        what = "every option's log-probability equal"
    else:
        what = "their best options tied"
    where = "in every context" if every else "under the image" if decision == "original" else "under text"
    planted = (f"; {run.model} is a planted model: `vlaudit models list` says which items it understands"
               if run.model.startswith("ref:") else "")
    return (f"{run.model} · {run.dataset} · {run.interface}: {k} of {n} items have {what} {where} — no answer, "
            f"so Acc, D-CC and the benchmark figures count the tie rule, not the model{planted}")


def _uniform(logp: np.ndarray) -> bool:
    """Whether every scored row of an (n, K) log-prob matrix (NaN beyond an item's options) is constant."""
    rows = logp[~np.all(np.isnan(logp), axis=1)]  # an item without this context has no row to judge
    spread = np.nanmax(rows, axis=1) - np.nanmin(rows, axis=1) if rows.size else np.zeros(0)
    return bool(np.all(spread == 0.0))
