"""Log records of a backend's load: held while the model loads, dropped when the load fails.

open_clip logs a failed load (``ERROR:root:Failed to download weights …``) and then raises; the backend turns
the exception into one :class:`~vlaudit.errors.InputError` that says what is missing, so the log line would
only repeat it in another voice. :func:`held_log_records` holds the records of a load: dropped when the load
fails (the error says it all), passed on when it succeeds (then they are worth reading). The command line
routes the libraries' records to one handler on the root logger while a command runs
(``commands/_logs.py``); that handler holds them too.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


class HeldRecords(logging.Filter):
    """A filter that keeps each record instead of letting it through."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.holding = True

    def filter(self, record: logging.LogRecord) -> bool:
        # one record reaches every handler of the root logger: each holds it, it is kept once
        if self.holding and all(kept is not record for kept in self.records):
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
    """Hold the records logged inside the block (see the module docstring): those logged on the root logger,
    and those that reach its handlers (the command line's routed library records among them); call
    ``.release()`` on the result to pass them on, or let them drop."""
    held = HeldRecords()
    root = logging.getLogger()
    # a logger's filter sees only the records logged on it; a handler's, every record that reaches it
    holders: list[logging.Filterer] = [root, *root.handlers]
    for holder in holders:
        holder.addFilter(held)
    try:
        yield held
    finally:
        for holder in holders:
            holder.removeFilter(held)
