"""The command tree as data: the generated CLI reference and the docs' shell-example checks read it.

Both walk the same click tree that typer builds from the registered commands, so the reference page and the
check that every documented ``vlaudit …`` line names real commands and options cannot drift from the CLI.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import typer

from vlaudit.commands import _all  # noqa: F401  (registers every command)
from vlaudit.commands._apps import app
from vlaudit.commands._help import polish

# typer ships its own copy of click (typer._click): recognise groups/options by shape, not by class.
Command = Any


def is_group(command: Command) -> bool:
    """A command that holds subcommands."""
    return isinstance(getattr(command, "commands", None), dict)


def is_option(param: Any) -> bool:
    """An ``--option`` (not a positional argument)."""
    return getattr(param, "param_type_name", "") == "option"


def root_command() -> Command:
    """The click group behind ``vlaudit`` with every command registered, its help polished
    (:func:`vlaudit.commands._help.polish`): what the ``vlaudit`` entry point runs."""
    return polish(typer.main.get_command(app))


def iter_commands(group: Command | None = None, prefix: tuple[str, ...] = ("vlaudit",)
                  ) -> Iterator[tuple[tuple[str, ...], Command]]:
    """Every command and group, depth first, with its full path (``("vlaudit", "cycles", "eval")``)."""
    group = group or root_command()
    yield prefix, group
    for name in sorted(group.commands):
        command = group.commands[name]
        if is_group(command):
            yield from iter_commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def option_names(command: Command) -> set[str]:
    """Every spelling of every option of ``command`` (``--out``, ``--plot``, ``--no-plot``, ``-h``...)."""
    names = {"--help"}
    for param in command.params:
        if is_option(param):
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


@dataclass(frozen=True)
class ParsedExample:
    """A documented command line resolved against the tree: the command path and the options it used."""

    path: tuple[str, ...]
    command: Command
    options: tuple[str, ...]


def parse_example(line: str) -> ParsedExample:
    """Resolve ``vlaudit A B --opt x ...`` to its command; raise ``ValueError`` naming what does not exist."""
    argv = shlex.split(line, comments=True)
    if not argv or argv[0] != "vlaudit":
        raise ValueError(f"not a vlaudit command line: {line!r}")
    node = root_command()
    path = ["vlaudit"]
    rest = argv[1:]
    while is_group(node) and rest and not rest[0].startswith("-"):
        name = rest.pop(0)
        if name not in node.commands:
            raise ValueError(f"{' '.join(path)} has no command {name!r} (has: {', '.join(sorted(node.commands))})")
        node = node.commands[name]
        path.append(name)
    if is_group(node) and not any(arg in ("--help", "-h") for arg in rest):
        raise ValueError(f"{' '.join(path)} is a group; the example names no command")
    known = option_names(node)
    used = tuple(arg.split("=", 1)[0] for arg in rest if arg.startswith("--") or arg == "-h")
    unknown = [opt for opt in used if opt not in known]
    if unknown:
        raise ValueError(f"{' '.join(path)} has no option {', '.join(unknown)}")
    return ParsedExample(tuple(path), node, used)


def shell_commands(text: str) -> list[str]:
    """The ``vlaudit …`` command lines in a shell snippet, continuation lines joined, comments dropped."""
    lines: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        lines.append(current.strip())
        current = ""
    commands = []
    for line in lines:
        for part in line.split("&&"):
            part = part.split(" | ")[0].strip()
            if part.startswith("vlaudit ") or part == "vlaudit":
                commands.append(part)
    return commands


def _option_row(param: Any) -> str:
    spellings = " / ".join(f"`{opt}`" for opt in (*param.opts, *param.secondary_opts))
    if param.is_flag and not param.secondary_opts:
        default = ""
    elif param.required:
        default = "required"
    else:
        default = "" if param.default in (None, "") else f"`{param.default}`"
    help_text = (param.help or "").replace("|", "\\|").replace("\n", " ")
    return f"| {spellings} | {default} | {help_text} |"


def render_markdown(sections: Sequence[tuple[tuple[str, ...], Command]] | None = None) -> str:
    """The CLI reference: one section per command with usage, help and an options table."""
    out: list[str] = []
    for path, command in sections or list(iter_commands()):
        if is_group(command):
            if len(path) > 1:
                out.append(f"## `{' '.join(path)}`\n\n{(command.help or '').strip()}\n")
            continue
        ctx = type(command).context_class(command, info_name=" ".join(path))
        usage = command.get_usage(ctx).replace("Usage: ", "")
        out.append(f"### `{' '.join(path)}`\n\n{(command.help or '').strip()}\n\n```text\n{usage}\n```\n")
        arguments = [p for p in command.params if getattr(p, "param_type_name", "") == "argument"]
        if arguments:
            out.append("Arguments: " + ", ".join(f"`{(p.name or '').upper()}`" for p in arguments) + "\n")
        options = [p for p in command.params if is_option(p)]
        panels = list(dict.fromkeys(getattr(p, "rich_help_panel", None) for p in options))  # None: every run's
        for panel in sorted(panels, key=lambda name: name is not None):
            if panel is not None:
                out.append(f"*{panel}*\n")
            out.append("| option | default | meaning |\n|---|---|---|")
            out.extend(_option_row(p) for p in options if getattr(p, "rich_help_panel", None) == panel)
            out.append("")
    return "\n".join(out)
