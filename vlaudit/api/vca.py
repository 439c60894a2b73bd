"""The Visual Credit Audit from a notebook: score margins, report credit, analyse the factorial (VCA §3–§13)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from vlaudit.analysis.vca.factorial import csv_rows, run_factorial_analysis, write_factorial_files
from vlaudit.analysis.vca.report import ReportSettings, compute_report
from vlaudit.api._inputs import as_margin_runs
from vlaudit.api.results import Result, with_interval
from vlaudit.report.vca_tables import print_axes, print_headline, write_report_files
from vlaudit.results.vca import FactorialResult, ScoringSummary, VcaReportResult
from vlaudit.scoring.runner import failure_line
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE_LEVEL,
    FACTORIAL_BOOTSTRAP_SEED,
    PRIMARY_CONTROLS,
)

HEADLINE = ("acc", "dep", "dcc", "cu")


@dataclass
class Margins:
    """A scoring run folder: ``path`` is its ``margins.parquet``; ``summary`` the run's counts (``summary.json``,
    typed as :attr:`result`)."""

    path: Path
    summary: dict[str, Any]
    prefix_cache: dict[str, Any] | None = None  # the shared image-prefix reuse decision (manifest.json records it)

    @property
    def failure_line(self) -> str:
        """One line counting the records not scored, by reason and by context (``failures.jsonl`` lists them)."""
        return failure_line(self.summary)

    @property
    def result(self) -> ScoringSummary:
        """The run's counts as the typed record ``summary.json`` holds."""
        return ScoringSummary.from_dict(self.summary)

    @property
    def schema_version(self) -> int:
        """The version of ``summary.json``'s shape."""
        return ScoringSummary.schema_version

    def to_frame(self) -> Any:
        """The margins as a pandas DataFrame (schema: :mod:`vlaudit.sources.margins`)."""
        return pq.read_table(self.path).to_pandas()


class VcaResult(Result):
    """The VCA report — ``rows``: model, dataset, interface, n, Acc, Dep, D-CC, C-U (+ intervals);
    ``data``: everything ``vca.json`` holds; ``report``: the full report object (items, groups, gaps)."""

    report: Any = None

    def write(self, out: str | Path, *, plot: bool = True) -> list[Path]:
        """Write ``vca.json``, the CSV tables, items/groups and (with ``plot``) the gap plot into ``out``, as
        ``vlaudit vca report --out OUT`` does."""
        return write_report_files(Path(out), self.report, plot=plot)

    def print_console(self, *, title: str) -> None:
        """Print the headline table and the permutation, relation and robustness axes at 80 columns."""
        print_headline(self.report.runs, title=title)
        print_axes(self.report)


def _headline(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for run in runs:
        row = {"model": run["model"], "dataset": run["dataset"], "interface": run["interface"], "n": run["n"]}
        for name in HEADLINE:
            row[name] = run[name]
            with_interval(row, name, run["ci"].get(name))
        rows.append(row)
    return rows


def vca_report(margins: Any, *, controls: Sequence[str] = PRIMARY_CONTROLS, n_resamples: int = BOOTSTRAP_RESAMPLES,
               seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL) -> VcaResult:
    """Visual Credit Audit of cached margins (VCA §3): Acc, Dep, D-CC, C-U = Acc − D-CC with paired bootstrap
    intervals per (model, dataset, interface), plus the permutation, relation and robustness axes.

    Args:
        margins: a margins file, DataFrame, pyarrow Table, list of rows, or :func:`score_margins`' result.
        controls: the headline control contexts of G_img = r_o − max_c r_c.
        n_resamples: paired (group-clustered) bootstrap resamples.
        seed: bootstrap seed.
        level: confidence level of every interval.

    ``.save(dir)`` writes exactly what ``vlaudit vca report`` writes.
    """
    report = compute_report(as_margin_runs(margins), ReportSettings(controls=tuple(controls),
                                                                    n_resamples=n_resamples, seed=seed, level=level))
    result = VcaResult.of(VcaReportResult.from_dict(report.to_json()), _headline(report.runs),
                          title="Visual Credit Audit", interval_columns=HEADLINE,
                          writer=lambda out, res: write_report_files(out, report))
    result.report = report
    return result


def factorial(runs: Any, *, out: str | Path, items: str | Path | None = None, margins: str | Path | None = None,
              interface: str = "yesno", n_resamples: int = BOOTSTRAP_RESAMPLES,
              seed: int = FACTORIAL_BOOTSTRAP_SEED) -> Result:
    """The 3×3 evidence-source factorial (VCA §10): C-U, responsiveness, answer flips and source effects.

    ``runs`` is one scoring run folder or margins file per model (or a list of them); ``items`` the factorial
    ITEMS (default: from the first run's manifest); ``margins`` the margins table of a single run folder
    (default: its ``margins.parquet``). Writes ``factorial.json`` and two CSV files into ``out``,
    as ``vlaudit vca factorial RUN... --out OUT`` does; ``.save(dir)`` writes the same three files into ``dir``.
    """
    paths = [runs] if isinstance(runs, (str, Path)) else list(runs)
    data = run_factorial_analysis(paths, items=items, out_dir=out, margins=margins, interface=interface,
                                  n_resamples=n_resamples, seed=seed)
    return Result.of(FactorialResult.from_dict(data), csv_rows(data)[0], title="Evidence-source factorial",
                     writer=lambda folder, result: write_factorial_files(folder, result.data))
