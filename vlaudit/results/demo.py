"""Typed results of the benchmark-item builders and of the known-answer demo. Each class is one JSON file."""

from __future__ import annotations

from dataclasses import dataclass

from vlaudit.results.cycles import CycleAudit
from vlaudit.results.missing import Missing
from vlaudit.results.versioned import Interval, VersionedResult


@dataclass(frozen=True)
class ItemNote:
    """A note on one kept item (an entity the caption and the boxes name differently, an item without boxes)."""

    record: str
    note: str


#: what a known-answer check observed: a flag, a number, text, an interval or a small object of named numbers,
#: Missing (with the reason) where the run gave none; None only in a file written before reasons were recorded.
#: Missing first: a reader tries the union's types in order, and the object of numbers reads any object.
Observed = Missing | bool | int | float | str | list[float] | dict[str, float | list[float]] | None


@dataclass(frozen=True)
class Exclusion:
    """A source row a builder or reader did not make an item, and why (``record`` names the row: ``line 12``,
    ``entry 3 (image 17697)``); the relation or the caption that made it fail where the builder has one."""

    record: str
    reason: str
    relation: str | None = None
    caption: str | None = None


@dataclass(frozen=True, kw_only=True)
class ItemsBuildSummary(VersionedResult):
    """What an ITEMS builder kept and why it excluded the rest (counted and listed), notes and warnings."""

    file_name = "ITEMS.summary.json"
    written_by = "data vsr|vsr-inverse|gsr-coco|whatsup-controlled|items"

    n_items: int
    n_excluded: int
    excluded_by_reason: dict[str, int]
    excluded: list[Exclusion]
    #: the benchmark readers' notes are lines of text; the VSR, GSR and What's Up builders note items
    notes: list[str | ItemNote]
    warnings: list[str]


@dataclass(frozen=True, kw_only=True)
class KnownAnswer:
    """One known-answer check of the demo: what was expected, what was observed (a flag, a number, text or a
    small object of named numbers and intervals; :class:`Missing` with the reason when the run gave none), and
    whether it passed."""

    check: str
    expected: str
    observed: Observed
    passed: bool


@dataclass(frozen=True, kw_only=True)
class SyntheticRowSummary:
    """One synthetic control's mean over seeds (cycle paper §5.1) and what it is expected to be."""

    diagnostic: str
    probe: str
    metric: str
    mean: float | None
    expected: str


@dataclass(frozen=True, kw_only=True)
class DemoSynthetic:
    """The synthetic controls' checks (each held on every seed) and their rows."""

    checks: dict[str, bool]
    rows: list[SyntheticRowSummary]


@dataclass(frozen=True, kw_only=True)
class DemoCycleCell:
    """Exact CycleAcc of one scorer, family and split pooled over seeds: the mean over seeds, its bootstrap
    interval, ties and tie rate (|Δ| ≤ tol), and each seed's CycleAcc; None where the cell has no cycles."""

    n: int
    cycle_acc: float | None
    ci: Interval | None
    ties: int
    tie_rate: float | None
    per_seed: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class DemoScorer:
    """One scorer's cells: family → split → :class:`DemoCycleCell`."""

    families: dict[str, dict[str, DemoCycleCell]]


@dataclass(frozen=True, kw_only=True)
class DemoEncoder:
    """One encoder's scorers (zero-shot, additive, probe-rank-R) by name."""

    scorers: dict[str, DemoScorer]


@dataclass(frozen=True, kw_only=True)
class DemoAuditSummary:
    """The Table-5 audit over every seed, source, family and split: the largest |signed degree| and marginal
    TV, and the validity violations (all 0 for exact cycles)."""

    max_abs_signed_degree: int | float
    max_tv: float
    violations: int


@dataclass(frozen=True, kw_only=True)
class DemoRankPoint:
    """The rank-R probe's CycleAcc of one encoder and family (the probe-rank sweep)."""

    model: str
    family: str
    rank: int
    cycle_acc: float | None
    ci: Interval | None
    n: int


@dataclass(frozen=True, kw_only=True)
class DemoCycleStage:
    """The demo's cycle stage on the test split: cycle counts (seed → source → family → split → n), the
    Table-5 audit, CycleAcc per encoder and scorer over seeds, the probe-rank sweep and the plots written."""

    split: str
    seeds: list[int]
    counts: dict[str, dict[str, dict[str, dict[str, int]]]]
    audit: DemoAuditSummary
    encoders: dict[str, DemoEncoder]
    rank_sweep: list[DemoRankPoint]
    files: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class DemoRunHeadline:
    """One reference model's headline on one (dataset, interface): Acc, Dep, D-CC, C-U and their intervals."""

    model: str
    dataset: str
    interface: str
    n: int
    acc: float | None
    dep: float | None
    dcc: float | None
    cu: float | None
    ci: dict[str, Interval | None]


