"""The command line's one rich renderer: ``show(view)`` prints a console view (``vlaudit.ConsoleView``, or one
of its parts) at the terminal's width, 80 columns included.

The library says *what* a console shows (the view builders of the facade, e.g. ``vlaudit.cycle_table_view``,
return typed views); this module says *how* rich prints it. A table's identifiers stay whole at any width:
floats show with the table's ``digits`` decimals, None as an em dash; cells and titles are plain text (a name
with brackets is not read as rich markup). The first ``identifiers`` columns (names, splits) never wrap or
shorten. When a table is wider than the terminal, its ``droppable`` columns (numbers another column implies,
e.g. a count beside its rate) are left out first, and a table still too wide is printed as one block per row,
``name`` first then ``column value`` pairs, so nothing is cut. Lines of prose wrap between words,
continuations indented two spaces. The data behind every table is also written to a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

import vlaudit
from vlaudit.commands._say import whole_words


def show(view: vlaudit.ConsoleView | vlaudit.ConsoleTable | vlaudit.ConsoleTables | vlaudit.ConsoleText
         | vlaudit.ConsoleHeadline, *, console: Console | None = None) -> None:
    """Print ``view`` (a whole view or one part) as the commands print it: to ``console``, else each part to a
    console of the terminal's width."""
    parts = view.parts if isinstance(view, vlaudit.ConsoleView) else (view,)
    for part in parts:
        if isinstance(part, vlaudit.ConsoleText):
            _print_text(console or Console(), part)
        elif isinstance(part, vlaudit.ConsoleHeadline):
            (console or Console()).print(_headline_table(part))
        elif isinstance(part, vlaudit.ConsoleTables):
            _print_tables(console or Console(), part.parts(), part.identifiers, part.droppable)
        else:
            _print_tables(console or Console(), [part], part.identifiers, part.droppable)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 4, *,
                identifiers: int = 1, droppable: Sequence[str] = ()) -> None:
    """Print one table of a command's own rows: ``show(vlaudit.ConsoleTable(...))``."""
    show(vlaudit.ConsoleTable(title, columns, rows, digits, identifiers=identifiers, droppable=droppable))


def print_wrapped(text: str) -> None:
    """Print a line of prose wrapped between words (continuations indented two spaces):
    ``show(vlaudit.ConsoleText(text))``."""
    show(vlaudit.ConsoleText(text))


def _print_tables(console: Console, tables: Sequence[vlaudit.ConsoleTable], identifiers: int,
                  droppable: Sequence[str | tuple[str, ...]]) -> None:
    """Print tables of the same columns in one layout: the same columns left out (a tuple in ``droppable`` is
    left out together) and, when one of them is still too wide, every one as blocks."""
    columns = tables[0].columns if tables else ()
    formatted = [(table.title, table.cells()) for table in tables]
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
    for line in whole_words(title, console.width):
        console.print(Text(line, style="italic"), soft_wrap=True)
    for row in cells:
        # a row whose identifiers are blank continues the row above it (a benchmark's tag is written once
        # above its metrics): its pairs go under that row's name, with no "—" line of its own
        if any(row[:identifiers]) or not identifiers:
            for line in whole_words(" / ".join(row[:identifiers]) or "—", console.width):
                console.print(Text(line, style="bold"), soft_wrap=True)
        pairs = [f"{columns[i]} {row[i]}" for i in range(identifiers, len(columns))]
        for line in _pair_lines(pairs, console.width):
            console.print(Text(line), soft_wrap=False, overflow="fold")


def _print_text(console: Console, text: vlaudit.ConsoleText) -> None:
    """A line, warning or note at the terminal's width, wrapped between words, continuations indented two
    spaces; a heading (bold), caption (dim), alert (bold red) or plain sentence wrapped by the terminal. Plain
    text throughout: brackets are not rich markup."""
    if text.kind in ("line", "warning", "note") and not text.lead:
        for line in whole_words(text.line, console.width, indent="  "):
            console.print(Text(line), soft_wrap=True)
    elif text.kind == "heading":
        console.print(f"[bold]{escape(text.text)}[/bold]")
    else:
        style = {"caption": "dim", "alert": "bold red"}.get(text.kind, "")
        body = text.line if not text.lead else text.line[len(text.lead) + 1:]
        shown = Text.assemble((text.lead, "dim"), " ", (body, style)) if text.lead else Text(body, style=style)
        console.print(shown, highlight=False)


def _headline_table(headline: vlaudit.ConsoleHeadline) -> Table:
    """A table of the VCA headline: fixed column widths so the tables of one report line up as one (the
    header shown once), each percentage over its dim interval line."""
    table = Table(title=escape(headline.title), title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, collapse_padding=True, show_header=headline.header)
    interface, n, *metrics = headline.columns
    table.add_column(interface, justify="left", no_wrap=True, min_width=9)
    table.add_column(n, justify="right", min_width=5, no_wrap=True)
    for column in metrics:
        table.add_column(column, justify="right", min_width=max(10, len(column)))
    for row in headline.rows:
        table.add_row(*(escape(cell) if isinstance(cell, str)
                        else cell.value + ("" if cell.interval is None else f"\n[dim]{cell.interval}[/dim]")
                        for cell in row))
    return table


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
