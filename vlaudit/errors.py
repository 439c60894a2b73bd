"""Errors that name the file, record and field, so a user can fix bad input without reading a traceback."""

from __future__ import annotations

from pathlib import Path

# The exit status of every ``vlaudit`` command (README "Exit codes"; docs/cli.md).
EXIT_DONE = 0  # the command did what it was asked
EXIT_CHECK_FAILED = 1  # an audit or known-answer check failed: results are written and say what failed
EXIT_BAD_INPUT = 2  # bad input, a usage error, or nothing to do: nothing written that reads as a result
EXIT_INCOMPLETE = 3  # part of the work failed; the finished part is cached, the same command resumes
EXIT_INTERRUPTED = 130  # stopped by Ctrl-C (128 + SIGINT); a resumable command resumes when rerun


class VlauditError(Exception):
    """Base class of every error vlaudit raises on purpose; the CLI prints it without a traceback and exits
    with its ``exit_code``."""

    exit_code = EXIT_BAD_INPUT


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
