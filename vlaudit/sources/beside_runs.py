"""Files written beside a scored run's margins file (``stability.json``, ``summary.json``), found and read per
run: the two steps every such reader shares (:mod:`vlaudit.sources.noise_floor`,
:mod:`vlaudit.sources.scoring_coverage`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from vlaudit.sources.margins import MarginRun

T = TypeVar("T")


def file_beside(run: MarginRun, name: str) -> Path | None:
    """The file ``name`` in the folder of the margins file ``run`` was read from; None when the run was not
    read from a file or the folder holds no such file."""
    if not run.source or not Path(run.source).is_file():
        return None
    path = Path(run.source).parent / name
    return path if path.is_file() else None


def by_run_key(runs: Sequence[MarginRun], read: Callable[[MarginRun], T | None]) -> dict[tuple[str, str, str], T]:
    """``read(run)`` of every run it finds something for, by (model, dataset, interface)."""
    found = {}
    for run in runs:
        value = read(run)
        if value is not None:
            found[run.key] = value
    return found
