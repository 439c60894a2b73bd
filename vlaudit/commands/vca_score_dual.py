"""``vlaudit vca score-dual``: VCA context margins of a dual encoder (cosine decision within true/false groups)."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import vca_app
from vlaudit.commands._model_options import model_options
from vlaudit.commands._options import in_folder_option, out_folder_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say


@vca_app.command("score-dual")
@model_options(vlaudit.DualOptions, model_help="Dual encoder: open_clip:…, hf-clip:… or ref:tiny-open-clip.",
               run=("batch_size", "device"), run_defaults={"batch_size": (32, "Images or texts per forward pass.")})
def vca_score_dual(
    model: vlaudit.ModelRef,
    benchmark: Path = typer.Option(..., "--benchmark", help="ITEMS table with true/false statement groups."),
    images: Path = in_folder_option("--images", help="Folder the items' image paths are relative to."),
    out: Path = out_folder_option(help="Run folder (margins.parquet, features/, manifest, summary)."),
    contexts: str = typer.Option("original,text,blank,mean,mismatch", "--contexts",
                                 help="Comma list from: original, text, blank, mean, mismatch, rele, irre, ..."),
    no_image: str = typer.Option("mean-image", "--no-image",
                                 help="What the text context embeds as its image: mean-image (mean of the "
                                      "run's original-image embeddings) or zero (m_t ≡ 0)."),
    text_field: str = typer.Option(None, "--text-field", help="ITEMS column holding the statement text "
                                                              "(default: the question without its wrapper)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the mismatch derangement."),
    run: vlaudit.RunOptions = vlaudit.RunOptions(),
    model_name: str = typer.Option(None, "--model-name", help="Name written to the model column (default: spec)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a run with other arguments in --out."),
) -> None:
    """m_c(s) = cos(x_c, s) − max over the group's other statements, per context; read by `vca report`."""
    spec = vlaudit.DualScoreSpec.of(
        model=model, benchmark=benchmark, images=images, out=out,
        contexts=tuple(c.strip() for c in contexts.split(",") if c.strip()), no_image=no_image,
        text_field=text_field, seed=seed, model_name=model_name, run=run)
    margins = vlaudit.score_dual_margins(spec, overwrite=overwrite)
    summary = margins.summary
    shown = [(k, v) for k, v in summary.to_dict().items() if k != "schema_version" and not isinstance(v, dict)]
    shown += [(f"rows: {c}", n) for c, n in summary.contexts.items()]
    print_table(f"vca score-dual — {summary.model}", ["field", "value"], shown)
    for warning in margins.warnings:
        say(f"warning: {warning}")
    say(f"wrote {out / 'margins.parquet'}")
