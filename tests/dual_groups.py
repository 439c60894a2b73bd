"""Planted same-image true/false groups (a red square left or right of a blue one) for the dual-encoder tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def make_groups(root: Path, n: int = 8) -> Path:
    """n images (red square left of blue on even i, right on odd i), each with a true and a false statement."""
    from PIL import Image

    from vlaudit.builders.benchmark_items import question_for
    from vlaudit.files import write_jsonl

    (root / "images").mkdir(parents=True)
    rows = []
    for i in range(n):
        pixels = np.full((32, 48, 3), 90 + 10 * i, dtype=np.uint8)
        left, right = (4, 30) if i % 2 == 0 else (30, 4)
        pixels[10:20, left:left + 12] = (255, 0, 0)
        pixels[10:20, right:right + 12] = (0, 0, 255)
        Image.fromarray(pixels).save(root / "images" / f"im{i}.png")
        truth = "left of" if i % 2 == 0 else "right of"
        other = "right of" if i % 2 == 0 else "left of"
        for statement, relation in (("true", truth), ("false", other)):
            rows.append({"item_id": f"g{i}-{statement}", "image": f"im{i}.png",
                         "question": question_for(f"The red square is {relation} the blue square."),
                         "label": "yes" if statement == "true" else "no", "group_id": f"g{i}",
                         "statement": statement, "relation": relation, "split": "test", "dataset": "planted"})
    write_jsonl(root / "items.jsonl", rows)
    return root / "items.jsonl"
