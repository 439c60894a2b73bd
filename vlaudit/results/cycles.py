"""Typed results of the cycle paper's commands: building, auditing and evaluating exact cycles and the
experiments on frozen features (cycle paper §2–§5, §D, §E).

Each ``…Result`` class is the JSON file one command writes; its fields are the keys the file always holds (see
:mod:`vlaudit.results.versioned` for ``schema_version`` and ``extra``). The records nested in them are named after
the paper's quantities: a (family, split) CycleAcc cell, an across-seed :class:`SeedAggregate`, a family
withdrawn by §D.5's minimum (:class:`Withdrawn`), the additive audit (§E.4: an additive probe's CycleAcc is
exactly ½). "Not computable" is None: a CycleAcc of no cycle, the sd of one seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vlaudit.results.vca.outputs import ScoringSummary
from vlaudit.results.versioned import Interval, VersionedResult, record_from_dict

#: a count per split (``{"train": 120, "val": 30, "test": 40}``)
SplitCounts = dict[str, int]
#: a scalar setting as written in a JSON file
Setting = int | float | str | bool | None


# ------------------------------------------------------------------------------------------ building


@dataclass(frozen=True, kw_only=True)
class CycleBuildMeta(VersionedResult):
    """The metadata written beside a cycles file: the build's settings and Table-6 counts (cycle paper §4, §D).

    ``counts`` is ``{family: {split: n}}`` for the families kept; ``unavailable`` the families withdrawn for
    having fewer than ``min_cycles`` validation cycles (§D.5), with their counts; ``warnings`` how many
    candidates each reason dropped. The source's own settings (``rules``, ``caps``, pool sizes, …) are extra."""

    file_name = "CYCLES.meta.json"
    written_by = "cycles build coco|gqa|jsonl|winoground|naturalbench|blocks; vlaudit.build_cycles"

    source: str
    families: list[str] | None
    splits: dict[str, float]
    min_cycles: int
    counts: dict[str, SplitCounts]
    unavailable: dict[str, SplitCounts]
    warnings: dict[str, int]
    cycles_file: str
    captions_file: str


@dataclass(frozen=True, kw_only=True)
class CycleBuildSummary(VersionedResult):
    """What :func:`vlaudit.build_cycles` returns: the metadata (as in ``CYCLES.meta.json``; the source's own
    settings, pool sizes and timings are extra), the ``paths`` written (``{"failed": …}`` when no family was
    kept) and the number of cycles written."""

    file_name = "— (returned, printed as the Table-6 counts)"
    written_by = "vlaudit.build_cycles"

    source: str
    families: list[str] | None
    splits: dict[str, float]
    min_cycles: int
    warnings: dict[str, int]
    counts: dict[str, SplitCounts]
    unavailable: dict[str, SplitCounts]
    paths: dict[str, str]
    cycles_written: int


@dataclass(frozen=True, kw_only=True)
class CycleBuildFailure(VersionedResult):
    """What a build that kept no family writes instead of a cycles file: its settings, counts and why."""

    file_name = "CYCLES.failed.json"
    written_by = "cycles build …, when no family reaches --min-cycles"

    source: str
    counts: dict[str, SplitCounts]
    unavailable: dict[str, SplitCounts]
    failed: str


@dataclass(frozen=True)
class CycleScoreRow:
    """One score of a ``cycles eval`` scores table: s(image, caption)."""

    image_id: str
    caption_id: str
    score: float


@dataclass(frozen=True, kw_only=True)
class MllmCycleScores(VersionedResult):
    """What :func:`vlaudit.score_cycles_mllm` returns: the score rows it wrote to the scores table (the
    ``cycles eval`` format, s = NLL(no) − NLL(yes) of the fixed query), the run's summary (as the run folder's
    ``summary.json``), the number of cycles and the run folder."""

    file_name = "— (returned; the rows are OUT, the summary OUT.run/summary.json)"
    written_by = "vlaudit.score_cycles_mllm"

    rows: list[dict[str, str | float]]  # image_id, caption_id, score (the scores table's rows)
    summary: ScoringSummary
    n_cycles: int
    run_dir: str


# ------------------------------------------------------------------------------------------ auditing


@dataclass(frozen=True)
class Violation:
    """A cycle whose block the annotations do not support, and why."""

    cycle_id: str
    reason: str


