"""The command line's own console printers: tables and lines that only the commands print.

They read what the facade's functions return (``import vlaudit``) and print it with rich, 80 columns
included; the shared renderer is :mod:`vlaudit.commands._render` (``show(view)``, ``print_table``). They live
in the command layer because no library code calls them: they are not library API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

import vlaudit
from vlaudit.commands._render import print_table


def unavailable_lines(unavailable: Mapping[str, Mapping[str, int]], min_cycles: int, counted: str = "val"
                      ) -> list[str]:
    """One line per withdrawn family with its per-split counts (the minimum-cycle rule, cycle paper §D.5).

    ``counted``: the cycles the minimum counted — "val" (the paper's validation cycles), another build's val
    ("val of PATH") or, in a build without a validation split, the split(s) it has ("test")."""
    what = "validation" if counted == "val" else counted
    return [f"unavailable: {family} (fewer than {min_cycles} {what} cycles, or none in a split: "
            + ", ".join(f"{split} {count}" for split, count in counts.items()) + ")"
            for family, counts in unavailable.items()]


def print_unavailable(unavailable: Mapping[str, Mapping[str, int]], min_cycles: int, counted: str = "val") -> None:
    """Print :func:`unavailable_lines` (nothing when every family is available)."""
    console = Console()
    for line in unavailable_lines(unavailable, min_cycles, counted):
        console.print(line, style="yellow", markup=False, highlight=False)


def _value(value: object) -> float | None:
    """A figure's value, None where it is missing (a ``Missing`` record, shown as an em dash)."""
    return value if isinstance(value, int | float) else None


def print_suites(rows: Sequence[Mapping[str, Any]]) -> None:
    """The registry (``vlaudit.suites()``): name (never cut), what it compares and its official metric with
    its tie rule (wrapped between words), as wide as the terminal (80 columns included)."""
    console = Console()
    table = Table(title=Text("Compositionality suites (vlaudit suite eval NAME FILE ...)"), box=box.SIMPLE_HEAD,
                  pad_edge=False, expand=False)
    table.add_column(Text("suite"), no_wrap=True, min_width=max([len(str(r["name"])) for r in rows] or [5]))
    table.add_column(Text("compares"), no_wrap=True)
    table.add_column(Text("official metric; tie rule"), overflow="fold")
    for row in rows:
        table.add_row(Text(str(row["name"])), Text(str(row["directions"])),
                      Text(f"{row['metric']}; {row['tie_rule']}"))
    console.print(table)


def print_suite_result(result: vlaudit.SuiteResult) -> None:
    """The figures of one suite run: its official figures (value, n items, coverage, tie rule), then per subset
    exact CycleAcc with its cycle count and the marginal audit's imbalance figures."""
    title = f"{result.suite} — {result.model}"
    print_table(f"{title}: official figures ({result.official.split(' : ')[0]})",
                ["figure", "value", "n", "coverage", "ties"],
                [[f.label, _value(f.value), f.n, result.coverage(f), f.tie_rule.split(":")[0]]
                 for f in result.figures], droppable=("ties",))
    audit = {cell.subset: cell for cell in result.audit}
    rows = []
    for cell in result.cycles:
        entry = audit.get(cell.subset)
        rows.append([cell.subset, cell.cell.n, cell.within, cell.across, cell.cell.cycle_acc, cell.cell.ties,
                     None if entry is None else entry.tv_image, None if entry is None else entry.tv_caption,
                     None if entry is None else entry.degree_imbalance])
    print_table(f"{title}: exact CycleAcc (½ for ties) and the audit",
                ["subset", "cycles", "within", "across", "CycleAcc", "ties", "TV img", "TV txt", "imbal."],
                rows, droppable=("within", "across", "ties"))
