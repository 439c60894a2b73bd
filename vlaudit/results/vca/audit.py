"""The records of one Visual Credit Audit report (``vca.json``, VCA §3, §11–§13, §18, §19).

A :class:`RunAudit` is one (model, dataset, interface) run: the headline rates Acc, Dep, D-CC, C-U = Acc − D-CC
(fractions in [0, 1]) with their paired cluster-bootstrap intervals, the taxonomy, the optional axes and the
coverage of every quantity. A rate that cannot be computed (no labels, an empty subset) is None, never NaN;
an axis whose context the run lacks is None (``perm`` without a ``mismatch`` margin, ``relation`` without
relation groups, ``erasure_geometry`` without the geometry columns). Sections whose keys depend on the run's
own contexts or strata are typed rows keyed by a field (``stratified``, ``balanced``, ``survival``, ``gap``,
``relation``, ``erasure_geometry``, ``noise``: :mod:`vlaudit.results.vca.run_sections`, a figure not
computable there ``Missing(reason)``); ``benchmark`` holds the benchmarks' own figures
(:class:`~vlaudit.results.vca.benchmark.BenchmarkFigures`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from vlaudit.results.missing import Missing
from vlaudit.results.vca.benchmark import BenchmarkFigures
from vlaudit.results.vca.coverage import ScoringCoverage
from vlaudit.results.vca.run_sections import (
    Balanced,
    ErasureGeometry,
    GapSummary,
    RelationSummary,
    RunNoise,
    Stratum,
    Survival,
)
from vlaudit.results.versioned import Interval


def none_for_empty_intervals(value: object) -> object:
    """A JSON value with every ``[null, null]`` interval as ``null`` (how files written before intervals that
    are not computable became ``null`` said it)."""
    if isinstance(value, list):
        if len(value) == 2 and value[0] is None and value[1] is None:
            return None
        return [none_for_empty_intervals(v) for v in value]
    if isinstance(value, dict):
        return {k: none_for_empty_intervals(v) for k, v in value.items()}
    return value


def rate(value: float | None) -> float | None:
    """A rate as a record holds it: None for a missing or non-finite value (never NaN)."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def interval(value: tuple[float, float] | list[float] | None) -> Interval | None:
    """An interval as a record holds it: None when missing or when either end is not finite."""
    if value is None:
        return None
    low, high = float(value[0]), float(value[1])
    return (low, high) if math.isfinite(low) and math.isfinite(high) else None


@dataclass(frozen=True)
class HeadlineIntervals:
    """Paired cluster-bootstrap percentile intervals of the headline rates (VCA §19); None without labels."""

    acc: Interval | None
    dep: Interval | None
    dcc: Interval | None
    cu: Interval | None
    wrong_dep: Interval | None
    strict: Interval | None


@dataclass(frozen=True)
class Taxonomy:
    """The four cells correct×dependent (sum to 1) and credited precision D-CC / Dep (VCA §12)."""

    correct_dep: float | None
    correct_nodep: float | None
    wrong_dep: float | None
    wrong_nodep: float | None
    credited_precision: float | None
    ci_credited_precision: Interval | None
    wilson_credited_precision: Interval | None


@dataclass(frozen=True)
class PermutationAxis:
    """Matched image-permutation calibration on the items with a ``mismatch`` margin (VCA §11):
    Δ_DCC^perm = D-CC − D-CC_perm on those same items."""

    n: int
    n_excluded: int
    dcc: float | None
    dep_perm: float | None
    dcc_perm: float | None
    delta_dcc: float | None
    cu_perm: float | None
    orig_only: float | None
    perm_only: float | None
    ci_delta_dcc: Interval | None
    ci_dcc_perm: Interval | None
    ci_dep_perm: Interval | None


@dataclass(frozen=True)
class Sensitivity:
    """VCA Table 28: Dep and Strict T/B on the headline items; Dep+M and Strict+M on the ``n_m`` mismatch
    items (None without them) with headline Dep on those items; mean G_img."""

    n: int
    dep: float | None
    strict: float | None
    gap_mean: float | None
    ci_dep: Interval | None
    ci_strict: Interval | None
    n_m: int
    n_m_excluded: int
    dep_m: float | None
    strict_m: float | None
    dep_on_m_items: float | None
    ci_dep_m: Interval | None
    ci_strict_m: Interval | None


@dataclass(frozen=True)
class ControlSetCheck:
    """An alternate control set against the headline gap on the items that have its contexts (VCA §18)."""

    control_set: str
    n: int
    n_excluded: int
    dep_reference: float | None
    dcc_reference: float | None
    dep: float | None
    agreement: float | None
    spearman: float | None
    dcc: float | None
    cu: float | None
    cu_jaccard: float | None
    strict: float | None


@dataclass(frozen=True)
class AggregationCheck:
    """A control-aggregation variant of G_img against the headline gap (VCA §18)."""

    variant: str
    dep: float | None
    agreement: float | None
    spearman: float | None
    dcc: float | None
    cu: float | None
    cu_jaccard: float | None


@dataclass(frozen=True)
class Robustness:
    """Alternate control sets and control-aggregation variants (VCA §18)."""

    control_sets: list[ControlSetCheck]
    aggregation: list[AggregationCheck]


@dataclass(frozen=True)
class ErasureCheck:
    """A box-erasure view (or stress probe) against the original on the items that have it (VCA §11, §18):
    decision survival, mean support drop r_o − r_c, share of positive drops, survival among dependent items."""

    context: str
    n: int
    n_excluded: int
    same: float | None
    drop_mean: float | None
    drop_positive: float | None
    same_dep: float | None


