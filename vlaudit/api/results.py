"""Typed results with one face: ``.to_dict()``, ``.to_frame()``, ``.save(dir)`` and a Jupyter table.

A result keeps its typed, versioned record (``result``, a :class:`~vlaudit.results.versioned.VersionedResult`;
``data`` is its ``to_dict()``, what the CLI writes as JSON, ``schema_version`` included) and its headline rows
(``rows``, one per family × split or per model × dataset × interface). Interval columns are stored as
``NAME_lo`` / ``NAME_hi`` beside ``NAME`` so that the frame stays flat and numeric: a row's cells are JSON
scalars (:data:`Cell`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Self, TypeVar

import pandas as pd

from vlaudit.files import write_json, write_result, write_table
from vlaudit.results.versioned import Interval, JsonObject, VersionedResult, to_json

#: one cell of a headline row: a number, text, a flag, or None (not computable)
Cell = str | int | float | bool | None
#: one headline row: column → cell
Row = dict[str, Cell]
#: what writes a result into a folder (the command's files), returning the paths written
Writer = Callable[[Path, "Result"], list[Path]]


class _Settable(Protocol):
    def __setitem__(self, key: str, value: float | None, /) -> None: ...


Settable = TypeVar("Settable", bound=_Settable)


def _cell(column: str, value: object) -> Cell:
    """A row's value as a cell: numpy scalars as Python numbers, NaN as None; a list or object is refused (an
    interval goes in two columns, :func:`with_interval`)."""
    cell = to_json(value)
    if isinstance(cell, (list, dict)):
        raise TypeError(f"row column {column!r} holds {type(value).__name__}, not a single value "
                        "(an interval goes in NAME_lo / NAME_hi: with_interval)")
    return cell


def _fmt(value: Cell) -> str:
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.4f}"
    return "—" if value is None else str(value)


@dataclass
class Result:
    """A result: the nested record ``data``, flat headline ``rows`` and the columns that carry intervals.

    ``result`` is the typed record (``data == result.to_dict()``); every result the API returns has one
    (a Result built by hand without one saves ``data`` as it is)."""

    data: JsonObject
    rows: list[Row]
    title: str = "vlaudit result"
    interval_columns: Sequence[str] = ()
    writer: Writer | None = field(default=None, repr=False)
    result: VersionedResult | None = field(default=None, repr=False)

    @classmethod
    def of(cls, result: VersionedResult, rows: Sequence[Mapping[str, object]], *, title: str = "vlaudit result",
           interval_columns: Sequence[str] = (), writer: Writer | None = None) -> Self:
        """A result of a typed record: ``data`` is ``result.to_dict()``, each row's values cells (:data:`Cell`).

        A subclass with fields of its own builds itself with its constructor (``data=result.to_dict()``,
        ``result=result`` and its fields)."""
        return cls(result.to_dict(), [{k: _cell(k, v) for k, v in row.items()} for row in rows], title=title,
                   interval_columns=interval_columns, writer=writer, result=result)

    @property
    def schema_version(self) -> int | None:
        """The version of the typed record's JSON shape (None for a Result built by hand without one)."""
        return None if self.result is None else self.result.schema_version

    def to_dict(self) -> JsonObject:
        """The full nested record (JSON-serialisable, as the CLI writes it, with ``schema_version``)."""
        return self.data

    def to_frame(self) -> pd.DataFrame:
        """The headline rows as a pandas DataFrame (one row per cell, intervals as ``*_lo``/``*_hi``)."""
        return pd.DataFrame(self.rows)

    def save(self, directory: str | Path) -> list[Path]:
        """Write the result into ``directory`` (created): ``result.json`` + ``rows.csv``, or the CLI's files."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        if self.writer is not None:
            return self.writer(out, self)
        record = write_json(out / "result.json", self.data) if self.result is None else \
            write_result(out / "result.json", self.result)
        return [record, write_table(out / "rows.csv", self.rows)]

    def _repr_html_(self) -> str:
        """A compact table: each interval column shown as ``value [lo, hi]``; every cell HTML-escaped."""
        if not self.rows:
            return f"<p><b>{html.escape(self.title)}</b>: no rows</p>"
        hidden = {f"{c}_{end}" for c in self.interval_columns for end in ("lo", "hi")}
        columns = [c for c in self.rows[0] if c not in hidden]
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        body = []
        for row in self.rows:
            cells = []
            for column in columns:
                text = _fmt(row.get(column))
                if column in self.interval_columns and row.get(f"{column}_lo") is not None:
                    text += f" [{_fmt(row.get(f'{column}_lo'))}, {_fmt(row.get(f'{column}_hi'))}]"
                cells.append(f"<td>{html.escape(text)}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        return (f"<table><caption>{html.escape(self.title)}</caption><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.title!r}: {len(self.rows)} rows>"


def with_interval(row: Settable, name: str, ci: Interval | Sequence[float] | None) -> Settable:
    """Add ``name_lo`` / ``name_hi`` to ``row`` from a two-element interval (None → missing)."""
    low, high = (None, None) if not ci else (ci[0], ci[1])
    row[f"{name}_lo"], row[f"{name}_hi"] = low, high
    return row
