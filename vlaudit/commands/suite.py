"""``vlaudit suite list`` and ``vlaudit suite eval``: the compositionality suites, read as published and scored
as their authors score them, beside exact CycleAcc and the marginal audit."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import suite_app
from vlaudit.commands._console import print_suite_result, print_suites
from vlaudit.commands._model_options import model_options
from vlaudit.commands._options import in_folder_option, out_folder_option
from vlaudit.commands._say import say, warn
from vlaudit.commands._stats_options import STATS, stats_options
from vlaudit.errors import InputError
from vlaudit.settings import CYCLE_BOOTSTRAP_SEED, CYCLE_TIE_TOL


@suite_app.command("list")
def suite_list() -> None:
    """Every registered suite: its name, what its metric compares (i2t, t2i, both) and its official metric.
    docs/reference/suites.md gives each one's layout, tie rule and official source."""
    print_suites(vlaudit.suites())


def _option_value(text: str) -> object:
    """A reader option as typed on the command line: ``true``/``false`` a bool, an integer an int, a decimal a
    float, anything else the text (reader options are bools, ints and paths: ARO's ``seed``, VALSE's
    ``piece_folders``, VL-CheckList's ``corpus``)."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _options(values: list[str] | None) -> dict[str, object]:
    options: dict[str, object] = {}
    for value in values or []:
        name, sep, setting = value.partition("=")
        if not sep or not name.strip():
            raise InputError(f"expected NAME=VALUE, got {value!r}", field="--option")
        options[name.strip()] = _option_value(setting.strip())
    return options


@suite_app.command("eval")
@model_options(vlaudit.DualOptions, vlaudit.HfOptions, vlaudit.VllmOptions, vlaudit.EndpointOptions, flags=("dtype",),
               model_help="Dual encoder (hf-clip:, open_clip:, ref:scene-clip-bag, ...) or yes/no MLLM (hf:, vllm:, "
                          "ref:tiny-qwen2-vl, ...).",
               run=("batch_size", "chunk_size", "device"),
               run_defaults={"batch_size": (None, "Inputs per forward pass (default: 32 for a dual encoder, 8 for an "
                                                  "MLLM)."),
                             "chunk_size": (64, "MLLMs: unique queries per cache chunk.")})
@stats_options("resamples", "seed", defaults={"seed": CYCLE_BOOTSTRAP_SEED})
def suite_eval(
    *,  # the flags come by name (@model_options builds the signature typer reads)
    name: str = typer.Argument(..., help="The suite (see `vlaudit suite list`)."),
    file: Path = typer.Argument(..., help="The suite's file as published."),
    images: Path = in_folder_option("--images", help="Folder the suite's image paths are relative to."),
    model: vlaudit.ModelRef,
    out: Path = out_folder_option(help="Folder for suite.json, suite.csv, scores.parquet and the score run."),
    option: list[str] = typer.Option(None, "--option", metavar="NAME=VALUE",
                                     help="A reader option of the suite (repeatable)."),
    query: str = typer.Option(None, "--query", help="MLLMs: the question, one {caption} field (default: "
                                                    "'Does the caption \"{caption}\" describe the image?')."),
    run: vlaudit.RunOptions = vlaudit.RunOptions(),
    tol: float = typer.Option(CYCLE_TIE_TOL, "--tol", min=0.0, help="CycleAcc: |Δ| ≤ tol counts ½."),
    stats: vlaudit.StatsOptions = STATS,
    across: bool = typer.Option(True, "--across/--within-only", help="Also count the cycles two items complete "
                                                                      "(each other's negatives as positives)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a run with other arguments in OUT (an "
                                                             "MLLM's score cache is kept and reused)."),
) -> None:
    """The suite's official figures (its tie rule and aggregation), exact CycleAcc (½ for ties) over the cycles
    its items hold, and the marginal audit of its negatives; resumable (rerun to continue)."""
    result = vlaudit.evaluate_suite(name, file, images=images, model=model, out=out, query=query,
                                    options=_options(option), batch_size=run.batch_size,
                                    chunk_size=run.chunk_size, device=run.device, tol=tol, stats=stats,
                                    across=across, overwrite=overwrite)
    counts = ", ".join(f"{key} {value}" for key, value in result.counts.items())
    say(f"{result.suite}: {file.name}: {counts}")
    for note in result.notes:
        say(f"note: {note}")
    print_suite_result(result)
    for warning in result.warnings:
        warn(warning)
    say(f"wrote {out / 'suite.json'}, {out / 'suite.csv'} and {out / 'scores.parquet'}")
