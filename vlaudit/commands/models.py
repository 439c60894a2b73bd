"""``vlaudit models tiny`` (tiny random offline models), ``models list`` (registry prefixes) and
``models train-reference NAME`` (retrain a planted reference model)."""

from __future__ import annotations

from pathlib import Path

import typer

# the builders' own family lists (both modules import nothing heavy at module level)
from vlaudit.backends.tiny_dual import FAMILIES as DUAL_FAMILIES
from vlaudit.backends.tiny_mllm import MLLM_FAMILIES
from vlaudit.commands._apps import models_app


@models_app.command("tiny")
def models_tiny(
    family: str = typer.Option(..., "--family", help=f"One of {', '.join(MLLM_FAMILIES + DUAL_FAMILIES)}."),
    out: Path = typer.Option(..., "--out", help="Directory to write the model + processor to."),
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
    from vlaudit.backends.reference import REFERENCE_MODELS, TRAINED_MODELS

    typer.echo(f"reference models (built offline on first use): {', '.join(f'ref:{n}' for n in REFERENCE_MODELS)}")
    typer.echo("trained reference models (weights shipped; `vlaudit models train-reference NAME` rebuilds one):")
    for name, entry in TRAINED_MODELS.items():
        typer.echo(f"  ref:{name}  {entry.description}")


@models_app.command("train-reference")
def models_train_reference(
    name: str = typer.Argument(..., help="A trained reference model, e.g. scene-clip-spatial (see models list)."),
    out: Path = typer.Option(None, "--out", help="Folder for NAME.safetensors + NAME.json "
                             "(default: the package's weights folder, i.e. rebuild the shipped weights)."),
    short: bool = typer.Option(False, "--short", help="A seconds-long retrain (a smoke test, not the shipped one)."),
) -> None:
    """Retrain one planted reference model from its seed and log its training curve."""
    from vlaudit.backends.reference import TRAINED_MODELS, WEIGHTS_DIR, resolve
    from vlaudit.errors import InputError

    if name not in TRAINED_MODELS:
        raise InputError(f"unknown trained reference model {name!r}; available: {', '.join(TRAINED_MODELS)}",
                         field="NAME")
    from vlaudit.report.console import print_table

    if TRAINED_MODELS[name].trainer is None:
        raise InputError(f"ref:{name} is a constructed mechanism with nothing to train", field="NAME")
    options = {"short": True} if short else {}
    result = resolve(str(TRAINED_MODELS[name].trainer))(name, out or WEIGHTS_DIR, log=typer.echo, **options)
    curve = result.get("curve", [])
    if curve:
        columns = list(curve[0])
        print_table(f"training curve — {name}", columns, [[row.get(c) for c in columns] for row in curve], digits=4)
    for path in result.get("files", []):
        typer.echo(f"wrote {path}")
