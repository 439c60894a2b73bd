"""The ``vlaudit`` command line: a thin shell over the library.

Each module in :mod:`vlaudit.commands` registers its commands on the groups of ``commands._apps``; each
command calls one function of the lazy facade ``import vlaudit``, so that ``vlaudit --help`` loads neither numpy
nor torch.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from vlaudit.commands import _all  # noqa: F401  (registers every command)
from vlaudit.commands._apps import app
from vlaudit.commands._help import polish
from vlaudit.commands._logs import library_logs_to, one_line
from vlaudit.errors import EXIT_BAD_INPUT, EXIT_DONE, EXIT_INTERRUPTED, VlauditError, describe_os_error

if TYPE_CHECKING:
    from sys import UnraisableHookArgs


#: what Ctrl-C prints: a resumable command keeps what it finished, so the same command picks up from there
INTERRUPTED = "interrupted; rerun the same command to resume"
#: what Ctrl-C prints for every other command: it keeps nothing to resume from (its writers leave no partial file)
INTERRUPTED_AGAIN = "interrupted; nothing half-written is left, and the same command starts over when rerun"
#: the commands that resume from a cache when rerun after an interrupt (the others start over)
RESUMABLE = {("vca", "score"), ("cycles", "score-mllm")}


def interrupted_line(argv: list[str]) -> str:
    """The Ctrl-C line for the command ``argv`` names: "rerun to resume" only where that is true."""
    words = tuple(arg for arg in argv[:2] if not arg.startswith("-"))
    return INTERRUPTED if words in RESUMABLE else INTERRUPTED_AGAIN


def _warnings_as_one_line() -> None:
    """Show every Python warning as one ``warning: …`` line on stderr: never a source line or a file path."""
    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None,
             line: str | None = None) -> None:
        console = Console(stderr=True)  # a terminal: wrapped between words; piped: one line
        console.print(Text("warning: ", style="bold yellow") + Text(" ".join(str(message).split())),
                      soft_wrap=not console.is_terminal)

    warnings.showwarning = show


def main() -> NoReturn:
    """The command line in this process (the tests call it; :func:`run` is the process's entry point): run the
    app with polished help; exit with the status of the one table (README "Exit codes").

    vlaudit's own errors print as one red line (``error: …``) and exit with their ``exit_code`` (2 bad input,
    3 incomplete); click's usage errors exit 2; Ctrl-C exits 130 with one line, not click's "Aborted!" (1,
    which is reserved for a failed audit or known-answer check). The operating system's refusals (a folder that
    cannot be written, a full disk, a file where a folder must be) are one line naming the path and what to do,
    exit 2: every writer writes a temporary file and renames it, so nothing half-written is left, and a resumable
    command resumes from its cache when rerun.
    """
    _warnings_as_one_line()
    # A shell starts a background job (``vlaudit … &``) with SIGINT ignored, and Python then never raises
    # KeyboardInterrupt: the run would finish and exit 0 though the user asked it to stop.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    command = polish(typer.main.get_command(app))
    try:
        with _library_logs_as_warnings():
            status = command.main(prog_name="vlaudit", standalone_mode=False)
    except VlauditError as exc:
        _error_line(str(exc))
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort) as exc:
        if isinstance(exc.__cause__, EOFError):  # click reports an EOFError as an abort, as if Ctrl-C
            _error_line(f"a file or the input ended early (EOFError{': ' if str(exc.__cause__) else ''}"
                        f"{exc.__cause__}); is a file truncated or empty?")
            sys.exit(EXIT_BAD_INPUT)
        _error_line(interrupted_line(sys.argv[1:]))
        sys.exit(EXIT_INTERRUPTED)
    except OSError as exc:
        _error_line(describe_os_error(exc))
        sys.exit(EXIT_BAD_INPUT)
    except typer.TyperException as exc:  # click's usage errors: one line, click's exit status (2)
        _error_line(_click_message(exc))
        sys.exit(exc.exit_code)
    # standalone_mode=False: typer.Exit(n) returns n (typer turns Ctrl-C into Exit(130)); a finished command
    # returns its callback's value (None)
    status = status if isinstance(status, int) and not isinstance(status, bool) else EXIT_DONE
    if status == EXIT_INTERRUPTED:
        _error_line(interrupted_line(sys.argv[1:]))
    sys.exit(status)


def run() -> NoReturn:
    """The process's entry point (the ``vlaudit`` script, ``python -m vlaudit``): :func:`main`, where a Ctrl-C
    always stops the command and always ends the process with status 130.

    CPython marks a KeyboardInterrupt that leaves an ``exec`` of a string (imports run many: ``dataclasses``
    builds each ``__init__`` so) as unhandled even when it is caught, and after finalizing kills a ``python -m``
    process with SIGINT (−2 to a subprocess). So an interrupted command runs the exit handlers, flushes the
    streams and leaves at once; every writer has removed its temporary file on the way up. An interrupt Python
    drops is delivered again (:func:`_deliver_dropped_interrupts_again`).
    """
    _deliver_dropped_interrupts_again()
    try:
        main()
    except SystemExit as exc:
        if exc.code != EXIT_INTERRUPTED:
            raise
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while leaving must not print a traceback
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed or broken stream must not turn 130 into a traceback
                stream.flush()
        os._exit(EXIT_INTERRUPTED)


def _deliver_dropped_interrupts_again() -> None:
    """A KeyboardInterrupt that Python drops (raised where no exception can propagate: a weakref callback, a
    ``__del__``) is raised again in the main thread a moment later, once that callback has returned; other dropped
    exceptions go to the hook that was there before."""
    previous = sys.unraisablehook

    def hook(unraisable: UnraisableHookArgs) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            # not from inside the hook: an interrupt raised here would be dropped again
            threading.Timer(0.01, _thread.interrupt_main).start()
            return
        previous(unraisable)

    sys.unraisablehook = hook


@contextlib.contextmanager
def _library_logs_as_warnings() -> Iterator[None]:
    """Print the warnings and errors that libraries log (transformers, huggingface_hub, datasets, open_clip, the
    root logger) as vlaudit's own one-line ``warning:``, instead of Python's ``ERROR:root:`` lines and
    transformers' ``[transformers] …`` blocks (``commands/_logs.py`` routes them here)."""
    class OneLine(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            source = "" if record.name == "root" else f"{record.name}: "
            console = Console(stderr=True)  # a terminal: wrapped between words; piped: one line
            console.print(Text("warning: ", style="bold yellow") + Text(source + one_line(record.getMessage())),
                          soft_wrap=not console.is_terminal)

    with library_logs_to(OneLine(level=logging.WARNING)):
        yield


def _click_message(exc: typer.TyperException) -> str:
    """click's usage error as one line (click prints the usage, a hint and ``Error: …`` on three): its message
    and where the command's options are listed."""
    message: str = exc.format_message()
    context = getattr(exc, "ctx", None)
    if context is not None and context.command.get_help_option(context) is not None:
        message += f" (see '{context.command_path} --help')"
    return message


def _error_line(message: str, console: Console | None = None) -> None:
    """vlaudit's one error line: a message that spans lines (a library's exception text) is folded. Piped or
    captured it stays one physical line (for logs and greps); in a terminal it wraps between words at the
    terminal's width, never inside a word the way a terminal folds a long line ("percep/tion")."""
    console = console or Console(stderr=True)
    line = Text("error: ", style="bold red") + Text(one_line(message))
    if console.is_terminal:
        console.print(line, overflow="fold")  # words whole; only a word wider than the screen is folded
    else:
        console.print(line, soft_wrap=True)


if __name__ == "__main__":
    run()
