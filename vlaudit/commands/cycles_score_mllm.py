"""``vlaudit cycles score-mllm``: cycle scores from a generative MLLM's yes/no margin (issue 11)."""

from __future__ import annotations

from pathlib import Path

import typer

from vlaudit.commands._apps import cycles_app
from vlaudit.commands._options import in_folder_option, out_file_option


@cycles_app.command("score-mllm")
def score_mllm(
    model: str = typer.Option(..., "--model", help="MLLM spec (hf:ID or hf:DIR, ref:tiny-…)."),
    cycles: Path = typer.Option(..., "--cycles", help="Cycles table (JSONL or Parquet) with caption texts "
                                                      "(text_1/text_2 or the captions sidecar)."),
    images: Path = in_folder_option("--images", help="Folder of the cycle images."),
    out: Path = out_file_option(help="Scores table (CSV, JSONL or Parquet): image_id, caption_id, score."),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="Scoring run folder (margins, manifest, cache; "
                                                                 "resumable). Default: OUT's name + '.run'."),
    captions: Path | None = typer.Option(None, "--captions", help="Captions table (default: the cycles sidecar)."),
    batch_size: int = typer.Option(8, "--batch-size", help="Sequences per forward pass."),
    dtype: str = typer.Option("auto", "--dtype", help="auto, bf16, fp16 or fp32."),
    device: str = typer.Option("auto", "--device", help="auto, cpu, cuda, cuda:1, ..."),
    max_pixels: int = typer.Option(None, "--max-pixels", help="Pixel budget: maximum pixels (Qwen-VL)."),
    trust_remote_code: bool = typer.Option(False, "--trust-remote-code", help="Allow model repo code (off)."),
) -> None:
    """s(image, caption) = NLL(no) − NLL(yes) of "Does this caption describe the image?" for every pair the
    cycles use, through the `vca score` runner and cache, in the `cycles eval` scores format."""
    from vlaudit.backends.registry import load_backend, require_kind
    from vlaudit.errors import InputError
    from vlaudit.experiments.mllm_cycles import QUERY, caption_items, score_rows
    from vlaudit.report.console import print_table
    from vlaudit.scoring.features import collect_inputs
    from vlaudit.scoring.runner import run_scoring
    from vlaudit.sources.cycle_tables import read_cycles
    from vlaudit.tables import write_table

    require_kind(model, "yesno")
    cycle_list = read_cycles(cycles)
    inputs = collect_inputs(cycle_list, cycles, images, captions)
    items, pairs = caption_items(cycle_list, inputs.images, inputs.texts, images)
    run = run_dir or out.with_name(out.name + ".run")
    backend = load_backend(model, dtype=dtype, device=device, batch_size=batch_size, max_pixels=max_pixels,
                           trust_remote_code=trust_remote_code, interfaces=["yesno"])
    summary = run_scoring(backend, items, images_dir=images, out_dir=run, contexts=["original"],
                          interfaces=["yesno"], arguments={"command": "cycles score-mllm", "model": model,
                                                           "cycles": str(cycles), "images": str(images),
                                                           "query": QUERY},
                          on_warning=lambda message: typer.echo(f"warning: {message}", err=True))
    rows, missing = score_rows(run / "margins.parquet", pairs)
    if not rows:
        raise InputError(f"no pair could be scored (see {run / 'failures.jsonl'})", path=cycles, field="image")
    write_table(out, rows)
    scores = [row["score"] for row in rows]
    print_table(f"cycles score-mllm — {summary['model']}", ["cycles", "pairs", "unscored", "min", "mean", "max"],
                [[len(cycle_list), len(rows), len(missing), min(scores), sum(scores) / len(scores), max(scores)]])
    if missing:
        typer.echo(f"warning: {len(missing)} pair(s) failed to score (see {run / 'failures.jsonl'}); "
                   "`cycles eval` names the cycles that need them", err=True)
    typer.echo(f"wrote {out} (run folder {run})")
