"""The records of ``filter.json`` (VCA §16, "Held-out benchmark filtering"): per dataset the held-out models'
Acc, Blind Gap, Visual Gain and Dep on the kept groups, the kept sets' Jaccard overlap with the VCA panel, the
relation-group bootstrap differences, and the options of the run.

Rates are fractions; ``coverage`` is the percentage of relation groups kept (100 for the full benchmark).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vlaudit.results.missing import Missing
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE_LEVEL,
    FILTER_COVERAGES,
    FILTER_PRIMARY_COVERAGE,
    PRIMARY_CONTROLS,
)


@dataclass(frozen=True)
class FilterSettings:
    """Options of ``vlaudit vca filter`` (the paper's: 25/50/75% coverage, 50% primary, 5,000 resamples,
    the seed of §19, the headline text+blank controls)."""

    coverages: tuple[float, ...] = FILTER_COVERAGES
    primary: float = FILTER_PRIMARY_COVERAGE
    n_resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    level: float = CONFIDENCE_LEVEL
    controls: tuple[str, ...] = PRIMARY_CONTROLS


@dataclass(frozen=True, kw_only=True)
class FilterRow:
    """A filter ``panel`` at ``coverage`` evaluated on the ``held_out`` model (``macro``: the unweighted mean
    over held-out models, §16): Acc, Blind Gap = text-only accuracy − ½, Visual Gain = Acc − text-only
    accuracy, and Dep of the kept items."""

    coverage: float
    panel: str
    held_out: str
    acc: float
    blind_gap: float
    visual_gain: float
    dep: float


@dataclass(frozen=True, kw_only=True)
class HeldOutRow(FilterRow):
    """A :class:`FilterRow` of one held-out model, with the ``groups`` and ``items`` the filter kept."""

    groups: int
    items: int


@dataclass(frozen=True)
class JaccardRow:
    """The Jaccard overlap of a panel's kept groups with the VCA panel's at ``coverage``: macro over held-out
    models and per held-out model."""

    coverage: float
    panel: str
    jaccard_with_vca: float
    per_held_out: dict[str, float]


@dataclass(frozen=True)
class PanelDifference:
    """VCA − another panel at the primary coverage (``contrast``): the macro differences of Acc, Blind Gap and
    Visual Gain with relation-group bootstrap percentile intervals (``*_lo``/``*_hi``; one plan paired over
    models and panels)."""

    coverage: float
    contrast: str
    acc: float
    acc_lo: float | Missing
    acc_hi: float | Missing
    blind_gap: float
    blind_gap_lo: float | Missing
    blind_gap_hi: float | Missing
    visual_gain: float
    visual_gain_lo: float | Missing
    visual_gain_hi: float | Missing
    #: the intervals resample relation groups, ``n_clusters`` of them
    unit: str = "relation group"
    n_clusters: int | Missing = Missing("not in this file (an older vlaudit)")


@dataclass(frozen=True)
class Selection:
    """The relation groups (ids) a ``panel`` kept at ``coverage`` for the ``held_out`` model."""

    held_out: str
    coverage: float
    panel: str
    groups: list[str]


@dataclass(frozen=True)
class FilterDataset:
    """Leave-one-model-out filtering of one dataset (datasets are never pooled): its models, MARGINS splits,
    the ``items`` and ``groups`` every model shares (``items_not_shared`` left out), the macro ``rows``, each
    held-out model's rows, the Jaccard overlaps, the bootstrap differences and every selection."""

    dataset: str
    models: list[str]
    splits: list[str]
    items: int
    groups: int
    items_not_shared: int
    rows: list[FilterRow]
    per_held_out: list[HeldOutRow]
    jaccard: list[JaccardRow]
    bootstrap: list[PanelDifference]
    selections: list[Selection] = field(default_factory=list)
