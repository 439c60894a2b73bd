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
    """Per-family n, CycleAcc, ties and CI, then the overall row."""
    rows = []
    for family, summary in result["families"].items():
        lo, hi = summary["ci"]
        rows.append([family, summary["n"], summary["cycle_acc"], summary["ties"], f"[{_fmt(lo)}, {_fmt(hi)}]"])
    overall = result["overall"]
    rows.append(["overall", overall["n"], overall["cycle_acc"], overall["ties"],
                 f"[{_fmt(overall['ci'][0])}, {_fmt(overall['ci'][1])}]"])
    print_table(title, ["family", "n", "CycleAcc", "ties", "95% CI"], rows)
