"""A scored run's coverage: ``summary.json`` beside its margins file (written by ``vca score``), read for the
report (:mod:`vlaudit.results.vca.coverage`). A margins table that is not a run folder's has none."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from vlaudit.files import read_json
from vlaudit.results.vca.coverage import ScoringCoverage, part_of
from vlaudit.results.vca.outputs import ScoringSummary
from vlaudit.sources.beside_runs import by_run_key, file_beside
from vlaudit.sources.margins import MarginRun

SUMMARY_FILE = "summary.json"


def read_coverage(run: MarginRun) -> ScoringCoverage | None:
    """The coverage of ``run``'s dataset and interface recorded by the run that scored its margins file (None
    without a ``summary.json`` that records one: a table from elsewhere, an older run, a dual-encoder run)."""
    path, source = file_beside(run, SUMMARY_FILE), run.source
    if path is None or source is None:
        return None
    data = read_json(path)
    if not isinstance(data, dict) or "n_records" not in data:  # another command's summary (score-dual)
        return None
    coverage = ScoringSummary.from_dict(data, path=path).coverage
    if coverage is None:
        return None
    stem = Path(source).stem  # an unnamed dataset is named by the margins file's stem (sources.margins)
    cells = [c if c.dataset else dataclasses.replace(c, dataset=stem) for c in coverage.cells]
    part = part_of(dataclasses.replace(coverage, cells=cells), dataset=run.dataset, interface=run.interface)
    return part if part.cells else None


def read_coverages(runs: Sequence[MarginRun]) -> dict[tuple[str, str, str], ScoringCoverage]:
    """The recorded coverage of every run that has one, by (model, dataset, interface)."""
    return by_run_key(runs, read_coverage)
