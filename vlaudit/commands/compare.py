"""``vlaudit compare vca`` and ``vlaudit compare cycles``: paired comparison of models on the same items."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import compare_app
from vlaudit.commands._options import out_folder_option, parse_controls
from vlaudit.commands._render import print_wrapped, show
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    COMPARE_PERMUTATIONS,
    CONFIDENCE_LEVEL,
    CYCLE_TIE_TOL,
    MIN_CYCLES,
    PRIMARY_CONTROLS,
)

# the options both comparisons share
_SEED = typer.Option(BOOTSTRAP_SEED, "--seed", min=0, help="Bootstrap and permutation seed.")
_LEVEL = typer.Option(CONFIDENCE_LEVEL, "--level", min=0.5, max=0.999, help="Confidence level of every interval.")
_PLOT = typer.Option(True, "--plot/--no-plot", help="Write the pairwise matrix PNGs (> 2 models).")
_CLUSTER_HELP = ("Resampling unit: the margins column whose equal values are resampled together (image, "
                 "item_id, group_id, ...); default: the unit the items declare (stem, edit, image).")


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
    seed: int = _SEED,
    level: float = _LEVEL,
    n_permutations: int = typer.Option(COMPARE_PERMUTATIONS, "--permutations", min=1,
                                       help="Sign flips of the paired cluster permutation test."),
    cluster: str | None = typer.Option(None, "--cluster", metavar="COLUMN", help=_CLUSTER_HELP),
    plot: bool = _PLOT,
) -> None:
    """Is model A's visual credit really higher than B's on the same items? Paired differences of Acc, Dep,
    D-CC, C-U, Strict (and the relation axis) with paired cluster-bootstrap intervals, exact McNemar or
    cluster permutation p-values, Holm-adjusted within each family; a leaderboard with more than two models."""
    compared = vlaudit.compare_vca(runs, out=out, controls=parse_controls(controls), n_resamples=n_resamples,
                                   seed=seed, level=level, n_permutations=n_permutations, cluster=cluster,
                                   plot=plot)
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
    n_resamples: int = typer.Option(BOOTSTRAP_RESAMPLES, "--resamples", min=1,
                                    help="Paired bootstrap resamples over cycles."),
    seed: int = _SEED,
    level: float = _LEVEL,
    n_permutations: int = typer.Option(COMPARE_PERMUTATIONS, "--permutations", min=1,
                                       help="Random sign flips where a test is not exact (ΔCycleAcc past "
                                            "exact enumeration; fractional 2×2 metrics)."),
    cluster: str | None = typer.Option(None, "--cluster", metavar="UNIT",
                                       help="Resampling unit: the cycle (default), image (cycles that share an "
                                            "image joined), two-way (intervals resample image_1 and image_2 "
                                            "independently; tests as image), image_1, image_2 or family."),
    plot: bool = _PLOT,
) -> None:
    """ΔCycleAcc per family and split (never pooled) with a paired bootstrap over cycles, the exact sign-flip test
    on the per-cycle credit differences and tie rates; Winoground / NaturalBench metric differences on 2×2 cycles."""
    compared = vlaudit.compare_cycles(cycles, _named_scores(scores), out=out, tol=tol, min_cycles=min_cycles,
                                      n_resamples=n_resamples, seed=seed, level=level,
                                      n_permutations=n_permutations, cluster=cluster, plot=plot)
    show(vlaudit.compare_cycles_view(compared.comparison))
    print_wrapped(f"wrote {out / 'compare_cycles.json'} and CSV tables in {out}")
