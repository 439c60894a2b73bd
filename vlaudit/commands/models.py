"""``vlaudit models tiny`` (tiny random offline models), ``models list`` (registry prefixes) and
``models verbalizers`` (the answer token ids a yes/no backend reads, VCA §11) and ``models train-reference NAME``
(retrain a planted reference model)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from vlaudit.backends.registry import BACKENDS, load_backend, parse_spec, require_kind

# the builders' own family lists (both modules import nothing heavy at module level)
from vlaudit.backends.tiny_families import DUAL_FAMILIES, MLLM_FAMILIES
from vlaudit.commands._apps import models_app
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._say import say
from vlaudit.errors import InputError

# The library, loaded on first use so that `vlaudit --help` stays light; mypy reads the real modules
# (see commands/_lazy.py).
if TYPE_CHECKING:
    import vlaudit.backends.tiny_dual as backends_tiny_dual
    import vlaudit.backends.tiny_mllm as backends_tiny_mllm
    import vlaudit.reference.models as reference_models
    import vlaudit.report.console as report_console
else:
    report_console = lazy_module("vlaudit.report.console")
    backends_tiny_dual = lazy_module("vlaudit.backends.tiny_dual")
    backends_tiny_mllm = lazy_module("vlaudit.backends.tiny_mllm")
    reference_models = lazy_module("vlaudit.reference.models")


@models_app.command("tiny")
def models_tiny(
    family: str = typer.Option(..., "--family", help=f"One of {', '.join(MLLM_FAMILIES + DUAL_FAMILIES)}."),
    out: Path = out_folder_option(help="Folder to write the model + processor to."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the random weights."),
    tokenizer: str = typer.Option(None, "--tokenizer",
                                  help="local (tiny BPE trained here) or real (the family's real vocabulary, "
                                       "converted offline from files packages ship); default: local, "
                                       "real for ministral."),
) -> None:
    """Write a tiny random model built from config (no network); load it with hf:DIR etc."""
    if family in DUAL_FAMILIES:
        path = backends_tiny_dual.build_tiny_dual(family, out, seed=seed, tokenizer=tokenizer)
        prefix = "open_clip:local-dir:" if family == "open_clip" else "hf-clip:"
    elif family in MLLM_FAMILIES:
        path = backends_tiny_mllm.build_tiny_mllm(family, out, seed=seed, tokenizer=tokenizer)
        prefix = "hf:"
    else:
        raise InputError(f"unknown family {family!r}; available: {', '.join(MLLM_FAMILIES + DUAL_FAMILIES)}",
                         field="family")
    say(f"wrote tiny {family} model to {path}  (load it as {prefix}{path})")


@models_app.command("list")
def models_list() -> None:
    """List the model spec prefixes the registry serves."""
    report_console.print_table("model backends", ["spec", "serves"],
                [(f"{prefix}:<name>", desc) for prefix, (_, desc) in BACKENDS.items()])
    say(f"tiny offline models: vlaudit models tiny --family FAMILY, one of {', '.join(MLLM_FAMILIES + DUAL_FAMILIES)}")
    say(f"reference models (built offline on first use): {', '.join(f'ref:{n}' for n in reference_models.REFERENCE_MODELS)}")
    say("trained reference models (weights shipped; `vlaudit models train-reference NAME` rebuilds one):")
    for name, entry in reference_models.TRAINED_MODELS.items():
        say(f"  ref:{name}  {entry.description}")



@models_app.command("verbalizers")
def models_verbalizers(
    spec: str = typer.Argument(..., help="A yes/no model spec: hf:DIR, hf:ORG/NAME or ref:NAME."),
    interface: str = typer.Option("yesno,truefalse", "--interface", help="Comma list of yesno,truefalse."),
) -> None:
    """Print the verbalizer token ids the backend reads after its real scoring prompt (VCA §11).

    For hf: specs only the model's config and tokenizer/processor are loaded, not its weights."""
    interfaces = [part.strip() for part in interface.split(",") if part.strip()]
    require_kind(spec, "yesno", field="SPEC")
    # hf: specs load config + tokenizer only; other yes/no backends (ref:, tiny) load as they are
    light = {"weights": False} if parse_spec(spec).prefix == "hf" else {}
    backend = load_backend(spec, interfaces=interfaces, device="cpu", **light)
    resolved = backend.verbalizers  # empty for a backend without resolution details: ids only
    rows: list[tuple[Any, ...]] = []
    for name in interfaces:
        if name in resolved:
            rows.extend((name, v.word, repr(v.text), v.token_id, v.piece) for v in resolved[name])
        else:
            rows.extend((name, None, None, token_id, None) for token_id in backend.verbalizer_ids[name])
    report_console.print_table(f"verbalizers — {backend.spec} ({backend.tokenizer_kind})",
                ["interface", "word", "continuation", "token id", "piece"], rows)
    ids = "/".join(str(token_id) for name in interfaces for token_id in backend.verbalizer_ids[name])
    say(f"token ids ({', '.join(interfaces)}): {ids}")


@models_app.command("train-reference")
def models_train_reference(
    name: str = typer.Argument(..., help="A trained reference model, e.g. scene-clip-spatial (see models list)."),
    out: Path | None = out_folder_option(None, help="Folder for NAME.safetensors + NAME.json (default: the "
                                                    "package's weights folder, i.e. rebuild the shipped weights)."),
    short: bool = typer.Option(False, "--short", help="A seconds-long retrain (a smoke test, not the shipped one)."),
) -> None:
    """Retrain one planted reference model from its seed and log its training curve."""
    if name not in reference_models.TRAINED_MODELS:
        raise InputError(f"unknown trained reference model {name!r}; available: {', '.join(reference_models.TRAINED_MODELS)}",
                         field="NAME")
    if reference_models.TRAINED_MODELS[name].trainer is None:
        raise InputError(f"ref:{name} is a constructed mechanism with nothing to train", field="NAME")
    options = {"short": True} if short else {}
    result = reference_models.resolve(str(reference_models.TRAINED_MODELS[name].trainer))(name, out or reference_models.WEIGHTS_DIR, log=typer.echo, **options)
    curve = result.get("curve", [])
    if curve:
        columns = list(curve[0])
        report_console.print_table(f"training curve — {name}", columns, [[row.get(c) for c in columns] for row in curve], digits=4)
    for path in result.get("files", []):
        say(f"wrote {path}")
