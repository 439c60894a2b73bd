"""The console views of ``vlaudit cycles eval``: the CycleAcc table per (family, split) and the 2×2 benchmarks'
tables (typed :class:`~vlaudit.results.console.ConsoleView` records; the command line renders them with rich,
and the data behind them is always also written to a file)."""

from __future__ import annotations

from collections.abc import Mapping

from vlaudit.metrics.cycles import CYCLE_UNIT_CAVEAT
from vlaudit.metrics.two_by_two import METRIC_LABELS, metric_names
from vlaudit.results.console import ConsoleTable, ConsoleText, ConsoleView
from vlaudit.results.cycles import BenchmarkEntry, CycleEvaluationResult
from vlaudit.stats.formatting import format_interval


def cycle_table_view(result: CycleEvaluationResult, title: str = "CycleAcc") -> ConsoleView:
    """One row per (family, split) of an ``evaluate_cycles`` result: n, clusters, CycleAcc, ties, tie rate, CI,
    then the line on the resampling unit.

    Splits are never pooled, so there is no "overall" row; the split is in every row and in the title. The
    title names the resampling unit, each row its number of clusters (with the cycle as the unit, n), and the
    line below the table the unit's caveat (:data:`~vlaudit.metrics.cycles.CYCLE_UNIT_CAVEAT`).
    """
    rows = []
    units = []
    for family, cells in result.families.items():
        for split, cell in cells.items():
            units.append(cell.unit)
            rows.append([family, split, cell.n, cell.n_clusters, cell.cycle_acc, cell.ties, cell.tie_rate,
                         format_interval(cell.ci, signed=False)])
    unit = "/".join(dict.fromkeys(units)) or "cycle"
    splits = ", ".join(result.splits)
    where = f"split: {splits}; unit: {unit}" if splits else f"unit: {unit}"
    # with the cycle as the unit the cluster count is n, so that column may go first on a narrow terminal
    table = ConsoleTable(f"{title} ({where})",
                         ["family", "split", "n", "clusters", "CycleAcc", "ties", "tie rate", "95% CI"], rows,
                         identifiers=2, droppable=("clusters", "ties") if unit == "cycle" else ("ties",))
    return ConsoleView((table, ConsoleText(CYCLE_UNIT_CAVEAT if unit == "cycle" else unit_note(unit))))


def unit_note(unit: str) -> str:
    """The line under a cycle table clustered by ``unit`` (``--cluster``)."""
    how = ("cycles that share an image, directly or through others, resampled together" if unit == "image"
           else f"cycles with the same {unit} resampled together")
    return f"resampling unit: {unit} ({how}); each row names its number of clusters"


def benchmark_tables_view(benchmarks: Mapping[str, BenchmarkEntry]) -> ConsoleView:
    """One table per 2×2 benchmark and split: per tag, CycleAcc then the benchmark's own metrics, each with n,
    the intervals' clusters, value, 95% interval and ties (a withheld CycleAcc — fewer blocks than
    --min-cycles — shows as —); the title names the resampling unit and the benchmark's rule (Winoground:
    strict >, a tie loses; NaturalBench: Yes iff score > threshold)."""
    parts: list[ConsoleTable] = []
    for name, entry in benchmarks.items():
        metrics = ("cycle_acc", *metric_names(entry.metrics))
        for split, tags in entry.splits.items():
            rows = []
            for tag, cell in tags.items():
                for index, metric in enumerate(metrics):
                    ci = cell[f"{metric}_ci"]
                    rows.append([tag if index == 0 else "", METRIC_LABELS[metric], cell["n"],
                                 cell.get("n_clusters", cell["n"]), cell[metric],
                                 format_interval(ci, signed=False) if isinstance(ci, list) else "—",
                                 cell[f"{metric}_ties"]])
            rule = ("strict >, a tie loses" if entry.metrics == "winoground"
                    else f"Yes iff score > {entry.threshold or 0.0:g}; yes/no samples only")
            unit = "/".join(dict.fromkeys(str(cell.get("unit", "cycle")) for cell in tags.values()))
            # with the cycle as the unit the cluster count is n: that column goes first on a narrow terminal
            parts.append(ConsoleTable(f"{name} — split {split} ({rule}; unit: {unit})",
                                      ["tag", "metric", "n", "clusters", "value", "95% CI", "ties"], rows,
                                      droppable=("clusters",) if unit == "cycle" else ()))
    return ConsoleView(tuple(parts))
