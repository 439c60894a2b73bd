"""Rich tables printed by the commands (the data behind them is always also written to a file)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return "nan" if value != value else f"{value:.{digits}f}"
    return str(value)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 4) -> None:
    """Print a simple rich table; floats are shown with ``digits`` decimals, None as an em dash."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for index, column in enumerate(columns):
        # fold, not ellipsis: a narrow terminal wraps a long name instead of hiding it
        table.add_column(column, justify="left" if index == 0 else "right", overflow="fold")
    for row in rows:
        table.add_row(*(_fmt(v, digits) for v in row))
    Console().print(table)


def print_cycle_table(result: Mapping[str, Any], title: str = "CycleAcc") -> None:
    """One row per (family, split) of an ``evaluate_cycles`` result: n, CycleAcc, ties, tie rate, CI.

    Splits are never pooled, so there is no "overall" row; the split is in every row and in the title.
    """
    rows = []
    for family, cells in result["families"].items():
        for split, summary in cells.items():
            lo, hi = summary["ci"]
            rows.append([family, split, summary["n"], summary["cycle_acc"], summary["ties"], summary["tie_rate"],
                         f"[{_fmt(lo, 3)}, {_fmt(hi, 3)}]"])
    splits = ", ".join(result.get("splits", []))
    print_table(f"{title} (split: {splits})" if splits else title,
                ["family", "split", "n", "CycleAcc", "ties", "tie rate", "95% CI"], rows)


def unavailable_lines(unavailable: Mapping[str, Mapping[str, int]], min_cycles: int) -> list[str]:
    """One line per withdrawn family with its per-split counts (the minimum-cycle rule, cycle paper §D.5)."""
    return [f"unavailable: {family} (fewer than {min_cycles} validation cycles, or a split without any: "
            + ", ".join(f"{split} {count}" for split, count in counts.items()) + ")"
            for family, counts in unavailable.items()]


def print_unavailable(unavailable: Mapping[str, Mapping[str, int]], min_cycles: int) -> None:
    """Print :func:`unavailable_lines` (nothing when every family is available)."""
    from rich.console import Console

    console = Console()
    for line in unavailable_lines(unavailable, min_cycles):
        console.print(line, style="yellow", markup=False, highlight=False)


def print_benchmark_tables(benchmarks: Mapping[str, Any]) -> None:
    """One table per 2×2 benchmark and split: per tag, CycleAcc then the benchmark's own metrics, each with n,
    value, 95% interval and ties (a withheld CycleAcc — fewer blocks than --min-cycles — shows as —)."""
    from vlaudit.metrics.two_by_two import METRIC_LABELS, metric_names

    for name, entry in benchmarks.items():
        metrics = ("cycle_acc", *metric_names(entry["metrics"]))
        for split, tags in entry["splits"].items():
            rows = []
            for tag, cell in tags.items():
                for index, metric in enumerate(metrics):
                    ci = cell[f"{metric}_ci"]
                    rows.append([tag if index == 0 else "", METRIC_LABELS[metric], cell["n"], cell[metric],
                                 "—" if ci is None else f"[{_fmt(ci[0], 3)}, {_fmt(ci[1], 3)}]",
                                 cell[f"{metric}_ties"]])
            rule = ("strict >, a tie loses" if entry["metrics"] == "winoground"
                    else f"Yes iff score > {entry.get('threshold', 0.0):g}")
            print_table(f"{name} — split {split} ({rule})",
                        ["tag", "metric", "n", "value", "95% CI", "ties"], rows)
