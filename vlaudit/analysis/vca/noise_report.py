"""The decisions of a VCA report that sit inside the backend's noise floor (VCA §3 decisions; the floor of
``vca stability``, :mod:`vlaudit.metrics.vca.noise`).

A run's floor is read from ``stability.json`` beside its margins file (the run folder ``vca stability``
writes it into), when that file measured the same model (:func:`vlaudit.sources.noise_floor.read_floor`,
by the caller: this module reads nothing). Each run of ``vca.json`` then holds ``noise``:
τ, the items whose decision (|m_o| ≤ τ) or credit (|G_img| ≤ 2τ) is inside the noise, and the noise band of
Acc, Dep and D-CC (:class:`~vlaudit.results.vca.run_sections.RunNoise`); without a floor,
``Missing("noise floor not measured ...")``.
"""

from __future__ import annotations

import numpy as np

from vlaudit.metrics.vca.noise import noise_band, noise_flags
from vlaudit.results.missing import Missing
from vlaudit.results.vca.run_sections import NoiseBand, RunNoise
from vlaudit.results.versioned import Interval
from vlaudit.sources.margins import MarginRun
from vlaudit.sources.noise_floor import STABILITY_FILE, NoiseFloor, read_floor

# read_floor stays importable here for the comparison of two reports (vlaudit.analysis.compare.noise)
__all__ = ["NOT_MEASURED", "STABILITY_FILE", "NoiseFloor", "noise_summary", "read_floor"]
NOT_MEASURED = "noise floor not measured (run `vlaudit vca stability RUN` on the scoring run)"


def noise_summary(run: MarginRun, gap: np.ndarray, dep: np.ndarray, correct: np.ndarray | None,
                  floor: NoiseFloor | None) -> RunNoise | Missing:
    """The ``noise`` section of one run of ``vca.json`` (see the module docstring); ``floor``: τ and the
    ``stability.json`` it came from, None when not measured (then Missing, saying how to measure it)."""
    if floor is None:
        return Missing(NOT_MEASURED)
    tau, source = floor
    decision, credit = noise_flags(run.margins["original"], gap, tau)
    ids = run.item_ids.astype(str)
    band = noise_band(correct, dep, decision, credit)
    no_labels = Missing("no labels")

    def pair(key: str) -> Interval | Missing:
        value = band[key]
        return no_labels if value is None else (float(value[0]), float(value[1]))

    dep_band = band["dep"]
    assert dep_band is not None  # Dep needs no labels: its band always exists
    return RunNoise(tau=float(tau), source=str(source), n_decision=int(decision.sum()), n_credit=int(credit.sum()),
                    decision_items=sorted(ids[decision].tolist()), credit_items=sorted(ids[credit].tolist()),
                    band=NoiseBand(pair("acc"), (float(dep_band[0]), float(dep_band[1])), pair("dcc")),
                    definition="decision inside the noise: |m_o| <= tau; credit inside the noise: |G_img| <= 2 "
                               "tau; band: each flagged decision set both ways")
