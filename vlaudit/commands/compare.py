"""``vlaudit compare vca`` and ``vlaudit compare cycles``: paired comparison of models on the same items."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import compare_app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import print_wrapped, show
from vlaudit.commands._stats_options import STATS, stats_options
from vlaudit.settings import CYCLE_TIE_TOL, MIN_CYCLES

_PLOT = typer.Option(True, "--plot/--no-plot", help="Write the pairwise matrix PNGs (> 2 models).")


@compare_app.command("vca")
@stats_options("controls", "resamples", "seed", "level", "permutations", "cluster")
def compare_vca(
    runs: list[Path] = typer.Argument(..., help="Two or more vca score run folders, report folders inside "
                                                "them, or MARGINS files (one per model)."),
    out: Path = out_folder_option(help="Output folder (compare.json, comparisons.csv, leaderboard.csv, "
                                       "pairwise PNGs)."),
    stats: vlaudit.StatsOptions = STATS,
    plot: bool = _PLOT,
) -> None:
    """Is model A's visual credit really higher than B's on the same items? Paired differences of Acc, Dep,
    D-CC, C-U, Strict (and the relation axis) with paired cluster-bootstrap intervals, exact McNemar or
    cluster permutation p-values, Holm-adjusted within each family; a leaderboard with more than two models."""
    compared = vlaudit.compare_vca(runs, out=out, stats=stats, plot=plot)
    show(vlaudit.compare_view(compared.comparison))
    print_wrapped(f"wrote {out / 'compare.json'} and CSV tables in {out}")


def _named_scores(values: list[str]) -> dict[str, Path]:
    named: dict[str, Path] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise typer.BadParameter(f"{value!r}: give NAME=SCORES_FILE", param_hint="--scores")
        if name in named:
            raise typer.BadParameter(f"the name {name!r} is given twice", param_hint="--scores")
        named[name] = Path(path)
    return named


@compare_app.command("cycles")
@stats_options("resamples", "seed", "level", "permutations", "cluster")
def compare_cycles(
    cycles: Path = typer.Option(..., "--cycles", help="Cycles table (JSONL or Parquet), one row per block."),
    scores: list[str] = typer.Option(..., "--scores", metavar="NAME=FILE",
                                     help="A model's scores table (image_id, caption_id, score); repeat for "
                                          "each model (two or more)."),
    out: Path = out_folder_option(help="Output folder (compare_cycles.json, comparisons.csv, leaderboard.csv, "
                                       "pairwise PNGs)."),
    tol: float = typer.Option(CYCLE_TIE_TOL, "--tol", min=0.0, help="|Δ| ≤ tol is a tie (credit ½)."),
    min_cycles: int = typer.Option(MIN_CYCLES, "--min-cycles", min=1,
                                   help="A split's family with fewer cycles is not compared."),
    stats: vlaudit.StatsOptions = STATS,
    plot: bool = _PLOT,
) -> None:
    """ΔCycleAcc per family and split (never pooled) with a paired bootstrap over cycles, the exact sign-flip test
    on the per-cycle credit differences and tie rates; Winoground / NaturalBench metric differences on 2×2 cycles."""
    compared = vlaudit.compare_cycles(cycles, _named_scores(scores), out=out, tol=tol, min_cycles=min_cycles,
                                      stats=stats, plot=plot)
    show(vlaudit.compare_cycles_view(compared.comparison))
    print_wrapped(f"wrote {out / 'compare_cycles.json'} and CSV tables in {out}")
