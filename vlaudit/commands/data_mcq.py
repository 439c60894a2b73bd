"""``vlaudit data mcq-scenes``: procedural four-option questions with a known answer (the letter interface's
known-answer benchmark, :mod:`vlaudit.builders.mcq_scenes`)."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import data_app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._say import say


@data_app.command("mcq-scenes")
def data_mcq_scenes(
    out: Path = out_folder_option(help="Folder for images/ and items.jsonl."),
    scenes: int = typer.Option(60, "--scenes", min=1, help="Number of scenes (one question each)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed (same seed → byte-identical files)."),
    circular: bool = typer.Option(False, "--circular", help="Write each question in its four option rotations "
                                                            "(CircularEval; they share circular_id)."),
) -> None:
    """Render "Where is the red square relative to the blue circle? A. left B. right C. above D. below"."""
    items = vlaudit.render_mcq_scenes(out, scenes, seed=seed, rotations=circular)
    say(f"wrote {len(items)} multiple-choice items to {out / 'items.jsonl'} (images in {out / 'images'})")
