"""Rich tables printed by the commands (the data behind them is always also written to a file)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from vlaudit.metrics.cycles import CYCLE_UNIT_CAVEAT
from vlaudit.metrics.two_by_two import METRIC_LABELS, metric_names
from vlaudit.results.console import ConsoleTable, ConsoleText, ConsoleView
from vlaudit.results.cycles import BenchmarkEntry, CycleEvaluationResult
from vlaudit.stats.formatting import format_interval


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return "nan" if value != value else f"{value:.{digits}f}"
    return str(value)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 4, *,
                identifiers: int = 1, droppable: Sequence[str] = ()) -> None:
    """Print a table whose identifiers stay whole at any terminal width (80 columns included).

    Floats are shown with ``digits`` decimals, None as an em dash; cells and title are plain text (a name
    with brackets is not read as rich markup). The first ``identifiers`` columns (names, splits) never wrap
    or shorten. When the table is wider than the terminal, the ``droppable`` columns (numbers another column
    implies, e.g. a count beside its rate) are left out first, and a table still too wide is printed as one
    block per row, ``name`` first then ``column value`` pairs, so nothing is cut. The data behind every table
    is also written to a file.
    """
    console = Console()
    cells = [[_fmt(v, digits) for v in row] for row in rows]
    keep, fits = _layout(console, [(title, cells)], columns, identifiers, droppable)
    if fits:
        console.print(_rich_table(title, columns, cells, keep, identifiers))
    else:
        _print_vertically(console, title, columns, cells, identifiers)


def print_tables(tables: Sequence[tuple[str, Sequence[Sequence[Any]]]], columns: Sequence[str], digits: int = 4, *,
                 identifiers: int = 1, droppable: Sequence[str | tuple[str, ...]] = ()) -> None:
    """Print several ``(title, rows)`` tables of the same ``columns`` in one layout, as :func:`print_table`
    prints one: the same columns left out (a tuple in ``droppable`` is left out together, e.g. both models'
    tie rates) and, when one of them is still too wide, every one as blocks, so a split or a model pair never
    reads differently from the one beside it."""
    console = Console()
    formatted = [(title, [[_fmt(v, digits) for v in row] for row in rows]) for title, rows in tables]
    keep, fits = _layout(console, formatted, columns, identifiers, droppable)
    for title, cells in formatted:
        if fits:
            console.print(_rich_table(title, columns, cells, keep, identifiers))
        else:
            _print_vertically(console, title, columns, cells, identifiers)


def _layout(console: Any, tables: Sequence[tuple[str, Sequence[Sequence[str]]]], columns: Sequence[str],
            identifiers: int, droppable: Sequence[str | tuple[str, ...]]) -> tuple[list[int], bool]:
    """The columns kept (``droppable`` ones left out, in order, until every table fits) and whether every
    table then fits the terminal."""
    keep = list(range(len(columns)))

    def fit() -> bool:
        return all(_fits(console, _rich_table(title, columns, cells, keep, identifiers)) for title, cells in tables)

    for group in droppable:
        names = (group,) if isinstance(group, str) else group
        if fit() or not all(name in columns for name in names):
            continue
        for name in names:
            keep.remove(list(columns).index(name))
    return keep, fit()


def _rich_table(title: str, columns: Sequence[str], cells: Sequence[Sequence[str]], keep: Sequence[int],
                identifiers: int) -> Any:
    table = Table(title=Text(title), box=box.SIMPLE_HEAD, pad_edge=False)
    for index in keep:
        whole = index < identifiers
        table.add_column(Text(columns[index]), justify="left" if whole else "right", no_wrap=whole,
                         overflow="fold", min_width=max([len(row[index]) for row in cells] or [0]) if whole else None)
    for row in cells:
        table.add_row(*(Text(row[index]) for index in keep))
    return table


def _fits(console: Any, table: Any) -> bool:
    """Whether ``table`` prints at its natural width (no cell wraps) in ``console``."""
    unbounded = console.options.update_width(10**6)  # console.measure clamps to the terminal's width
    return Measurement.get(console, unbounded, table).maximum <= console.width


def _print_vertically(console: Any, title: str, columns: Sequence[str], cells: Sequence[Sequence[str]],
                      identifiers: int) -> None:
    for line in _whole_words(title, console.width):
        console.print(Text(line, style="italic"), soft_wrap=True)
    for row in cells:
        # a row whose identifiers are blank continues the row above it (a benchmark's tag is written once
        # above its metrics): its pairs go under that row's name, with no "—" line of its own
        if any(row[:identifiers]) or not identifiers:
            for line in _whole_words(" / ".join(row[:identifiers]) or "—", console.width):
                console.print(Text(line, style="bold"), soft_wrap=True)
        pairs = [f"{columns[i]} {row[i]}" for i in range(identifiers, len(columns))]
        for line in _pair_lines(pairs, console.width):
            console.print(Text(line), soft_wrap=False, overflow="fold")


def _whole_words(text: str, width: int, indent: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken only at spaces (continuations start with
    ``indent``): a name (a family, a path) is never cut, even where it alone is wider than the terminal."""
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [text]


def print_wrapped(text: str) -> None:
    """Print a line of prose at the terminal's width, wrapped between words, continuations indented two
    spaces (plain text: brackets are not rich markup)."""
    console = Console()
    for line in _whole_words(text, console.width, indent="  "):
        console.print(Text(line), soft_wrap=True)


def _pair_lines(pairs: Sequence[str], width: int) -> list[str]:
    """``column value`` pairs joined by `` · `` into indented lines of at most ``width`` characters, breaking
    only between pairs (a pair never splits, so a value is never read under the wrong column)."""
    lines: list[str] = []
    line = ""
    for pair in pairs:
        joined = f"{line} · {pair}" if line else f"  {pair}"
        if line and len(joined) > width:
            lines.append(line)
            joined = f"  {pair}"
        line = joined
    return [*lines, line] if line else lines


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
