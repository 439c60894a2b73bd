"""Typed records passed between stages: exact cycles (cycle paper §2.1) and labelled benchmark pairs (§2.2).

Identifiers are strings everywhere (COCO's integer ids are written as their decimal text), so that ids
read from JSONL, CSV and Parquet compare equal whatever type the file stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Cycle:
    """One exact counterfactual pairing cycle (cycle paper §2.1).

    Two valid pairs (u1, v1) and (u2, v2) and their two swaps (u1, v2) and (u2, v1), whose validity
    labels are 1, 1, 0, 0. The same two images and two captions appear on both sides, so every image and
    caption has signed degree zero and additive scores cancel exactly (Theorem 1).
    """

    cycle_id: str
    family: str
    image_1: str
    caption_1: str
    image_2: str
    caption_2: str
    split: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def entries(self) -> tuple[tuple[str, str, int], ...]:
        """The four (image, caption, label) entries of the block: matched pairs first, then the swaps."""
        return (
            (self.image_1, self.caption_1, 1),
            (self.image_2, self.caption_2, 1),
            (self.image_1, self.caption_2, 0),
            (self.image_2, self.caption_1, 0),
        )


@dataclass(frozen=True)
class LabelledPair:
    """One benchmark entry: image id, caption key (id, or the text itself), label 1/0 and the text if known."""

    image_id: str
    caption: str
    label: int
    text: str | None = None
