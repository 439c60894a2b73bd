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
