"""Winoground and NaturalBench releases in their real layouts, written small (a helper module)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

WINOGROUND_ROWS = [
    {"id": 0, "caption_0": "an old person kisses a young person", "caption_1": "a young person kisses an old person",
     "image_0": "ex_0_img_0", "image_1": "ex_0_img_1", "tag": "Adjective-Age", "secondary_tag": "",
     "num_main_preds": 1, "collapsed_tag": "Object"},
    {"id": 1, "caption_0": "the dog chases the cat", "caption_1": "the cat chases the dog",
     "image_0": "ex_1_img_0", "image_1": "ex_1_img_1", "tag": "Noun", "secondary_tag": "Symbolic",
     "num_main_preds": 1, "collapsed_tag": "Relation"},
    {"id": 2, "caption_0": "a cup on a box", "caption_1": "a box on a cup",
     "image_0": "ex_2_img_0", "image_1": "ex_2_img_1", "tag": "Preposition", "secondary_tag": "",
     "num_main_preds": 1, "collapsed_tag": "Relation"},
]


def png(path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)).save(path, format="PNG")


def winoground_files(root: Path) -> tuple[Path, Path]:
    images = root / "images"
    images.mkdir(parents=True)
    for k, row in enumerate(WINOGROUND_ROWS):
        png(images / f"{row['image_0']}.png", 2 * k)
        png(images / f"{row['image_1']}.png", 2 * k + 1)
    examples = root / "examples.jsonl"
    examples.write_text("".join(json.dumps(r) + "\n" for r in WINOGROUND_ROWS))
    return examples, images


def naturalbench_files(root: Path) -> tuple[Path, Path]:
    """Three yes/no samples in the Hugging Face column layout (the third with the mirrored answers) and one
    multiple-choice sample, which is skipped."""
    images = root / "nb_images"
    images.mkdir(parents=True)
    rows = []
    for k in range(4):
        for side in (0, 1):
            png(images / f"nb_{k}_{side}.png", 10 + 2 * k + side)
        yes_first = k != 2
        a, b = ("Yes", "No") if yes_first else ("No", "Yes")
        rows.append({"Index": k, "Image_0": f"nb_{k}_0.png", "Image_1": f"nb_{k}_1.png",
                     "Question_0": f"Is the thing {k} red?", "Image_0_Question_0": a, "Image_1_Question_0": b,
                     "Question_1": f"Is the thing {k} blue?", "Image_0_Question_1": b, "Image_1_Question_1": a,
                     "Question_Type": "yes_no" if k < 3 else "multiple_choice", "Source": "DOCCI"})
    rows[3].update(Image_0_Question_0="A", Image_1_Question_0="B", Image_0_Question_1="B", Image_1_Question_1="A")
    examples = root / "naturalbench.jsonl"
    examples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return examples, images
