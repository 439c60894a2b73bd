"""Typed results of the Visual Credit Audit's commands: scoring runs, the report, its analyses, the factorial
and the object-swap edits (VCA §3, §9–§19). Each class is the JSON file one command writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from vlaudit.results.vca.audit import AuditSettings, MacroAverage, RunAudit, none_for_empty_intervals
from vlaudit.results.vca.checks import (
    FloorEstimate,
    GenerateSample,
    GenerationCheck,
    PerturbationNoise,
    StabilityForwards,
    StabilitySample,
)
from vlaudit.results.vca.coverage import ScoringCoverage
from vlaudit.results.vca.edits import EditStratumRow
from vlaudit.results.vca.factorial import FactorialModel, FactorialPooled
from vlaudit.results.vca.filter import FilterDataset, FilterSettings
from vlaudit.results.vca.proxies import (
    AggregationRow,
    ControlSetStability,
    FamilyRow,
    ModelRankingRho,
    ProxyAggregate,
    ProxyRow,
)
from vlaudit.results.vca.run_sections import InterfaceCheck, upgrade_interface, upgrade_run
from vlaudit.results.vca.validity import Discordance, IncrementalRow, SharedMarginRow, StandaloneRow
from vlaudit.results.versioned import Interval, JsonObject, JsonValue, VersionedResult  # noqa: F401  # JsonObject's forward reference resolves here

T = TypeVar("T", bound="VersionedResult")


class _ReadsEmptyIntervals(VersionedResult):
    """Reads a file written when an interval that is not computable was ``[null, null]`` (now ``null``)."""

    @classmethod
    def from_dict(cls: type[T], data: object, *, path: str | Path | None = None) -> T:
        return super().from_dict(none_for_empty_intervals(data), path=path)


@dataclass(frozen=True, kw_only=True)
class ScoringSummary(VersionedResult):
    """The counts of a yes/no scoring run (VCA §9, §11): records, failures by reason, cache use, throughput
    (None when nothing was scored now: a rate of a run served from the cache is not computable)."""

    file_name = "summary.json (run folder)"
    written_by = "vca score; cycles score-mllm; vlaudit.score_margins"

    model: str
    n_items: int
    n_records: int
    n_scored_rows: int
    #: scored rows whose margin is only a bound: an answer word outside a served model's top-k log-probs
    #: (column ``censored`` of margins.parquet; 0 for every in-process backend)
    n_censored: int
    #: those rows by context (empty when there are none)
    censored_by_context: dict[str, int]
    n_failed: int
    n_skipped: int
    n_unique_units: int
    n_units_from_cache: int
    n_units_scored_now: int
    n_chunks: int
    #: each damaged cache chunk moved aside (its file and why)
    damaged_cache_chunks: list[dict[str, str]]
    seconds: float
    units_per_second: float | None
    records_per_second: float | None
    failures_by_reason: dict[str, int]
    skipped_by_context: dict[str, int]
    contexts: dict[str, int]
    #: scored / asked per (dataset, context, interface) with the reasons (:mod:`vlaudit.results.vca.coverage`);
    #: None in files written before coverage was recorded
    coverage: ScoringCoverage | None = None

    @property
    def failure_line(self) -> str:
        """``3 failed (image file not found: 3), 2 skipped (context irre: 2)``."""
        def detail(mapping: dict[str, int], prefix: str = "") -> str:
            return f" ({', '.join(f'{prefix}{k}: {n}' for k, n in sorted(mapping.items()))})" if mapping else ""

        return (f"{self.n_failed} failed{detail(self.failures_by_reason)}, "
                f"{self.n_skipped} skipped{detail(self.skipped_by_context, 'context ')}")


@dataclass(frozen=True, kw_only=True)
class DualScoringSummary(VersionedResult):
    """The counts of a dual-encoder margins run (m_c(s) = cos(x_c, s) − max over the group's other statements)."""

    file_name = "summary.json (run folder)"
    written_by = "vca score-dual"

    model: str
    n_items: int
    n_groups: int
    n_scored_rows: int
    n_not_scored: int
    n_distinct_images: int
    n_distinct_texts: int
    contexts: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class VcaReportResult(_ReadsEmptyIntervals):
    """The Visual Credit Audit (VCA §3): Acc, Dep, D-CC, C-U = Acc − D-CC with paired bootstrap intervals per
    (model, dataset, interface) in ``runs``, the interface and macro summaries, and the settings used."""

    schema_version = 2  # 2: typed rows keyed by a field; not computable is {"missing": reason}
    file_name = "vca.json"
    written_by = "vca report; vlaudit.vca_report"

    runs: list[RunAudit]
    #: per (model, dataset) with both interfaces: the mean-margin ensemble and True/False against Yes/No
    interfaces: list[InterfaceCheck]
    macro: list[MacroAverage]
    settings: AuditSettings
    warnings: list[str]
    #: the margins files read (absolute paths): ``vlaudit report`` finds each run's items, images and scores
    #: through them, wherever the report folder lies; empty for margins given in memory and in older files
    margins_files: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: object, *, path: str | Path | None = None) -> VcaReportResult:
        """Also reads a file written before the survival, gap, noise and interfaces sections were typed
        (:func:`~vlaudit.results.vca.run_sections.upgrade_run`, ``upgrade_interface``)."""
        if isinstance(data, dict) and isinstance(data.get("runs"), list):
            data = data | {"runs": [upgrade_run(r) if isinstance(r, dict) else r for r in data["runs"]]}
        if isinstance(data, dict) and isinstance(data.get("interfaces"), list):
            data = data | {"interfaces": [upgrade_interface(r) if isinstance(r, dict) else r
                                          for r in data["interfaces"]]}
        return super().from_dict(data, path=path)


