"""Typed figures of the compositionality suites: each suite's official number, as its authors compute it.

An :class:`OfficialFigure` is one number a suite's official code prints (ARO VG-Relation's macro accuracy,
SugarCrepe++'s ITT, SPEC's i2t mean over subsets), with the population it is over (``n`` items, ``n_subsets``
groups), its per-subset values and the source it re-expresses (repo @ commit : path). A figure that cannot be
computed (no item left after the official filter; a text-to-text score a yes/no model does not have) is
``value=Missing(reason)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vlaudit.results.missing import Missing


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
