"""Log records of the model libraries, held while a backend loads.

open_clip logs a failed load on the root logger (``ERROR:root:Failed to download weights …``) and then raises;
the backend turns the exception into one :class:`~vlaudit.errors.InputError` that says what is missing, so the
log line would only repeat it in another voice. :func:`held_log_records` holds the records of a load: dropped
when the load fails (the error says it all), passed on when it succeeds (then they are worth reading; the CLI
prints them as one-line warnings).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


class HeldRecords(logging.Filter):
    """A filter on the root logger that keeps each record instead of letting it through."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.holding = True

    def filter(self, record: logging.LogRecord) -> bool:
        if self.holding:
            self.records.append(record)
        return not self.holding

    def release(self) -> None:
        """Pass the held records on to the root logger's handlers, once."""
        self.holding = False
        records, self.records = self.records, []
        for record in records:
            logging.getLogger().handle(record)


@contextlib.contextmanager
def held_log_records() -> Iterator[HeldRecords]:
    """Hold the records logged on the root logger inside the block (see the module docstring); call
    ``.release()`` on the result to pass them on, or let them drop."""
    held = HeldRecords()
    root = logging.getLogger()
    root.addFilter(held)
    try:
        yield held
    finally:
        root.removeFilter(held)
