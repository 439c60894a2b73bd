"""``vlaudit cycles eval``: exact CycleAcc per family and split from a cycles table and a scores table."""

from __future__ import annotations

from pathlib import Path

import typer

from vlaudit.commands._apps import cycles_app
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._options import out_file_option
from vlaudit.report.console import print_cycle_table, print_unavailable

# The library, loaded on first use so that `vlaudit --help` stays light (see commands/_lazy.py).
metrics_cycles = lazy_module("vlaudit.metrics.cycles")
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
    min_cycles: int = typer.Option(30, "--min-cycles", min=0, help="A family with fewer cycles in any evaluated "
                                                                   "split is withdrawn whole (listed as "
                                                                   "unavailable)."),
    tol: float = typer.Option(1e-9, "--tol", min=0.0, help="Absolute tie tolerance on the float64 cycle contrast."),
    n_resamples: int = typer.Option(5000, "--resamples", min=1, help="Bootstrap resamples over cycles."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Also write OUT.png (CycleAcc per family and split "
                                                             "with CIs)."),
) -> None:
    """Exact CycleAcc (credit 1 if Δ > tol, ½ if |Δ| ≤ tol, 0 otherwise) per family and split, with ties and
    bootstrap CIs; splits are never pooled."""
    cycle_list = sources_cycle_tables.read_cycles(cycles)
    score_table = sources_cycle_tables.read_scores(scores)
    result = metrics_cycles.evaluate_cycles(cycle_list, score_table, splits=split or None, min_cycles=min_cycles, tol=tol,
                                            n_resamples=n_resamples, seed=seed, source=str(scores), cycles_source=str(cycles))
    warnings = []
    precision = metrics_cycles.reduced_precision(np.fromiter(score_table.values(), dtype=np.float64, count=len(score_table)))
    if precision is not None:
        warnings.append(f"{scores}: {precision}: the scores carry less than float64 precision, so additive "
                        "scores need not tie exactly and the additive audit (CycleAcc exactly ½) is not exact; "
                        "store scores as float64 (Parquet double, or CSV/JSONL with shortest-repr text)")
    result.update({"cycles": str(cycles), "scores": str(scores), "warnings": warnings})
    tables.write_json(out, result)
    print_cycle_table(result, title=f"CycleAcc — {cycles.name}")
    print_unavailable(result["unavailable"], min_cycles)
    for warning in warnings:
        typer.secho(f"warning: {warning}", fg="yellow", err=True)
    typer.echo(f"wrote {out}")
    if not result["families"]:
        typer.secho(f"error: no family reached --min-cycles {min_cycles} in every evaluated split "
                    f"{result['splits']}; lower --min-cycles or restrict --split", fg="red", err=True)
        raise typer.Exit(1)
    if plot:
        typer.echo(f"wrote {report_plots.plot_cycle_acc({scores.stem: result}, out.with_suffix('.png'))}")
