"""The records of ``validity.json`` (VCA §15, "External validity of the raw gap"): the standalone ranking rows,
the confidence–VCA discordance, the direct shared-margin control and the edit-grouped incremental control.

Every rate, AUROC, AUPRC and H–L is a fraction; a figure that cannot be computed (one outcome class, no
records, no edit outcomes given) is :class:`~vlaudit.results.missing.Missing` with its reason. An interval is
the pair of fields ``NAME_lo``/``NAME_hi``: percentile bounds of the cluster bootstrap named in the row's
docstring (§19).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vlaudit.results.missing import Missing
from vlaudit.results.versioned import Interval, json_key

#: what a swap column of the discordance holds when ``vca validity`` was run without ``--edits``
NO_EDITS = Missing("no edit outcomes given")
#: a field that a file written by an older vlaudit does not hold
NOT_IN_FILE = Missing("not in this file (an older vlaudit)")

Figure = float | Missing


@dataclass(frozen=True, kw_only=True)
class RankingRow:
    """How well a score ranks a boolean outcome (VCA §15 "Standalone predictive validity", §18 proxies): on
    one ``model``, ``Macro (K models)`` (the mean of the models' figures, base rate included) or
    ``Rank-pooled`` (within-model percentile ranks pooled): ``n`` records, the outcome's ``base_rate``,
    AUROC, AUPRC and ``hl`` (the high-minus-low tertile difference), each with a percentile interval from
    one cluster bootstrap (SRC resamples relation pairs, Swap edit ids; a drawn cluster brings the records of
    every model, §19)."""

    model: str
    n: int
    base_rate: Figure
    auroc: Figure
    auroc_lo: Figure
    auroc_hi: Figure
    auprc: Figure
    auprc_lo: Figure
    auprc_hi: Figure
    hl: Figure
    hl_lo: Figure
    hl_hi: Figure
    #: what the intervals resample (``relation group`` for SRC, ``edit`` for Swap) and how many of them
    unit: str = "cluster"
    n_clusters: int | Missing = NOT_IN_FILE


@dataclass(frozen=True, kw_only=True)
class StandaloneRow(RankingRow):
    """A row of the §15 standalone table: ``check`` ``SRC`` (the raw G_img of a group's true statement ranks
    Rel_o), ``Swap strict`` or ``Swap flip+vis.`` (the source's G_img ranks the edited outcome) on
    ``dataset``."""

    check: str
    dataset: str


@dataclass(frozen=True)
class QuadrantRow:
    """One confidence × Dep quadrant of the §15 discordance, pooled over runs: its ``n`` records and their
    ``share`` of all, their accuracy, and the joined edits whose source falls in it (``swap_n``, the
    flip+visibility and strict rates)."""

    quadrant: str
    n: int
    share: Figure
    acc: Figure
    swap_n: int | Missing = NO_EDITS
    flip_vis: Figure = NO_EDITS
    strict: Figure = NO_EDITS


@dataclass(frozen=True)
class DiscordanceRun:
    """One (model, dataset) run of the discordance: its strata sizes (high = confidence ≥ the run's median
    confidence), that median and the share of its records in each quadrant."""

    model: str
    dataset: str
    n: int
    n_high: int
    n_low: int
    median_confidence: float
    high_credited: float = field(metadata=json_key("high conf, credited"))
    high_uncredited: float = field(metadata=json_key("high conf, uncredited"))
    low_credited: float = field(metadata=json_key("low conf, credited"))
    low_uncredited: float = field(metadata=json_key("low conf, uncredited"))


@dataclass(frozen=True)
class Discordance:
    """The §15 confidence–VCA discordance: the four quadrants (``rows``), each run's strata (``per_run``), the
    ``n`` records and the strata sizes overall, the ``split_rule``, and the range over runs of the
    high-confidence uncredited share."""

    rows: list[QuadrantRow]
    per_run: list[DiscordanceRun]
    n: int
    n_high: int
    n_low: int
    split_rule: str
    high_conf_uncredited_range: Interval


@dataclass(frozen=True)
class SharedMarginRow:
    """A row of the §15 direct shared-margin control on ``dataset``, ``target`` ``rel_o`` or ``false_only``
    (Rel_o among groups whose true statement is accepted), for one model or the macro over models: the AUROC
    of the true margin, of the gap, of the gap within true-margin quantile bins, and the cross-validated
    AUROCs of margin and margin + gap with their difference ``cv_delta`` (interval: relation-pair bootstrap
    percentiles)."""

    dataset: str
    target: str
    model: str
    n: int
    base_rate: Figure
    true_margin_auroc: Figure
    gap_auroc: Figure
    conditional_gap_auroc: Figure
    cv_base_auroc: Figure
    cv_aug_auroc: Figure
    cv_delta: Figure
    cv_delta_lo: Figure = NOT_IN_FILE
    cv_delta_hi: Figure = NOT_IN_FILE
    #: the interval resamples relation groups (pairs), ``n_clusters`` of them
    unit: str = "relation group"
    n_clusters: int | Missing = NOT_IN_FILE


@dataclass(frozen=True)
class IncrementalRow:
    """A row of the §15 edit-grouped incremental control: ``analysis`` (``primary``, the Pair D row, or a
    sensitivity row) and ``target``; what the augmented model ``added``; ``edits`` and ``records``; the
    leave-one-edit-out AUROC of the ``baseline`` and the ``augmented`` model, their difference ``delta`` with
    its edit-id bootstrap interval, and Δ per model."""

    analysis: str
    target: str
    added: str
    edits: int
    records: int
    base_rate: Figure
    baseline: Figure
    augmented: Figure
    delta: Figure
    delta_lo: Figure
    delta_hi: Figure
    per_model_delta: dict[str, Figure] = field(default_factory=dict)
    #: the interval resamples edit ids, ``n_clusters`` of them
    unit: str = "edit"
    n_clusters: int | Missing = NOT_IN_FILE
