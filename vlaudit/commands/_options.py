"""Path options every command shares, checked by typer as the option is parsed — before any work starts.

``--out FOLDER`` must be a folder or creatable as one, ``--out FILE`` must not be a folder, and an input
folder (``--images``) must exist. A bad path is one :class:`~vlaudit.errors.InputError` line naming the
option (the CLI prints it in red and exits 2), never a traceback after a model has loaded. The checks
themselves are the facade's ``check_folder_target``/``check_file_target`` (``atomic_write`` applies the same ones to every output).
Keep this module light: it is imported by every command module.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import typer

import vlaudit
from vlaudit.errors import InputError
from vlaudit.settings import MIN_COVERAGE

FOLDER, FILE = "FOLDER", "FILE"


def _name(param: typer.CallbackParam) -> str:
    return max(param.opts, key=len) if param.opts else str(param.name)


def _out_folder(param: typer.CallbackParam, value: Path | None) -> Path | None:
    if value is not None:
        vlaudit.check_folder_target(value, field=_name(param))
    return value


def _out_file(param: typer.CallbackParam, value: Path | None) -> Path | None:
    if value is not None:
        vlaudit.check_file_target(value, field=_name(param))
    return value


def _in_folder(param: typer.CallbackParam, value: Path | None) -> Path | None:
    if value is not None and not value.is_dir():
        what = "is not a folder" if value.exists() else "folder not found"
        raise InputError(what, path=value, field=_name(param))
    return value


def out_folder_option(default: Any = ..., *, help: str) -> Any:
    """``--out FOLDER`` (created if missing); an existing file there is refused before the command runs."""
    return typer.Option(default, "--out", metavar=FOLDER, help=help, callback=_out_folder)


def out_file_option(default: Any = ..., *, help: str) -> Any:
    """``--out FILE``; an existing folder there (or a file where its folder should be) is refused at once."""
    return typer.Option(default, "--out", metavar=FILE, help=help, callback=_out_file)


def in_folder_option(name: str, default: Any = ..., *, help: str) -> Any:
    """An input folder option (e.g. ``--images``) that must exist."""
    return typer.Option(default, name, metavar=FOLDER, help=help, callback=_in_folder)


# ----------------------------------------------------------------------------------- where forward passes run


def _dtype_choice(param: typer.CallbackParam, value: str) -> str:
    vlaudit.parse_dtype(value, field=_name(param))  # an unknown spelling fails here, before anything loads
    return value  # as written: the run records what the API would be given (the backend resolves it)


def dtype_option() -> Any:
    """``--dtype``: one vocabulary for every backend (``vlaudit.parse_dtype``), checked as parsed."""
    return typer.Option("auto", "--dtype", callback=_dtype_choice, help=vlaudit.DTYPE_HELP)


def min_coverage_option() -> Any:
    """``--min-coverage``: the share of a run's records that must be scored for its numbers to count as a
    result (``vlaudit.results.vca.coverage``); below it the command writes its files and exits 1."""
    return typer.Option(MIN_COVERAGE, "--min-coverage", min=0.0, max=1.0,
                        help="Share of the records asked (per dataset, context and interface) that must be scored; "
                             "below it the run is not a result: its files say so and the command exits 1 (vca "
                             "score refuses before the model loads when the images alone rule it out). 0 accepts "
                             "any run.")


def _executor_choice(param: typer.CallbackParam, value: str) -> str:
    if value not in ("local", "ray"):
        raise InputError(f"unknown executor {value!r}; use local or ray", field=_name(param))
    return value


def executor_option() -> Any:
    """``--executor local|ray``: this process, or Ray actors holding one model replica each."""
    return typer.Option("local", "--executor", callback=_executor_choice,
                        help="local (this process) or ray (actors, one model replica each; "
                             "pip install 'vlaudit[ray]').")


def ray_address_option() -> Any:
    return field_option(vlaudit.RayOptions, "address")


def ray_workers_option() -> Any:
    return field_option(vlaudit.RayOptions, "workers")


def ray_gpus_option() -> Any:
    return field_option(vlaudit.RayOptions, "gpus_per_worker")


def ray_threads_option() -> Any:
    return field_option(vlaudit.RayOptions, "threads_per_worker")


def field_option(options_class: type, name: str) -> Any:
    """The option of one field of a backend's options class (e.g. ``vlaudit.HfOptions``), built from the
    field: its ``metadata`` flag, help and range, and the field's default — so a flag and the option it sets
    cannot drift apart."""
    field = {f.name: f for f in dataclasses.fields(options_class)}[name]
    meta = field.metadata
    extra = {"min": meta["min"]} if "min" in meta else {}
    return typer.Option(field.default, str(meta["flag"]), help=str(meta["help"]), **extra)


def parse_base_llms(values: list[str]) -> dict[str, str]:
    """``--base-llm`` values (``LLM`` for every LVLM, or ``LVLM=LLM``) → LVLM (``*`` for every one) → LLM."""
    named: dict[str, str] = {}
    for value in values:
        lvlm, _, llm = value.rpartition("=") if "=" in value else ("*", "", value)
        if not lvlm.strip() or not llm.strip():
            raise typer.BadParameter(f"expected LLM or LVLM=LLM, got {value!r}", param_hint="--base-llm")
        if named.get(lvlm.strip(), llm.strip()) != llm.strip():
            raise typer.BadParameter(f"two base LLMs for {lvlm.strip()!r}", param_hint="--base-llm")
        named[lvlm.strip()] = llm.strip()
    return named
