"""The ``vlaudit`` command line: a thin shell over the library.

Each module in :mod:`vlaudit.commands` registers its commands on the groups of ``commands._apps``; they
import numpy/torch only inside the command bodies so that ``vlaudit --help`` stays fast.
"""

from __future__ import annotations

import sys

from vlaudit.commands import (  # noqa: F401  (imported for their command registrations)
    cycles_build,
    cycles_build_2x2,
    cycles_eval,
    cycles_score_mllm,
    data_inputs,
    data_scenes,
    demo,
    edits,
    experiment,
    factorial,
    features,
    models,
    pair_audit,
    report,
    synthetic,
    vca_analyses,
    vca_report,
    vca_score,
    vca_score_dual,
)
from vlaudit.commands._apps import app


def _warnings_as_one_line() -> None:
    """Show every Python warning as one ``warning: …`` line on stderr: never a source line or a file path."""
    import warnings

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None,
             line: str | None = None) -> None:
        from rich.console import Console
        from rich.text import Text

        Console(stderr=True, soft_wrap=True).print(Text("warning: ", style="bold yellow")
                                                   + Text(" ".join(str(message).split())))

    warnings.showwarning = show


def main() -> None:
    """Entry point: run the app; print vlaudit's own errors as one red line and exit with status 2, and
    every warning as one yellow line."""
    from vlaudit.errors import VlauditError

    _warnings_as_one_line()
    try:
        app()
    except VlauditError as exc:
        from rich.console import Console
        from rich.text import Text

        Console(stderr=True, soft_wrap=True).print(Text("error: ", style="bold red") + Text(str(exc)))
        sys.exit(2)


if __name__ == "__main__":
    main()