@dataclass(frozen=True, kw_only=True)
class VcaValidityResult(VersionedResult):
    """External validity of the raw gap (VCA §15): standalone AUROC/AUPRC/H–L, confidence discordance, the
    shared-margin and incremental controls."""

    schema_version = 2  # 2: typed rows keyed by a field; not computable is {"missing": reason}
    file_name = "validity.json"
    written_by = "vca validity"

    standalone: list[StandaloneRow]
    discordance: Discordance
    shared_margin: list[SharedMarginRow]
    incremental: list[IncrementalRow]


@dataclass(frozen=True)
class SynonymAgreement:
    """The k-th synonym of every canonical VSR statement against it: Pred. and Credit agreement (None over no
    pair)."""

    synonym: int
    n: int
    pred: float | None
    credit: float | None


@dataclass(frozen=True)
class WordingRow:
    """A Paraphrase row (synonyms against the canonical wording) or a System row (another system message on the
    canonical items) of one model (VCA §18): Acc, D-CC and the Pred./Credit agreement."""

    form: Literal["Paraphrase", "System"]
    model: str
    dataset: str
    n: int
    n_sources: int
    acc: float | None
    dcc: float | None
    pred: float | None
    credit: float | None
    synonyms: list[SynonymAgreement]


@dataclass(frozen=True)
class ScoredRun:
    """What a result was computed on: model, dataset, n after headline exclusions, the MARGINS splits
    (``["unsplit"]`` without a split column), the contexts and the relation groups."""

    model: str
    dataset: str
    n: int
    splits: list[str]
    contexts: list[str]
    groups: int


@dataclass(frozen=True, kw_only=True)
class WordingDiagnosticsResult(VersionedResult):
    """The fixed-200 VSR wording diagnostics (VCA §18): per model Acc, D-CC and the Pred./Credit agreement of
    the synonyms (Paraphrase rows) and of another system message (System rows) with the canonical wording."""

    file_name = "wording.json"
    written_by = "vca wording; vlaudit.wording_diagnostics"

    rows: list[WordingRow]
    items_file: str
    runs: list[ScoredRun]


@dataclass(frozen=True, kw_only=True)
class VcaFilterResult(VersionedResult):
    """Held-out filtering (VCA §16): per dataset the kept items' Acc, blind gap and visual gain."""

    file_name = "filter.json"
    written_by = "vca filter"

    datasets: list[FilterDataset]
    settings: FilterSettings


@dataclass(frozen=True, kw_only=True)
class VcaProxiesResult(VersionedResult):
    """Proxies and aggregations of visual credit (VCA §18): ranking rows, control-set stability, families."""

    schema_version = 2  # 2: typed rows keyed by a field; not computable is {"missing": reason}
    file_name = "proxies.json"
    written_by = "vca proxies"

    proxies: list[ProxyRow]
    aggregates: list[ProxyAggregate]
    aggregation: list[AggregationRow]
    control_sets: ControlSetStability
    families: list[FamilyRow]
    #: the cross-model ranking ρ of each per-run proxy against D-CC, per dataset (empty in an older file)
    model_rankings: list[ModelRankingRho] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class FactorialResult(_ReadsEmptyIntervals):
    """The 3×3 evidence-source factorial (VCA §10): per model C-U, responsiveness, flips and source effects."""

    file_name = "factorial.json"
    written_by = "vca factorial; vlaudit.factorial"

    items: str
    margins: str
    stems: int
    n_resamples: int
    seed: int
    level: float
    models: list[FactorialModel]
    pooled: FactorialPooled
    definitions: dict[str, str]
    interface: str
    #: the unit of every interval (``stems`` of them): the pooled intervals and the source effects resample
    #: stems; the per-model proportions are Wilson intervals design-effect corrected over the stems (files
    #: written before that correction hold item-level Wilson intervals over the model's decisions)
    unit: str = "stem"
    #: the small-sample warning when ``stems`` is below :data:`~vlaudit.settings.MIN_CLUSTERS`
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EditRule:
    """The fixed object-swap edit rule (VCA §17), set before any model is scored."""

    min_gap: float
    max_iou: float
    pad: int
    radius: int
    feather: int


