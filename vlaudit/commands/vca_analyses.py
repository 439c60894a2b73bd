"""``vlaudit vca validity|filter|proxies``: the VCA paper's §15, §16 and §18 analyses over cached margins.

Each reads one or more MARGINS tables (or ``vca score`` folders) holding several models, computes within
model, and writes JSON + CSV + a PNG into ``--out`` and prints the paper's tables.
"""

from __future__ import annotations

from pathlib import Path

import typer

from vlaudit.commands._apps import vca_app
from vlaudit.commands._options import out_folder_option, parse_controls

_RUNS = typer.Argument(..., help="MARGINS tables or `vca score` folders (several models; one run per model "
                                 "and dataset).")


def _scores(runs: list[Path], interface: str, controls: tuple[str, ...]) -> list:
    """Read the runs and compute their events; print each run's exclusion warnings (items lacking a headline
    control are excluded from every quantity and counted, never silently)."""
    from vlaudit.analysis.vca.common import load_runs, run_info, run_scores
    from vlaudit.sources.margins import normalize_interface

    scores = run_scores(load_runs(runs, normalize_interface(interface)), controls)
    infos = [run_info(s) for s in scores]
    typer.echo("runs: " + "; ".join(f"{i['model']} on {i['dataset']} (n={i['n']}, split {'+'.join(i['splits'])})"
                                    for i in infos))
    for s in scores:
        for warning in getattr(s.events, "warnings", []):
            typer.echo(f"warning: {warning}", err=True)
    return scores


def _out_dir(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)  # --out was checked as a folder target when parsed
    return out


