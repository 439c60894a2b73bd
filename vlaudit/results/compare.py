"""Typed results of the paired model comparisons (``vlaudit compare``; VCA §19's paired bootstrap)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vlaudit.results.base import VersionedResult


@dataclass(frozen=True, kw_only=True)
class CompareVcaResult(VersionedResult):
    """Models' Visual Credit Audits compared on the items they share: per (dataset, interface, family) and
    pair of models, each metric's values, difference A − B with its paired clustered bootstrap interval,
    p-value (exact McNemar or cluster permutation), Holm-adjusted p and whether it survives; the leaderboard
    (value, interval, rank with ties), per model the items dropped and why, and the metrics skipped."""

    file_name = "compare.json"
    written_by = "compare vca; vlaudit.compare_vca"

    models: list[dict[str, Any]]
    comparisons: list[dict[str, Any]]
    leaderboard: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    settings: dict[str, Any]
    warnings: list[str]


@dataclass(frozen=True, kw_only=True)
class CompareCyclesResult(VersionedResult):
    """Models' cycle scores compared on the same cycles: per split (never pooled) and family, ΔCycleAcc with
    its paired bootstrap interval over cycles, the sign test on per-cycle credit differences and both tie
    rates; on 2×2 benchmarks the Winoground / NaturalBench metric differences; Holm-adjusted p-values."""

    file_name = "compare_cycles.json"
    written_by = "compare cycles; vlaudit.compare_cycles"

    models: list[dict[str, Any]]
    comparisons: list[dict[str, Any]]
    leaderboard: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    settings: dict[str, Any]
    warnings: list[str]
