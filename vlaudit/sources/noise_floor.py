"""The backend's noise floor τ of a scored run: ``stability.json`` beside its margins file, written by
``vlaudit vca stability`` (:mod:`vlaudit.metrics.vca.noise`), when it measured the same model."""

from __future__ import annotations

from collections.abc import Sequence

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.results.vca.outputs import StabilityResult
from vlaudit.sources.beside_runs import by_run_key, file_beside
from vlaudit.sources.margins import MarginRun

STABILITY_FILE = "stability.json"

#: τ and the path of the ``stability.json`` it was read from
NoiseFloor = tuple[float, str]


def read_floor(run: MarginRun) -> NoiseFloor | None:
    """(τ, path of its stability.json) for a run read from a file whose folder holds a floor of its model."""
    path = file_beside(run, STABILITY_FILE)
    if path is None:
        return None
    result = StabilityResult.from_dict(read_json(path), path=path)
    if result.model != run.model:
        return None
    if not result.noise_floor >= 0:
        raise InputError("the noise floor must be a non-negative number", path=path, field="noise_floor")
    return float(result.noise_floor), str(path)


def read_floors(runs: Sequence[MarginRun]) -> dict[tuple[str, str, str], NoiseFloor]:
    """The measured floor of every run that has one, by (model, dataset, interface)."""
    return by_run_key(runs, read_floor)