@vca_app.command("validity")
def vca_validity(
    runs: list[Path] = _RUNS,
    out: Path = out_folder_option(help="Output folder (validity.json, CSV tables, validity.png)."),
    edits: Path | None = typer.Option(None, "--edits", help="edit_outcomes.csv of `vlaudit data edits analyze` "
                                                            "(or its folder): adds the Swap rows."),
    edit_items: Path | None = typer.Option(None, "--edit-items", help="The edits build's items.jsonl, when the "
                                                                      "outcomes carry no source_item_id."),
    edits_dataset: str | None = typer.Option(None, "--edits-dataset", help="Dataset the edits were built from "
                                                                           "(default: the one holding their sources)."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
    controls: str = typer.Option("text,blank", "--controls", help="Headline control contexts."),
    n_resamples: int = typer.Option(5000, "--resamples", min=1, help="Cluster-bootstrap resamples."),
    seed: int = typer.Option(20260719, "--seed", help="Seed of the bootstrap and the CV folds."),
    folds: int = typer.Option(5, "--folds", min=2, help="Folds of the shared-margin CV increment."),
    repeats: int = typer.Option(10, "--repeats", min=1, help="Repeats of the shared-margin CV increment."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write validity.png."),
) -> None:
    """External validity of the raw gap (VCA §15): standalone AUROC/AUPRC/H–L (SRC, Swap), confidence–VCA
    discordance, the shared-margin control and the edit-grouped incremental control."""
    from vlaudit.analysis.vca.common import join_edits, read_edit_outcomes
    from vlaudit.analysis.vca.validity import ValiditySettings, compute_validity
    from vlaudit.report.vca_analyses import print_validity, write_validity

    settings = ValiditySettings(controls=parse_controls(controls), n_resamples=n_resamples, seed=seed, folds=folds,
                                repeats=repeats)
    out = _out_dir(out)
    scores = _scores(runs, interface, settings.controls)
    joined = None
    if edits is not None:
        joined = join_edits(read_edit_outcomes(edits, edit_items), scores, dataset=edits_dataset, path=str(edits))
    result = compute_validity(scores, joined, settings)
    write_validity(out, result, plot=plot)
    print_validity(result)
    typer.echo(f"wrote {out / 'validity.json'} and CSV tables in {out}")


@vca_app.command("filter")
def vca_filter(
    runs: list[Path] = _RUNS,
    out: Path = out_folder_option(help="Output folder (filter.json, CSV tables, filter.png)."),
    coverage: str = typer.Option("25,50,75", "--coverage", help="Kept shares of groups (percent), comma-separated."),
    primary: float = typer.Option(50.0, "--primary", help="Coverage (percent) of the bootstrap differences."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
    controls: str = typer.Option("text,blank", "--controls", help="Headline control contexts."),
    n_resamples: int = typer.Option(5000, "--resamples", min=1, help="Relation-group bootstrap resamples."),
    seed: int = typer.Option(20260719, "--seed", help="Bootstrap seed."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write filter.png."),
) -> None:
    """Held-out benchmark filtering (VCA §16): Shortcut Score, VisNec-style, confidence and VCA panels built from
    the other models, evaluated on each held-out model (Acc, Blind Gap, Visual Gain, Dep)."""
    from vlaudit.analysis.vca.heldout_filter import FilterSettings, compute_filter
    from vlaudit.report.vca_analyses import print_filter, write_filter

    try:
        coverages = tuple(float(c) for c in coverage.split(",") if c.strip())
    except ValueError:
        raise typer.BadParameter(f"not a list of numbers: {coverage!r}", param_hint="--coverage") from None
    if not coverages or any(not 0 < c <= 100 for c in coverages) or not 0 < primary <= 100:
        raise typer.BadParameter("coverages are percentages in (0, 100]", param_hint="--coverage")
    settings = FilterSettings(coverages=coverages, primary=primary, n_resamples=n_resamples, seed=seed,
                              controls=parse_controls(controls))
    out = _out_dir(out)
    result = compute_filter(_scores(runs, interface, settings.controls), settings)
    write_filter(out, result, plot=plot)
    print_filter(result)
    typer.echo(f"wrote {out / 'filter.json'} and CSV tables in {out}")


@vca_app.command("proxies")
def vca_proxies(
    runs: list[Path] = _RUNS,
    out: Path = out_folder_option(help="Output folder (proxies.json, CSV tables, proxies.png)."),
    edits: Path | None = typer.Option(None, "--edits", help="edit_outcomes.csv of `vlaudit data edits analyze` "
                                                            "(or its folder): adds the Swap columns."),
    edit_items: Path | None = typer.Option(None, "--edit-items", help="The edits build's items.jsonl, when the "
                                                                      "outcomes carry no source_item_id."),
    edits_dataset: str | None = typer.Option(None, "--edits-dataset", help="Dataset the edits were built from."),
    meta: Path | None = typer.Option(None, "--meta", help="rel_meta_category_dict.txt: relation families for "
                                                          "runs without a meta_category column."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
    controls: str = typer.Option("text,blank", "--controls", help="Headline control contexts."),
    n_resamples: int = typer.Option(5000, "--resamples", min=1, help="Cluster-bootstrap resamples."),
    seed: int = typer.Option(20260719, "--seed", help="Bootstrap seed."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write proxies.png."),
) -> None:
    """Cached-context proxies and control robustness (VCA §18): Perceptual Score, permutation drop, VisNec-,
    FPVG-style, sufficiency/comprehensiveness vs the raw gap; control aggregation; control-set stability;
    relation families."""
    from vlaudit.analysis.vca.common import join_edits, read_edit_outcomes
    from vlaudit.analysis.vca.proxies import ProxySettings, compute_proxies
    from vlaudit.report.vca_analyses import print_proxies, write_proxies
    from vlaudit.sources.vsr import read_meta_categories

    settings = ProxySettings(controls=parse_controls(controls), n_resamples=n_resamples, seed=seed)
    out = _out_dir(out)
    scores = _scores(runs, interface, settings.controls)
    joined = None
    if edits is not None:
        joined = join_edits(read_edit_outcomes(edits, edit_items), scores, dataset=edits_dataset, path=str(edits))
    result = compute_proxies(scores, joined, settings, read_meta_categories(meta) if meta else None)
    write_proxies(out, result, plot=plot)
    print_proxies(result)
    typer.echo(f"wrote {out / 'proxies.json'} and CSV tables in {out}")
