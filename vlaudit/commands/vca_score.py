"""``vlaudit vca score``: literal yes/no margins of a multimodal LLM under matched contexts (VCA §9, §11)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from vlaudit.backends.base import INTERFACES
from vlaudit.backends.registry import require_kind
from vlaudit.commands._apps import vca_app
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._options import (
    dtype_option,
    executor_option,
    in_folder_option,
    out_folder_option,
    ray_address_option,
    ray_gpus_option,
    ray_threads_option,
    ray_workers_option,
)
from vlaudit.errors import InputError

# The library, loaded on first use so that `vlaudit --help` stays light (see commands/_lazy.py).
report_console = lazy_module("vlaudit.report.console")
backends_hf_mllm = lazy_module("vlaudit.backends.hf_mllm")
contexts_image_contexts = lazy_module("vlaudit.contexts.image_contexts")
scoring_executors = lazy_module("vlaudit.scoring.executors")
scoring_run_arguments = lazy_module("vlaudit.scoring.run_arguments")
scoring_runner = lazy_module("vlaudit.scoring.runner")
sources_items = lazy_module("vlaudit.sources.items")


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


@vca_app.command("score")
def vca_score(
    model: str = typer.Option(..., "--model", help="Model spec, e.g. hf:Qwen/Qwen3-VL-8B-Instruct or hf:DIR."),
    benchmark: Path = typer.Option(..., "--benchmark", help="ITEMS table (JSONL or Parquet)."),
    images: Path = in_folder_option("--images", help="Folder the items' image paths are relative to."),
    out: Path = out_folder_option(help="Run folder (margins.parquet, failures.jsonl, manifest, summary, cache)."),
    contexts: str = typer.Option("original,text,blank", "--contexts",
                                 help="Comma list from: original, text, blank, mean, mismatch, rele, irre, "
                                      "blur, patch-shuffle (stress probes, never controls)."),
    interface: str = typer.Option("yesno", "--interface", help="Comma list of yesno,truefalse."),
    batch_size: int = typer.Option(8, "--batch-size", help="Sequences per forward pass."),
    seed: int = typer.Option(0, "--seed", help="Seed of the mismatch derangement."),
    strict: bool = typer.Option(False, "--strict", help="Fail on any missing/corrupt image instead of recording it."),
    dtype: str = dtype_option(),
    device: str = typer.Option("auto", "--device", help="auto, cpu, cuda, cuda:1, ..."),
    device_map: str = typer.Option(None, "--device-map", help="transformers device_map (e.g. auto) for big models (default: none, one device)."),
    revision: str = typer.Option(None, "--revision", help="Model revision: hub branch, tag or commit (default: main)."),
    min_pixels: int = typer.Option(None, "--min-pixels", help="Pixel budget: minimum pixels (Qwen-VL; default: the processor's)."),
    max_pixels: int = typer.Option(None, "--max-pixels", help="Pixel budget: maximum pixels (Qwen-VL; default: the processor's)."),
    trust_remote_code: bool = typer.Option(False, "--trust-remote-code", help="Allow model repo code (off)."),
    model_name: str = typer.Option(None, "--model-name", help="Name written to the model column (default: spec)."),
    chunk_size: int = typer.Option(64, "--chunk-size", help="Unique queries per atomic cache chunk."),
    prefix_cache: bool | None = typer.Option(
        None, "--prefix-cache/--no-prefix-cache",
        help="Force shared image-prefix KV reuse on/off (Qwen-VL). Default: decided per run from image vs "
             "question tokens and questions per image; the decision is in manifest.json."),
    executor: str = executor_option(),
    address: str | None = ray_address_option(),
    workers: int = ray_workers_option(),
    gpus_per_worker: float = ray_gpus_option(),
    threads_per_worker: int | None = ray_threads_option(),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the results of a run with other arguments "
                                                             "in --out (its score cache is kept and reused)."),
    template: Path = typer.Option(None, "--template", help="JSON file interface -> question template with one "
                                                           "{question} field (wording diagnostics, VCA §18; default: the built-in templates)."),
    system: str = typer.Option(None, "--system", help="System message for every family (default: Qwen families "
                                                      "'You are a helpful assistant.', others none; '' for none)."),
) -> None:
    """Score every item under each context and interface; resumable (rerun the same command after a kill)."""
    context_list, interfaces = _csv(contexts), _csv(interface)
    # checked before the (possibly many-GB) model loads
    for name, given, known in (("contexts", context_list, contexts_image_contexts.CONTEXTS), ("interface", interfaces, INTERFACES)):
        unknown = [value for value in given if value not in known]
        if unknown or not given:
            raise InputError(f"unknown or empty {name} {unknown or given}; available: {', '.join(known)}",
                             field=name)
    require_kind(model, "yesno")
    templates = None if template is None else backends_hf_mllm.read_question_templates(template)
    items = sources_items.read_items(benchmark)
    arguments = scoring_run_arguments.score_arguments(
        model=model, items=items, benchmark=benchmark, images=images, out=out, contexts=context_list,
        interfaces=interfaces, seed=seed, batch_size=batch_size, chunk_size=chunk_size, strict=strict,
        model_name=model_name, template=template, question_templates=templates, executor=executor,
        address=address, workers=workers, gpus_per_worker=gpus_per_worker, threads_per_worker=threads_per_worker,
        dtype=dtype, device=device, device_map=device_map, revision=revision, min_pixels=min_pixels,
        max_pixels=max_pixels, trust_remote_code=trust_remote_code, prefix_cache=prefix_cache, system=system)
    if not overwrite:
        scoring_runner.refuse_other_run(out, arguments)
    load_options = {"dtype": dtype, "device": device, "device_map": device_map, "batch_size": batch_size,
                    "revision": revision, "min_pixels": min_pixels, "max_pixels": max_pixels,
                    "trust_remote_code": trust_remote_code, "interfaces": interfaces, "prefix_cache": prefix_cache,
                    "question_templates": templates, "system": system}
    backend, runner_executor = scoring_executors.open_backend(model, load_options, executor=executor, workers=workers,
                                                              address=address, gpus_per_worker=gpus_per_worker,
                                                              threads=threads_per_worker)
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

        try:
            summary = scoring_runner.run_scoring(backend, items, images_dir=images, out_dir=out, contexts=context_list,
                                                 interfaces=interfaces, seed=seed, strict=strict, model_name=model_name,
                                                 chunk_size=chunk_size, arguments=arguments, on_plan=on_plan,
                                                 on_progress=on_progress, executor=runner_executor,
                                                 on_warning=lambda message: console.print(
                                                     Text("warning: ", style="bold yellow") + Text(message), soft_wrap=True))
        finally:
            if runner_executor is not None:
                runner_executor.shutdown()
    shown = [(k, v) for k, v in summary.items() if not isinstance(v, (dict, list))]
    report_console.print_table(f"vca score — {summary['model']}", ["field", "value"], shown, digits=3)
    typer.echo(f"records not scored: {scoring_runner.failure_line(summary)} — listed in {out / 'failures.jsonl'}")
    decision = backend.describe().get("prefix_cache_decision")
    if decision:
        typer.echo(f"shared image-prefix reuse: {'on' if decision['enabled'] else 'off'} ({decision['reason']})")
    typer.echo(f"wrote {out / 'margins.parquet'}")
