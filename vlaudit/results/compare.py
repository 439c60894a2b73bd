"""Typed results of the paired model comparisons (``vlaudit compare``; VCA §19's paired bootstrap).

Every row is a record: a comparison of two models on one metric and cell, a leaderboard row, a skipped cell
with its reason. A value, difference or interval that cannot be computed (no items, a degenerate bootstrap) is
None, and a p-value is None where no test applies; nothing is NaN. Every comparison row names its resampling
``unit`` (stem, image, relation group, item, cycle, ...) and ``n_clusters``, and its ``holm_family``: the
rows one Holm adjustment runs over (:mod:`vlaudit.stats.multiplicity`); ``ci`` is the unadjusted interval.
Where a key is present on some rows only,
the rows are two record types (a binary-metric VCA comparison carries its ``noise_band``; a CycleAcc
comparison its tie rates), so every record writes exactly the keys its JSON row holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from vlaudit.results.versioned import Interval, VersionedResult

#: the test behind a VCA comparison's p-value (None: the models' denominators differ, no paired test applies);
#: "sign-flip": the exact cluster sign flip (at most EXACT_SIGN_FLIP_CLUSTERS clusters), "permutation" its
#: Monte Carlo version
VcaTest = Literal["mcnemar", "sign-flip", "permutation"]
#: the test behind a cycle comparison's p-value
#: "sign": the ½-credit sign test of files written before the exact sign-flip test replaced it (still read)
CycleTest = Literal["sign-flip", "sign", "mcnemar", "permutation"]


@dataclass(frozen=True, kw_only=True)
class NoiseFloor:
    """One model's compared decisions inside its noise floor τ (from its run's ``stability.json``): decisions
    with |m_o| ≤ τ and credits with |G_img| ≤ 2τ, counted and listed by item id."""

    measured: Literal[True] = True
    tau: float
    source: str
    n_items: int
    n_decision: int
    n_credit: int
    decision_items: list[str]
    credit_items: list[str]


@dataclass(frozen=True, kw_only=True)
class NoNoiseFloor:
    """A model whose run has no noise floor: ``note`` says how to measure one."""

    measured: Literal[False] = False
    note: str


@dataclass(frozen=True, kw_only=True)
class ComparedItems:
    """One model on one ``dataset/interface``: the items compared, those dropped by reason, its noise floor."""

    n_compared: int
    dropped: dict[str, int]
    noise: NoiseFloor | NoNoiseFloor


@dataclass(frozen=True, kw_only=True)
class UncomparedItems:
    """One model on a ``dataset/interface`` the runs share no item of: every item dropped, by reason."""

    n_compared: int
    dropped: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class VcaModel:
    """One compared model: its label, the input it was read from, and per ``dataset/interface`` its items."""

    model: str
    source: str
    datasets: dict[str, ComparedItems | UncomparedItems]


@dataclass(frozen=True, kw_only=True)
class _VcaDifference:
    """The cells every VCA comparison row starts with (a subclass adds what follows ``p``, in file order)."""

    dataset: str
    interface: str
    family: str
    metric: str
    model_a: str
    model_b: str
    n: int
    unit: str
    n_clusters: int
    value_a: float | None
    value_b: float | None
    difference: float | None
    ci: Interval | None
    test: VcaTest | None
    p: float | None
    holm_family: str


@dataclass(frozen=True, kw_only=True)
class VcaComparison(_VcaDifference):
    """A − B on one metric of one (dataset, interface, family): both values, the difference and its paired
    clustered bootstrap interval, the test and its p-value, Holm-adjusted p and whether it survives α."""

    p_holm: float | None
    survives: bool | None


@dataclass(frozen=True, kw_only=True)
class VcaBandComparison(_VcaDifference):
    """A comparison of a binary per-item metric (Acc, Dep, D-CC): a :class:`VcaComparison` with the noise band
    of A − B (None when either model's noise floor is not measured)."""

    noise_band: Interval | None
    p_holm: float | None
    survives: bool | None


@dataclass(frozen=True, kw_only=True)
class VcaLeaderboardRow:
    """One model's value of one metric and (dataset, interface, family), its interval and rank: 1 + the number
    of models whose comparison with it survives the adjustment with them ahead (the paired interval agreeing);
    None (unranked) without a value."""

    dataset: str
    interface: str
    family: str
    metric: str
    model: str
    n: int
    value: float | None
    ci: Interval | None
    #: the interval's resampling unit and number of clusters (None in files written before they were recorded)
    unit: str | None = None
    n_clusters: int | None = None
    rank: int | None


@dataclass(frozen=True, kw_only=True)
class VcaSkipped:
    """A metric not compared on a (dataset, interface), and why (what some model lacks)."""

    dataset: str
    interface: str
    metric: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class VcaCompareSettings:
    """The prespecified options a VCA comparison ran with."""

    controls: list[str]
    n_resamples: int
    seed: int
    level: float
    n_permutations: int
    alpha: float
    #: the ``--cluster`` column (None: the unit the items declare)
    cluster: str | None = None
    adjustment: Literal["holm"] = "holm"
    #: how the intervals read the resamples (a file written before it was recorded: the plain percentile)
    interval: str = "percentile"


@dataclass(frozen=True, kw_only=True)
class CompareVcaResult(VersionedResult):
    """Models' Visual Credit Audits compared on the items they share: per (dataset, interface, family) and
    pair of models, each metric's values, difference A − B with its paired clustered bootstrap interval,
    p-value (exact McNemar or cluster permutation), Holm-adjusted p and whether it survives; the leaderboard
    (value, interval, rank from the paired comparisons), per model the items dropped and why, and the metrics skipped."""

    file_name = "compare.json"
    written_by = "compare vca; vlaudit.compare_vca"

    models: list[VcaModel]
    comparisons: list[VcaBandComparison | VcaComparison]
    leaderboard: list[VcaLeaderboardRow]
    skipped: list[VcaSkipped]
    settings: VcaCompareSettings
    warnings: list[str]


@dataclass(frozen=True, kw_only=True)
class CycleModel:
    """One compared model: its name, its scores file (None when given in memory), its tie rate over all
    cycles (|Δ| ≤ tol)."""

    model: str
    source: str | None
    tie_rate: float


@dataclass(frozen=True, kw_only=True)
class _CycleDifference:
    """The cells every cycle comparison row starts with (a subclass adds what follows ``p``, in file order)."""

    benchmark: str | None
    split: str
    family: str
    metric: str
    model_a: str
    model_b: str
    n: int
    unit: str
    n_clusters: int
    value_a: float | None
    value_b: float | None
    difference: float | None
    ci: Interval | None
    test: CycleTest
    p: float | None
    holm_family: str


@dataclass(frozen=True, kw_only=True)
class CycleComparison(_CycleDifference):
    """ΔCycleAcc = CycleAcc_A − CycleAcc_B on one (split, family): both values, the difference with its paired
    bootstrap interval over cycles, the exact sign-flip test, both tie rates, Holm-adjusted p and whether it
    survives."""

    benchmark: None = None
    tie_rate_a: float
    tie_rate_b: float
    p_holm: float | None
    survives: bool | None


@dataclass(frozen=True, kw_only=True)
class BenchmarkComparison(_CycleDifference):
    """A − B on one 2×2 benchmark metric (Winoground text / image / group, NaturalBench Acc / Q-Acc / I-Acc /
    G-Acc) of one (benchmark, split, family), its interval, test, p, Holm-adjusted p and whether it survives."""

    benchmark: str
    p_holm: float | None
    survives: bool | None


@dataclass(frozen=True, kw_only=True)
class CycleLeaderboardRow:
    """One model's value of one metric and (benchmark or None for CycleAcc, split, family), its interval and
    rank from the paired comparisons (as :class:`VcaLeaderboardRow`; None without a value)."""

    benchmark: str | None
    split: str
    family: str
    metric: str
    model: str
    n: int
    value: float | None
    ci: Interval | None
    #: the interval's resampling unit and number of clusters (None in files written before they were recorded)
    unit: str | None = None
    n_clusters: int | None = None
    rank: int | None


@dataclass(frozen=True, kw_only=True)
class CycleSkipped:
    """A (split, family) not compared, and why (fewer cycles than the minimum, cycle paper §D.5)."""

    split: str
    family: str
    metric: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class CycleCompareSettings:
    """The options a cycle comparison ran with."""

    tol: float
    min_cycles: int
    n_resamples: int
    seed: int
    level: float
    n_permutations: int
    alpha: float
    threshold: float
    #: the ``--cluster`` unit (None: the cycle)
    cluster: str | None = None
    adjustment: Literal["holm"] = "holm"
    #: how the intervals read the resamples (a file written before it was recorded: the plain percentile)
    interval: str = "percentile"


@dataclass(frozen=True, kw_only=True)
class CompareCyclesResult(VersionedResult):
    """Models' cycle scores compared on the same cycles: per split (never pooled) and family, ΔCycleAcc with
    its paired bootstrap interval over cycles, the exact sign-flip test on per-cycle credit differences and both
    tie rates; on 2×2 benchmarks the Winoground / NaturalBench metric differences; Holm-adjusted p-values."""

    file_name = "compare_cycles.json"
    written_by = "compare cycles; vlaudit.compare_cycles"

    models: list[CycleModel]
    comparisons: list[CycleComparison | BenchmarkComparison]
    leaderboard: list[CycleLeaderboardRow]
    skipped: list[CycleSkipped]
    settings: CycleCompareSettings
    warnings: list[str]


#: a comparison row of either comparison (the fields the pairwise matrix and the report read)
Comparison = VcaComparison | VcaBandComparison | CycleComparison | BenchmarkComparison
#: a leaderboard row of either comparison
LeaderboardRow = VcaLeaderboardRow | CycleLeaderboardRow