@dataclass(frozen=True)
class Coverage:
    """n and excluded count of one quantity of the run (each quantity uses the items it can)."""

    quantity: str
    contexts: str
    n: int
    n_excluded: int
    missing: str


@dataclass(frozen=True)
class TieCounts:
    """Items whose rate a tie decides (|margin| ≤ ``tol`` is no decision, VCA §12 with the tie convention of
    :mod:`vlaudit.metrics.vca.support`): a tied original (``acc``: d is the §9 tie-break), a tied gap
    (``dep``), an item Strict only were its ties read as decisions against d (``strict``)."""

    tol: float
    acc: int
    dep: int
    strict: int


@dataclass(frozen=True)
class BootstrapPlan:
    """The one count matrix every interval of the run shares (VCA §19): ``cluster`` the column its clusters
    came from (``cluster``, ``group_id``, ``item_id`` or the ``--cluster`` column), ``unit`` what a cluster
    is (stem, image, relation group, item, ...), ``n_clusters`` how many there are; ``small_sample`` the
    warning printed when they are fewer than :data:`~vlaudit.settings.MIN_CLUSTERS` (None otherwise);
    ``method`` how the intervals read the resamples (``expanded percentile``, the small-k correction of
    :mod:`vlaudit.stats.bootstrap`; a file written before it was recorded used the plain ``percentile``);
    ``notes`` what the unit means beside the paper's (a departure from VCA §19, an override finer than the
    declared cluster)."""

    n_resamples: int
    seed: int
    level: float
    cluster: str
    unit: str
    n_clusters: int
    small_sample: str | None
    method: str = "percentile"
    notes: list[str] = field(default_factory=list)


class NamedRun:
    """The key and the name of a record of one (model, dataset, interface) run: one definition for the audit's
    records and the report's."""

    model: str
    dataset: str
    interface: str

    @property
    def key(self) -> tuple[str, str, str]:
        """(model, dataset, interface)."""
        return self.model, self.dataset, self.interface

    @property
    def name(self) -> str:
        """``model · dataset · interface``, as the console and the HTML report name a run."""
        return f"{self.model} · {self.dataset} · {self.interface}"


@dataclass(frozen=True, kw_only=True)
class RunAudit(NamedRun):
    """One (model, dataset, interface) run of the audit (see the module docstring).

    ``stratified``, ``balanced``, ``survival``, ``gap``, ``relation``, ``noise``: the records of
    :mod:`vlaudit.results.vca.run_sections` (``noise`` Missing without a noise floor, ``relation`` None without
    relation groups); ``erasure_geometry``: VCA Table 11 (None without geometry columns); ``benchmark``: the
    benchmarks' own figures (:mod:`vlaudit.results.vca.benchmark`).
    """

    model: str
    dataset: str
    interface: str
    n: int
    n_total: int
    n_excluded: int
    excluded_items: list[str]
    labelled: bool
    contexts: list[str]
    controls: list[str]
    acc: float | None
    dep: float | None
    dcc: float | None
    cu: float | None
    wrong_dep: float | None
    strict: float | None
    #: the items whose Acc, Dep or Strict a tie decides; None in files written before ties were counted
    ties: TieCounts | None = None
    ci: HeadlineIntervals
    taxonomy: Taxonomy
    stratified: list[Stratum]
    balanced: list[Balanced]
    survival: Survival
    gap: GapSummary
    perm: PermutationAxis | None = None
    sensitivity: Sensitivity
    relation: RelationSummary | None = None
    robustness: Robustness
    erasure: list[ErasureCheck]
    erasure_geometry: ErasureGeometry | None
    stress: list[ErasureCheck]
    coverage: list[Coverage]
    benchmark: BenchmarkFigures
    noise: RunNoise | Missing
    warnings: list[str]
    bootstrap: BootstrapPlan
    #: the records the scoring run asked for and scored for this dataset and interface (``summary.json`` beside
    #: the margins file, :mod:`vlaudit.results.vca.coverage`); None when not recorded (a margins table that is
    #: not a ``vca score`` run folder's, a file written before coverage was)
    scoring: ScoringCoverage | None = None
    #: whether ``scoring`` falls below the report's ``min_coverage``: then its numbers are not a result
    below_coverage: bool = False

    def interval_of(self, name: str) -> Interval | None:
        """The bootstrap interval of a headline rate (``acc``, ``dep``, ``dcc``, ``cu``, ``wrong_dep``,
        ``strict``)."""
        value: Interval | None = getattr(self.ci, name)
        return value

    def rate_of(self, name: str) -> float | None:
        """A headline rate by name (``acc``, ``dep``, ``dcc``, ``cu``, ``wrong_dep``, ``strict``)."""
        value: float | None = getattr(self, name)
        return value


@dataclass(frozen=True)
class MacroAverage:
    """Unweighted means over models of rates computed within model, per (dataset, interface) (VCA §19)."""

    dataset: str
    interface: str
    models: int
    acc: float | None
    dep: float | None
    dcc: float | None
    cu: float | None
    wrong_dep: float | None
    delta_dcc: float | None


@dataclass(frozen=True)
class AuditSettings:
    """The report's prespecified options (VCA §19)."""

    controls: list[str]
    n_resamples: int
    seed: int
    level: float
    control_sets: list[str]
    #: ``--min-coverage`` (None in files written before coverage was checked)
    min_coverage: float | None = None