@dataclass(frozen=True, kw_only=True)
class DemoDeltaV:
    """The mean source effect Δ_V under the relation-free note, its interval and the share of positive Δ_V."""

    mean: float | None
    ci: Interval | None
    positive_share: float | None


@dataclass(frozen=True, kw_only=True)
class DemoFactorialRow:
    """One model's evidence-source factorial (VCA §10): stems, correct decisions, C-U, responsiveness, flips."""

    model: str
    stems: int
    correct: int
    cu: int
    cu_rate: float | None
    responsive_rate_all_correct: float | None
    flip_rate: float | None
    delta_v_none: DemoDeltaV


@dataclass(frozen=True, kw_only=True)
class DemoVcaStage:
    """The demo's VCA stage without its checks: each reference model's headline, the planted credited
    fraction per dataset, the factorial's per-model rows, each step's seconds and notes."""

    runs: list[DemoRunHeadline]
    planted_credited_fraction: dict[str, float]
    factorial: list[DemoFactorialRow]
    seconds: dict[str, float]
    notes: list[str]


@dataclass(frozen=True, kw_only=True)
class DemoVersions:
    """What the demo ran on: vlaudit, Python, numpy, torch, the platform and the git commit (None outside one)."""

    vlaudit: str
    python: str
    numpy: str
    torch: str
    platform: str
    commit: str | None


@dataclass(frozen=True)
class Thresholds:
    """The demo's known-answer bounds (the quick run uses looser ones where its few cycles are noisier): the
    least coarse zero-shot CycleAcc, the band around ½ of an absent relation, the least spatial probe CycleAcc."""

    coarse_min: float = 0.85
    absent_band: float = 0.10
    spatial_probe_min: float = 0.75


@dataclass(frozen=True, kw_only=True)
class DemoSettings:
    """The demo's configuration as written: the fields of :class:`vlaudit.demo.config.DemoConfig` (sizes,
    seeds, the encoders and models, the probes' settings, the known-answer bounds); ``synthetic`` holds the
    synthetic controls' sizes and settings as ``synthetic.json``'s ``config`` does."""

    seed: int
    seeds: list[int]
    quick: bool
    synthetic_seeds: list[int]
    synthetic: dict[str, int | float | list[float]]
    n_scenes: int
    min_cycles: int
    n_resamples: int
    encoders: list[str]
    models: list[str]
    vca_models: list[str]
    probe_rank: int
    ranks: list[int]
    probe_epochs: int
    probe_batch: int
    probe_lr: float
    stored_scorers: list[str]
    torch_threads: int | None
    thresholds: Thresholds


@dataclass(frozen=True, kw_only=True)
class DemoSummary(VersionedResult):
    """The known-answer demo: its configuration, every check (``known_answers``), whether all passed, and each
    stage's summary."""

    file_name = "summary.json (demo folder)"
    written_by = "demo"

    config: DemoSettings
    synthetic: DemoSynthetic
    cycles: DemoCycleStage
    vca: DemoVcaStage
    known_answers: list[KnownAnswer]
    passed: bool
    models: dict[str, str]
    timings: dict[str, float]
    versions: DemoVersions
    files: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class DemoCycleEvaluation(DemoCycleStage, VersionedResult):
    """The demo's cycle stage on the test split: cycle counts, the Table-5 audit, CycleAcc per encoder and
    scorer over seeds, and the probe-rank sweep (cycle paper §2, §5)."""

    file_name = "cycles/eval.json (demo folder)"
    written_by = "demo"


@dataclass(frozen=True, kw_only=True)
class DemoCycleAudits(VersionedResult):
    """The Table-5 audit of the demo's COCO and GQA cycles, each as ``cycles audit`` writes it
    (a :class:`~vlaudit.results.cycles.CycleAudit`; an older file holds it without its ``schema_version``)."""

    file_name = "cycles/seed-N/audit.json (demo folder)"
    written_by = "demo"

    coco: CycleAudit
    gqa: CycleAudit


@dataclass(frozen=True, kw_only=True)
class ProbeNote:
    """A probe's training note (a small-set batch, a below-chance fit) for one family and scorer."""

    family: str
    scorer: str
    note: str


@dataclass(frozen=True, kw_only=True)
class ProbeNotes(VersionedResult):
    """The probes' training notes (small-set batches, below-chance fits) of one demo encoder and seed."""

    file_name = "probe_notes.json (demo folder)"
    written_by = "demo"

    notes: list[ProbeNote]


@dataclass(frozen=True, kw_only=True)
class DemoVcaKnownAnswers(VersionedResult):
    """The demo's VCA stage: each reference model's headline, the known-answer checks, the planted credited
    fraction and the factorial's per-model rows."""

    file_name = "vca/known_answers.json (demo folder)"
    written_by = "demo"

    runs: list[DemoRunHeadline]
    known_answers: list[KnownAnswer]
    planted_credited_fraction: dict[str, float]
    factorial: list[DemoFactorialRow]
    seconds: dict[str, float]
    notes: list[str]
