"""``vlaudit cycles score-mllm``: cycle scores of a generative MLLM as the yes/no margin of a fixed query."""

from __future__ import annotations

from pathlib import Path

import typer

from vlaudit.backends.registry import require_kind
from vlaudit.commands._apps import cycles_app
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._options import (
    dtype_option,
    executor_option,
    in_folder_option,
    out_file_option,
    ray_address_option,
    ray_gpus_option,
    ray_threads_option,
    ray_workers_option,
)
from vlaudit.errors import InputError

# The library, loaded on first use so that `vlaudit --help` stays light (see commands/_lazy.py).
report_console = lazy_module("vlaudit.report.console")
scoring_executors = lazy_module("vlaudit.scoring.executors")
scoring_features = lazy_module("vlaudit.scoring.features")
scoring_mllm_cycle_scores = lazy_module("vlaudit.scoring.mllm_cycle_scores")
scoring_runner = lazy_module("vlaudit.scoring.runner")
sources_cycle_tables = lazy_module("vlaudit.sources.cycle_tables")
tables = lazy_module("vlaudit.tables")


def default_run_dir(out: Path) -> Path:
    """``SCORES.run/`` beside the scores table: the run folder (cache, margins, manifest) of a scores file."""
    return out.with_name(out.name + ".run")


@cycles_app.command("score-mllm")
def cycles_score_mllm(
    model: str = typer.Option(..., "--model", help="Multimodal LLM: hf:<id|dir> or ref:tiny-qwen2-vl, ..."),
    cycles: Path = typer.Option(..., "--cycles", help="Cycles table (JSONL or Parquet)."),
    images: Path = in_folder_option("--images", help="Folder the image files are relative to."),
    out: Path = out_file_option(help="Scores table (CSV, JSONL or Parquet): image_id, caption_id, score."),
    captions: Path | None = typer.Option(None, "--captions", help="Captions table (caption_id, text); default: "
                                                                   "the rows' text_1/text_2, else CYCLES.captions.jsonl."),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="Run folder holding the cache, margins and "
                                                                "manifest (default: OUT.run); rerun to resume."),
    query: str = typer.Option(None, "--query", help="Question with one {caption} field (default: "
                                                    "'Does the caption \"{caption}\" describe the image?')."),
    batch_size: int = typer.Option(8, "--batch-size", help="Sequences per forward pass."),
    dtype: str = dtype_option(),
    device: str = typer.Option("auto", "--device", help="auto, cpu, cuda, cuda:1, ..."),
    revision: str = typer.Option(None, "--revision", help="Model revision: hub branch, tag or commit (default: main)."),
    min_pixels: int = typer.Option(None, "--min-pixels", help="Pixel budget: minimum pixels (Qwen-VL; default: the processor's)."),
    max_pixels: int = typer.Option(None, "--max-pixels", help="Pixel budget: maximum pixels (Qwen-VL; default: the processor's)."),
    chunk_size: int = typer.Option(64, "--chunk-size", help="Unique queries per atomic cache chunk."),
    executor: str = executor_option(),
    address: str | None = ray_address_option(),
    workers: int = ray_workers_option(),
    gpus_per_worker: float = ray_gpus_option(),
    threads_per_worker: int | None = ray_threads_option(),
) -> None:
    """s(image, caption) = NLL(no) − NLL(yes) of a fixed yes/no query about the caption, for every pair the
    cycles use, through the `vca score` runner and cache; writes the `cycles eval` scores format."""
    query = scoring_mllm_cycle_scores.check_query(scoring_mllm_cycle_scores.CYCLE_QUERY if query is None else query)
    if not images.is_dir():
        raise InputError("images folder not found", path=images, field="--images")
    require_kind(model, "yesno")
    cycle_list = sources_cycle_tables.read_cycles(cycles)
    inputs = scoring_features.collect_inputs(cycle_list, cycles, images, captions)
    items = scoring_mllm_cycle_scores.cycle_pair_items(cycle_list, inputs, images, query=query, dataset=cycles.stem)
    run = run_dir or default_run_dir(out)
    load_options = {"dtype": dtype, "device": device, "batch_size": batch_size, "revision": revision,
                    "min_pixels": min_pixels, "max_pixels": max_pixels, "interfaces": [scoring_mllm_cycle_scores.INTERFACE]}
    backend, ray_executor = scoring_executors.open_backend(model, load_options, executor=executor, workers=workers, address=address,
                                                           gpus_per_worker=gpus_per_worker, threads=threads_per_worker)
    arguments = {"command": "cycles score-mllm", "model": model, "cycles": str(cycles), "images": str(images),
                 "out": str(out), "captions": None if captions is None else str(captions), "query": query,
                 "batch_size": batch_size, "dtype": dtype, "device": device, "revision": revision,
                 "min_pixels": min_pixels, "max_pixels": max_pixels, "chunk_size": chunk_size}
    try:
        summary = scoring_runner.run_scoring(backend, items, images_dir=images, out_dir=run, contexts=["original"],
                                             interfaces=[scoring_mllm_cycle_scores.INTERFACE], strict=True, chunk_size=chunk_size, arguments=arguments,
                                             executor=ray_executor)
    finally:
        if ray_executor is not None:
            ray_executor.shutdown()
    rows = scoring_mllm_cycle_scores.scores_from_margins(run / "margins.parquet", items, source=cycles)
    tables.write_table(out, rows)
    scores = [row["score"] for row in rows]
    report_console.print_table(f"MLLM cycle scores — {model}", ["cycles", "pairs", "queries scored now", "from cache", "min",
                                                  "mean", "max"],
                [[len(cycle_list), len(rows), summary["n_units_scored_now"], summary["n_units_from_cache"],
                  min(scores), sum(scores) / len(scores), max(scores)]])
    typer.echo(f"wrote {out} (run folder {run})")
