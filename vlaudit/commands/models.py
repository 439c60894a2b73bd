"""``vlaudit models tiny`` (tiny random offline models) and ``vlaudit models list`` (registry prefixes)."""

from __future__ import annotations

from pathlib import Path

import typer

# the builders' own family lists (both modules import nothing heavy at module level)
from vlaudit.backends.tiny_dual import FAMILIES as DUAL_FAMILIES
from vlaudit.backends.tiny_mllm import MLLM_FAMILIES
from vlaudit.commands._apps import models_app
from vlaudit.commands._options import out_folder_option


@models_app.command("tiny")
def models_tiny(
    family: str = typer.Option(..., "--family", help=f"One of {', '.join(MLLM_FAMILIES + DUAL_FAMILIES)}."),
    out: Path = out_folder_option(help="Folder to write the model + processor to."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random weights."),
) -> None:
    """Write a tiny random model built from config (local tokenizer, no network); load it with hf:DIR etc."""
    from vlaudit.errors import InputError

    if family in DUAL_FAMILIES:
        from vlaudit.backends.tiny_dual import build_tiny_dual

        path = build_tiny_dual(family, out, seed=seed)
        prefix = "open_clip:local-dir:" if family == "open_clip" else "hf-clip:"
    elif family in MLLM_FAMILIES:
        from vlaudit.backends.tiny_mllm import build_tiny_mllm

        path = build_tiny_mllm(family, out, seed=seed)
        prefix = "hf:"
    else:
        raise InputError(f"unknown family {family!r}; available: {', '.join(MLLM_FAMILIES + DUAL_FAMILIES)}",
                         field="family")
    typer.echo(f"wrote tiny {family} model to {path}  (load it as {prefix}{path})")


@models_app.command("list")
def models_list() -> None:
    """List the model spec prefixes the registry serves."""
    from vlaudit.backends.registry import BACKENDS
    from vlaudit.report.console import print_table

    print_table("model backends", ["spec", "serves"],
                [(f"{prefix}:<name>", desc) for prefix, (_, desc) in BACKENDS.items()])
    typer.echo(f"tiny offline models: vlaudit models tiny --family {{{','.join(MLLM_FAMILIES + DUAL_FAMILIES)}}}")
    from vlaudit.backends.reference import REFERENCE_MODELS

    typer.echo(f"reference models (built offline on first use): {', '.join(f'ref:{n}' for n in REFERENCE_MODELS)}")
