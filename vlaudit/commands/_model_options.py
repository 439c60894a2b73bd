"""``@model_options(...)``: a command's ``--model``, its backend flags and ``-o KEY=VALUE``, built from the
backends' options records — the one place a backend option is declared.

A command names the options classes it takes (``vlaudit.HfOptions``, ``vlaudit.VllmOptions``, ...) and the
:class:`vlaudit.RunOptions` fields it reads; the decorator rewrites the command's signature so typer shows
``--model``, one flag per field with a ``flag`` in its metadata (deduplicated by flag across the classes:
``--dtype`` and ``--system`` appear in several; the first class's help wins), the run flags, and a
repeatable ``-o/--model-option KEY=VALUE`` that reaches any field of the chosen backend's record, the API-only
ones (metadata ``flag`` None) included — as simonw/llm's ``llm -o KEY VALUE`` validates against the model's
``Options`` and inspect_ai's ``-M``. At call time the spec and the options become one
:class:`vlaudit.ModelRef` (:func:`vlaudit.model_ref`: an option of another backend set away from its default,
or an unknown ``-o`` key, is one line naming the backend and its options), and the run flags one
:class:`vlaudit.RunOptions`; the command receives ``model`` and ``run``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import typer

import vlaudit
from vlaudit.commands._options import dtype_option

F = TypeVar("F", bound=Callable[..., Any])

MODEL_OPTION_HELP = ("A backend option by its name, KEY=VALUE (repeatable), checked against the --model's "
                     "backend: any field of its options record (vlaudit.HfOptions, VllmOptions, EndpointOptions, "
                     "DualOptions, ...), the API-only ones included (e.g. -o attn_implementation=sdpa; default: none).")


def _hint(kind: type, name: str) -> Any:
    """The annotation typer reads for field ``name`` (a tuple field is a repeatable option: a list)."""
    hint = typing.get_type_hints(kind)[name]
    if typing.get_origin(hint) is tuple:
        return list[typing.get_args(hint)[0]]  # type: ignore[misc]  # a runtime-built generic alias, for typer
    return hint


def _option(kind: type, field: dataclasses.Field[Any], default: Any = dataclasses.MISSING,
            help: str | None = None) -> Any:
    meta = field.metadata
    flag = str(meta["flag"])
    if flag == "--dtype":
        return dtype_option()  # checked as parsed, before anything loads
    if set(typing.get_args(typing.get_type_hints(kind)[field.name])) == {bool, type(None)}:
        flag = f"{flag}/--no-{flag[2:]}"  # a three-way switch: on, off, or None (decided per run)
    extra = {"min": meta["min"]} if "min" in meta else {}
    value = field.default if default is dataclasses.MISSING else default
    return typer.Option(value, flag, help=help if help is not None else str(meta["help"]), **extra)


def _parameter(kind: type, field: dataclasses.Field[Any], **override: Any) -> inspect.Parameter:
    return inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=_option(kind, field, **override),
                             annotation=_hint(kind, field.name))


def backend_fields(classes: Sequence[type], only: Sequence[str] | None = None
                   ) -> dict[str, tuple[type, dataclasses.Field[Any]]]:
    """The fields with a flag of ``classes`` (``only``: of those names), by name, the first class declaring a
    flag winning."""
    chosen: dict[str, tuple[type, dataclasses.Field[Any]]] = {}
    flags: set[str] = set()
    for kind in classes:
        for field in dataclasses.fields(kind):
            flag = field.metadata.get("flag")
            if only is not None and field.name not in only:
                continue
            if flag and flag not in flags and field.name not in chosen:
                chosen[field.name] = (kind, field)
                flags.add(str(flag))
    return chosen


def _new_parameters(fn: Callable[..., Any], backend: Mapping[str, tuple[type, dataclasses.Field[Any]]],
                    run: Sequence[str], run_defaults: Mapping[str, tuple[Any, str]], model: Any, *,
                    run_name: str = "run", record: str | None = None, option_help: str = MODEL_OPTION_HELP
                    ) -> list[inspect.Parameter]:
    hints = typing.get_type_hints(fn)
    run_fields = {f.name: f for f in dataclasses.fields(vlaudit.RunOptions)}
    flags = [_parameter(kind, field) for kind, field in backend.values()]
    for name in run:
        default, help = run_defaults.get(name, (dataclasses.MISSING, None))
        flags.append(_parameter(vlaudit.RunOptions, run_fields[name], default=default, help=help))
    flags.append(inspect.Parameter("model_option", inspect.Parameter.KEYWORD_ONLY, annotation=list[str],
                                   default=typer.Option([], "-o", "--model-option", metavar="KEY=VALUE",
                                                        help=option_help)))
    out: list[inspect.Parameter] = []
    for p in inspect.signature(fn).parameters.values():
        if p.name == record:
            continue  # filled from the flags
        if p.name == "model":
            spec_hint = str if model.default is ... else str | None
            out.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY, default=model, annotation=spec_hint))
        elif p.name == run_name:
            out.extend(flags)
            flags = []
        else:
            out.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints.get(p.name, p.annotation)))
    return out + flags


def model_options(*classes: type, model_help: str, run: Sequence[str] = (), model_default: Any = ...,
                  run_defaults: Mapping[str, tuple[Any, str]] | None = None,
                  flags: Sequence[str] | None = None, run_name: str = "run", record: str | None = None,
                  option_help: str = MODEL_OPTION_HELP) -> Callable[[F], F]:
    """Give the decorated command ``--model`` (``model_help``; required unless ``model_default``), the flags of
    ``classes`` (``flags``: only the fields of those names; the others are reached by ``-o``) and
    ``-o/--model-option``, and the :class:`vlaudit.RunOptions` flags named in ``run`` (``run_defaults``: a
    field's default and help for this command, e.g. ``{"batch_size": (32, "...")}``).

    The command takes ``model`` (a :class:`vlaudit.ModelRef`, or None when no ``--model`` was given) and, if it
    names ``run``, ``run`` (a :class:`vlaudit.RunOptions`); the flags appear where ``run`` sits in its
    signature (at the end without one). ``command.__model_options__`` holds ``classes`` for the checks.

    ``run_name``: the parameter that takes the run options (for a command whose ``run`` is a run folder).
    ``record``: the flags and ``-o`` (``option_help``) fill one record of ``classes[0]``, passed as the
    parameter of that name (:func:`vlaudit.options_record`: an option it does not hold is one line), and
    ``model`` is the ``--model`` spec as given (``vca stability``: the settings of its second engine, not of
    the run's model)."""
    option = typer.Option(model_default, "--model", help=model_help)
    declared = backend_fields(classes, flags)
    backend = tuple(declared)

    def wrap(fn: F) -> F:
        takes_run = run_name in inspect.signature(fn).parameters
        parameters = _new_parameters(fn, declared, run, run_defaults or {}, option, run_name=run_name,
                                     record=record, option_help=option_help)

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            spec = kwargs.pop("model")
            given = {name: kwargs.pop(name) for name in backend}
            text = kwargs.pop("model_option") or []
            values = {name: kwargs.pop(name) for name in run}
            run_options = {run_name: vlaudit.RunOptions(**values)} if takes_run else {}
            if record is not None:
                made: Any = vlaudit.options_record(classes[0], given, text=text, names=backend)
                return fn(model=spec, **{record: made}, **run_options, **kwargs)
            ref = None if spec is None else vlaudit.model_ref(spec, given, text=text)
            return fn(model=ref, **run_options, **kwargs)

        command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]  # what typer reads
        command.__annotations__ = {p.name: p.annotation for p in parameters}
        command.__model_options__ = classes  # type: ignore[attr-defined]  # read by the flag checks
        return typing.cast(F, command)

    return wrap
