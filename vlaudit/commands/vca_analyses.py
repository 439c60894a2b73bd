"""``vlaudit vca validity|filter|proxies``: the VCA paper's §15, §16 and §18 analyses over cached margins.

Each reads one or more MARGINS tables (or ``vca score`` folders) holding several models, computes within
model, and writes JSON + CSV + a PNG into ``--out`` and prints the paper's tables.
"""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import vca_app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import show
from vlaudit.commands._say import say
from vlaudit.commands._stats_options import STATS, stats_options
from vlaudit.settings import FILTER_COVERAGES, FILTER_PRIMARY_COVERAGE, HL_RESAMPLES

_RUNS = typer.Argument(..., help="MARGINS tables or `vca score` folders (several models; one run per model "
                                 "and dataset).")


def _warn(message: str) -> None:
    say(message, err=True)


def _out_dir(out: Path) -> Path:
    """``--out`` (checked as a folder target when parsed), not created here: the writers' atomic writes create
    it with the first result, so a run that fails before writing leaves no empty folder behind."""
    return out


@vca_app.command("validity")
@stats_options("controls", "resamples", "seed")
def vca_validity(
    runs: list[Path] = _RUNS,
    out: Path = out_folder_option(help="Output folder (validity.json, CSV tables, validity.png)."),
    edits: Path | None = typer.Option(None, "--edits", help="edit_outcomes.csv of `vlaudit data edits analyze` "
                                                            "(or its folder): adds the Swap rows (default: none)."),
    edit_items: Path | None = typer.Option(None, "--edit-items", help="The edits build's items.jsonl, when the "
                                                                      "outcomes carry no source_item_id (default: none)."),
    edits_dataset: str | None = typer.Option(None, "--edits-dataset", help="Dataset the edits were built from "
                                                                           "(default: the one holding their sources)."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
    stats: vlaudit.StatsOptions = STATS,
    hl_resamples: int = typer.Option(HL_RESAMPLES, "--hl-resamples", min=1,
                                     help="Resamples of the H–L (high-minus-low tertile) intervals."),
    folds: int = typer.Option(5, "--folds", min=2, help="Folds of the shared-margin CV increment."),
    repeats: int = typer.Option(10, "--repeats", min=1, help="Repeats of the shared-margin CV increment."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write validity.png."),
) -> None:
    """External validity of the raw gap (VCA §15): standalone AUROC/AUPRC/H–L (SRC, Swap), confidence–VCA
    discordance, the shared-margin control and the edit-grouped incremental control."""
    result = vlaudit.vca_validity(runs, out=_out_dir(out), edits=edits, edit_items=edit_items,
                                  edits_dataset=edits_dataset, interface=interface, stats=stats,
                                  hl_resamples=hl_resamples, folds=folds,
                                  repeats=repeats, plot=plot, log=say, warn=_warn)
    show(vlaudit.validity_view(result))
    say(f"wrote {out / 'validity.json'} and CSV tables in {out}")


@vca_app.command("filter")
@stats_options("controls", "resamples", "seed")
def vca_filter(
    runs: list[Path] = _RUNS,
    out: Path = out_folder_option(help="Output folder (filter.json, CSV tables, filter.png)."),
    coverage: str = typer.Option(",".join(f"{c:g}" for c in FILTER_COVERAGES), "--coverage", help="Kept shares of groups (percent), comma-separated."),
    primary: float = typer.Option(FILTER_PRIMARY_COVERAGE, "--primary", min=0.0, max=100.0, help="Coverage (percent) of the bootstrap differences."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
    stats: vlaudit.StatsOptions = STATS,
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write filter.png."),
) -> None:
    """Held-out benchmark filtering (VCA §16): Shortcut Score, VisNec-style, confidence and VCA panels built from
    the other models, evaluated on each held-out model (Acc, Blind Gap, Visual Gain, Dep)."""
    try:
        coverages = tuple(float(c) for c in coverage.split(",") if c.strip())
    except ValueError:
        raise typer.BadParameter(f"not a list of numbers: {coverage!r}", param_hint="--coverage") from None
    if not coverages or any(not 0 < c <= 100 for c in coverages) or not 0 < primary <= 100:
        raise typer.BadParameter("coverages are percentages in (0, 100]", param_hint="--coverage")
    result = vlaudit.vca_filter(runs, out=_out_dir(out), coverages=coverages, primary=primary, interface=interface,
                                stats=stats, plot=plot,
                                log=say, warn=_warn)
    show(vlaudit.filter_view(result))
    say(f"wrote {out / 'filter.json'} and CSV tables in {out}")


@vca_app.command("proxies")
@stats_options("controls", "resamples", "seed")
def vca_proxies(
    runs: list[Path] = _RUNS,
    out: Path = out_folder_option(help="Output folder (proxies.json, CSV tables, proxies.png)."),
    edits: Path | None = typer.Option(None, "--edits", help="edit_outcomes.csv of `vlaudit data edits analyze` "
                                                            "(or its folder): adds the Swap columns (default: none)."),
    edit_items: Path | None = typer.Option(None, "--edit-items", help="The edits build's items.jsonl, when the "
                                                                      "outcomes carry no source_item_id (default: none)."),
    edits_dataset: str | None = typer.Option(None, "--edits-dataset", help="Dataset the edits were built from (default: the one holding their "
                                                                           "sources)."),
    meta: Path | None = typer.Option(None, "--meta", help="rel_meta_category_dict.txt: relation families for "
                                                          "runs without a meta_category column (default: none)."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
    stats: vlaudit.StatsOptions = STATS,
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write proxies.png."),
) -> None:
    """Cached-context proxies and control robustness (VCA §18): Perceptual Score, permutation drop, VisNec-,
    FPVG-style, sufficiency/comprehensiveness vs the raw gap; control aggregation; control-set stability;
    relation families."""
    result = vlaudit.vca_proxies(runs, out=_out_dir(out), edits=edits, edit_items=edit_items,
                                 edits_dataset=edits_dataset, meta=meta, interface=interface,
                                 stats=stats, plot=plot,
                                 log=say, warn=_warn)
    show(vlaudit.proxies_view(result))
    say(f"wrote {out / 'proxies.json'} and CSV tables in {out}")
