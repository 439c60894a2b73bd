"""``vlaudit vca score``: literal yes/no margins of a multimodal LLM under matched contexts (VCA §9, §11)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

import vlaudit
from vlaudit.commands._apps import vca_app
from vlaudit.commands._model_options import model_options
from vlaudit.commands._options import (
    executor_option,
    in_folder_option,
    min_coverage_option,
    out_folder_option,
    ray_address_option,
    ray_gpus_option,
    ray_threads_option,
    ray_workers_option,
)
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say
from vlaudit.errors import LowCoverageError


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


@vca_app.command("score")
@model_options(vlaudit.HfOptions, vlaudit.EndpointOptions, vlaudit.VllmOptions,
               model_help="Model spec: hf:ID or hf:DIR (transformers, e.g. hf:Qwen/Qwen3-VL-8B-Instruct), vllm:ID or "
                          "vllm:DIR (vLLM's engine), openai:URL#MODEL (an OpenAI-compatible server) or ref:NAME "
                          "(vlaudit's reference models; vlaudit models list).",
               run=("batch_size", "strict", "device", "device_map", "chunk_size", "prefix_cache"),
               run_defaults={"batch_size": (8, "Sequences per forward pass.")})
def vca_score(
    model: vlaudit.ModelRef,
    benchmark: Path = typer.Option(..., "--benchmark", help="ITEMS table (JSONL or Parquet)."),
    images: Path = in_folder_option("--images", help="Folder the items' image paths are relative to."),
    out: Path = out_folder_option(help="Run folder (margins.parquet, failures.jsonl, manifest, summary, cache)."),
    contexts: str = typer.Option("original,text,blank", "--contexts",
                                 help="Comma list from: original, text, blank, mean, mismatch, rele, irre (the "
                                      "paper's distant tiles), irre-disjoint (tiles off the union only, not the "
                                      "paper's), blur, patch-shuffle (stress probes, never controls)."),
    interface: str = typer.Option("yesno", "--interface", help="Comma list of yesno,truefalse; or letter "
                                                               "(multiple-choice items, one forward per context)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the mismatch derangement."),
    run: vlaudit.RunOptions = vlaudit.RunOptions(),
    model_name: str = typer.Option(None, "--model-name", help="Name written to the model column (default: spec)."),
    executor: str = executor_option(),
    address: str | None = ray_address_option(),
    workers: int = ray_workers_option(),
    gpus_per_worker: float = ray_gpus_option(),
    threads_per_worker: int | None = ray_threads_option(),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the results of a run with other arguments "
                                                             "in --out (its score cache is kept and reused)."),
    template: Path = typer.Option(None, "--template", help="JSON file interface -> question template with one "
                                                           "{question} field (wording diagnostics, VCA §18; default: the built-in templates)."),
    circular: bool = typer.Option(False, "--circular", help="CircularEval: score every rotation of each item's "
                                                            "options (multiple choice)."),
    skip_multi_image: bool = typer.Option(False, "--skip-multi-image",
                                          help="Leave out the items with more images than the model takes in one "
                                               "query (MMMU's, for a one-image model), with a warning; without "
                                               "it such items refuse the run."),
    min_coverage: float = min_coverage_option(),
) -> None:
    """Score every item under each context and interface; resumable (rerun the same command after a kill)."""
    spec = vlaudit.ScoreSpec.of(
        model=model, benchmark=benchmark, images=images, out=out, contexts=tuple(_csv(contexts)),
        interfaces=tuple(_csv(interface)), seed=seed, model_name=model_name, template=template, circular=circular,
        skip_multi_image=skip_multi_image, run=run,
        executor=vlaudit.RayOptions.chosen(executor, address=address, workers=workers,
                                           gpus_per_worker=gpus_per_worker, threads_per_worker=threads_per_worker))
    _run(spec, overwrite=overwrite, min_coverage=min_coverage)


def _run(spec: vlaudit.ScoreSpec, *, overwrite: bool, min_coverage: float) -> None:
    """Score ``spec`` with a progress bar, then print its summary, warnings and coverage."""
    out = spec.out
    console = Console(stderr=True)
    with Progress(TextColumn("scoring"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), console=console,
                  transient=True) as progress:  # the summary table follows; an error stays one line
        task = progress.add_task("score", total=None, rate="")

        def on_plan(total: int, cached: int) -> None:
            progress.update(task, total=total, completed=cached)

        def on_progress(done: int) -> None:
            progress.advance(task, done)
            speed = progress.tasks[0].speed
            progress.update(task, rate=f"{speed:.1f} queries/s" if speed else "")

        margins = vlaudit.score_margins(spec, overwrite=overwrite, on_plan=on_plan, on_progress=on_progress,
                                         on_warning=lambda message: console.print(
                                             Text("warning: ", style="bold yellow") + Text(message), soft_wrap=True),
                                         min_coverage=min_coverage)
    summary = margins.summary
    shown = [(k, v) for k, v in summary.to_dict().items()
             if k != "schema_version" and not isinstance(v, (dict, list))]
    print_table(f"vca score — {summary.model}", ["field", "value"], shown, digits=3)
    say(f"records not scored: {margins.failure_line} — listed in {out / 'failures.jsonl'}")
    n_censored = getattr(summary, "n_censored", 0)  # a yes/no run's count (a dual run has none)
    if n_censored:
        by_context = ", ".join(f"{c}: {n}" for c, n in getattr(summary, "censored_by_context", {}).items())
        say(f"censored: {n_censored} of {summary.n_scored_rows} rows ({by_context}) have an answer word "
            "outside the server's top-k log-probs; their margins are bounds (column censored), which vca report "
            "refuses — serve with logprob_token_ids (vLLM) for exact margins")
    decision = margins.prefix_cache
    if decision:
        say(f"shared image-prefix reuse: {'on' if decision.enabled else 'off'} ({decision.reason})")
    for warning in margins.warnings:
        say(f"warning: {warning}")
    say(f"wrote {out / 'margins.parquet'}")
    coverage = getattr(summary, "coverage", None)
    if coverage is not None:
        say(f"coverage: {coverage.line()}")
        if coverage.below(min_coverage):
            raise LowCoverageError(coverage.shortfall(f"run {out}", min_coverage))
