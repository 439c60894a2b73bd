"""``vlaudit cycles eval``: exact CycleAcc per family and split from a cycles table and a scores table."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import cycles_app
from vlaudit.commands._console import print_unavailable
from vlaudit.commands._options import out_file_option
from vlaudit.commands._render import show
from vlaudit.commands._say import say, warn
from vlaudit.commands._stats_options import STATS, stats_options
from vlaudit.settings import CYCLE_BOOTSTRAP_SEED, CYCLE_TIE_TOL, MIN_CYCLES, NATURALBENCH_YES_THRESHOLD


@cycles_app.command("eval")
@stats_options("resamples", "seed", "cluster", defaults={"seed": CYCLE_BOOTSTRAP_SEED})
def cycles_eval(
    ctx: typer.Context,
    cycles: Path = typer.Option(..., "--cycles", help="Cycles table (JSONL or Parquet), one row per block."),
    scores: Path = typer.Option(..., "--scores", help="Scores (CSV, JSONL or Parquet): image_id, caption_id, score."),
    out: Path = out_file_option(help="Where to write the JSON result."),
    split: list[str] = typer.Option(None, "--split", help="Evaluate only this split (repeatable; cycles without a "
                                                          "split are 'unsplit'). Default: every split, each "
                                                          "reported on its own."),
    min_cycles: int = typer.Option(MIN_CYCLES, "--min-cycles", min=0,
                                   help="A family with fewer val cycles than this (§D.5; a test-only COCO build: the "
                                        "val cycles its metadata records; otherwise every evaluated split when the "
                                        "cycles have no val split) is withdrawn whole (listed as unavailable). Not "
                                        "given: the --min-cycles the cycles were built with (CYCLES.meta.json), "
                                        "else the default."),
    tol: float = typer.Option(CYCLE_TIE_TOL, "--tol", min=0.0, help="Absolute tie tolerance on the float64 cycle contrast."),
    stats: vlaudit.StatsOptions = STATS,
    yes_threshold: float = typer.Option(NATURALBENCH_YES_THRESHOLD, "--yes-threshold",
                                        help="NaturalBench blocks: the model answers Yes iff its score exceeds "
                                             "this (0 for the yes/no log-odds of `cycles score-mllm`)."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Also write OUT.png (CycleAcc per family and split "
                                                             "with CIs)."),
) -> None:
    """Exact CycleAcc (credit 1 if Δ > tol, ½ if |Δ| ≤ tol, 0 otherwise) per family and split, with ties and
    bootstrap CIs; splits are never pooled. Cycles from a 2×2 benchmark (`cycles build winoground|naturalbench|
    blocks`) also get the benchmark's own metrics (Winoground text/image/group; NaturalBench Acc, Q-Acc, I-Acc,
    G-Acc) per tag, with intervals, beside CycleAcc."""
    source = ctx.get_parameter_source("min_cycles")  # not given: the build's minimum (CYCLES.meta.json)
    given = source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")
    evaluation = vlaudit.evaluate_cycles(cycles, scores, splits=split or None, min_cycles=min_cycles if given else None, tol=tol,
                                         stats=stats, yes_threshold=yes_threshold)
    result = evaluation.evaluation
    show(vlaudit.cycle_table_view(result, title=f"CycleAcc — {cycles.name}"))
    evaluated = result.splits
    print_unavailable(result.unavailable, result.min_cycles, result.min_cycles_counted
                              or ("val" if "val" in evaluated else ", ".join(evaluated)))
    show(vlaudit.benchmark_tables_view(result.benchmark_entries))
    # written before the warnings: a write that fails is then the one line printed (a warning about figures
    # that were never saved would only stand in its way)
    written = evaluation.write(out, plot=plot)
    for warning in result.warnings:
        warn(warning)
    for path in written:
        say(f"wrote {path}")
