"""The decisions of a VCA report that sit inside the backend's noise floor (VCA §3 decisions; the floor of
``vca stability``, :mod:`vlaudit.metrics.vca.noise`).

A run's floor is read from ``stability.json`` beside its margins file (the run folder ``vca stability``
writes it into), when that file measured the same model. Each run of ``vca.json`` then holds ``noise``:
τ, the items whose decision (|m_o| ≤ τ) or credit (|G_img| ≤ 2τ) is inside the noise, and the noise band of
Acc, Dep and D-CC; without a floor, ``{"measured": false, "note": "noise floor not measured ..."}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.metrics.vca.noise import noise_band, noise_flags
from vlaudit.results.vca import StabilityResult
from vlaudit.sources.margins import MarginRun

STABILITY_FILE = "stability.json"
NOT_MEASURED = "noise floor not measured (run `vlaudit vca stability RUN` on the scoring run)"


def read_floor(run: MarginRun) -> tuple[float, str] | None:
    """(τ, path of its stability.json) for a run read from a file whose folder holds a floor of its model."""
    if not run.source or not Path(run.source).is_file():
        return None
    path = Path(run.source).parent / STABILITY_FILE
    if not path.is_file():
        return None
    result = StabilityResult.from_dict(read_json(path), path=path)
    if result.model != run.model:
        return None
    if not result.noise_floor >= 0:
        raise InputError("the noise floor must be a non-negative number", path=path, field="noise_floor")
    return float(result.noise_floor), str(path)


def noise_summary(run: MarginRun, gap: np.ndarray, dep: np.ndarray, correct: np.ndarray | None) -> dict[str, Any]:
    """The ``noise`` object of one run of ``vca.json`` (see the module docstring)."""
    floor = read_floor(run)
    if floor is None:
        return {"measured": False, "note": NOT_MEASURED}
    tau, source = floor
    decision, credit = noise_flags(run.margins["original"], gap, tau)
    ids = run.item_ids.astype(str)
    return {"measured": True, "tau": tau, "source": source,
            "n_decision": int(decision.sum()), "n_credit": int(credit.sum()),
            "decision_items": sorted(ids[decision].tolist()), "credit_items": sorted(ids[credit].tolist()),
            "band": noise_band(correct, dep, decision, credit),
            "definition": "decision inside the noise: |m_o| <= tau; credit inside the noise: |G_img| <= 2 tau; "
                          "band: each flagged decision set both ways"}
