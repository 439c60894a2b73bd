"""``vlaudit compare vca``: paired comparison of models' Visual Credit Audits on the items they share."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import compare_app
from vlaudit.commands._options import out_folder_option, parse_controls
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    COMPARE_PERMUTATIONS,
    CONFIDENCE_LEVEL,
    PRIMARY_CONTROLS,
)


@compare_app.command("vca")
def compare_vca(
    runs: list[Path] = typer.Argument(..., help="Two or more vca score run folders, report folders inside "
                                                "them, or MARGINS files (one per model)."),
    out: Path = out_folder_option(help="Output folder (compare.json, comparisons.csv, leaderboard.csv, "
                                       "pairwise PNGs)."),
    controls: str = typer.Option(",".join(PRIMARY_CONTROLS), "--controls",
                                 help="Headline control contexts, comma-separated."),
    n_resamples: int = typer.Option(BOOTSTRAP_RESAMPLES, "--resamples", min=1,
                                    help="Paired clustered bootstrap resamples."),
    seed: int = typer.Option(BOOTSTRAP_SEED, "--seed", help="Bootstrap and permutation seed."),
    level: float = typer.Option(CONFIDENCE_LEVEL, "--level", min=0.5, max=0.999,
                                help="Confidence level of every interval."),
    n_permutations: int = typer.Option(COMPARE_PERMUTATIONS, "--permutations", min=1,
                                       help="Sign flips of the paired cluster permutation test."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write the pairwise matrix PNGs (> 2 models)."),
) -> None:
    """Is model A's visual credit really higher than B's on the same items? Paired differences of Acc, Dep,
    D-CC, C-U, Strict (and the relation axis) with paired clustered bootstrap intervals, exact McNemar or
    cluster permutation p-values, Holm-adjusted across the table; a leaderboard with more than two models."""
    vlaudit.compare_vca(runs, out=out, controls=parse_controls(controls), n_resamples=n_resamples, seed=seed,
                        level=level, n_permutations=n_permutations, plot=plot, show=True)
