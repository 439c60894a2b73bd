"""``vlaudit cycles eval``: exact CycleAcc per family from a cycles table and a scores table."""

from __future__ import annotations

from pathlib import Path

import typer

from vlaudit.commands._apps import cycles_app
from vlaudit.commands._options import out_file_option


@cycles_app.command("eval")
def cycles_eval(
    cycles: Path = typer.Option(..., "--cycles", help="Cycles table (JSONL or Parquet), one row per block."),
    scores: Path = typer.Option(..., "--scores", help="Scores (CSV, JSONL or Parquet): image_id, caption_id, score."),
    out: Path = out_file_option(help="Where to write the JSON result."),
    tol: float = typer.Option(1e-9, "--tol", min=0.0, help="Absolute tie tolerance on the float64 cycle contrast."),
    n_resamples: int = typer.Option(5000, "--resamples", min=1, help="Bootstrap resamples over cycles."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Also write OUT.png (CycleAcc per family with CIs)."),
) -> None:
    """Exact CycleAcc (credit 1 if Δ > tol, ½ if |Δ| ≤ tol, 0 otherwise) per family, with bootstrap CIs."""
    from vlaudit.metrics.cycles import evaluate_cycles
    from vlaudit.report.console import print_cycle_table
    from vlaudit.sources.cycle_tables import read_cycles, read_scores
    from vlaudit.tables import write_json

    cycle_list = read_cycles(cycles)
    result = evaluate_cycles(
        cycle_list, read_scores(scores), tol=tol, n_resamples=n_resamples, seed=seed, source=str(scores)
    )
    result["cycles"] = str(cycles)
    result["scores"] = str(scores)
    write_json(out, result)
    print_cycle_table(result, title=f"CycleAcc — {cycles.name}")
    typer.echo(f"wrote {out}")
    if plot:
        from vlaudit.report.plots import plot_cycle_acc

        typer.echo(f"wrote {plot_cycle_acc({scores.stem: result}, out.with_suffix('.png'))}")
