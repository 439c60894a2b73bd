"""Rows of the bring-your-own pairs format (``cycles build jsonl``) shared by the builder, disk, failed-run and
seed tests."""

from __future__ import annotations

import json
from pathlib import Path


def flip_pair_rows() -> list[dict]:
    """Two images whose dog/chair relation flips, each caption mentioning both: one relation block."""
    dog_left = [{"name": "dog", "box": [5, 40, 20, 20]}, {"name": "chair", "box": [70, 40, 20, 20]}]
    dog_right = [{"name": "dog", "box": [70, 40, 20, 20]}, {"name": "chair", "box": [5, 40, 20, 20]}]
    return [
        {"image_id": "a", "width": 100, "height": 100, "objects": dog_left, "caption_id": "a1",
         "caption": "a dog to the left of a chair", "mentions": ["dog", "chair"],
         "triples": [{"subject": "dog", "relation": "left of", "object": "chair"}]},
        {"image_id": "b", "width": 100, "height": 100, "objects": dog_right, "caption_id": "b1",
         "caption": "a dog to the right of a chair", "mentions": ["dog", "chair"],
         "triples": [{"subject": "dog", "relation": "right of", "object": "chair"}]},
    ]


def write_flip_pairs(path: Path) -> Path:
    """``path`` written as a pairs file of :func:`flip_pair_rows` (one relation block, one object block at
    most)."""
    path.write_text("".join(json.dumps(row) + "\n" for row in flip_pair_rows()))
    return path


def pairs_rows() -> list[dict]:
    """The flipped pair (the second caption mentioning only the dog) and a cat with two captions."""
    dog_left, dog_right = flip_pair_rows()
    return [
        dog_left,
        {**dog_right, "mentions": ["dog"]},
        {"image_id": "c", "width": 100, "height": 100, "objects": [{"name": "cat"}], "caption_id": "c1",
         "caption": "a cat", "mentions": ["cat"]},
        {"image_id": "c", "caption_id": "c2", "caption": "a sleepy cat", "mentions": ["cat"]},
    ]
