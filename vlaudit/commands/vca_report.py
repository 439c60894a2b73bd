"""``vlaudit vca report``: the Visual Credit Audit over a cached MARGINS table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from vlaudit.commands._apps import vca_app
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._options import out_folder_option, parse_controls
from vlaudit.commands._say import say
from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, PRIMARY_CONTROLS

# The library, loaded on first use so that `vlaudit --help` stays light; mypy reads the real modules
# (see commands/_lazy.py).
if TYPE_CHECKING:
    import vlaudit.analysis.vca.report as vca_report_lib
    import vlaudit.report.vca_tables as report_vca_tables
    import vlaudit.sources.margins as sources_margins
else:
    report_vca_tables = lazy_module("vlaudit.report.vca_tables")
    sources_margins = lazy_module("vlaudit.sources.margins")
    vca_report_lib = lazy_module("vlaudit.analysis.vca.report")


@vca_app.command("report")
def vca_report(
    margins: Path = typer.Argument(..., help="MARGINS table (Parquet, CSV or JSONL); schema in "
                                             "vlaudit.sources.margins."),
    out: Path = out_folder_option(help="Output folder (vca.json, CSV tables, items/groups, plot)."),
    controls: str = typer.Option(",".join(PRIMARY_CONTROLS), "--controls", help="Headline control contexts, comma-separated."),
    n_resamples: int = typer.Option(BOOTSTRAP_RESAMPLES, "--resamples", min=1, help="Bootstrap resamples (paired, clustered)."),
    seed: int = typer.Option(BOOTSTRAP_SEED, "--seed", min=0, help="Bootstrap seed."),
    level: float = typer.Option(CONFIDENCE_LEVEL, "--level", min=0.5, max=0.999, help="Confidence level of every interval."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write gap_hist.png."),
) -> None:
    """Visual Credit Audit of cached margins: Acc, Dep (G_img = r_o − max control r_c > 0), D-CC and C-U
    with paired bootstrap CIs per (model, dataset, interface); permutation, relation and robustness tables."""
    control_set = parse_controls(controls)
    runs = sources_margins.read_margins(margins)
    report = vca_report_lib.compute_report(runs, vca_report_lib.ReportSettings(controls=control_set, n_resamples=n_resamples, seed=seed,
                                                                               level=level))
    report_vca_tables.write_report_files(out, report, plot=plot)
    report_vca_tables.print_headline(report.runs, title=f"Visual Credit Audit — {margins.name}")
    report_vca_tables.print_axes(report)
    say(f"wrote {out / 'vca.json'} and CSV tables in {out}")
