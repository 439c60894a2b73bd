"""``vlaudit cycles score-mllm``: cycle scores of a generative MLLM as the yes/no margin of a fixed query."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import cycles_app
from vlaudit.commands._model_options import model_options
from vlaudit.commands._options import (
    executor_option,
    in_folder_option,
    out_file_option,
    ray_address_option,
    ray_gpus_option,
    ray_threads_option,
    ray_workers_option,
)
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say


@cycles_app.command("score-mllm")
@model_options(vlaudit.HfOptions, vlaudit.VllmOptions,
               model_help="Multimodal LLM: hf:<id|dir>, vllm:<id|dir> or ref:tiny-qwen2-vl, ...",
               run=("batch_size", "device", "chunk_size"), run_defaults={"batch_size": (8, "Sequences per forward pass.")})
def cycles_score_mllm(
    model: vlaudit.ModelRef,
    cycles: Path = typer.Option(..., "--cycles", help="Cycles table (JSONL or Parquet)."),
    images: Path = in_folder_option("--images", help="Folder the image files are relative to."),
    out: Path = out_file_option(help="Scores table (CSV, JSONL or Parquet): image_id, caption_id, score."),
    captions: Path | None = typer.Option(None, "--captions", help="Captions table (caption_id, text); default: "
                                                                   "the rows' text_1/text_2, else CYCLES.captions.jsonl."),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="Run folder holding the cache, margins and "
                                                                "manifest (default: OUT.run); rerun to resume."),
    query: str = typer.Option(None, "--query", help="Question with one {caption} field (default: "
                                                    "'Does the caption \"{caption}\" describe the image?')."),
    run: vlaudit.RunOptions = vlaudit.RunOptions(),
    executor: str = executor_option(),
    address: str | None = ray_address_option(),
    workers: int = ray_workers_option(),
    gpus_per_worker: float = ray_gpus_option(),
    threads_per_worker: int | None = ray_threads_option(),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a run with other arguments in the run "
                                                             "folder (its score cache is kept and reused)."),
) -> None:
    """s(image, caption) = NLL(no) − NLL(yes) of a fixed yes/no query about the caption, for every pair the
    cycles use, through the `vca score` runner and cache; writes the `cycles eval` scores format."""
    spec = vlaudit.CycleScoreSpec.of(
        model=model, cycles=cycles, images=images, out=out, captions=captions, run_dir=run_dir, query=query, run=run,
        executor=vlaudit.RayOptions.chosen(executor, address=address, workers=workers,
                                           gpus_per_worker=gpus_per_worker, threads_per_worker=threads_per_worker))
    scored = vlaudit.score_cycles_mllm(spec, overwrite=overwrite)
    rows, summary, folder = scored.rows, scored.summary, scored.run_dir
    scores = [float(row["score"]) for row in rows]
    print_table(f"MLLM cycle scores — {model.spec}", ["cycles", "pairs", "queries scored now", "from cache",
                                                "min", "mean", "max"],
                [[scored.n_cycles, len(rows), summary.n_units_scored_now, summary.n_units_from_cache,
                  min(scores), sum(scores) / len(scores), max(scores)]])
    say(f"wrote {out} (run folder {folder})")
