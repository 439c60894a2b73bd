"""The VCA text-only context as the blind reading of an MLLM benchmark (VCA Table 10's ``text`` context).

For a yes/no run with gold labels, an item is *answered* in context c when the margin m_c = NLL(no) − NLL(yes)
has the gold sign (m_c > 0 for a gold "yes", m_c < 0 for a gold "no"; m_c = 0 counts wrong). Under the ``text``
context the model sees no image, so an item answered there is solved blind (MMStar's filter keeps only items a
text-only model does not solve). Reported beside the ``original`` context's accuracy, as item means with
intervals from one item bootstrap (paired). Letter (multiple-choice) runs and runs without labels or without a
``text`` context are left out with a note.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.analysis.giveaway.audit import SHOWN_IDS, rate_record
from vlaudit.metrics.giveaway.metric import item_rates
from vlaudit.results.giveaway import VcaBlindReading
from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from vlaudit.sources.margins import MarginRun


def answered(margins: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """1.0 where the margin has the gold sign, 0.0 where not (a zero margin too), NaN where not scored."""
    m = np.asarray(margins, dtype=np.float64)
    gold = np.where(np.asarray(labels, dtype=bool), 1.0, -1.0)
    return np.where(np.isnan(m), np.nan, (m * gold > 0).astype(np.float64))


def vca_blind_readings(runs: Sequence[MarginRun], *, source: str, n_resamples: int = BOOTSTRAP_RESAMPLES,
                       seed: int = BOOTSTRAP_SEED) -> tuple[list[VcaBlindReading], list[str]]:
    """(readings, notes): one reading per usable run (see the module docstring)."""
    readings, notes = [], []
    for run in runs:
        name = f"{run.model} on {run.dataset} ({run.interface})"
        if run.choices is not None or run.labels is None or "text" not in run.margins:
            why = ("a letter run" if run.choices is not None else "no gold labels" if run.labels is None
                   else "no text context")
            notes.append(f"VCA run {name} left out: {why}")
            continue
        original = answered(run.margins["original"], run.labels)
        blind = answered(run.margins["text"], run.labels)
        rates = item_rates(np.stack([original, blind], axis=1), n_resamples=n_resamples, seed=seed)
        solved = np.flatnonzero(blind == 1.0)
        readings.append(VcaBlindReading(source=source, model=run.model, dataset=run.dataset,
                                        interface=run.interface, items=run.n, original=rate_record(rates[0]),
                                        text_only=rate_record(rates[1]), solved_blind=int(solved.size),
                                        solved_ids=[str(i) for i in run.item_ids[solved[:SHOWN_IDS]]]))
    return readings, notes