@dataclass(frozen=True)
class FeasibilityCheck:
    """One characteristic of the feasibility-selection audit (VCA §17, percent): feasible against excluded
    source pairs, their difference and its bootstrap interval (None when either side is empty)."""

    characteristic: str
    feasible: float | None
    excluded: float | None
    difference: float | None
    ci: Interval | None
    n_feasible: int
    n_excluded: int


@dataclass(frozen=True)
class PooledRate:
    """A pooled flip+visibility rate over every model's records of one source stratum (percent; None with
    ``n = 0``) with its edit-cluster bootstrap interval (VCA §19)."""

    n: int
    rate: float | None
    ci: Interval | None


@dataclass(frozen=True)
class PairAgreement:
    """Field-level agreement of two annotators on the edits both saw (None when they share none)."""

    n_edits: int
    agreement: float | None


@dataclass(frozen=True)
class RepeatAgreement:
    """An annotator's agreement with themself on the repeated tasks (None without repeats)."""

    n_repeats: int
    agreement: float | None


@dataclass(frozen=True, kw_only=True)
class EditBuildSummary(_ReadsEmptyIntervals):
    """The object-swap edit build (VCA §17): candidates, feasibility, edits and probes written."""

    file_name = "summary.json (edits build folder)"
    written_by = "edits build"

    items: str
    seed: int
    params: EditRule
    n_candidates: int
    n_feasible: int
    n_infeasible: int
    n_edits: int
    n_probes: int
    excluded_by_reason: dict[str, int]
    feasibility_audit: list[FeasibilityCheck]


@dataclass(frozen=True, kw_only=True)
class AnnotationExportSummary(VersionedResult):
    """The blinded annotation batches exported for the edits' human check (VCA §17)."""

    file_name = "export_summary.json"
    written_by = "edits export"

    n_edits: int
    n_repeat_per_annotator: int
    annotators: list[str]
    tasks_per_annotator: int
    seed: int
    repeat_fraction: float
    key: str


@dataclass(frozen=True, kw_only=True)
class AnnotationConsensusSummary(VersionedResult):
    """The annotators' consensus on each edit (VCA §17): decision counts, pairwise and repeat agreement, the
    tasks each annotator left unanswered (with ``--items``, ``n_accepted_probes`` in :attr:`extra`)."""

    file_name = "summary.json (edits import folder)"
    written_by = "edits import"

    counts: dict[str, int]
    n_edits: int
    pairwise: dict[str, PairAgreement]
    repeat: dict[str, RepeatAgreement]
    #: the lowest and highest pairwise agreement (None without any)
    pairwise_range: Interval | None
    missing_tasks: dict[str, int]
    #: agreement over every annotator's repeated tasks together (None without repeats)
    repeat_pooled: float | None


@dataclass(frozen=True, kw_only=True)
class EditOutcomesSummary(_ReadsEmptyIntervals):
    """Outcomes on the accepted edits (VCA §17, Table 8): per model rel./+vis./strict and the source-stratum
    rates with their intervals (``table``, percent), pooled C-U and D-CC flip+visibility, the feasibility
    audit with each model's source D-CC."""

    file_name = "summary.json (edits analyze folder)"
    written_by = "edits analyze"

    n_accepted: int
    table: list[EditStratumRow]
    pooled_cu: PooledRate
    pooled_dcc: PooledRate
    feasibility_audit: list[FeasibilityCheck]


@dataclass(frozen=True, kw_only=True)
class StabilityResult(VersionedResult):
    """The backend's numerical noise floor on a run (``vca stability``): per math-preserving perturbation and
    context the median / p99 / max |Δ margin|, margin and G_img sign flips, and τ (VCA §3 decisions).
    ``sample`` and ``forwards`` count the re-scored items and forwards (a dual-encoder run adds its ``kind``
    and forward ``unit``)."""

    file_name = "stability.json (run folder)"
    written_by = "vca stability; vlaudit.measure_stability"

    model: str
    spec: str
    run: str
    sample: StabilitySample
    perturbations: list[PerturbationNoise]
    noise_floor: float
    floor_definition: str
    forwards: StabilityForwards
    #: how τ was estimated (order-statistic bound, units, warning); None in files written before it was recorded
    estimate: FloorEstimate | None = None

    @classmethod
    def from_dict(cls, data: object, *, path: str | Path | None = None) -> StabilityResult:
        """Also reads a file written before ``estimate`` was recorded (its τ was a plain p99)."""
        if isinstance(data, dict) and "estimate" not in data:
            data = {**data, "estimate": None}
        return super().from_dict(data, path=path)


@dataclass(frozen=True, kw_only=True)
class GenerateCheckResult(VersionedResult):
    """Likelihood against generation on a run (``vca generate-check``): per context and prompt form the
    agreement of the margin's decision with the greedily generated answer, the confusion table, the
    unparseable rate and the disagreements."""

    file_name = "generate_check.json (run folder)"
    written_by = "vca generate-check; vlaudit.generate_check"

    model: str
    spec: str
    run: str
    sample: GenerateSample
    max_new_tokens: int
    checks: list[GenerationCheck]
