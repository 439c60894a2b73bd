"""Errors that name the file, record and field, so a user can fix bad input without reading a traceback."""

from __future__ import annotations

from pathlib import Path


class VlauditError(Exception):
    """Base class of every error vlaudit raises on purpose; the CLI prints it without a traceback."""


class InputError(VlauditError, ValueError):
    """Bad input: the message names the file, the record (row number or id) and the field when known."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        record: object | None = None,
        field: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.record = record
        self.field = field
        where = []
        if self.path is not None:
            where.append(self.path)
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}")


class MissingDependencyError(VlauditError, ImportError):
    """An optional dependency is missing; the message says what to install."""
