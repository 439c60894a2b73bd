"""CircularEval (MMBench, Liu et al. 2023): each multiple-choice item in every rotation of its options.

Rotation j moves option k to position (k − j) mod K, so the gold option takes every letter once; rotation 0
is the item as published. Each rotated item is ``<item_id>~r<j>`` and carries ``circular_id`` (the item's
id) and ``rotation`` (j), which the margins table keeps and ``vca report`` groups by (credit per rotation and
"credited in every rotation", :func:`vlaudit.metrics.vca.benchmark_figures.circular_figures`).

An item that already belongs to a published circular group (MMBench's copies, index + k·10⁶, read with their
``circular_id``) is kept as published: its group is CircularEval already, and rotating each copy again would
score every question K² times in K groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from vlaudit.errors import InputError
from vlaudit.sources.items import BenchmarkItem, option_letters


def circular_items(items: Sequence[BenchmarkItem]) -> list[BenchmarkItem]:
    """Every item in each of its K option rotations (an item without options is an InputError); an item of a
    published circular group is kept as it is."""
    out = []
    for item in items:
        if item.extra.get("circular_id") is not None:
            out.append(item)
            continue
        if not item.options:
            raise InputError("--circular rotates options; this item has none", record=item.item_id, field="options")
        k = len(item.options)
        letters = option_letters(k)
        for j in range(k):
            options = tuple(item.options[(i + j) % k] for i in range(k))
            label = None if item.label is None else letters[(letters.index(item.label) - j) % k]
            # the rotations of one question are one cluster (resampled together) unless it has a wider one
            out.append(replace(item, item_id=f"{item.item_id}~r{j}", options=options, label=label,
                               cluster=item.cluster or item.item_id, cluster_unit=item.cluster_unit or "question",
                               extra={**item.extra, "circular_id": item.item_id, "rotation": j}))
    return out
