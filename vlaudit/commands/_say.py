"""One line of a command's console output, wrapped to the terminal's width (everything printed reads
whole at 80 columns)."""

from __future__ import annotations

import shutil
import sys
import textwrap
from collections.abc import Mapping

import typer


def say(message: str, *, err: bool = False) -> None:
    """Print ``message``, each of its lines wrapped at the terminal's width (``COLUMNS``, else the terminal,
    else 80) between words, continuations indented two spaces past the line's own indent. A word is never
    cut: a path or a name wider than the terminal stays whole on a line of its own. ``error:`` and
    ``warning:`` lines wrap the same way in a terminal; piped (a log, a test) they stay one line each, so a
    log keeps one line per warning (as the CLI's own error line does)."""
    typer.echo("\n".join(_wrapped(message, err=err)), err=err)


def warn(message: str) -> None:
    """``warning: MESSAGE`` on stderr in yellow, wrapped as :func:`say` wraps it."""
    typer.secho("\n".join(_wrapped(f"warning: {message}", err=True)), fg="yellow", err=True)


def _terminal(err: bool) -> bool:
    """Whether the stream a line goes to is a terminal (a terminal would otherwise soft-wrap a long line
    mid-word)."""
    stream = sys.stderr if err else sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


def _wrapped(message: str, *, err: bool) -> list[str]:
    width = shutil.get_terminal_size().columns
    lines: list[str] = []
    for line in message.splitlines() or [""]:
        if len(line) <= width or (line.startswith(("error:", "warning:")) and not _terminal(err)):
            lines.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        lines += whole_words(line, width, indent)
    return lines


def whole_words(text: str, width: int, indent: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken only at spaces (continuations start with
    ``indent``): a name (a family, a path) is never cut, even where it alone is wider than the terminal."""
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [text]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 item``, ``2 items``: a count with its noun in the right number."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def images_line(images: Mapping[str, object]) -> str:
    """Where a release's embedded images went: written now, already in the folder before, and repeats of an
    image within the release (POPE asks several questions per image: not "already in" the folder)."""
    repeated = images.get("repeated")
    repeats = f", {counted(int(str(repeated)), 'repeat')} within the release" if repeated else ""
    return (f"images: {images['written']} written, {images['reused']} already in {images['folder']}{repeats} "
            "(give it as --images)")