@dataclass(frozen=True)
class CycleAuditRow:
    """Table 5, one (family, split): marginal TVs between the matched and swapped sides, the max |signed
    degree| and the validity violations (all 0 for exact cycles, §2.1, Theorem 1)."""

    family: str
    split: str
    cycles: int
    images: int
    captions: int
    tv_image: float
    tv_caption: float
    tv_caption_length: float | None
    max_abs_signed_degree: int | float  # an integer for ±1 entries
    validity_violations: int
    violation_examples: list[Violation]


@dataclass(frozen=True, kw_only=True)
class CycleAudit(VersionedResult):
    """Table 5 of the cycle paper: per (family, split) marginal TVs, max |signed degree| and validity violations
    re-checked against the annotations; all three must be 0 for exact cycles (§2.1, Theorem 1)."""

    file_name = "OUT (--out)"
    written_by = "cycles audit"

    cycles: str
    annotations: list[str]
    rules: dict[str, float | str]
    rows: list[CycleAuditRow]
    validity_violations: int
    max_abs_signed_degree: int | float


@dataclass(frozen=True)
class PairAuditRow:
    """The labelled-pairs audit of one pairs file (cycle paper §2.2): marginal TVs between positives and
    negatives, signed-degree imbalance per side under ``weighting`` and how many pairs complete exact cycles."""

    file: str
    format: str
    pairs: int
    positives: int
    negatives: int
    images: int
    captions: int
    tv_image: float | None
    tv_caption: float | None
    tv_caption_length: float | None
    weighting: str
    degree_imbalance: float
    degree_imbalance_image: float
    degree_imbalance_caption: float
    max_abs_signed_degree: float
    images_imbalanced: int
    captions_imbalanced: int
    distinct_positives: int
    distinct_negatives: int
    positives_in_cycles: int
    negatives_in_cycles: int
    labelled_both_ways: int


@dataclass(frozen=True, kw_only=True)
class PairAuditResult(VersionedResult):
    """The labelled-pairs audit of a benchmark's negatives (cycle paper §2.2): one row per pairs file."""

    file_name = "audit_pairs.json"
    written_by = "cycles audit-pairs"

    files: list[str]
    weighting: str
    rows: list[PairAuditRow]
    warnings: list[str]


# ------------------------------------------------------------------------------------------ evaluating


@dataclass(frozen=True)
class CycleAccCell:
    """Exact CycleAcc of one (family, split) cell (cycle paper §2.1): n cycles, mean credit, ties (|Δ| ≤ tol),
    tie rate and a bootstrap interval over clusters (VCA §19's bootstrap; the cycle paper states none): the
    resampling ``unit`` (``cycle`` by default, ``image`` with ``--cluster image``) and the cell's number of
    clusters. None where there is no cycle."""

    n: int
    cycle_acc: float | None
    ties: int
    tie_rate: float | None
    ci: Interval | None
    unit: str = "cycle"
    n_clusters: int | None = None


#: a 2×2 benchmark's metric cell: ``n``, the resampling ``unit`` and ``n_clusters`` of its intervals, each
#: metric's value, ``…_ci`` interval and ``…_ties`` (the metric names depend on the benchmark: Winoground
#: text/image/group, NaturalBench Acc, Q-Acc, I-Acc, G-Acc)
BenchmarkCell = dict[str, int | float | str | list[float] | None]


@dataclass(frozen=True)
class BenchmarkEntry:
    """One 2×2 benchmark's metrics beside CycleAcc: ``splits`` is ``{split: {tag: cell}}`` (tag ``all`` pools
    the tags of one split; splits are never pooled)."""

    benchmark: str
    metrics: str
    splits: dict[str, dict[str, BenchmarkCell]]
    threshold: float | None = None


