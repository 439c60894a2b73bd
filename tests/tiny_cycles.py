"""A tiny cycles table with its images, for tests that run a command and its API twin on the same files."""

from __future__ import annotations

import json
from pathlib import Path


def two_cycles(root: Path) -> Path:
    """Two exact cycles over four small images, caption texts inline."""
    from PIL import Image

    (root / "images").mkdir(parents=True)
    rows = []
    for k in range(2):
        ids = [f"u{k}a", f"u{k}b"]
        for n, image_id in enumerate(ids):
            Image.new("RGB", (24, 24), (60 * k + 30 * n, 120, 30)).save(root / "images" / f"{image_id}.png")
        rows.append({"cycle_id": f"c{k}", "family": "f", "split": "test", "image_1": ids[0], "image_2": ids[1],
                     "caption_1": f"v{k}a", "caption_2": f"v{k}b", "text_1": f"a dog left of a cat {k}",
                     "text_2": f"a dog right of a cat {k}"})
    path = root / "cycles.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
