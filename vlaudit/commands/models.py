"""``vlaudit models tiny`` (tiny random offline models), ``models list`` (registry prefixes) and
``models verbalizers`` (the answer token ids a yes/no backend reads, VCA §11) and ``models train-reference NAME``
(retrain a planted reference model)."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import models_app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say


@models_app.command("tiny")
def models_tiny(
    family: str = typer.Option(..., "--family", help=f"One of {', '.join(vlaudit.TINY_FAMILIES)}."),
    out: Path = out_folder_option(help="Folder to write the model + processor to."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the random weights."),
    tokenizer: str = typer.Option(None, "--tokenizer",
                                  help="local (tiny BPE trained here) or real (the family's real vocabulary, "
                                       "converted offline from files packages ship); default: local, "
                                       "real for ministral."),
    head_dim: int = typer.Option(None, "--head-dim", min=16, max=32,
                                 help="Attention head size of a tiny MLLM: 16 (default) or 32 (qwen2-vl, "
                                      "qwen2.5-vl: a model vLLM's CPU engine serves, whose attention takes "
                                      "head sizes 32, 64, 80, ...)."),
) -> None:
    """Write a tiny random model built from config (no network); load it with hf:DIR etc."""
    model = vlaudit.build_tiny_model(family, out=out, seed=seed, tokenizer=tokenizer, head_dim=head_dim)
    say(f"wrote tiny {family} model to {model.path}  (load it as {model.spec})")


@models_app.command("list")
def models_list() -> None:
    """List the model spec prefixes the registry serves."""
    registry = vlaudit.model_registry()
    print_table("model backends", list(registry.BACKEND_COLUMNS), registry.backends)
    say(f"tiny offline models: vlaudit models tiny --family FAMILY, one of {', '.join(registry.tiny_families)}")
    say(f"reference models (built offline on first use): {', '.join(registry.reference)}")
    say("trained reference models (weights shipped; `vlaudit models train-reference NAME` rebuilds one):")
    for name, description in registry.trained.items():
        say(f"  ref:{name}  {description}")
        say(f"    understands: {registry.understands[name]}")


@models_app.command("verbalizers")
def models_verbalizers(
    spec: str = typer.Argument(..., help="A yes/no model spec: hf:DIR, hf:ORG/NAME or ref:NAME."),
    interface: str = typer.Option("yesno,truefalse", "--interface", help="Comma list of yesno,truefalse,letter."),
) -> None:
    """Print the verbalizer token ids the backend reads after its real scoring prompt (VCA §11).

    For hf: specs only the model's config and tokenizer/processor are loaded, not its weights."""
    interfaces = [part.strip() for part in interface.split(",") if part.strip()]
    found = vlaudit.verbalizers(spec, interfaces)
    print_table(f"verbalizers — {found.spec} ({found.tokenizer_kind})",
                ["interface", "word", "continuation", "token id", "piece"], found.rows)
    ids = "/".join(str(token_id) for name in interfaces for token_id in found.ids[name])
    say(f"token ids ({', '.join(interfaces)}): {ids}")


@models_app.command("train-reference")
def models_train_reference(
    name: str = typer.Argument(..., help="A trained reference model, e.g. scene-clip-spatial (see models list)."),
    out: Path | None = out_folder_option(None, help="Folder for NAME.safetensors + NAME.json (default: the "
                                                    "package's weights folder, i.e. rebuild the shipped weights)."),
    short: bool = typer.Option(False, "--short", help="A seconds-long retrain (a smoke test, not the shipped one)."),
) -> None:
    """Retrain one planted reference model from its seed and log its training curve."""
    result = vlaudit.train_reference(name, out=out, short=short, log=typer.echo)
    curve = result.curve
    if curve:
        columns = list(curve[0])
        print_table(f"training curve — {name}", columns, [[row.get(c) for c in columns] for row in curve], digits=4)
    for path in result.files:
        say(f"wrote {path}")
