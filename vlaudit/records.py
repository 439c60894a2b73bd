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


# ------------------------------------------------------------------------------------ compositionality suites


@dataclass(frozen=True, slots=True)
class SuiteImage:
    """One image of a suite item: a file relative to the images folder, optionally a crop of it.

    ``crop`` is ``(x, y, w, h)`` in pixels of the file (ARO VG-Relation/Attribution's ``bbox_x/y/w/h``,
    CREPE's ``x, y, width, height``); None is the whole image. :attr:`key` is the image's identity wherever
    scores are cached or joined: the path, plus ``#x,y,w,h`` for a crop."""

    path: str
    crop: tuple[float, float, float, float] | None = None

    @property
    def key(self) -> str:
        if self.crop is None:
            return self.path
        return self.path + "#" + ",".join(f"{value:g}" for value in self.crop)


@dataclass(frozen=True)
class SuiteItem:
    """One item of a compositionality suite as published: its images, its candidate texts, which pairs are true.

    ``images`` and ``texts`` keep the suite's own order (the official metric's tie rule depends on it: ARO's
    VG-Relation takes the argmax over ``[false, true]``, so a tie picks the false caption). ``positives`` are
    the true (image index, text index) pairs; every other (image, text) pair of the item is a negative. The
    item's score matrix is ``S[i, j] = s(images[i], texts[j])`` (:class:`vlaudit.metrics.suites.SuiteScores`).

    ``subset`` is the unit the suite's official aggregation groups by (ARO: the relation or attribute pair;
    VALSE: the piece; SugarCrepe: the file; SPEC: the subset), ``record`` where the item is in its file (for
    errors), ``extra`` the release's other fields (kept for lints and reports, never used by a metric)."""

    suite: str
    item_id: str
    subset: str
    images: tuple[SuiteImage, ...]
    texts: tuple[str, ...]
    positives: tuple[tuple[int, int], ...]
    record: str
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: where an item's official samples are one direction of it: ``"i2t"`` (each positive's image row is one
    #: sample: texts ranked for an image), ``"t2i"`` (each positive's text column is one); None where the metric
    #: reads the whole matrix (a 2×2 block). SPEC's K×K test cases are written once per direction.
    direction: str | None = None

    def pairs(self) -> tuple[tuple[int, int, int], ...]:
        """Every (image index, text index, label) of the item, row-major: label 1 for a positive, else 0."""
        true = set(self.positives)
        return tuple((i, j, int((i, j) in true)) for i in range(len(self.images)) for j in range(len(self.texts)))


@dataclass(frozen=True)
class SuiteRead:
    """What a suite reader read: the items, the file, and how many records it read, kept and left out (why).

    ``counts`` always holds ``read`` and ``kept``; every reason a record was left out is one more key (VALSE:
    ``"mturk.caption < 2"``), so a reader that filters says how much (``read == kept + sum(left out)``).
    ``notes`` are one-line facts a user must see (how a seeded perturbation was rebuilt, a known bug followed)."""

    suite: str
    source: str
    items: list[SuiteItem]
    counts: Mapping[str, int]
    notes: tuple[str, ...] = ()
