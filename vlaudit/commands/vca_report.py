"""``vlaudit vca report``: the Visual Credit Audit over a cached MARGINS table."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import vca_app
from vlaudit.commands._options import min_coverage_option, out_folder_option, parse_base_llms
from vlaudit.commands._render import show
from vlaudit.commands._say import say
from vlaudit.commands._stats_options import STATS, stats_options
from vlaudit.errors import LowCoverageError


@vca_app.command("report")
@stats_options("controls", "resamples", "seed", "level", "cluster")
def vca_report(
    margins: Path = typer.Argument(..., help="A vca score run folder (its margins.parquet) or a MARGINS table "
                                             "(Parquet, CSV or JSONL; schema in vlaudit.sources.margins)."),
    out: Path = out_folder_option(help="Output folder (vca.json, CSV tables, items/groups, plot)."),
    stats: vlaudit.StatsOptions = STATS,
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write gap_hist.png."),
    base_llm: list[str] = typer.Option([], "--base-llm", show_default=False,
                                       help="MMStar's leakage ML: the model of the base LLM's text-only run (LLM, "
                                            "for every LVLM) or LVLM=LLM; repeatable. Default: none, so ML is "
                                            "not computed."),
    min_coverage: float = min_coverage_option(),
) -> None:
    """Visual Credit Audit of cached margins: Acc, Dep (G_img = r_o − max control r_c > 0), D-CC and C-U
    with paired bootstrap CIs per (model, dataset, interface); permutation, relation and robustness tables."""
    result = vlaudit.vca_report(margins, stats=stats, base_llm=parse_base_llms(base_llm), min_coverage=min_coverage)
    result.write(out, plot=plot)
    show(vlaudit.vca_report_view(result.report, title=f"Visual Credit Audit — {margins.name}"))
    say(f"wrote {out / 'vca.json'} and CSV tables in {out}")
    low = result.below_coverage
    if low:
        first = low[0].scoring
        assert first is not None
        more = f" (and {len(low) - 1} more run(s), listed in vca.json)" if len(low) > 1 else ""
        raise LowCoverageError(first.shortfall(low[0].name, min_coverage) + more)
