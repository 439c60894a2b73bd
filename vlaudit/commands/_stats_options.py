"""``@stats_options(...)``: the statistics flags of every command that resamples, built from one record,
:class:`vlaudit.StatsOptions` — the one place ``--seed``, ``--level``, ``--resamples``, ``--cluster``,
``--permutations`` and ``--controls`` are declared.

A command names the record's fields it takes and declares one parameter ``stats: vlaudit.StatsOptions =
STATS`` in their place; every command takes the fields every resampling command has (``--resamples``,
``--seed``, and any field added to the record without ``"some": True`` in its metadata), named or not. The
decorator rewrites its ``__signature__`` so that typer shows one option per field, in the record's order,
where ``stats`` stood: its flag, help, range and metavar from the field's
``metadata``, its default from the field (a comma list for ``--controls``), or the command's own default where
its setting differs (``defaults={"seed": settings.CYCLE_BOOTSTRAP_SEED}``), a narrower lower bound
(``minimums``) and, only where a flag means something more in that command, one sentence appended to the
record's help (``more_help``). At call time the flags become one record (a value it refuses is a usage error
naming the flag, exit 2, before any work) and the command receives ``stats``.

It stacks with ``@model_options`` in either order: each reads the signature the other wrote.
``command.__stats_options__`` holds the names of the fields it takes, for the checks (tests/test_stats_options.py).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import typer

import vlaudit
from vlaudit.errors import InputError

F = TypeVar("F", bound=Callable[..., Any])

#: the placeholder default of a command's ``stats`` parameter, which the decorator replaces by the flags
STATS: Any = None


def stats_flag(name: str) -> str:
    """The flag of field ``name`` of :class:`vlaudit.StatsOptions` (``seed`` → ``--seed``)."""
    return str(next(f for f in dataclasses.fields(vlaudit.StatsOptions) if f.name == name).metadata["flag"])


def _cli_value(value: object) -> object:
    """A field's default as the command line writes it: a tuple (``controls``) as its comma list."""
    return ",".join(map(str, value)) if isinstance(value, tuple) else value


def _option(field: dataclasses.Field[Any], default: object, minimum: float | None, more: str | None) -> Any:
    meta = field.metadata
    extra = {key: meta[key] for key in ("max", "metavar") if key in meta}
    low = meta.get("min") if minimum is None else minimum
    if low is not None:
        extra["min"] = low
    help_text = str(meta["help"]) if more is None else f"{meta['help']} {more}"
    return typer.Option(_cli_value(default), str(meta["flag"]), help=help_text, **extra)


def _annotation(hint: object) -> object:
    """The type typer parses a field's flag as: a tuple field (``controls``) is one comma-separated text."""
    return str if typing.get_origin(hint) is tuple else hint


def _value(hint: object, given: object) -> object:
    """A flag's value as the record's field takes it: a comma list → a tuple of names."""
    if typing.get_origin(hint) is tuple and isinstance(given, str):
        return tuple(part for part in given.split(",") if part.strip())
    return given


def stats_options(*names: str, defaults: Mapping[str, object] | None = None,
                  minimums: Mapping[str, float] | None = None,
                  more_help: Mapping[str, str] | None = None) -> Callable[[F], F]:
    """The flags of the :class:`vlaudit.StatsOptions` fields ``names`` (and of every field without ``"some"``
    in its metadata) for a command whose parameter ``stats`` receives the record; ``defaults`` / ``minimums`` /
    ``more_help``: a field's default, lower bound or an extra help sentence in this command."""
    record = vlaudit.StatsOptions
    fields = {f.name: f for f in dataclasses.fields(record)}
    hints = typing.get_type_hints(record)
    defaults, minimums, more_help = dict(defaults or {}), dict(minimums or {}), dict(more_help or {})
    wrong = sorted((set(names) | set(defaults) | set(minimums) | set(more_help)) - set(fields))
    if wrong or len(set(names)) != len(names):
        raise TypeError(f"stats_options{names}: unknown or repeated fields {wrong}")
    taken = tuple(name for name, f in fields.items() if name in names or not f.metadata.get("some"))
    unnamed = sorted((set(defaults) | set(minimums) | set(more_help)) - set(taken))
    if unnamed:
        raise TypeError(f"stats_options{names}: settings of fields the command does not take: {unnamed}")

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        if "stats" not in signature.parameters:
            raise TypeError(f"{command.__name__} takes no 'stats' parameter")
        clash = set(signature.parameters) & set(taken)
        if clash:
            raise TypeError(f"{command.__name__} already has parameters {sorted(clash)}")
        kind = signature.parameters["stats"].kind
        options = [inspect.Parameter(name, kind, annotation=_annotation(hints[name]),
                                     default=_option(fields[name], defaults.get(name, fields[name].default),
                                                     minimums.get(name), more_help.get(name)))
                   for name in taken]
        parameters: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            parameters.extend(options if parameter.name == "stats" else [parameter])

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            values: dict[str, Any] = {name: _value(hints[name], kwargs.pop(name)) for name in taken}
            try:
                stats = record(**values)
            except InputError as error:  # the record's own refusal, worded as typer words a bad flag value
                flag = error.field or "stats"
                raise typer.BadParameter(str(error).removeprefix(f"field '{flag}': "), param_hint=flag) from None
            return command(*args, stats=stats, **kwargs)

        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]  # what typer reads
        run.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": signature.return_annotation}
        run.__stats_options__ = taken  # type: ignore[attr-defined]  # read by the flag checks
        return typing.cast(F, run)

    return decorate
