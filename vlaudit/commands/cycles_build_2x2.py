"""``vlaudit cycles build winoground|naturalbench|blocks``: each example of a 2×2 benchmark is one exact cycle."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import cycles_build_app
from vlaudit.commands._options import in_folder_option, out_file_option
from vlaudit.commands.cycles_build import _print_counts

_OUT = out_file_option(help="Cycles file to write (JSONL); captions + metadata go beside it.")
_IMAGES = in_folder_option("--images", help="Folder the benchmark's image files are in (every file must exist); "
                                            "for a Hugging Face dataset, where its images are written.")
_DATASET = " Or a Hugging Face dataset: hf-dataset:NAME[:CONFIG][@SPLIT] or a save_to_disk folder."


def _build(benchmark: str, examples: Path, images: Path, out: Path) -> None:
    _print_counts(vlaudit.build_cycles(benchmark, out=out, examples=examples, images=images))


@cycles_build_app.command("winoground")
def build_winoground(
    examples: Path = typer.Option(..., "--examples", help="Winoground's official examples.jsonl (id, caption_0, "
                                                          "caption_1, image_0, image_1, tags)." + _DATASET),
    images: Path = _IMAGES,
    out: Path = _OUT,
) -> None:
    """Winoground as exact cycles: one block per example (images DIR/{image_k}.png), family
    winoground-{collapsed_tag}, split test; `cycles eval` adds text / image / group scores."""
    _build("winoground", examples, images, out)


@cycles_build_app.command("naturalbench")
def build_naturalbench(
    examples: Path = typer.Option(..., "--examples", help="NaturalBench rows (JSONL or Parquet) with the Hugging "
                                                          "Face columns Index, Image_0, Image_1, Question_0, "
                                                          "Question_1, the four Image_i_Question_j answers, "
                                                          "Question_Type, Source." + _DATASET),
    images: Path = _IMAGES,
    out: Path = _OUT,
) -> None:
    """NaturalBench's yes/no samples as exact cycles: the question–image cross of a sample is one block
    (family naturalbench-<source slug>, split test; multiple-choice samples are skipped and counted); score them
    with `cycles score-mllm --query '{caption}'` (the question itself); `cycles eval` adds Acc, Q-Acc,
    I-Acc and G-Acc."""
    _build("naturalbench", examples, images, out)


@cycles_build_app.command("blocks")
def build_blocks(
    examples: Path = typer.Option(..., "--examples", help="Blocks JSONL: id, image_1, image_2, text_1, text_2 "
                                                          "(text k true of image k only), optional tag and "
                                                          "answers (compare or yes-no)." + _DATASET),
    images: Path = _IMAGES,
    out: Path = _OUT,
) -> None:
    """Any other 2×2 benchmark (e.g. EqBen) as exact cycles: one block per row, family blocks-{tag}, split
    test; `cycles eval` adds Winoground's text / image / group (or NaturalBench's metrics for yes-no rows)."""
    _build("blocks", examples, images, out)
