"""Typed results of the Visual Credit Audit's commands: scoring runs, the report, its analyses, the factorial
and the object-swap edits (VCA §3, §9–§19). Each class is the JSON file one command writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vlaudit.results.base import VersionedResult


@dataclass(frozen=True, kw_only=True)
class ScoringSummary(VersionedResult):
    """The counts of a yes/no scoring run (VCA §9, §11): records, failures by reason, cache use, throughput."""

    file_name = "summary.json (run folder)"
    written_by = "vca score; cycles score-mllm; vlaudit.score_margins"

    model: str
    n_items: int
    n_records: int
    n_scored_rows: int
    n_failed: int
    n_skipped: int
    contexts: dict[str, int]


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
class VcaReportResult(VersionedResult):
    """The Visual Credit Audit (VCA §3): Acc, Dep, D-CC, C-U = Acc − D-CC with paired bootstrap intervals per
    (model, dataset, interface) in ``runs``, the interface and macro summaries, and the settings used."""

    file_name = "vca.json"
    written_by = "vca report; vlaudit.vca_report"

    runs: list[dict[str, Any]]
    interfaces: Any
    macro: Any
    settings: dict[str, Any]
    warnings: list[str]


@dataclass(frozen=True, kw_only=True)
class VcaValidityResult(VersionedResult):
    """External validity of the raw gap (VCA §15): standalone AUROC/AUPRC/H–L, confidence discordance, the
    shared-margin and incremental controls."""

    file_name = "validity.json"
    written_by = "vca validity"

    standalone: list[dict[str, Any]]
    discordance: dict[str, Any]
    shared_margin: list[dict[str, Any]]
    incremental: list[dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class WordingDiagnosticsResult(VersionedResult):
    """The fixed-200 VSR wording diagnostics (VCA §18): per model Acc, D-CC and the Pred./Credit agreement of
    the synonyms (Paraphrase rows) and of another system message (System rows) with the canonical wording."""

    file_name = "wording.json"
    written_by = "vca wording; vlaudit.wording_diagnostics"

    rows: list[dict[str, Any]]
    items_file: str
    runs: list[dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class VcaFilterResult(VersionedResult):
    """Held-out filtering (VCA §16): per dataset the kept items' Acc, blind gap and visual gain."""

    file_name = "filter.json"
    written_by = "vca filter"

    datasets: list[dict[str, Any]]
    settings: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class VcaProxiesResult(VersionedResult):
    """Proxies and aggregations of visual credit (VCA §18): ranking rows, control-set stability, families."""

    file_name = "proxies.json"
    written_by = "vca proxies"

    proxies: list[dict[str, Any]]
    aggregates: list[dict[str, Any]]
    aggregation: Any
    control_sets: dict[str, Any]
    families: list[dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class FactorialResult(VersionedResult):
    """The 3×3 evidence-source factorial (VCA §10): per model C-U, responsiveness, flips and source effects."""

    file_name = "factorial.json"
    written_by = "vca factorial; vlaudit.factorial"

    # the JSON key "items" (the ITEMS file) hides Mapping.items() on this type: read it as result["items"]
    items: str  # type: ignore[assignment]
    margins: str
    stems: int
    n_resamples: int
    seed: int
    level: float
    models: list[dict[str, Any]]
    pooled: dict[str, Any]
    definitions: dict[str, str]
    interface: str


@dataclass(frozen=True, kw_only=True)
class EditBuildSummary(VersionedResult):
    """The object-swap edit build (VCA §17): candidates, feasibility, edits and probes written."""

    file_name = "summary.json (edits build folder)"
    written_by = "edits build"

    items: str  # type: ignore[assignment]  # hides Mapping.items(), as in FactorialResult
    seed: int
    params: dict[str, Any]
    n_candidates: int
    n_feasible: int
    n_infeasible: int
    n_edits: int
    n_probes: int
    excluded_by_reason: dict[str, Any]
    feasibility_audit: Any


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
    """The annotators' consensus on each edit (VCA §17): decision counts, pairwise and repeat agreement."""

    file_name = "summary.json (edits import folder)"
    written_by = "edits import"

    counts: dict[str, Any]
    n_edits: int
    pairwise: Any
    repeat: Any


@dataclass(frozen=True, kw_only=True)
class EditOutcomesSummary(VersionedResult):
    """Outcomes on the accepted edits (VCA §17, Table 8): per model rel./+vis./strict, pooled C-U and D-CC."""

    file_name = "summary.json (edits analyze folder)"
    written_by = "edits analyze"

    n_accepted: int
    table: list[dict[str, Any]]
    pooled_cu: Any
    pooled_dcc: Any
    feasibility_audit: Any


@dataclass(frozen=True, kw_only=True)
class StabilityResult(VersionedResult):
    """The backend's numerical noise floor on a run (``vca stability``): per math-preserving perturbation and
    context the median / p99 / max |Δ margin|, margin and G_img sign flips, and τ (VCA §3 decisions)."""

    file_name = "stability.json (run folder)"
    written_by = "vca stability; vlaudit.measure_stability"

    model: str
    spec: str
    run: str
    sample: dict[str, Any]
    perturbations: list[dict[str, Any]]
    noise_floor: float
    floor_definition: str
    forwards: dict[str, Any]


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
    sample: dict[str, Any]
    max_new_tokens: int
    checks: list[dict[str, Any]]
