"""The Visual Credit Audit from a notebook: score margins, report credit, analyse the factorial (VCA §3–§13)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vlaudit.analysis.stats_options import StatsOptions, spreads_stats
from vlaudit.analysis.vca.factorial import csv_rows, run_factorial_analysis, write_factorial_files
from vlaudit.analysis.vca.report import ReportSettings, VcaReport, compute_report
from vlaudit.api.input_records import as_margin_runs, refuse_foreign_report_folder
from vlaudit.api.inputs import MarginsInput
from vlaudit.api.results import Result, Row, with_interval
from vlaudit.report.vca_files import write_report_files
from vlaudit.results.vca.audit import RunAudit
from vlaudit.results.vca.outputs import FactorialResult, VcaReportResult
from vlaudit.results.versioned import to_json
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE_LEVEL,
    FACTORIAL_BOOTSTRAP_SEED,
    MIN_COVERAGE,
    PRIMARY_CONTROLS,
)
from vlaudit.sources.factorial_runs import read_factorial_inputs
from vlaudit.sources.noise_floor import read_floors
from vlaudit.sources.scoring_coverage import read_coverages

HEADLINE = ("acc", "dep", "dcc", "cu")


@dataclass(repr=False)
class VcaResult(Result):
    """The VCA report — ``rows``: model, dataset, interface, n, Acc, Dep, D-CC, C-U (+ intervals);
    ``audit``: ``vca.json`` typed to the leaves (:class:`~vlaudit.results.vca.outputs.VcaReportResult`: ``runs``,
    ``interfaces``, ``macro``, ``settings``, ``warnings``); ``report``: the audit with the per-item and per-group
    rows and each run's gaps (:func:`~vlaudit.report.vca_console.vca_report_view` of ``report``: what
    ``vlaudit vca report`` prints)."""

    report: VcaReport = field(kw_only=True)
    sources: tuple[str | None, ...] = field(kw_only=True, default=())  # the margins files read

    @property
    def audit(self) -> VcaReportResult:
        """``vca.json`` as typed records."""
        return self.report.result

    def write(self, out: str | Path, *, plot: bool = True) -> list[Path]:
        """Write ``vca.json``, the CSV tables, items/groups and (with ``plot``) the gap plot into ``out``, as
        ``vlaudit vca report --out OUT`` does (refused inside another run's folder)."""
        refuse_foreign_report_folder(out, self.sources)
        return write_report_files(Path(out), self.report, plot=plot)

    def save(self, directory: str | Path) -> list[Path]:
        """Write what ``vlaudit vca report --out DIRECTORY`` writes (refused inside another run's folder)."""
        refuse_foreign_report_folder(directory, self.sources)
        return super().save(directory)

    @property
    def below_coverage(self) -> list[RunAudit]:
        """The runs whose recorded scoring coverage falls below ``min_coverage``: their numbers are not a result."""
        return [run for run in self.report.runs if run.below_coverage]


def _headline(runs: Sequence[RunAudit]) -> list[Row]:
    rows = []
    for run in runs:
        row: Row = {"model": run.model, "dataset": run.dataset, "interface": run.interface, "n": run.n}
        for name in HEADLINE:
            row[name] = run.rate_of(name)
            with_interval(row, name, run.interval_of(name))
        rows.append(row)
    return rows


def _write_report(out: Path, result: Result) -> list[Path]:
    assert isinstance(result, VcaResult)
    return write_report_files(out, result.report)


@spreads_stats(controls="controls", resamples="n_resamples", seed="seed", level="level", cluster="cluster")
def vca_report(margins: MarginsInput, *, controls: Sequence[str] = PRIMARY_CONTROLS,
               n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED,
               level: float = CONFIDENCE_LEVEL, base_llm: str | Mapping[str, str] | None = None,
               cluster: str | None = None, min_coverage: float = MIN_COVERAGE,
               stats: StatsOptions | None = None) -> VcaResult:
    """Visual Credit Audit of cached margins (VCA §3): Acc, Dep, D-CC, C-U = Acc − D-CC with paired bootstrap
    intervals per (model, dataset, interface), plus the permutation, relation and robustness axes.

    Args:
        margins: a margins file, a ``vca score`` run folder (its ``margins.parquet``), DataFrame, pyarrow
            Table, list of rows, or :func:`score_margins`' result.
        controls: the headline control contexts of G_img = r_o − max_c r_c.
        n_resamples: paired (cluster) bootstrap resamples.
        seed: bootstrap seed.
        level: confidence level of every interval.
        base_llm: MMStar's leakage ML: the model name of the base LLM's text-only run (rows with only the
            ``text`` context) for every LVLM, or a mapping LVLM → its base LLM. Without it ML is not computed.
        cluster: the margins column whose values are the resampling unit (``image``, ``item_id``,
            ``group_id``, ...); None: the unit the items declare, else the relation group, else the item.
        min_coverage: a run whose scoring run recorded a lower coverage (``summary.json`` beside its margins:
            scored / asked per context and interface, :mod:`vlaudit.results.vca.coverage`) is reported with a
            warning first and listed in ``.below_coverage`` (``vlaudit vca report`` then exits 1).
        stats: ``controls``, ``n_resamples`` (its ``resamples``), ``seed``, ``level`` and ``cluster`` as one
            :class:`~vlaudit.StatsOptions` record instead (checked as built; its fields replace those keywords,
            giving both is refused).

    ``.save(dir)`` writes exactly what ``vlaudit vca report`` writes.
    """
    runs = as_margin_runs(margins)
    named = {"*": base_llm} if isinstance(base_llm, str) else dict(base_llm or {})
    report = compute_report(runs, ReportSettings(controls=tuple(controls), n_resamples=n_resamples, seed=seed,
                                                 level=level, base_llms=tuple(sorted(named.items())),
                                                 cluster=cluster, min_coverage=min_coverage),
                            read_floors(runs), read_coverages(runs))
    return VcaResult(report.result.to_dict(), _headline(report.runs), title="Visual Credit Audit",
                     interval_columns=HEADLINE, writer=_write_report, result=report.result, report=report,
                     sources=tuple(dict.fromkeys(run.source for run in runs)))


@dataclass(repr=False)
class FactorialRun(Result):
    """The factorial — ``rows``: per model and pooled C-U, responsiveness, flips (+ intervals); ``factorial``:
    ``factorial.json`` typed to the leaves; ``files``: what was written into ``out``."""

    factorial: FactorialResult = field(kw_only=True)
    files: list[Path] = field(kw_only=True, default_factory=list)


def _write_factorial(folder: Path, result: Result) -> list[Path]:
    return write_factorial_files(folder, result.data)


@spreads_stats(resamples="n_resamples", seed="seed")
def factorial(runs: str | Path | Sequence[str | Path], *, out: str | Path, items: str | Path | None = None,
              margins: str | Path | None = None, interface: str = "yesno", n_resamples: int = BOOTSTRAP_RESAMPLES,
              seed: int = FACTORIAL_BOOTSTRAP_SEED, stats: StatsOptions | None = None) -> FactorialRun:
    """The 3×3 evidence-source factorial (VCA §10): C-U, responsiveness, answer flips and source effects.

    ``runs`` is one scoring run folder or margins file per model (or a list of them); ``items`` the factorial
    ITEMS (default: from the first run's manifest); ``margins`` the margins table of a single run folder
    (default: its ``margins.parquet``). Writes ``factorial.json`` and two CSV files into ``out``,
    as ``vlaudit vca factorial RUN... --out OUT`` does; ``.save(dir)`` writes the same three files into ``dir``.
    ``stats``: ``n_resamples`` and ``seed`` as one :class:`~vlaudit.StatsOptions` record instead (its fields,
    defaults included, replace them: give ``seed=`` in it for the §10 seed; giving both is refused).
    """
    paths = [runs] if isinstance(runs, (str, Path)) else list(runs)
    inputs = read_factorial_inputs(paths, items=items, margins=margins, interface=interface)
    data = run_factorial_analysis(inputs, out_dir=out, interface=interface, n_resamples=n_resamples, seed=seed)
    record = FactorialResult.from_dict(to_json(data))
    cells = Result.of(record, csv_rows(data)[0])  # the headline rows as cells
    return FactorialRun(cells.data, cells.rows, title="Evidence-source factorial", writer=_write_factorial,
                        result=record, factorial=record, files=[Path(p) for p in data["files"]])
