"""Typed results of the cycle paper's commands: building, auditing and evaluating exact cycles (cycle paper §2–§5).

Each class is the JSON file one command writes; its fields are the keys the file always holds (see
:mod:`vlaudit.results.base` for ``schema_version`` and ``extra``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vlaudit.results.base import VersionedResult


@dataclass(frozen=True, kw_only=True)
class CycleBuildMeta(VersionedResult):
    """The metadata written beside a cycles file: the build's settings and Table-6 counts (cycle paper §4, §D).

    ``counts`` is ``{family: {split: n}}`` for the families kept; ``unavailable`` the families withdrawn for
    having fewer than ``min_cycles`` validation cycles (§D.5), with their counts."""

    file_name = "CYCLES.meta.json"
    written_by = "cycles build coco|gqa|jsonl|winoground|naturalbench|blocks; vlaudit.build_cycles"

    source: str
    families: Any
    splits: dict[str, Any]
    min_cycles: int
    counts: dict[str, Any]
    unavailable: dict[str, Any]
    warnings: dict[str, Any]
    cycles_file: str
    captions_file: str


@dataclass(frozen=True, kw_only=True)
class CycleBuildSummary(VersionedResult):
    """What :func:`vlaudit.build_cycles` returns: the metadata (as in ``CYCLES.meta.json``), the ``paths`` written
    (``{"failed": …}`` when no family was kept) and the number of cycles written."""

    file_name = "— (returned, printed as the Table-6 counts)"
    written_by = "vlaudit.build_cycles"

    source: str
    counts: dict[str, Any]
    unavailable: dict[str, Any]
    paths: dict[str, str]
    cycles_written: int


@dataclass(frozen=True, kw_only=True)
class CycleBuildFailure(VersionedResult):
    """What a build that kept no family writes instead of a cycles file: its settings, counts and why."""

    file_name = "CYCLES.failed.json"
    written_by = "cycles build …, when no family reaches --min-cycles"

    source: str
    counts: dict[str, Any]
    unavailable: dict[str, Any]
    failed: str


@dataclass(frozen=True, kw_only=True)
class MllmCycleScores(VersionedResult):
    """What :func:`vlaudit.score_cycles_mllm` returns: the score rows it wrote to the scores table (the
    ``cycles eval`` format, s = NLL(no) − NLL(yes) of the fixed query), the run's summary (as the run folder's
    ``summary.json``), the number of cycles and the run folder."""

    file_name = "— (returned; the rows are OUT, the summary OUT.run/summary.json)"
    written_by = "vlaudit.score_cycles_mllm"

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    n_cycles: int
    run_dir: str


@dataclass(frozen=True, kw_only=True)
class CycleAudit(VersionedResult):
    """Table 5 of the cycle paper: per (family, split) marginal TVs, max |signed degree| and validity violations
    re-checked against the annotations; all three must be 0 for exact cycles (§2.1, Theorem 1)."""

    file_name = "OUT (--out)"
    written_by = "cycles audit"

    cycles: str
    annotations: list[str]
    rules: dict[str, Any]
    rows: list[dict[str, Any]]
    validity_violations: int
    max_abs_signed_degree: float


@dataclass(frozen=True, kw_only=True)
class CycleEvaluationResult(VersionedResult):
    """Exact CycleAcc per family and split with ties (cycle paper §2.1, §D.5) and bootstrap intervals (the VCA
    paper's bootstrap, VCA §19: the cycle paper states none).

    ``families`` is ``{family: {split: {n, cycle_acc, ties, tie_rate, ci}}}``; splits are never pooled.
    ``benchmarks`` (extra) holds a 2×2 benchmark's own metrics when the cycles came from one."""

    file_name = "OUT (--out)"
    written_by = "cycles eval; vlaudit.evaluate_cycles"

    families: dict[str, Any]
    unavailable: dict[str, Any]
    splits: list[str]
    min_cycles: int
    tol: float
    n_resamples: int
    seed: int
    warnings: list[str]


@dataclass(frozen=True, kw_only=True)
class CycleExperimentResult(VersionedResult):
    """One cycle-paper experiment (diagnostics, rank-sweep, oe, transfer, text-neighbor; §5.1–§5.6): its
    settings and rows (their keys depend on the experiment) and the files written beside it."""

    file_name = "NAME.json"
    written_by = "experiment diagnostics|rank-sweep|oe|transfer"

    files: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class SyntheticResult(VersionedResult):
    """The synthetic controls (cycle paper §3): each diagnostic's mean over seeds and whether every check held
    for the mean and for each seed on its own."""

    file_name = "synthetic.json"
    written_by = "synthetic; demo"

    seeds: list[int]
    config: dict[str, Any]
    rows: list[dict[str, Any]]
    checks: dict[str, bool]
    checks_per_seed: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class PairAuditResult(VersionedResult):
    """The labelled-pairs audit of a benchmark's negatives (cycle paper §2.2): one row per pairs file."""

    file_name = "audit_pairs.json"
    written_by = "cycles audit-pairs"

    files: list[str]
    weighting: str
    rows: list[dict[str, Any]]
    warnings: list[str]


@dataclass(frozen=True, kw_only=True)
class BenchmarkMetricsResult(VersionedResult):
    """A 2×2 benchmark's own metrics beside CycleAcc (Winoground text/image/group; NaturalBench Acc, Q-Acc,
    I-Acc, G-Acc) per split and tag, with intervals: the ``benchmarks`` part of a cycles evaluation."""

    file_name = "result.json (CycleEvaluation.benchmarks.save)"
    written_by = "vlaudit.evaluate_cycles(...).benchmarks"

    benchmarks: dict[str, Any]
