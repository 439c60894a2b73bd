"""``vlaudit data scenes`` (procedural COCO/GQA scenes) and ``vlaudit data factorial`` (VCA §10 inputs)."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import data_app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say
from vlaudit.settings import FACTORIAL_SEED, FACTORIAL_STEMS


@data_app.command("scenes")
def data_scenes(
    out: Path = out_folder_option(help="Folder for images/, instances.json, captions.json, scene_graphs.json."),
    images: int = typer.Option(500, "--images", min=1, help="Number of scenes."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed (same seed → byte-identical files)."),
    width: int = typer.Option(160, "--width", min=96, help="Image width in pixels."),
    height: int = typer.Option(120, "--height", min=96, help="Image height in pixels."),
    min_objects: int = typer.Option(2, "--min-objects", min=2, help="Fewest main objects per scene."),
    max_objects: int = typer.Option(4, "--max-objects", min=2, help="Most main objects per scene."),
    p_small: float = typer.Option(0.1, "--p-small", min=0.0, max=1.0,
                                  help="Probability of a tiny ineligible instance (< 1% of the image)."),
    p_crowd: float = typer.Option(0.05, "--p-crowd", min=0.0, max=1.0,
                                  help="Probability of an iscrowd=1 group (RLE segmentation)."),
) -> None:
    """Render simple scenes with known boxes in the official COCO format (+ GQA scene graphs)."""
    if max_objects < min_objects:
        raise typer.BadParameter("--max-objects must be ≥ --min-objects")
    summary = vlaudit.render_scenes(out, images, seed, width=width, height=height, min_objects=min_objects,
                                            max_objects=max_objects, p_small=p_small, p_crowd=p_crowd)
    keys = ("images", "instances", "main_objects", "small_objects", "crowd_groups", "captions",
            "images_per_second")
    print_table(f"Procedural scenes — {out}", ["quantity", "value"], [[k, summary[k]] for k in keys], digits=1)
    for name, path in summary["files"].items():
        say(f"wrote {name}: {path}")


@data_app.command("factorial")
def data_factorial(
    out: Path = out_folder_option(help="Folder for items.jsonl, manifest.json and images/."),
    seed: int = typer.Option(FACTORIAL_SEED, "--seed", min=0, help="Seed of object identities and layouts."),
    stems: int = typer.Option(FACTORIAL_STEMS, "--stems", min=1, help="Stems per relation (left/right/above/below)."),
) -> None:
    """The 3×3 visual × textual evidence-source factorial (VCA §10); the build fails if a check fails."""
    summary = vlaudit.build_factorial(out, seed=seed, n_per_relation=stems)
    rows = [[f"stems: {rel}", n] for rel, n in summary["stems_per_relation"].items()]
    rows += [["groups (stems)", summary["stems"]], ["inputs (items)", summary["items"]]]
    rows += [[f"unique probes: {k}", v] for k, v in summary["probes"].items()]
    rows += [[f"check passed: {c}", "yes"] for c in summary["checks"]]
    print_table(f"Evidence-source factorial — {out}", ["quantity", "value"], rows)
    say(f"wrote {summary['items_path']} ({summary['seconds']:.2f} s)")
