"""``vlaudit giveaway``: what a benchmark gives away — text lints, the order-blind ceiling, blind baselines under
its own metric, the blind-filtered subset (:func:`vlaudit.benchmark_giveaway`)."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import show
from vlaudit.commands._say import say, warn
from vlaudit.commands._stats_options import STATS, stats_options


@app.command("giveaway")
@stats_options("resamples", "seed", minimums={"resamples": 10})
def giveaway(
    files: list[Path] | None = typer.Argument(None, help="Benchmark files (one format for all); none with --vca "
                                                         "alone."),
    out: Path = out_folder_option(help="Folder for giveaway.json, giveaway.csv, STEM.items.csv and "
                                       "STEM.filtered.jsonl."),
    fmt: str = typer.Option("auto", "--format", help="A registered suite name, or auto, table, sugarcrepe, "
                            "whatsup-controlled, whatsup-spatial, cycles, winoground, naturalbench, blocks, "
                            "vl-checklist, items (vlaudit's items JSONL)."),
    lm: str | None = typer.Option(None, "--lm", help="A text-only causal LM, hf-lm:PATH_OR_NAME: log p(caption), "
                                  "raw and per token, as blind baselines."),
    classifier: bool = typer.Option(True, "--classifier/--no-classifier", help="The cross-fitted caption-only "
                                    "classifier (bag of words + length, logistic regression)."),
    folds: int = typer.Option(5, "--folds", min=2, help="Cross-fitting folds of the classifier (over items)."),
    scores: Path | None = typer.Option(None, "--scores", help="A model's scores table (image_id, caption_id, "
                                       "score): its metric on the full vs the blind-filtered set, paired."),
    vca: list[Path] = typer.Option([], "--vca", help="A vca score run folder or margins file of an MLLM "
                                   "benchmark: its text-only context read as the blind baseline (repeatable; default: none)."),
    batch_size: int = typer.Option(16, "--batch-size", min=1, help="Captions per LM forward."),
    device: str = typer.Option("cpu", "--device", help="Device of the LM (cpu, cuda, cuda:1)."),
    stats: vlaudit.StatsOptions = STATS,
) -> None:
    """What a benchmark gives away to a model that never looks at the image: text lints, blind baselines, the
    blind-filtered subset.

    The lints: role-aware BoW-identical negatives, unigram TV, length difference, one-side tokens, duplicates,
    and the order-blind ceiling. The blind baselines (a caption-only classifier, --lm a causal LM's log p, --vca
    an MLLM run's text-only context) are scored under the benchmark's own metric."""
    result = vlaudit.benchmark_giveaway(files or [], out=out, fmt=fmt, lm=lm, vca=vca, classifier=classifier,
                                        folds=folds, scores=scores, batch_size=batch_size, device=device,
                                        stats=stats)
    show(vlaudit.giveaway_view(result))
    for warning in result.warnings:
        warn(warning)
    say(f"wrote {out / 'giveaway.json'}, {out / 'giveaway.csv'} and the per-file items tables")
