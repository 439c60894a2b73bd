"""``vlaudit features`` (dual-encoder embeddings over a cycles table) and ``vlaudit cycles zero-shot``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

import vlaudit
from vlaudit.commands._apps import app, cycles_app
from vlaudit.commands._model_options import model_options
from vlaudit.commands._options import (
    executor_option,
    in_folder_option,
    out_file_option,
    out_folder_option,
    ray_address_option,
    ray_gpus_option,
    ray_threads_option,
    ray_workers_option,
)
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say


@app.command("features")
@model_options(vlaudit.DualOptions,
               model_help="Dual encoder: hf-clip:<id|dir>, open_clip:<arch>\\[/<tag|ckpt>], open_clip:local-dir:<dir> "
                          "or a ref: dual encoder, e.g. ref:tiny-open-clip (vlaudit models list).",
               run=("batch_size", "device"), run_defaults={"batch_size": (32, "Images or texts per forward pass.")})
def features(
    model: vlaudit.ModelRef,
    cycles: Path = typer.Option(..., "--cycles", help="Cycles table (JSONL or Parquet)."),
    images: Path = in_folder_option("--images", help="Folder the image files are relative to."),
    out: Path = out_folder_option(help="Features folder to write (images/texts Parquet + manifest)."),
    captions: Path | None = typer.Option(None, "--captions", help="Captions table (caption_id, text); default: "
                                                                   "the rows' text_1/text_2, else CYCLES.captions.jsonl."),
    run: vlaudit.RunOptions = vlaudit.RunOptions(),
    executor: str = executor_option(),
    address: str | None = ray_address_option(),
    workers: int = ray_workers_option(),
    gpus_per_worker: float = ray_gpus_option(),
    threads_per_worker: int | None = ray_threads_option(),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace features of other arguments in --out."),
) -> None:
    """Embed every image and caption of the cycles once (deduplicated by id and content), float32, normalised."""
    spec = vlaudit.FeaturesSpec.of(
        model=model, cycles=cycles, images=images, out=out, captions=captions, run=run,
        executor=vlaudit.RayOptions.chosen(executor, address=address, workers=workers,
                                           gpus_per_worker=gpus_per_worker, threads_per_worker=threads_per_worker))
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), transient=True) as bar:
        tasks = {"images": bar.add_task("images", total=None), "texts": bar.add_task("texts", total=None)}
        manifest = vlaudit.extract_features(
            spec, overwrite=overwrite,
            progress=lambda task, n, total: bar.update(tasks[task], advance=n, total=total)).manifest
    counts = manifest["counts"]
    print_table(f"features — {model.spec}", ["what", "ids", "distinct contents"],
                [["images", counts["image_ids"], counts["unique_images"]],
                 ["captions", counts["caption_ids"], counts["unique_texts"]]])
    say(f"wrote {out} (dim {manifest['dim']}, {manifest['seconds']} s)")


@cycles_app.command("zero-shot")
def zero_shot(
    features_dir: Path = typer.Option(..., "--features", help="Features folder written by `vlaudit features`."),
    cycles: Path = typer.Option(..., "--cycles", help="Cycles table (JSONL or Parquet)."),
    out: Path = out_file_option(help="Scores table (CSV, JSONL or Parquet): image_id, caption_id, score."),
) -> None:
    """Cosine image–caption scores for every pair the cycles use, in the `cycles eval` scores format."""
    scored = vlaudit.write_zero_shot_scores(cycles, features_dir, out=out)
    rows = scored.rows
    scores = [row.score for row in rows]
    print_table(f"zero-shot scores — {scored.model}",
                ["cycles", "pairs", "min", "mean", "max"],
                [[scored.n_cycles, len(rows), min(scores), sum(scores) / len(scores), max(scores)]])
    say(f"wrote {out}")