@dataclass(frozen=True, kw_only=True)
class CycleEvaluationResult(VersionedResult):
    """Exact CycleAcc per family and split with ties (cycle paper §2.1, §D.5) and bootstrap intervals (the VCA
    paper's bootstrap, VCA §19: the cycle paper states none).

    ``families`` is ``{family: {split: CycleAccCell}}``; splits are never pooled. ``benchmarks`` (extra) holds a
    2×2 benchmark's own metrics when the cycles came from one (:attr:`benchmark_entries`); ``cycles`` and
    ``scores`` (extra) name the files evaluated."""

    file_name = "OUT (--out)"
    written_by = "cycles eval; vlaudit.evaluate_cycles"

    families: dict[str, dict[str, CycleAccCell]]
    unavailable: dict[str, SplitCounts]
    splits: list[str]
    min_cycles: int
    tol: float
    n_resamples: int
    seed: int
    warnings: list[str]
    #: ``--cluster``: the resampling unit asked for (None: the cycle); each cell names its unit and clusters
    cluster: str | None = None
    #: which cycles the minimum counted (§D.5): ``val``; ``val of PATH`` (a test-only build's validation cycles,
    #: from its metadata); or the evaluated split(s) of a file without validation cycles. None: an older file
    min_cycles_counted: str | None = None

    @property
    def scores_name(self) -> str:
        """The scores file evaluated (``<scores>`` for scores held in memory)."""
        value = self.extra.get("scores")
        return value if isinstance(value, str) else "<scores>"

    @property
    def benchmark_entries(self) -> dict[str, BenchmarkEntry]:
        """The 2×2 benchmarks' own metrics (``benchmarks`` of the file; {} for cycles from no benchmark)."""
        raw = self.extra.get("benchmarks")
        if not isinstance(raw, dict):
            return {}
        return {name: record_from_dict(BenchmarkEntry, entry, path="<evaluation>", name=f"benchmarks.{name}")
                for name, entry in raw.items()}


@dataclass(frozen=True, kw_only=True)
class BenchmarkMetricsResult(VersionedResult):
    """A 2×2 benchmark's own metrics beside CycleAcc (Winoground text/image/group; NaturalBench Acc, Q-Acc,
    I-Acc, G-Acc) per split and tag, with intervals: the ``benchmarks`` part of a cycles evaluation."""

    file_name = "result.json (CycleEvaluation.benchmarks.save)"
    written_by = "vlaudit.evaluate_cycles(...).benchmarks"

    benchmarks: dict[str, BenchmarkEntry]


# ------------------------------------------------------------------------------------------ synthetic


@dataclass(frozen=True)
class SyntheticRow:
    """One diagnostic × probe × metric of the synthetic controls (§5.1, Table 1, Table 8): its value per seed,
    mean and sample sd (None for one seed), and what the construction predicts."""

    diagnostic: str
    probe: str
    metric: str
    expected: str
    per_seed: dict[str, float]
    mean: float
    sd: float | None


@dataclass(frozen=True)
class RankDifference:
    """The rank control's AUROC at rank ``peak`` minus at rank ``after`` (Table 1: 8 and 16) per seed, its mean and
    sample sd over seeds (None for one seed) and the paper's; ``resolved``: the mean is positive and larger than
    that sd — only then does the run show Table 1's peak at ``peak`` and dip at ``after``; otherwise the two ranks
    are inside the spread over seeds and no peak is claimed."""

    peak: int
    after: int
    paper: float
    per_seed: dict[str, float]
    mean: float
    sd: float | None
    resolved: bool


@dataclass(frozen=True)
class RankPeaks:
    """The rank at which the rank control's AUROC peaks: the paper's (Table 1), the mean's and each seed's, and
    the difference that decides whether that peak is resolved (``difference``; None in an older file)."""

    paper: int
    mean: int
    per_seed: dict[str, int]
    difference: RankDifference | None = None


@dataclass(frozen=True)
class SyntheticProbeSetting:
    """Epochs and lr of one probe kind of the synthetic controls and the section stating them (None: vlaudit's
    own, the paper states none)."""

    epochs: int
    lr: float
    paper: str | None


@dataclass(frozen=True, kw_only=True)
class SyntheticResult(VersionedResult):
    """The synthetic controls (cycle paper §5.1, Table 1): each diagnostic's mean over seeds and whether every check held
    for the mean and for each seed on its own; the rank control's peaks and each probe kind's settings."""

    file_name = "synthetic.json"
    written_by = "synthetic; demo"

    seeds: list[int]
    config: dict[str, int | float | list[float]]
    rows: list[SyntheticRow]
    checks: dict[str, bool]
    checks_per_seed: dict[str, dict[str, bool]]
    rank_peaks: RankPeaks | None = None
    settings: dict[str, SyntheticProbeSetting] = field(default_factory=dict)
