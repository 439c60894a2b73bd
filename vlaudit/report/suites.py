"""The compositionality suites on the console and in CSV: the registry table, and one :class:`SuiteResult`.

A suite result is three tables (80 columns): the suite's official figures (value, n items, coverage = n / the
file's records read, the tie rule), then per subset exact CycleAcc with its cycle count (within items + across
items) and the marginal audit's imbalance figures (TV of the image and text marginals between positives and
negatives, the signed-degree imbalance). :func:`suite_csv_rows` is the same, one flat row per figure or cell,
for ``suite.csv``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from vlaudit.report.console import print_table
from vlaudit.results.missing import Missing
from vlaudit.results.suites import SuiteResult


def _value(value: float | Missing) -> float | None:
    return None if isinstance(value, Missing) else value


def print_suites(rows: Sequence[Mapping[str, Any]]) -> None:
    """The registry (:func:`vlaudit.suites`): name (never cut), what it compares and its official metric with
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


def print_suite_result(result: SuiteResult) -> None:
    """The figures of one suite run (module docstring)."""
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
    print_table(f"{title}: exact CycleAcc (½ for ties) and the audit", ["subset", "cycles", "within", "across",
                                                                      "CycleAcc", "ties", "TV img", "TV txt",
                                                                      "imbal."],
                rows, droppable=("within", "across", "ties"))


def suite_csv_rows(result: SuiteResult) -> list[dict[str, Any]]:
    """``suite.csv``: one row per official figure (overall and per subset), then per CycleAcc/audit cell."""
    rows: list[dict[str, Any]] = []
    base = {"suite": result.suite, "model": result.model}
    for f in result.figures:
        rows.append({**base, "section": "official", "subset": "all", "key": f.key, "label": f.label,
                     "value": _value(f.value), "n": f.n, "coverage": result.coverage(f), "tie_rule": f.tie_rule,
                     "source": f.source})
        for subset, value in f.subsets.items():
            rows.append({**base, "section": "official", "subset": subset, "key": f.key, "label": f.label,
                         "value": value, "n": None, "coverage": None, "tie_rule": f.tie_rule, "source": f.source})
    for cell in result.cycles:
        rows.append({**base, "section": "cycles", "subset": cell.subset, "key": "cycle_acc", "label": "CycleAcc",
                     "value": cell.cell.cycle_acc, "n": cell.cell.n, "coverage": None,
                     "tie_rule": f"half credit for |Δ| ≤ {result.tol:g}", "source": "cycle paper §2.1"})
    for entry in result.audit:
        for key in ("tv_image", "tv_caption", "tv_caption_length", "degree_imbalance", "degree_imbalance_image",
                    "degree_imbalance_caption"):
            rows.append({**base, "section": "audit", "subset": entry.subset, "key": key, "label": key,
                         "value": getattr(entry, key), "n": entry.pairs, "coverage": None, "tie_rule": None,
                         "source": "cycle paper §2.2"})
    return rows
