"""Log records of the model libraries: routed to one handler while a command runs, held while a backend loads.

transformers gives its logger its own stderr handler and stops it propagating; huggingface_hub and datasets
add a stderr handler too; open_clip logs on the root logger. :func:`library_logs_to` sends the records of all
of them (and of the root logger) to one handler for the length of a block, with the libraries' own handlers
muted, so the CLI can print each as one ``warning:`` line (:func:`one_line` folds a multi-line record).

open_clip logs a failed load (``ERROR:root:Failed to download weights …``) and then raises; the backend turns
the exception into one :class:`~vlaudit.errors.InputError` that says what is missing, so the log line would
only repeat it in another voice. :func:`held_log_records` holds the records of a load: dropped when the load
fails (the error says it all), passed on when it succeeds (then they are worth reading).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

# the libraries whose loggers keep their records from the root logger (or print them a second time)
LIBRARY_LOGGERS = ("transformers", "huggingface_hub", "datasets", "open_clip")

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TABLE_RULE = re.compile(r"^[\s\-+|=─━┼]+$")
_ROUTES: list[logging.Handler] = []  # the handlers library_logs_to installed, innermost last


def one_line(message: str) -> str:
    """A message as one line: terminal colour codes dropped, each line's whitespace collapsed, the lines joined
    by ``; `` (by a space after a line that ends in a colon), a bullet's ``- `` dropped. A text table (a
    message with a rule line such as ``----+----``) loses its rules and has its cells joined by spaces:
    transformers' load report is such a table, and its rows name the missing weights."""
    lines = _ANSI.sub("", message).splitlines()
    table = any(_TABLE_RULE.match(line) and "-" in line for line in lines)
    pieces: list[str] = []
    for line in lines:
        if table and _TABLE_RULE.match(line):
            continue
        text = " ".join((line.replace("|", " ") if table else line).split())
        if not text:
            continue
        if pieces:
            text = text.removeprefix("- ")
        if pieces and pieces[-1].endswith(":"):
            pieces[-1] += " " + text
        else:
            pieces.append(text)
    return "; ".join(pieces)


class _MuteFilter(logging.Filter):
    """Put on a library's own stderr handler while its records are routed elsewhere."""

    def filter(self, record: logging.LogRecord) -> bool:
        return False


class _Redirect(logging.Handler):
    """Sits on a library's top logger: before that logger's own handlers see a record, mute them and let the
    record propagate to the root logger (transformers configures its logger on first import, after the block
    began, so this is done again on each record)."""

    def __init__(self, logger: logging.Logger, mute: _MuteFilter) -> None:
        super().__init__(level=logging.NOTSET)
        self.logger, self.mute = logger, mute
        self.muted: list[logging.Handler] = []
        self.propagate_before: bool | None = None

    def adopt(self) -> None:
        for handler in self.logger.handlers:
            # type(...) is, not isinstance: a FileHandler someone added is theirs, a bare StreamHandler the library's
            if type(handler) is logging.StreamHandler and handler not in self.muted:
                handler.addFilter(self.mute)
                self.muted.append(handler)
        if not self.logger.propagate:
            # Logger.callHandlers reads .propagate after this handler ran: the current record goes on too
            self.propagate_before = False if self.propagate_before is None else self.propagate_before
            self.logger.propagate = True

    def emit(self, record: logging.LogRecord) -> None:
        self.adopt()

    def restore(self) -> None:
        self.logger.removeHandler(self)
        for handler in self.muted:
            handler.removeFilter(self.mute)
        if self.propagate_before is not None:
            self.logger.propagate = self.propagate_before


@contextlib.contextmanager
def library_logs_to(handler: logging.Handler) -> Iterator[None]:
    """Inside the block, every record of the root logger and of :data:`LIBRARY_LOGGERS` at ``handler``'s level
    or above goes to ``handler`` (on the root logger) and nowhere else; the libraries' loggers are as they
    were afterwards."""
    root = logging.getLogger()
    mute = _MuteFilter()
    redirects = [_Redirect(logging.getLogger(name), mute) for name in LIBRARY_LOGGERS]
    for redirect in redirects:
        redirect.logger.addHandler(redirect)
        redirect.adopt()
    # a handler on the root logger also keeps logging.error() from installing basicConfig's stderr handler
    root.addHandler(handler)
    _ROUTES.append(handler)
    try:
        yield
    finally:
        _ROUTES.remove(handler)
        root.removeHandler(handler)
        for redirect in redirects:
            redirect.restore()


class HeldRecords(logging.Filter):
    """A filter that keeps each record instead of letting it through."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.holding = True

    def filter(self, record: logging.LogRecord) -> bool:
        if self.holding:
            self.records.append(record)
        return not self.holding

    def release(self) -> None:
        """Pass the held records on, once, through the loggers that logged them."""
        self.holding = False
        records, self.records = self.records, []
        for record in records:
            logging.getLogger(record.name).handle(record)


@contextlib.contextmanager
def held_log_records() -> Iterator[HeldRecords]:
    """Hold the records logged inside the block (see the module docstring): those of the root logger, and
    those routed by :func:`library_logs_to`; call ``.release()`` on the result to pass them on, or let them
    drop."""
    held = HeldRecords()
    root = logging.getLogger()
    # a logger's filter sees only the records logged on it; a handler's, every record that reaches it
    holders: list[logging.Filterer] = [root, *_ROUTES]
    for holder in holders:
        holder.addFilter(held)
    try:
        yield held
    finally:
        for holder in holders:
            holder.removeFilter(held)
