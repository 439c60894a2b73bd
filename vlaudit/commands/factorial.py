"""``vlaudit vca factorial RUN_DIR...``: the evidence-source factorial analysis (VCA §10, Tables 5–8).

Several RUN_DIRs (one ``vlaudit vca score`` run per model) are analysed together: per-model rows plus the
pooled rows whose stem bootstrap keeps every model's records of a drawn stem.
"""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import vca_app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say, warn
from vlaudit.commands._stats_options import STATS, stats_options
from vlaudit.settings import FACTORIAL_BOOTSTRAP_SEED


def _pct(value: float | None) -> str:
    return "—" if value is None or value != value else f"{100 * value:.2f}"


def _ci(pair: tuple[float, float] | None) -> str:
    """``[lo, hi]`` in percent; "—" where not computable or zero-width (a bootstrap artefact, not certainty:
    every resample equals the sample; docs/concepts/statistics.md "How numbers print")."""
    if pair is None or pair[0] != pair[0] or pair[1] != pair[1]:
        return "—"
    if pair[1] - pair[0] <= 1e-12 * max(1.0, abs(pair[0]), abs(pair[1])):
        return "—"
    return f"[{100 * pair[0]:.2f}, {100 * pair[1]:.2f}]"


@vca_app.command("factorial")
@stats_options("resamples", "seed", defaults={"seed": FACTORIAL_BOOTSTRAP_SEED})
def vca_factorial(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR",
                                          help="Scoring run folders (with margins.parquet) or margins files; "
                                               "one per model, pooled together."),
    items: Path = typer.Option(None, "--items", help="The factorial items.jsonl (default: from the first run)."),
    out: Path = out_folder_option(None, help="Output folder (default: the first RUN_DIR/factorial)."),
    margins: Path = typer.Option(None, "--margins",
                                 help="Margins table of a single RUN_DIR (default RUN_DIR/margins.parquet)."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
    stats: vlaudit.StatsOptions = STATS,
) -> None:
    """C-U among correct agreement decisions, responsiveness, flips, neutral control, source effects."""
    first = run_dirs[0]
    out_dir = out if out is not None else (first if first.is_dir() else first.parent) / "factorial"
    run = vlaudit.factorial(run_dirs, out=out_dir, items=items, margins=margins, interface=interface,
                            stats=stats)
    result, pooled = run.factorial, run.factorial.pooled
    rows = [[m.model, m.correct, m.cu, f"{_pct(m.cu_rate)} {_ci(m.cu_rate_ci)}",
             f"{_pct(m.responsive_rate)} {_ci(m.responsive_rate_ci)}",
             f"{_pct(m.neutral_exceed_rate)} {_ci(m.neutral_exceed_rate_ci)}",
             f"{_pct(m.flip_rate)} {_ci(m.flip_rate_ci)}"] for m in result.models]
    rows.append(["pooled", pooled.correct, pooled.cu, f"{_pct(pooled.cu_rate)} {_ci(pooled.cu_rate_ci)}",
                 f"{_pct(pooled.responsive_rate)} {_ci(pooled.responsive_rate_ci)}",
                 f"{_pct(pooled.neutral_exceed_rate)} {_ci(pooled.neutral_exceed_rate_ci)}",
                 f"{_pct(pooled.flip_rate)} {_ci(pooled.flip_rate_ci)}"])
    print_table(f"Evidence-source factorial ({interface}; per model: Wilson intervals design-effect "
                f"corrected over the {result.stems} {result.unit}s; pooled: expanded percentile intervals "
                f"resample {result.stems} {result.unit} clusters; — where zero-width)",
                ["model", "correct n", "C-U n", "C-U %", "Resp. %", "N+ %", "Flip %"], rows)
    for warning in result.warnings:
        warn(warning)
    effect_rows = []
    for m in result.models:
        e, nested = m.effects, m.nested
        effect_rows.append([m.model, e["delta_v_pos"].mean, e["delta_v_neg"].mean, e["delta_v_none"].mean,
                            e["interaction"].mean, nested.image_tpr, nested.text_fpr,
                            nested.auroc_vca_correct, nested.auroc_confidence_correct])
    print_table("Source effects and nested validation", ["model", "ΔV(T+)", "ΔV(T−)", "ΔV(T∅)", "interaction",
                                                 "TPR", "FPR", "AUROC VCA", "AUROC conf."], effect_rows, 3)
    for path in run.files:
        say(f"wrote {path}")
