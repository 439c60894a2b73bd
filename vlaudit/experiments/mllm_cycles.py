"""CycleAcc for generative MLLMs: s(image, caption) as a yes/no margin (issue 11, beyond the papers).

Every (image, caption) pair that a cycle block needs — its two matched and two swapped pairs — becomes one
yes/no query ``Does this caption describe the image? "<caption>"`` scored under the original image by the same
runner and cache as ``vca score`` (shared image prefixes reused across the captions of an image). The score is
the margin s = NLL(no) − NLL(yes) (VCA §3), written in the ``cycles eval`` scores format
``image_id, caption_id, score`` with float64 scores. Any score is audited the same way: an additive
s = a(image) + b(caption) still gives CycleAcc exactly ½ (cycle paper §3).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.records import Cycle
from vlaudit.sources.items import BenchmarkItem

QUERY = 'Does this caption describe the image? "{caption}"'


def caption_items(cycles: Sequence[Cycle], images: Mapping[str, Path], texts: Mapping[str, str],
                  images_dir: Path, *, query: str = QUERY) -> tuple[list[BenchmarkItem], dict[str, tuple[str, str]]]:
    """One query per distinct (image, caption) pair of the blocks, in block order; returns the items and
    item_id → (image_id, caption_id). Images are given relative to ``images_dir`` (the runner's root)."""
    items: list[BenchmarkItem] = []
    pairs: dict[str, tuple[str, str]] = {}
    seen: set[tuple[str, str]] = set()
    root = images_dir.resolve()
    for cycle in cycles:
        for image_id, caption_id, _ in cycle.entries():
            key = (image_id, caption_id)
            if key in seen:
                continue
            seen.add(key)
            item_id = f"{len(pairs):08d}"
            pairs[item_id] = key
            relative = os.path.relpath(Path(images[image_id]).resolve(), root)
            items.append(BenchmarkItem(item_id=item_id, image=relative, question=query.format(caption=texts[caption_id]),
                                       dataset="cycles", split=cycle.split,
                                       extra={"image_id": image_id, "caption_id": caption_id}))
    return items, pairs


def score_rows(margins_path: Path, pairs: Mapping[str, tuple[str, str]], *, interface: str = "yesno") -> tuple[
        list[dict[str, Any]], list[tuple[str, str]]]:
    """(scores rows, pairs without a score) from the run's margins.parquet (original context only)."""
    from vlaudit.sources.margins import read_margins

    runs = [r for r in read_margins(margins_path) if r.interface == interface]
    if len(runs) != 1:
        raise InputError(f"expected one {interface!r} run, found {len(runs)}", path=margins_path, field="interface")
    run = runs[0]
    scored = dict(zip((str(i) for i in run.item_ids), run.margins["original"].tolist(), strict=True))
    rows = [{"image_id": image_id, "caption_id": caption_id, "score": float(scored[item_id])}
            for item_id, (image_id, caption_id) in pairs.items() if item_id in scored]
    missing = [key for item_id, key in pairs.items() if item_id not in scored]
    return rows, missing
