"""Procedural multiple-choice scenes: "Where is the red square relative to the blue circle?" with options
A. left  B. right  C. above  D. below (the known-answer benchmark of the letter interface).

Each scene is a PNG (lossless, so every shape keeps its exact colour) of two shapes in two of
:data:`MCQ_COLOURS` on a grey background: the object anywhere, the subject clearly to one side of it along
one axis and nearly aligned on the other, so exactly one of the four relations holds. The item's category is
the relation's axis (``horizontal`` / ``vertical``); the options are in the fixed order above unless
``rotate`` shifts them (CircularEval rotations are written as separate items sharing ``circular_id``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from vlaudit.builders.scene_render import OBJECT_COLORS
from vlaudit.sources.items import BenchmarkItem, option_letters, write_items

MCQ_COLOURS = ("red", "green", "blue", "yellow", "orange", "purple")
MCQ_SHAPES = ("square", "circle")
MCQ_RELATIONS = ("left", "right", "above", "below")
SCENE_SIZE = (96, 72)
_SHAPE_SIDE = 14
_BACKGROUND = (128, 128, 128)


def mcq_question(subject: str, obj: str) -> str:
    """The question of one scene, e.g. "Where is the red square relative to the blue circle?"."""
    return f"Where is the {subject} relative to the {obj}?"


def _draw(draw: ImageDraw.ImageDraw, shape: str, colour: str, centre: tuple[int, int]) -> None:
    half = _SHAPE_SIDE // 2
    box = (centre[0] - half, centre[1] - half, centre[0] + half, centre[1] + half)
    fill = OBJECT_COLORS[colour]
    if shape == "square":
        draw.rectangle(box, fill=fill)
    else:
        draw.ellipse(box, fill=fill)


def render_mcq_scenes(out_dir: str | Path, n: int, *, seed: int = 0, dataset: str = "scene-mcq",
                      rotations: bool = False) -> list[BenchmarkItem]:
    """Render ``n`` scenes into ``out_dir/images`` and write ``out_dir/items.jsonl``; returns the items.

    With ``rotations`` every scene becomes four items, the options rotated by 0..3 places (CircularEval)."""
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    items = []
    width, height = SCENE_SIZE
    for index in range(n):
        c_subject, c_object = (str(c) for c in rng.choice(MCQ_COLOURS, size=2, replace=False))
        s_subject, s_object = (str(s) for s in rng.choice(MCQ_SHAPES, size=2))
        relation = MCQ_RELATIONS[int(rng.integers(4))]
        ox, oy = int(rng.integers(30, width - 30)), int(rng.integers(22, height - 22))
        gap, jitter = int(rng.integers(20, 26)), int(rng.integers(-3, 4))
        dx, dy = {"left": (-gap, jitter), "right": (gap, jitter), "above": (jitter, -gap),
                  "below": (jitter, gap)}[relation]
        image = Image.new("RGB", SCENE_SIZE, _BACKGROUND)
        draw = ImageDraw.Draw(image)
        _draw(draw, s_object, c_object, (ox, oy))
        _draw(draw, s_subject, c_subject, (ox + dx, oy + dy))
        name = f"mcq{index:05d}.png"
        image.save(out / "images" / name)
        subject, obj = f"{c_subject} {s_subject}", f"{c_object} {s_object}"
        for shift in range(4 if rotations else 1):
            options = tuple(MCQ_RELATIONS[(k + shift) % 4] for k in range(4))
            extra = {"circular_id": f"scene{index:05d}", "rotation": shift} if rotations else {}
            items.append(BenchmarkItem(
                item_id=f"scene{index:05d}" + (f"-r{shift}" if rotations else ""), image=name,
                question=mcq_question(subject, obj), label=option_letters(4)[options.index(relation)],
                dataset=dataset, split="test", subject=subject, object=obj, options=options,
                category="horizontal" if relation in ("left", "right") else "vertical", extra=extra))
    write_items(out / "items.jsonl", items)
    return items
