"""Typed results of the cycle paper's experiments on frozen features (cycle paper §5.2–§5.6, §D.5, §E): the part
every experiment writes (:class:`CycleExperimentResult`) and each experiment's own rows.

The records are named after the paper's quantities: an across-seed :class:`SeedAggregate` (value per seed,
mean, sample sd), a family withdrawn by §D.5's minimum (:class:`Withdrawn`), the additive audit (§E.4: an
additive probe's CycleAcc is exactly ½, :class:`AdditiveAudit`). "Not computable" is None: a seed without the
quantity, the sd of one seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from vlaudit.results.cycles import Setting, SplitCounts
from vlaudit.results.missing import Missing
from vlaudit.results.versioned import VersionedResult


@dataclass(frozen=True)
class SeedAggregate:
    """One quantity across seeds: its value per seed (None where the seed has none, e.g. a family withdrawn
    there), mean and sample sd (ddof = 1; None for one seed) over the ``n_seeds`` seeds that have it."""

    per_seed: dict[str, int | float | None]
    mean: float | None
    sd: float | None
    n_seeds: int
    #: seeds whose value is shown in ``per_seed`` but left out of mean and sd, with why (a probe below chance on
    #: its own training data: it did not learn)
    left_out: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Withdrawn:
    """A family withdrawn in one seed by §D.5's minimum (fewer than ``min_cycles`` validation cycles, or none in
    train or test), with its cycles per split and whether the experiment or the cycles build withdrew it."""

    family: str
    seed: int
    cycles: SplitCounts
    withdrawn_by: Literal["experiment", "build"]


@dataclass(frozen=True)
class ProbeNote:
    """A note of one probe's training (a smaller batch on a small set, ending below chance)."""

    probe: str
    note: str


@dataclass(frozen=True)
class ProbeRun:
    """How one probe was trained: its training units, the batch and optimiser steps it actually ran (the batch
    rule of :func:`vlaudit.probes.trainer.effective_batch_size`) and whether it ended below chance on them."""

    probe: str
    n_train: int
    batch_size: int | None
    steps: int
    below_chance: bool


@dataclass(frozen=True)
class ProbeSettings:
    """The optimiser settings of one probe kind and the section that states them (§E.3, §E.4)."""

    epochs: int
    lr: float
    batch_size: int
    weight_decay: float
    min_steps: int
    paper: str


@dataclass(frozen=True)
class PaperSetting:
    """A setting the cycle paper states: the run's value, the paper's and the section."""

    value: Setting
    paper: Setting
    section: str


@dataclass(frozen=True)
class SettingsProvenance:
    """Every setting of a run, sorted by where it comes from: equal to the paper's, departing from it, or
    vlaudit's own (the paper states none)."""

    paper: dict[str, PaperSetting]
    departs: dict[str, PaperSetting]
    not_in_paper: dict[str, Setting]


@dataclass(frozen=True)
class SeedBuild:
    """What one seed's cycles build recorded in its ``CYCLES.meta.json`` (§D.5): the source, the seed of the
    image pool every seed shares and its size (``max_images`` asked, ``images_in_pool`` drawn), the seed of the
    splits drawn inside it and the split fractions. None: the build did not record it (a JSONL source has no
    pool; a file of an older vlaudit)."""

    source: str | None = None
    pool_seed: int | None = None
    seed: int | None = None
    max_images: int | None = None
    images_in_pool: int | None = None
    splits: dict[str, float] | None = None
    #: the annotation file it read (COCO: instances_train2017.json or instances_val2017.json)
    instances: str | None = None
    #: which cycles its minimum counted (§D.5: "val"; a test build: "val of" the train build's metadata)
    min_cycles_counted: str | None = None


@dataclass(frozen=True)
class CycleBuilds:
    """Per seed what its cycles build recorded (:class:`SeedBuild`; :class:`Missing` when the cycles file has
    no metadata beside it), and whether every seed drew its splits inside one image pool (§D.5; Missing when
    no seed's build is known, None in a file written before reasons were recorded)."""

    # Missing first: a reader tries the union's types in order, and a SeedBuild (all defaults) reads any object
    per_seed: dict[str, Missing | SeedBuild]
    shared_pool: bool | Missing | None
    #: the paper's COCO protocol, a second build per seed for the test split (test from val2017, train/val from
    #: train2017): what each seed's test build recorded; None when one file per seed holds every split
    test_per_seed: dict[str, Missing | SeedBuild] | None = None
    #: the cycles files read per seed: ``{"train": path, "test": path}`` (only ``train`` without a test build)
    files: dict[str, dict[str, str]] | None = None


@dataclass(frozen=True)
class AdditiveFailure:
    """An additive-column probe whose exact CycleAcc is not ½ or tie rate not 1 in one seed and family."""

    seed: int
    family: str
    probe: str
    cycle_acc: float | None
    tie_rate: float | None


@dataclass(frozen=True)
class AdditiveAudit:
    """The additive audit (cycle paper §E.4, Theorem 1): every additive probe a(x) + b(y) (image-only,
    text-only, additive) has Δ = 0 on every complete block, so CycleAcc exactly ½ and tie rate exactly 1.
    ``ok`` iff ``checked`` > 0 cells were checked and none failed."""

    ok: bool
    checked: int
    failures: list[AdditiveFailure]


