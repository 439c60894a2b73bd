"""What a console shows, apart from how it is printed: the typed *console views* the report's view builders return
(:func:`vlaudit.cycle_table_view`, :func:`vlaudit.giveaway_view`, ...) and the command line renders with rich
(``vlaudit/commands/_render.py``: ``show(view)``).

A view is a :class:`ConsoleView`, a sequence of parts, each a :class:`ConsoleTable` (one table),
:class:`ConsoleTables` (several tables of the same columns laid out alike), :class:`ConsoleText` (a line of
text) or :class:`ConsoleHeadline` (a table of the VCA headline: percentages over their intervals). Cells keep their values (numbers stay numbers); :meth:`ConsoleTable.cells` is the
text each cell prints as: a float with ``digits`` decimals (``nan`` for NaN), None as an em dash, anything else
``str(value)``. The layout a renderer follows: the first ``identifiers`` columns (names, splits) never wrap;
when a table is wider than the terminal its ``droppable`` columns go first, in order (a tuple goes together),
and a table still too wide prints as one block per row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

#: what a line of text is: a line of prose, a warning (printed ``warning: TEXT``) or a note (``note: TEXT``),
#: all three wrapped between words with continuations indented; or, wrapped by the terminal with no indent, a
#: ``heading`` (bold), a ``caption`` (dim), an ``alert`` (bold red) or a ``plain`` sentence
TextKind = Literal["line", "warning", "note", "heading", "caption", "alert", "plain"]

#: a column left out on a narrow terminal, or a tuple of columns left out together
Droppable = str | tuple[str, ...]


def cell_text(value: object, digits: int = 4) -> str:
    """The text of one cell: None → ``—``, a float → ``digits`` decimals (``nan`` for NaN), else ``str``."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return "nan" if value != value else f"{value:.{digits}f}"
    return str(value)


def _rows(rows: Iterable[Iterable[object]]) -> tuple[tuple[object, ...], ...]:
    return tuple(tuple(row) for row in rows)


@dataclass(frozen=True)
class ConsoleTable:
    """One table: ``title``, ``columns`` and ``rows`` of values (shown with ``digits`` decimals); the first
    ``identifiers`` columns never wrap; ``droppable`` columns are left out, in order, on a narrow terminal."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    digits: int = 4
    identifiers: int = 1
    droppable: tuple[Droppable, ...] = ()

    def __init__(self, title: str, columns: Sequence[str], rows: Iterable[Iterable[object]], digits: int = 4, *,
                 identifiers: int = 1, droppable: Sequence[Droppable] = ()) -> None:
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "columns", tuple(columns))
        object.__setattr__(self, "rows", _rows(rows))
        object.__setattr__(self, "digits", digits)
        object.__setattr__(self, "identifiers", identifiers)
        object.__setattr__(self, "droppable", tuple(droppable))

    def cells(self) -> list[list[str]]:
        """Every row's cells as the text they print as (:func:`cell_text`)."""
        return [[cell_text(value, self.digits) for value in row] for row in self.rows]


@dataclass(frozen=True)
class ConsoleTables:
    """Several ``(title, rows)`` tables of the same ``columns`` laid out alike: the same columns left out and,
    when one is still too wide, every one printed as blocks (a split never reads differently from the next)."""

    columns: tuple[str, ...]
    tables: tuple[tuple[str, tuple[tuple[object, ...], ...]], ...]
    digits: int = 4
    identifiers: int = 1
    droppable: tuple[Droppable, ...] = ()

    def __init__(self, tables: Iterable[tuple[str, Iterable[Iterable[object]]]], columns: Sequence[str],
                 digits: int = 4, *, identifiers: int = 1, droppable: Sequence[Droppable] = ()) -> None:
        object.__setattr__(self, "columns", tuple(columns))
        object.__setattr__(self, "tables", tuple((title, _rows(rows)) for title, rows in tables))
        object.__setattr__(self, "digits", digits)
        object.__setattr__(self, "identifiers", identifiers)
        object.__setattr__(self, "droppable", tuple(droppable))

    def parts(self) -> list[ConsoleTable]:
        """The tables one by one (each with the shared columns and layout rules)."""
        return [ConsoleTable(title, self.columns, rows, self.digits, identifiers=self.identifiers,
                             droppable=self.droppable) for title, rows in self.tables]


@dataclass(frozen=True)
class ConsoleText:
    """A line of text of kind :data:`TextKind`: a ``line``, ``warning`` or ``note`` wraps between words at the
    terminal's width (continuations indented two spaces), a ``warning`` or a ``note`` with its prefix
    (:attr:`line`); ``lead``, when given, is a dim lead-in printed before the text (``lead text``)."""

    text: str
    kind: TextKind = "line"
    lead: str = ""

    @property
    def line(self) -> str:
        """The text as printed, unwrapped: ``warning: TEXT``, ``note: TEXT``, ``LEAD TEXT`` or ``TEXT``."""
        text = f"{self.kind}: {self.text}" if self.kind in ("warning", "note") else self.text
        return f"{self.lead} {text}" if self.lead else text


@dataclass(frozen=True)
class HeadlineCell:
    """A percentage of the VCA headline over its interval: ``value`` (``12.3`` or ``—``) and, on a second
    (dim) line, ``interval`` (``10.1–14.6``; ``—`` where it is missing or zero-width; None: no second line)."""

    value: str
    interval: str | None = None


@dataclass(frozen=True)
class ConsoleHeadline:
    """One (model, dataset) table of the VCA headline, titled with the full names (never truncated at 80
    columns): a row per interface (interface, n, then :class:`HeadlineCell` percentages); the tables of one
    report share fixed column widths so they line up as one, and only the first shows the ``header``."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str | HeadlineCell, ...], ...]
    header: bool = True


#: one part of a console view
ConsolePart = ConsoleTable | ConsoleTables | ConsoleText | ConsoleHeadline


@dataclass(frozen=True)
class ConsoleView:
    """What a command prints for a result, in order: tables and lines (:data:`ConsolePart`)."""

    parts: tuple[ConsolePart, ...] = field(default=())

    def __add__(self, other: ConsoleView) -> ConsoleView:
        return ConsoleView((*self.parts, *other.parts))

    @property
    def lines(self) -> list[str]:
        """The text lines of the view, as printed (unwrapped)."""
        return [part.line for part in self.parts if isinstance(part, ConsoleText)]

    @property
    def tables(self) -> list[ConsoleTable]:
        """The view's tables, in order (a :class:`ConsoleTables` gives each of its tables)."""
        found: list[ConsoleTable] = []
        for part in self.parts:
            if isinstance(part, ConsoleTable):
                found.append(part)
            elif isinstance(part, ConsoleTables):
                found.extend(part.parts())
        return found
