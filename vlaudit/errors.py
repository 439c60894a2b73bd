"""Errors that name the file, record and field, so a user can fix bad input without reading a traceback."""

from __future__ import annotations

import difflib
import errno
import os
from collections.abc import Iterable
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


def unknown_names(given: Iterable[str], known: Iterable[str], *, what: str, field: str) -> InputError | None:
    """The one-line refusal of the names in ``given`` that are not ``known`` (None when all are), each with
    its closest known spelling ("did you mean …"), so that a typo is refused before any model loads."""
    vocabulary = list(dict.fromkeys(known))
    wrong = [name for name in dict.fromkeys(given) if name not in vocabulary]
    if not wrong:
        return None
    hints = []
    for name in wrong:
        close = difflib.get_close_matches(name, vocabulary, n=1, cutoff=0.5)
        hints.append(f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name))
    return InputError(f"unknown {what} {', '.join(hints)}; known: {', '.join(vocabulary)}", field=field)


class LowCoverageError(VlauditError):
    """A run scored fewer of its records than ``--min-coverage`` asks (:mod:`vlaudit.results.vca.coverage`): its
    files are written and say so, but its numbers are not a result (exit :data:`EXIT_CHECK_FAILED`; rerunning
    the same command cannot fix it, so not :data:`EXIT_INCOMPLETE`)."""

    exit_code = EXIT_CHECK_FAILED


class MissingDependencyError(VlauditError, ImportError):
    """An optional dependency is missing; the message says what to install."""


# what the operating system's refusal means for the user, and what to do about it
_DISK_FULL = "rerun the same command once there is room: it resumes from its cache"
_OS_ADVICE = {
    errno.EACCES: "permission denied; make it writable (or readable) for this user, or give another path",
    errno.EPERM: "operation not permitted (an immutable or protected file?); give another path",
    errno.EROFS: "the file system is read-only; give a path on a writable disk",
    errno.EFBIG: f"file too large for this disk or the file-size limit (ulimit -f); {_DISK_FULL}",
    errno.ENOSPC: f"no space left on the device; {_DISK_FULL}",
    errno.EDQUOT: f"disk quota exceeded; {_DISK_FULL}",
    errno.ENOTDIR: "a part of this path is a file, not a folder; give a folder path",
    errno.EEXIST: "a file is in the way of a folder that must be created there; move it or give another path",
    errno.EISDIR: "is a folder, not a file; give a file path",
    errno.ENOENT: "not found",
}


def describe_os_error(exc: OSError) -> str:
    """One line for an operating-system refusal (``PermissionError``, a full disk, a file where a folder must be):
    the path, what went wrong and what to do. ``$VLAUDIT_CACHE`` is named when the path lies under it."""
    advice = _OS_ADVICE.get(exc.errno or -1) or exc.strerror or str(exc)
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    cache = os.environ.get("VLAUDIT_CACHE")
    if cache and any(p == cache or p.startswith(cache.rstrip("/") + "/") for p in paths):
        advice += f" ($VLAUDIT_CACHE={cache} must be a writable folder)"
    return f"{' → '.join(paths)}: {advice}" if paths else advice
