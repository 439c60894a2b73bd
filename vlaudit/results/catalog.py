"""Every typed result and table schema, and their Markdown: the docs' "Output schemas" are rendered from here
(``docs/hooks/cli_reference.py``), so the page cannot drift from the dataclasses."""

from __future__ import annotations

import inspect

from vlaudit.results.columns import TABLES, TableSchema
from vlaudit.results.compare import CompareCyclesResult, CompareVcaResult
from vlaudit.results.cycle_experiments import DiagnosticsResult, OeResult, RankSweepResult, TransferResult
from vlaudit.results.cycles import (
    BenchmarkMetricsResult,
    CycleAudit,
    CycleBuildFailure,
    CycleBuildMeta,
    CycleBuildSummary,
    CycleEvaluationResult,
    MllmCycleScores,
    PairAuditResult,
    SyntheticResult,
)
from vlaudit.results.demo import (
    DemoCycleAudits,
    DemoCycleEvaluation,
    DemoSummary,
    DemoVcaKnownAnswers,
    ItemsBuildSummary,
    ProbeNotes,
)
from vlaudit.results.giveaway import GiveawayResult
from vlaudit.results.suites import SuiteResult
from vlaudit.results.vca.outputs import (
    AnnotationConsensusSummary,
    AnnotationExportSummary,
    DualScoringSummary,
    EditBuildSummary,
    EditOutcomesSummary,
    FactorialResult,
    GenerateCheckResult,
    ScoringSummary,
    StabilityResult,
    VcaFilterResult,
    VcaProxiesResult,
    VcaReportResult,
    VcaValidityResult,
    WordingDiagnosticsResult,
)
from vlaudit.results.versioned import VersionedResult, field_types, nested_records

RESULT_TYPES: tuple[type[VersionedResult], ...] = (
    CycleBuildMeta, CycleBuildSummary, CycleBuildFailure, CycleAudit, CycleEvaluationResult, BenchmarkMetricsResult,
    DiagnosticsResult, RankSweepResult, OeResult, TransferResult, PairAuditResult, MllmCycleScores,
    SyntheticResult, ItemsBuildSummary, ScoringSummary, DualScoringSummary, VcaReportResult, VcaValidityResult,
    VcaFilterResult, VcaProxiesResult, FactorialResult, EditBuildSummary, AnnotationExportSummary,
    AnnotationConsensusSummary, EditOutcomesSummary, DemoSummary, DemoCycleEvaluation, DemoCycleAudits,
    ProbeNotes, DemoVcaKnownAnswers, WordingDiagnosticsResult, StabilityResult, GenerateCheckResult,
    CompareVcaResult, CompareCyclesResult, SuiteResult, GiveawayResult,
)


def _summary(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    return " ".join(doc.split("\n\n")[0].split())


def result_markdown(cls: type[VersionedResult]) -> str:
    """One result type as a Markdown section: file, writers, version, definition and fields."""
    lines = [f"#### `{cls.__name__}` (version {cls.schema_version})", "",
             f"`{cls.file_name}`, written by `{cls.written_by}`. {_summary(cls)}", "",
             "| key | type |", "|---|---|", "| `schema_version` | int |"]
    # a union's "|" would split the Markdown table cell
    lines += [f"| `{name}` | {kind.replace(' | ', ' or ')} |" for name, kind in field_types(cls).items()]
    for record in nested_records(cls):
        lines += ["", f"`{record.__name__}` (a record inside it): {_summary(record)}", "", "| key | type |",
                  "|---|---|"]
        lines += [f"| `{name}` | {kind.replace(' | ', ' or ')} |" for name, kind in field_types(record).items()]
    return "\n".join(lines)


def table_markdown(table: TableSchema) -> str:
    """One table schema as a Markdown section: its files and every column."""
    lines = [f"#### {table.name}", "", f"{table.files}.", "", "| column | dtype | required | meaning |",
             "|---|---|---|---|"]
    for column, written in [(c, True) for c in table.columns] + [(c, False) for c in table.input_only]:
        note = "" if written else " (accepted on input, never written)"
        lines.append(f"| `{column.name}` | {column.dtype} | {'yes' if column.required else 'no'} | "
                     f"{column.meaning}{note} |")
    return "\n".join(lines)


def render_markdown() -> str:
    """The "Output schemas" section: every JSON result type, then every table."""
    parts = ["Every JSON file a command writes is one of these frozen dataclasses' `to_dict()` (module "
             "`vlaudit.results`); `from_dict()` reads it back. The declared keys below are always present; a "
             "file may hold further keys (optional sections). `schema_version` is bumped when a declared key is "
             "renamed, removed or changes meaning; a file without one (written before versioning) reads as 1.",
             "", "### JSON results", ""]
    parts += [result_markdown(cls) + "\n" for cls in RESULT_TYPES]
    parts += ["### Tables", "", "Column order is the order written; a reader needs the required columns, "
              "interprets the others listed and carries any further column along.", ""]
    parts += [table_markdown(table) + "\n" for table in TABLES]
    return "\n".join(parts).rstrip() + "\n"
