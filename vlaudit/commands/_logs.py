"""Log records of the model libraries, routed to one handler while a command runs (``cli.py`` prints each as
one ``warning:`` line).

transformers gives its logger its own stderr handler and stops it propagating; huggingface_hub and datasets
add a stderr handler too; open_clip logs on the root logger. :func:`library_logs_to` sends the records of all
of them (and of the root logger) to one handler for the length of a block, with the libraries' own handlers
muted, so the CLI can print each as one ``warning:`` line (:func:`one_line` folds a multi-line record). The
backends hold a load's records on the root logger's handlers (``backends/dual/load_logs.py``,
``held_log_records``), the handler installed here included.
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
    try:
        yield
    finally:
        root.removeHandler(handler)
        for redirect in redirects:
            redirect.restore()
