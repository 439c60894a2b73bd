"""Typed figures of the compositionality suites: each suite's official number, as its authors compute it.

An :class:`OfficialFigure` is one number a suite's official code prints (ARO VG-Relation's macro accuracy,
SugarCrepe++'s ITT, SPEC's i2t mean over subsets), with the population it is over (``n`` items, ``n_subsets``
groups), its per-subset values and the source it re-expresses (repo @ commit : path). A figure that cannot be
computed (no item left after the official filter; a text-to-text score a yes/no model does not have) is
``value=Missing(reason)``.

:class:`SuiteResult` is the file ``vlaudit suite eval`` writes (``suite.json``): one model on one suite file,
the official figures beside exact CycleAcc (:class:`SuiteCycleCell`) and the marginal audit
(:class:`SuiteAuditCell`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vlaudit.results.cycles import CycleAccCell
from vlaudit.results.missing import Missing
from vlaudit.results.versioned import VersionedResult


@dataclass(frozen=True)
class OfficialFigure:
    """One official figure of a suite: ``key`` (stable, snake case: ``macro_accuracy``), ``label`` (as the
    suite's paper names it: "VG-Relation macro accuracy"), ``value`` in [0, 1], ``n`` the items it counts,
    ``subsets`` the per-subset values it aggregates (empty when it is not an aggregate of subsets),
    ``aggregation`` how (``"mean over items"``, ``"macro over relations, symmetric dropped"``), ``tie_rule``
    and ``source`` (repo @ commit : path)."""

    key: str
    label: str
    value: float | Missing
    n: int
    aggregation: str
    tie_rule: str
    source: str
    subsets: dict[str, float] = field(default_factory=dict)
    n_subsets: int = 0
    note: str | None = None


@dataclass(frozen=True)
class SuiteCycleCell:
    """Exact CycleAcc of one subset of a suite (``"all"``: every cycle): the cycles found ``within`` items and
    ``across`` items (:mod:`vlaudit.analysis.suites.cycles`) and their CycleAcc cell (n cycles, CycleAcc with
    ½ for ties, ties, tie rate, a bootstrap interval over cycles); ``cell.cycle_acc`` is None with no cycle."""

    subset: str
    within: int
    across: int
    cell: CycleAccCell


@dataclass(frozen=True)
class SuiteAuditCell:
    """How far one subset's labelled pairs (every (image, text) of every item: positives and negatives) are from
    exact cycles (:func:`vlaudit.metrics.pair_audit.audit_pairs`, ``weighting="mean"``): marginal TVs between
    positives and negatives, the signed-degree imbalance and how many entries lie in an exact cycle."""

    subset: str
    pairs: int
    positives: int
    negatives: int
    tv_image: float
    tv_caption: float
    tv_caption_length: float | None
    degree_imbalance: float
    degree_imbalance_image: float
    degree_imbalance_caption: float
    positives_in_cycles: int
    negatives_in_cycles: int


@dataclass(frozen=True, kw_only=True)
class SuiteResult(VersionedResult):
    """One model on one compositionality suite file: the suite's official figures as its authors compute them,
    exact CycleAcc where the items hold cycles, and the marginal audit of its negatives.

    ``figures`` are the suite's :class:`OfficialFigure` list (its own tie rule and aggregation; ``n`` the items
    each counts, ``coverage`` of each = n / the file's records read); ``cycles`` and ``audit`` hold one cell for
    ``"all"`` and one per subset. ``counts`` are the reader's (read, kept, and every reason a record was left
    out), ``notes`` its one-line facts; ``kind`` is ``"features"`` (a dual encoder: cosine scores) or
    ``"yesno"`` (an MLLM: the yes/no margin of ``query``)."""

    file_name = "suite.json"
    written_by = "suite eval; vlaudit.evaluate_suite"

    suite: str
    title: str
    file: str
    images: str
    model: str
    kind: str
    query: str | None
    metric: str
    tie_rule: str
    official: str
    counts: dict[str, int]
    notes: list[str]
    n_items: int
    figures: list[OfficialFigure]
    cycles: list[SuiteCycleCell]
    audit: list[SuiteAuditCell]
    tol: float
    n_resamples: int
    seed: int
    warnings: list[str]

    def coverage(self, figure: OfficialFigure) -> float | None:
        """The share of the file's records ``figure`` counts (n / read; None when nothing was read)."""
        read = self.counts.get("read", 0)
        return figure.n / read if read else None

    def cycle_cell(self, subset: str = "all") -> SuiteCycleCell | None:
        return next((cell for cell in self.cycles if cell.subset == subset), None)