@dataclass(frozen=True, kw_only=True)
class ExperimentRun:
    """What every cycle-paper experiment records of its run (§5.2–§5.6, §D.5, §E.3–§E.5), the one definition of
    the fields every experiment's result shares: the files written beside it, its name, the split its numbers
    are on, seeds, settings and their provenance, each seed's cycle build, the families the paper does not
    have, the probe notes, §D.5's minimum and the families it withdrew."""

    files: dict[str, str]
    experiment: str
    split: str
    seeds: list[int]
    config: dict[str, Setting]
    probe_settings: dict[str, ProbeSettings]
    settings: SettingsProvenance
    cycle_builds: CycleBuilds
    families_not_in_paper: list[str]
    probe_notes: list[ProbeNote]
    min_cycles: int
    unavailable: list[Withdrawn]
    #: every trained probe's batch and steps as run (empty in a file written before they were recorded)
    probe_runs: list[ProbeRun] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class CycleExperimentResult(ExperimentRun, VersionedResult):
    """One cycle-paper experiment (diagnostics, rank-sweep, oe, transfer; §5.2–§5.6): what every experiment
    writes (:class:`ExperimentRun`, its keys first in the file) and the files written beside it. Each
    experiment's result adds its rows."""

    file_name = "NAME.json"
    written_by = "experiment diagnostics|rank-sweep|oe|transfer"


@dataclass(frozen=True)
class DiagnosticsRow:
    """Table 2/8, one (family, probe): exact test CycleAcc, tie rate, test n and (shortcut probes) the pair
    AUROC on ordinary pairs with shortcut-bearing negatives, each across seeds."""

    family: str
    probe: str
    cycle_acc: SeedAggregate
    tie_rate: SeedAggregate
    n: SeedAggregate
    pair_auroc: SeedAggregate


@dataclass(frozen=True, kw_only=True)
class DiagnosticsResult(CycleExperimentResult):
    """``experiment diagnostics`` (cycle paper §5.2, Tables 2 and 8): one row per (family, probe) and the
    additive audit."""

    file_name = "diagnostics.json"
    written_by = "experiment diagnostics"

    probes: list[str]
    rows: list[DiagnosticsRow]
    additive_audit: AdditiveAudit


@dataclass(frozen=True)
class RankSweepRow:
    """Table 3, one (family, rank): exact test CycleAcc, tie rate and n across seeds; rank ``additive`` is the
    additive reference probe."""

    family: str
    rank: int | Literal["additive"]
    cycle_acc: SeedAggregate
    tie_rate: SeedAggregate
    n: SeedAggregate


@dataclass(frozen=True, kw_only=True)
class RankSweepResult(CycleExperimentResult):
    """``experiment rank-sweep`` (cycle paper §5.4, Table 3, Fig. 2): rows per (family, rank), the additive
    reference rows and their audit."""

    file_name = "rank_sweep.json"
    written_by = "experiment rank-sweep"

    ranks: list[int]
    rows: list[RankSweepRow]
    additive: list[RankSweepRow]
    additive_audit: AdditiveAudit


@dataclass(frozen=True)
class OeRow:
    """Table 4, one protocol: its selection metric and value on validation, the marked-validation AUROC and
    the exact test CycleAcc, tie rate and n on the unmarked test cycles, across seeds."""

    protocol: str
    val_metric: str
    val_value: SeedAggregate
    val_auroc: SeedAggregate
    test_cycle_acc: SeedAggregate
    test_tie_rate: SeedAggregate
    n_test: SeedAggregate


@dataclass(frozen=True, kw_only=True)
class OeResult(CycleExperimentResult):
    """``experiment oe`` (cycle paper §5.5, Tables 4 and 7): one row per protocol and the per-seed difference
    Cycle OE − Shortcut OE of test CycleAcc."""

    file_name = "oe.json"
    written_by = "experiment oe"

    val_split: str
    marker: str
    families: list[str] | None
    families_per_seed: dict[str, list[str]]
    rows: list[OeRow]
    difference_cycle_minus_shortcut: SeedAggregate


@dataclass(frozen=True)
class TransferRow:
    """§5.6, one ordered (train family, test family) pair: transfer CycleAcc on the test family's test cycles,
    the families' cycle-difference alignment on validation cycles and the test n, across seeds."""

    train_family: str
    test_family: str
    off_diagonal: bool
    cycle_acc: SeedAggregate
    alignment: SeedAggregate
    n: SeedAggregate


@dataclass(frozen=True)
class TransferCorrelation:
    """The within-seed Pearson correlation of alignment with transfer CycleAcc over the off-diagonal pairs,
    per seed and across seeds (descriptive: the pairs share families and probes)."""

    per_seed: dict[str, float | None]
    mean: float | None
    sd: float | None
    n_seeds: int
    what: str


@dataclass(frozen=True, kw_only=True)
class TransferResult(CycleExperimentResult):
    """``experiment transfer`` (cycle paper §5.6): one row per ordered family pair and the correlation of
    alignment with transfer."""

    file_name = "transfer.json"
    written_by = "experiment transfer"

    alignment_split: str
    rows: list[TransferRow]
    correlation: TransferCorrelation


EXPERIMENT_RESULTS: dict[str, type[CycleExperimentResult]] = {
    "diagnostics": DiagnosticsResult, "rank-sweep": RankSweepResult, "oe": OeResult, "transfer": TransferResult}
