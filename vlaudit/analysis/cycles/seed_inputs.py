"""One seed's inputs to a cycle-paper experiment: its cycles and the frozen features they index (cycle paper
§D.5: every seed has its own independently constructed, image-disjoint cycle split).

Below :mod:`vlaudit.analysis.cycles.experiment` and :mod:`vlaudit.analysis.cycles.provenance`, which both read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlaudit.probes.trainer import ProbeData, cycles_to_index
from vlaudit.records import Cycle
from vlaudit.results.cycle_experiments import SeedBuild


@dataclass
class SeedInputs:
    """One seed's cycles and the features they index (image/caption id → row of ``x`` / ``y``).

    ``extra_texts``: additional caption rows (e.g. the OE-marked captions) keyed by caption id, appended to
    ``y`` by :meth:`with_texts`. ``built_unavailable``: families the cycles build already withdrew by its own
    minimum (``unavailable`` of its ``.meta.json``: family → {split: count}); they are in no cycle of the file.
    """

    seed: int
    cycles: list[Cycle]
    image_ids: list[str]
    x: np.ndarray
    caption_ids: list[str]
    y: np.ndarray
    source: str = ""
    built_unavailable: dict[str, dict[str, int]] = field(default_factory=dict)
    build: SeedBuild | None = None  # what its CYCLES.meta.json records (BUILD_PROVENANCE), None without one
    test_source: str = ""  # the test build's cycles file (the paper's COCO protocol), "" when one file holds all
    test_build: SeedBuild | None = None  # what the test build's CYCLES.meta.json records
    image_row: dict[str, int] = field(init=False)
    caption_row: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.x = np.array(self.x, dtype=np.float32)  # copies: Parquet arrays are read-only
        self.y = np.array(self.y, dtype=np.float32)
        self.image_row = {k: i for i, k in enumerate(self.image_ids)}
        self.caption_row = {k: i for i, k in enumerate(self.caption_ids)}

    @classmethod
    def from_features(cls, seed: int, cycles: list[Cycle], features: Any, source: str = "",
                      built_unavailable: Mapping[str, Mapping[str, int]] | None = None) -> SeedInputs:
        return cls(seed, cycles, list(features.image_ids), features.images, list(features.caption_ids),
                   features.texts, source, {f: dict(c) for f, c in (built_unavailable or {}).items()})

    def with_texts(self, extra: Mapping[str, np.ndarray]) -> SeedInputs:
        """A copy whose caption table also holds ``extra`` (caption id → feature row)."""
        keys = [k for k in extra if k not in self.caption_row]
        y = np.concatenate([self.y, np.stack([extra[k] for k in keys])]) if keys else self.y
        return SeedInputs(self.seed, self.cycles, self.image_ids, self.x, self.caption_ids + keys, y, self.source,
                          self.built_unavailable, self.build, self.test_source, self.test_build)

    def select(self, split: str, family: str | Sequence[str] | None = None) -> list[Cycle]:
        fams = None if family is None else {family} if isinstance(family, str) else set(family)
        return [c for c in self.cycles if c.split == split and (fams is None or c.family in fams)]

    def probe_data(self, cycles: Sequence[Cycle], name: str) -> ProbeData:
        index = cycles_to_index(cycles, self.image_row, self.caption_row, source=self.source)
        return ProbeData(self.x, self.y, cycles=index, name=name)
