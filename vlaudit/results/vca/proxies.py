"""The records of ``proxies.json`` (VCA §18, "Cached-context proxies" and "Control robustness"): how each
per-item signal ranks the external targets, the per-run aggregates, the control-aggregation variants, the
three-control-set stability and the relation families (Table 19).

Rates, AUROC and AUPRC are fractions; a figure that cannot be computed is
:class:`~vlaudit.results.missing.Missing` with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vlaudit.results.missing import Missing
from vlaudit.results.vca.validity import NOT_IN_FILE, Figure
from vlaudit.results.versioned import Interval


@dataclass(frozen=True)
class ModelRanking:
    """One model's AUROC and AUPRC of a signal for a target, over its ``n`` records that have the signal."""

    n: int
    auroc: Figure
    auprc: Figure


@dataclass(frozen=True)
class ProxyRow:
    """A per-item ``signal`` as a ranker of a ``check`` (``SRC <dataset>``, ``Swap strict``, ``Swap flip_vis``;
    ``unavailable`` when no run has its contexts or labels): macro-within-model AUROC with its cluster-bootstrap
    percentile interval (relation pairs for SRC, edit ids for Swap), AUPRC, and each model's figures."""

    signal: str
    check: str
    n: int
    auroc: Figure
    auprc: Figure
    auroc_lo: Figure = NOT_IN_FILE
    auroc_hi: Figure = NOT_IN_FILE
    per_model: dict[str, ModelRanking] = field(default_factory=dict)
    #: what the interval resamples (``relation group`` for SRC, ``edit`` for Swap) and how many of them
    unit: str = "cluster"
    n_clusters: int | Missing = NOT_IN_FILE


@dataclass(frozen=True)
class ProxyAggregate:
    """Per run (§18 "Aggregates"): accuracy, Perceptual Score = acc(original) − acc(mismatch) over the
    ``n_perceptual`` items with a mismatch margin, and Visual Dependence = (acc_o − mean(acc_t, acc_b)) / acc_o
    over the ``n_visual_dependence`` items with the controls."""

    model: str
    dataset: str
    n: int
    acc: Figure
    perceptual_score: Figure
    n_perceptual: int
    visual_dependence: Figure
    n_visual_dependence: int = 0
    #: the run's D-CC (correct and credited), the reference of the cross-model ranking ρ
    dcc: Figure = NOT_IN_FILE


@dataclass(frozen=True)
class ModelRankingRho:
    """How a per-run ``proxy`` (Perceptual Score, Visual Dependence, Acc) ranks the ``models`` of one
    ``dataset`` against the audit's ``against`` (D-CC): Spearman ρ across the models that have both (VCA §18
    compares rankings across its four models; needs three or more, else Missing)."""

    dataset: str
    proxy: str
    against: str
    models: list[str]
    rho: Figure


@dataclass(frozen=True)
class TargetAuroc:
    """A variant gap's macro-within-model AUROC for one external ``check`` (SRC per dataset, Swap
    flip+visibility)."""

    check: str
    auroc: Figure


@dataclass(frozen=True)
class AggregationRow:
    """A control-aggregation ``variant`` against the headline gap r_o − max(r_t, r_b) over ``runs`` runs
    (§18): the mean and minimum per-run Dep agreement, the mean Spearman ρ of the gaps, and its AUROC for
    each external check."""

    variant: str
    runs: int
    mean_agreement: float
    min_agreement: float
    spearman: Figure
    aurocs: list[TargetAuroc] = field(default_factory=list)


@dataclass(frozen=True)
class ControlSetRow:
    """One alternate control set, micro-pooled over the records that have every set's contexts (§18): Dep
    ("credit"), C-U, and its agreement and C-U Jaccard with the first (headline) set."""

    control_set: str
    credit: float
    cu: float
    agreement: Figure
    cu_jaccard: Figure


@dataclass(frozen=True)
class ControlSetRun:
    """One labelled run's share of records whose Dep is the same under every set, and the share of its
    headline C-U items that stay C-U under every set."""

    model: str
    dataset: str
    n: int
    stable: float
    cu_retention: Figure


@dataclass(frozen=True)
class ControlSetStability:
    """The §18 three-control-set stability over ``n`` records: each set, each run, the sets whose contexts
    some labelled run lacks, the share (and count) of records stable across sets, the C-U intersection and
    union (counts and shares), the headline C-U count and the share of it retained in the intersection, and
    the per-run ranges of stability and retention."""

    n: int
    sets: list[ControlSetRow]
    per_run: list[ControlSetRun]
    unavailable_sets: list[str]
    stable: Figure
    stable_n: int
    cu_intersection: int
    cu_union: int
    cu_intersection_share: Figure
    cu_union_share: Figure
    headline_cu: int
    headline_cu_retained: Figure
    stable_range: Interval | Missing
    cu_retention_range: Interval | Missing


@dataclass(frozen=True)
class FamilyRow:
    """Table 19 layout: one (model, dataset, relation family): n, Acc, Dep, D-CC, C-U, strict and the mean
    G_img (in margin units, not a rate)."""

    model: str
    dataset: str
    family: str
    n: int
    acc: Figure
    dep: float
    dcc: Figure
    cu: Figure
    strict: float
    mean_gap: float
