"""What a benchmark gives away (``vlaudit giveaway``): text lints, the order-blind ceiling, blind baselines and the
blind-filtered subset, one :class:`BenchmarkGiveaway` per benchmark file (definitions:
:mod:`vlaudit.metrics.giveaway.lints`, :mod:`vlaudit.metrics.giveaway.metric`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from vlaudit.results.missing import Missing
from vlaudit.results.versioned import Interval, VersionedResult, omitted_when_none


@dataclass(frozen=True)
class GiveawayRate:
    """An item mean (``value``; Missing when no item has an outcome) with its percentile bootstrap
    ``interval`` over the resampling ``unit`` (items), over ``n`` items in ``n_clusters`` clusters (each item
    its own: ``n_clusters == n``)."""

    value: float | Missing
    interval: Interval | Missing
    n: int
    unit: str = "item"
    n_clusters: int | None = None

    def __post_init__(self) -> None:
        if self.n_clusters is None:
            object.__setattr__(self, "n_clusters", self.n)


@dataclass(frozen=True)
class WordShift:
    """A word and the probability mass it moves between the sides, p_positive(w) − p_negative(w)."""

    word: str
    shift: float


@dataclass(frozen=True)
class SideTokenRow:
    """A case-sensitive token found on one ``side`` only, in ``pairs`` pairs (``share`` of that side's pairs)."""

    token: str
    side: str
    pairs: int
    share: float


@dataclass(frozen=True)
class GiveawayLints:
    """The text lints of one benchmark: role-aware BoW-identical negatives (``bow_flagged``: never a positive;
    ``bow_design``: some image's positive, not flagged), unigram TV and its top words, the length difference
    (positive − negative, in words, over ``length_comparisons``), one-side case-sensitive tokens and the
    in-sample accuracy of the rule they make (``side_token_rule``), the length rules' accuracies, and
    duplicates."""

    negatives: int
    bow_flagged: int
    bow_design: int
    bow_items_flagged: int
    unigram_tv: float
    positive_words: list[WordShift]
    negative_words: list[WordShift]
    length_comparisons: int
    length_mean: float | Missing
    length_quantiles: list[float | None]
    length_longer: float | Missing
    length_shorter: float | Missing
    length_equal: float | Missing
    length_histogram: dict[str, int]
    side_tokens: list[SideTokenRow]
    side_token_rule: GiveawayRate
    longer_wins: GiveawayRate
    shorter_wins: GiveawayRate
    duplicate_items: int
    identical_positive_negative: int
    labelled_both_ways: int


@dataclass(frozen=True)
class BlindBaseline:
    """One blind reading of the benchmark scored under its metric: ``accuracy`` (items solved / items with an
    outcome), ``official`` (the suite's first official figure, None without one), ``solved`` items and the
    first ``solved_ids``. ``kind``: ``ceiling`` (the order-blind oracle, not a model), ``classifier``, ``lm``."""

    name: str
    kind: str
    description: str
    accuracy: GiveawayRate
    official: float | None
    solved: int
    solved_ids: list[str]


@dataclass(frozen=True)
class FlaggedItem:
    """One flagged item: its id and subset, the positive and negative texts concerned, and why."""

    item_id: str
    subset: str
    positive: str
    negative: str
    why: str


@dataclass(frozen=True)
class ModelOnFiltered:
    """A model's metric on the full set vs the blind-filtered subset, paired (same item resamples):
    ``difference`` = filtered − full; ``official_*`` the suite's first official figure where it has one."""

    scores: str
    full: GiveawayRate
    filtered: GiveawayRate
    difference: GiveawayRate
    official_full: float | None
    official_filtered: float | None


@dataclass(frozen=True)
class FilteredSubset:
    """The items no blind baseline of ``baselines`` solves, written to ``path`` (vlaudit's items JSONL)."""

    path: str
    items: int
    removed: int
    baselines: list[str]


@dataclass(frozen=True)
class BenchmarkGiveaway:
    """What one benchmark file gives away (see the module docstring): its size, metric and tie rule, the lints,
    the blind baselines (the order-blind ceiling first), the filtered subset and the flagged items (the first
    ``flagged_shown`` of ``flagged_total``)."""

    file: str
    format: str
    metric: str
    tie_rule: str
    items: int
    pairs: int
    positives: int
    negatives: int
    lints: GiveawayLints
    baselines: list[BlindBaseline]
    flagged: list[FlaggedItem]
    flagged_total: int
    notes: list[str]
    filtered: FilteredSubset | None = field(default=None, metadata=omitted_when_none())
    model: ModelOnFiltered | None = field(default=None, metadata=omitted_when_none())


@dataclass(frozen=True)
class VcaBlindReading:
    """The VCA ``text`` context of one yes/no run as a blind reading: the share of items answered with the
    gold sign under the ``original`` context and under ``text`` (no image), and the items solved blind."""

    source: str
    model: str
    dataset: str
    interface: str
    items: int
    original: GiveawayRate
    text_only: GiveawayRate
    solved_blind: int
    solved_ids: list[str]


@dataclass(frozen=True, kw_only=True)
class GiveawayResult(VersionedResult):
    """What each benchmark gives away (``vlaudit giveaway``): one :class:`BenchmarkGiveaway` per file, the
    bootstrap's ``resamples`` and ``seed``, and the VCA text-only readings of the runs given (``vca``)."""

    file_name = "giveaway.json"
    written_by = "giveaway"

    benchmarks: list[BenchmarkGiveaway]
    resamples: int
    seed: int
    warnings: list[str]
    vca: list[VcaBlindReading] = field(default_factory=list)
