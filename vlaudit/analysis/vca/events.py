"""What every run-level quantity of the VCA report reads (VCA §3, §12, §19): the report's prespecified settings
(:class:`ReportSettings`) and one run's per-item events under the headline controls (:class:`RunEvents`, built by
:func:`vlaudit.analysis.vca.report.run_events`).

Below the report and its parts (:mod:`~vlaudit.analysis.vca.axes`, :mod:`~vlaudit.analysis.vca.benchmark`,
:mod:`~vlaudit.analysis.vca.report_rows`), which all read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vlaudit.metrics.vca import relation, robustness, support
from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, MIN_COVERAGE
from vlaudit.sources.margins import MarginRun


@dataclass(frozen=True)
class ResamplingSettings:
    """The options every prespecified VCA analysis opens with (the report, the proxies, a comparison): the
    headline controls, the number of bootstrap resamples, their seed and the interval level; the defaults are
    the paper's (§19). Each analysis's settings add their own after these."""

    controls: tuple[str, ...] = support.DEFAULT_CONTROLS
    n_resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    level: float = CONFIDENCE_LEVEL


@dataclass(frozen=True)
class ReportSettings(ResamplingSettings):
    """Prespecified report options; the defaults are the paper's (§19)."""

    control_sets: tuple[tuple[str, ...], ...] = robustness.ALTERNATE_CONTROL_SETS
    #: MMStar's ML: (LVLM model, its base LLM's text-only model) pairs; LVLM ``*`` names one for every LVLM
    base_llms: tuple[tuple[str, str], ...] = ()
    #: ``--cluster COLUMN``: the resampling unit's column (None: what the items declare, :mod:`.units`)
    cluster: str | None = None
    #: ``--min-coverage``: a run whose recorded scoring coverage (:mod:`vlaudit.results.vca.coverage`) falls
    #: below it is reported with a warning that its numbers are not a result
    min_coverage: float = MIN_COVERAGE


@dataclass
class RunEvents:
    """Per-item events of one run under the headline controls (the inputs of every run-level quantity).

    ``run`` holds the headline items only (see the module docstring); ``n_total`` counts the run's items
    before exclusion and ``excluded`` maps each headline control to the ids of the items that lack it.
    ``has_mismatch`` marks the headline items with a ``mismatch`` margin: ``dep_perm`` (Dep_perm),
    ``dep_m`` (Dep+M) and ``strict_m`` (Strict+M) are meaningful there only (False elsewhere).
    """

    run: MarginRun
    direction: np.ndarray
    gap: np.ndarray
    dep: np.ndarray
    correct: np.ndarray | None
    strict: np.ndarray
    n_total: int = 0
    excluded: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    has_mismatch: np.ndarray | None = None
    dep_perm: np.ndarray | None = None
    dep_m: np.ndarray | None = None
    strict_m: np.ndarray | None = None
    groups: relation.RelationGroups | None = None
    groups_excluded: int = 0
    ties: dict[str, int] = field(default_factory=dict)
