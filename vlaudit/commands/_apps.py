"""The command groups. Command modules register on these; keep imports here light (no numpy/torch)."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="vlaudit",
    help="Does a vision-language model use the pairing of image and text, or only its parts?",
    no_args_is_help=True, rich_markup_mode=None,
    add_completion=False,
    pretty_exceptions_enable=False,
)
cycles_app = typer.Typer(help="Counterfactual pairing cycles: build, audit, evaluate.", no_args_is_help=True, rich_markup_mode=None)
cycles_build_app = typer.Typer(help="Build exact cycles from annotations.", no_args_is_help=True, rich_markup_mode=None)
vca_app = typer.Typer(help="Visual Credit Audit: score yes/no margins and report credit.", no_args_is_help=True, rich_markup_mode=None)
data_app = typer.Typer(help="Benchmarks and controlled inputs (items tables, scenes, factorial, edits).",
                       no_args_is_help=True, rich_markup_mode=None)
experiment_app = typer.Typer(help="Cycle-paper experiments on frozen features: diagnostics, rank sweep, OE, "
                                    "transfer.", no_args_is_help=True, rich_markup_mode=None)
models_app = typer.Typer(help="Model helpers (tiny offline models, registry listing).", no_args_is_help=True, rich_markup_mode=None)

cycles_app.add_typer(cycles_build_app, name="build")
app.add_typer(cycles_app, name="cycles")
app.add_typer(vca_app, name="vca")
app.add_typer(data_app, name="data")
app.add_typer(models_app, name="models")
app.add_typer(experiment_app, name="experiment")
