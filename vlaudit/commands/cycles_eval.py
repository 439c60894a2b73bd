"""``vlaudit cycles eval``: exact CycleAcc per family and split from a cycles table and a scores table."""

from __future__ import annotations

from pathlib import Path
from warnings import catch_warnings, simplefilter

import typer

from vlaudit.commands._apps import cycles_app
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._options import out_file_option
from vlaudit.errors import InputError
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    CYCLE_BOOTSTRAP_SEED,
    CYCLE_TIE_TOL,
    MIN_CYCLES,
    NATURALBENCH_YES_THRESHOLD,
)

# The library, loaded on first use so that `vlaudit --help` stays light (see commands/_lazy.py).
report_console = lazy_module("vlaudit.report.console")
metrics_cycles = lazy_module("vlaudit.metrics.cycles")
metrics_two_by_two = lazy_module("vlaudit.metrics.two_by_two")
np = lazy_module("numpy")
report_plots = lazy_module("vlaudit.report.plots")
sources_cycle_tables = lazy_module("vlaudit.sources.cycle_tables")
tables = lazy_module("vlaudit.tables")


@cycles_app.command("eval")
def cycles_eval(
    cycles: Path = typer.Option(..., "--cycles", help="Cycles table (JSONL or Parquet), one row per block."),
    scores: Path = typer.Option(..., "--scores", help="Scores (CSV, JSONL or Parquet): image_id, caption_id, score."),
    out: Path = out_file_option(help="Where to write the JSON result."),
    split: list[str] = typer.Option(None, "--split", help="Evaluate only this split (repeatable; cycles without a "
                                                          "split are 'unsplit'). Default: every split, each "
                                                          "reported on its own."),
    min_cycles: int = typer.Option(MIN_CYCLES, "--min-cycles", min=0,
                                   help="A family with fewer val cycles than this (§D.5; every evaluated split when "
                                        "the cycles have no val split) is withdrawn whole (listed as unavailable)."),
    tol: float = typer.Option(CYCLE_TIE_TOL, "--tol", min=0.0, help="Absolute tie tolerance on the float64 cycle contrast."),
    n_resamples: int = typer.Option(BOOTSTRAP_RESAMPLES, "--resamples", min=1, help="Bootstrap resamples over cycles."),
    seed: int = typer.Option(CYCLE_BOOTSTRAP_SEED, "--seed", help="Bootstrap seed."),
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
    cycle_list = sources_cycle_tables.read_cycles(cycles)
    score_table = sources_cycle_tables.read_scores(scores)
    with catch_warnings(record=True) as caught:  # every warning lands in eval.json and prints as one line
        simplefilter("always")
        result = metrics_cycles.evaluate_cycles(cycle_list, score_table, splits=split or None, min_cycles=min_cycles, tol=tol,
                                                n_resamples=n_resamples, seed=seed, source=str(scores), cycles_source=str(cycles))
        result["benchmarks"] = metrics_two_by_two.benchmark_metrics(cycle_list, score_table, splits=result["splits"],
                                                                    min_cycles=min_cycles, tol=tol, n_resamples=n_resamples, seed=seed,
                                                                    threshold=yes_threshold, source=str(scores))
    notes = list(result["warnings"])
    notes += [text for text in (" ".join(str(w.message).split()) for w in caught) if text not in notes]
    warnings = [f"{scores}: {note}" for note in notes]
    precision = metrics_cycles.reduced_precision(np.fromiter(score_table.values(), dtype=np.float64, count=len(score_table)))
    if precision is not None:
        warnings.append(f"{scores}: {precision}: the scores carry less than float64 precision, so additive "
                        "scores need not tie exactly and the additive audit (CycleAcc exactly ½) is not exact; "
                        "store scores as float64 (Parquet double, or CSV/JSONL with shortest-repr text)")
    result.update({"cycles": str(cycles), "scores": str(scores), "warnings": warnings})
    report_console.print_cycle_table(result, title=f"CycleAcc — {cycles.name}")
    report_console.print_unavailable(result["unavailable"], min_cycles)
    report_console.print_benchmark_tables(result["benchmarks"])
    for warning in warnings:
        typer.secho(f"warning: {warning}", fg="yellow", err=True)
    if not result["families"]:
        # nothing evaluated: no eval.json that a report would take for a result (exit 2, README "Exit codes")
        raise InputError(f"no family reached --min-cycles {min_cycles} (validation cycles) for splits "
                         f"{result['splits']}, so nothing was written; lower --min-cycles or restrict --split")
    tables.write_json(out, result)
    typer.echo(f"wrote {out}")
    if plot:
        typer.echo(f"wrote {report_plots.plot_cycle_acc({scores.stem: result}, out.with_suffix('.png'))}")
