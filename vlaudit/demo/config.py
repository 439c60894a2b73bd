"""The demo's sizes and known-answer bounds (:class:`DemoConfig`, :class:`Thresholds`): what every stage of the
pipeline (:mod:`vlaudit.demo.pipeline`, :mod:`vlaudit.demo.cycles`) reads, below them all."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vlaudit.analysis.cycles.synthetic import SyntheticConfig
from vlaudit.results.demo import Thresholds as Thresholds
from vlaudit.settings import CYCLE_SEEDS, DEMO_RESAMPLES, MIN_CYCLES, PROBE_BATCH_SIZE, PROBE_RANK

REFERENCE_ENCODERS = ("ref:scene-clip-spatial", "ref:scene-clip-bag")


@dataclass(frozen=True)
class DemoConfig:
    """Sizes of the demo; :meth:`quick` is the small version the tests run."""

    seed: int = 0
    seeds: tuple[int, ...] = CYCLE_SEEDS
    quick: bool = False
    synthetic_seeds: tuple[int, ...] = CYCLE_SEEDS
    # `vlaudit synthetic`'s default sizes: the rank control's known answer (the three-seed mean rises to rank 8,
    # Table 1) and the additive shortcut row need them; the quick run keeps one seed at smaller sizes
    synthetic: SyntheticConfig = field(default_factory=SyntheticConfig)
    n_scenes: int = 800
    min_cycles: int = MIN_CYCLES
    n_resamples: int = DEMO_RESAMPLES
    encoders: tuple[str, ...] = REFERENCE_ENCODERS
    models: tuple[str, ...] = ()  # users' dual encoders (`--model`), audited on the cycles beside the references
    vca_models: tuple[str, ...] = ()  # users' yes/no models (`--model`), audited in the VCA stage
    probe_rank: int = PROBE_RANK
    ranks: tuple[int, ...] = (1, 4, 16, 64)
    # full-batch steps: a few hundred train cycles per family, so one step per epoch (selection on val each epoch)
    probe_epochs: int = 20
    probe_batch: int = PROBE_BATCH_SIZE
    probe_lr: float = 3e-2
    stored_scorers: tuple[str, ...] = ("additive", "zero-shot", "probe-rank-64")
    torch_threads: int | None = 1
    thresholds: Thresholds = field(default_factory=Thresholds)

    @classmethod
    def quick_config(cls, **changes: Any) -> DemoConfig:
        base = cls(seeds=(0,), quick=True, synthetic_seeds=(0,), n_scenes=500,
                   synthetic=SyntheticConfig(n_train=800, n_val=300, n_test=600),
                   min_cycles=10, n_resamples=300,
                   ranks=(1, 64), thresholds=Thresholds(coarse_min=0.8, absent_band=0.1, spatial_probe_min=0.7))
        return replace(base, **changes)

    def with_seed(self, seed: int) -> DemoConfig:
        """The same sizes on seeds ``seed, seed + 1, …`` (as many as before)."""
        return replace(self, seed=seed, seeds=tuple(seed + k for k in range(len(self.seeds))))

    @property
    def all_encoders(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.encoders, *self.models)))
