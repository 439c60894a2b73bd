"""The ``vlaudit`` command line: a thin shell over the library.

Each module in :mod:`vlaudit.commands` registers its commands on the groups of ``commands._apps``; they
reach the library through lazy module handles (:mod:`vlaudit.commands._lazy`), so that ``vlaudit --help``
loads neither numpy nor torch.
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.text import Text

from vlaudit.commands import _all  # noqa: F401  (registers every command)
from vlaudit.commands._apps import app
from vlaudit.errors import VlauditError


def main() -> None:
    """Entry point: run the app; print vlaudit's own errors as one red line and exit with status 2."""
    try:
        app()
    except VlauditError as exc:
        Console(stderr=True, soft_wrap=True).print(Text("error: ", style="bold red") + Text(str(exc)))
        sys.exit(2)


if __name__ == "__main__":
    main()
