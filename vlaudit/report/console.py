"""Rich tables printed by the commands (the data behind them is always also written to a file)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return "nan" if value != value else f"{value:.{digits}f}"
    return str(value)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 4) -> None:
    """Print a simple rich table; floats are shown with ``digits`` decimals, None as an em dash."""
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
    return [f"unavailable: {family} (fewer than {min_cycles} cycles in a split: "
            + ", ".join(f"{split} {count}" for split, count in counts.items()) + ")"
            for family, counts in unavailable.items()]


def print_unavailable(unavailable: Mapping[str, Mapping[str, int]], min_cycles: int) -> None:
    """Print :func:`unavailable_lines` (nothing when every family is available)."""
    console = Console()
    for line in unavailable_lines(unavailable, min_cycles):
        console.print(line, style="yellow", markup=False, highlight=False)
