"""The command groups. Command modules register on these; keep imports here light (no numpy/torch).

Help is plain text (``rich_markup_mode=None``): it reads whole at 80 columns and shows brackets as written
(see :mod:`vlaudit.commands._help`).
"""

from __future__ import annotations

import typer

from vlaudit import __version__  # the lazy facade's version: nothing heavy

PLAIN = None  # typer's markup mode for plain-text help

app = typer.Typer(name="vlaudit", help="Does a vision-language model use the pairing of image and text, or only its "
                  "parts?", no_args_is_help=True, rich_markup_mode=PLAIN, add_completion=False,
                  pretty_exceptions_enable=False)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"vlaudit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="Print vlaudit's version and exit.")) -> None:
    """Does a vision-language model use the pairing of image and text, or only its parts?"""


def group(help: str) -> typer.Typer:
    """A command group with vlaudit's help conventions."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=PLAIN)


cycles_app = group("Counterfactual pairing cycles: build, audit, evaluate.")
cycles_build_app = group("Build exact cycles from annotations.")
vca_app = group("Visual Credit Audit: score yes/no margins and report credit.")
data_app = group("Benchmarks and controlled inputs (items tables, scenes, factorial, edits).")
experiment_app = group("Cycle-paper experiments on frozen features: diagnostics, rank sweep, OE, transfer.")
models_app = group("Model helpers (tiny offline models, registry listing).")
compare_app = group("Compare models on the same items: paired differences, tests, leaderboard.")
suite_app = group("Compositionality suites (ARO, VALSE, SugarCrepe, COLA and more) read as published: their "
                  "official figures beside exact cycles.")

cycles_app.add_typer(cycles_build_app, name="build")
app.add_typer(cycles_app, name="cycles")
app.add_typer(vca_app, name="vca")
app.add_typer(data_app, name="data")
app.add_typer(models_app, name="models")
app.add_typer(experiment_app, name="experiment")
app.add_typer(compare_app, name="compare")
app.add_typer(suite_app, name="suite")
