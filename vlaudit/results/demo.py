"""Typed results of the benchmark-item builders and of the known-answer demo. Each class is one JSON file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vlaudit.results.base import VersionedResult


@dataclass(frozen=True, kw_only=True)
class ItemsBuildSummary(VersionedResult):
    """What an ITEMS builder kept and why it excluded the rest (counted and listed), notes and warnings."""

    file_name = "ITEMS.summary.json"
    written_by = "data vsr|vsr-inverse|gsr-coco|whatsup-controlled|items"

    n_items: int
    n_excluded: int
    excluded_by_reason: dict[str, int]
    excluded: list[dict[str, Any]]
    notes: list[str]
    warnings: list[str]


@dataclass(frozen=True, kw_only=True)
class DemoSummary(VersionedResult):
    """The known-answer demo: every check (``known_answers``), whether all passed, and each stage's summary."""

    file_name = "summary.json (demo folder)"
    written_by = "demo"

    config: dict[str, Any]
    synthetic: dict[str, Any]
    cycles: dict[str, Any]
    vca: dict[str, Any]
    known_answers: list[dict[str, Any]]
    passed: bool
    models: Any
    timings: dict[str, Any]
    versions: dict[str, Any]
    files: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class DemoCycleEvaluation(VersionedResult):
    """The demo's cycle stage on the test split: cycle counts, the Table-5 audit, CycleAcc per encoder and
    scorer over seeds, and the probe-rank sweep (cycle paper §2, §5)."""

    file_name = "cycles/eval.json (demo folder)"
    written_by = "demo"

    split: str
    seeds: list[int]
    counts: dict[str, Any]
    audit: dict[str, Any]
    encoders: dict[str, Any]
    rank_sweep: Any
    files: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class DemoCycleAudits(VersionedResult):
    """The Table-5 audit (:class:`~vlaudit.results.cycles.CycleAudit`) of the demo's COCO and GQA cycles."""

    file_name = "cycles/seed-N/audit.json (demo folder)"
    written_by = "demo"

    coco: dict[str, Any]
    gqa: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ProbeNotes(VersionedResult):
    """The probes' training notes (small-set batches, below-chance fits) of one demo encoder and seed."""

    file_name = "probe_notes.json (demo folder)"
    written_by = "demo"

    notes: list[dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class DemoVcaKnownAnswers(VersionedResult):
    """The demo's VCA stage: each reference model's headline, the known-answer checks, the planted credited
    fraction and the factorial's per-model rows."""

    file_name = "vca/known_answers.json (demo folder)"
    written_by = "demo"

    runs: list[dict[str, Any]]
    known_answers: list[dict[str, Any]]
    planted_credited_fraction: Any
    factorial: list[dict[str, Any]]
    seconds: dict[str, Any]
    notes: list[str]
