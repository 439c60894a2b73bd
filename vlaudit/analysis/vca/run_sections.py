"""The typed sections of one run's audit whose rows follow the run's strata, controls and the report's
quantiles (VCA §12): the strata and their balanced averages, decision survival with its Wilson intervals
(design-effect corrected over the run's clusters, :func:`vlaudit.stats.intervals.clustered_wilson_interval`) and
the raw-gap distribution
(:mod:`vlaudit.results.vca.run_sections`), built from the pure metrics of :mod:`vlaudit.metrics.vca.support`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from vlaudit.metrics.vca import relation, support
from vlaudit.metrics.vca.relation import RelationGroups
from vlaudit.results.missing import Missing, known
from vlaudit.results.vca.run_sections import (
    Balanced,
    ControlSurvival,
    GapQuantile,
    GapRanking,
    GapSummary,
    GroupIntervals,
    NearZero,
    RelationContext,
    RelationSummary,
    Stratum,
    Survival,
)
from vlaudit.results.vca.validity import Figure
from vlaudit.results.versioned import Interval
from vlaudit.stats.intervals import clustered_wilson_interval, wilson_interval
from vlaudit.stats.ranking import auprc, auroc, high_minus_low

NO_CREDIT = "no credited item"


def survival(margins: Mapping[str, np.ndarray], dep: np.ndarray, controls: Sequence[str],
             level: float, clusters: np.ndarray | None = None) -> Survival:
    """Decision survival among the credited items (:func:`support.decision_survival`), each share with its
    Wilson interval at ``level`` over the n_dep credited items — design-effect corrected over ``clusters``
    (one label per item: the run's resampling unit) so that its unit is the run's, the plain item-level
    Wilson interval without them; Missing with no credited item."""
    shares = support.decision_survival(margins, dep, controls)
    n_dep = int(shares["n_dep"])
    dep = np.asarray(dep, dtype=bool)
    direction = support.prediction_direction(margins["original"])
    same = {c: support.keeps_decision(direction, np.asarray(margins[c])) for c in controls}
    events = {f"{c}_same": s for c, s in same.items()}
    events["both_same"] = np.all(np.stack(list(same.values())), axis=0)

    def wilson(key: str) -> Interval | Missing:
        if not n_dep:
            return Missing(NO_CREDIT)
        if clusters is None:
            low, high = wilson_interval(int(round(shares[key] * n_dep)), n_dep, level)
        else:
            low, high = clustered_wilson_interval(events[key] & dep, dep, clusters, level)
        return (float(low), float(high))

    return Survival(
        n_dep=n_dep,
        controls=[ControlSurvival(c, known(shares[f"{c}_same"], NO_CREDIT), wilson(f"{c}_same"))
                  for c in controls],
        both_same=known(shares["both_same"], NO_CREDIT), both_same_wilson=wilson("both_same"),
        any_changes=known(shares["any_changes"], NO_CREDIT))


def gap_distribution(gap: np.ndarray) -> GapSummary:
    """The raw-gap distribution (:func:`support.gap_summary`) as quantile and near-zero rows."""
    figures = support.gap_summary(gap)
    return GapSummary(
        mean=figures["mean"], min=figures["min"], max=figures["max"],
        quantiles=[GapQuantile(q, figures[f"q{int(round(q * 100)):02d}"]) for q in support.GAP_QUANTILES],
        near_zero=[NearZero(eps, figures[f"near_zero_{eps:g}"]) for eps in support.NEAR_ZERO])


def _figure(value: float | None) -> Figure:
    """A stratum's rate: None (the rate needs labels the run lacks) or NaN (an empty stratum) with its reason."""
    return Missing("no labels") if value is None else known(value, "empty stratum")


def strata(by_stratum: Mapping[str, Mapping[str, Mapping[str, float | None]]]) -> list[Stratum]:
    """The rows of :func:`support.stratified` (or the letter strata of a multiple-choice run)."""
    return [Stratum(by, name, int(r["n"] or 0), *(_figure(r[k]) for k in ("acc", "dep", "dcc", "cu", "strict")))
            for by, named in by_stratum.items() for name, r in named.items()]


def balanced(by_stratum: Mapping[str, dict[str, dict[str, float | None]]],
             average: Callable[[dict[str, dict[str, float | None]]], Mapping[str, float]]) -> list[Balanced]:
    """The equal-weight average of each ``by``'s strata (``average``: :func:`support.balanced` or the letters'
    :func:`choice.balanced_letters`); NaN where a stratum lacks the rate (an empty one)."""
    rows = []
    for by, named in by_stratum.items():
        r = average(named)
        rows.append(Balanced(by, *(known(r[k], "a stratum without the rate (empty)") for k in ("acc", "dcc", "cu", "dep"))))
    return rows


def relation_groups(groups: RelationGroups, gap: np.ndarray, excluded: int,
                    intervals: Mapping[str, Interval | None]) -> RelationSummary:
    """The run's relation-group section (:func:`relation.relation_summary`, VCA §13) with the group rates'
    ``intervals`` (by name: rel_o, pair_credit, pair_d, joint, g_int_mean) and how the true statement's G_img
    ranks Rel_o — an internal check of the §15 ranking statistics, not the paper's external SRC/Swap targets,
    which need edited images."""
    summary = relation.relation_summary(groups)
    one_class = "Rel_o has one class over the groups"
    contexts = [RelationContext(c, relation.short(c), known(summary.get(f"rel_{relation.short(c)}"), "no group"),
                                known(summary.get(f"h_{relation.short(c)}_mean"), "no group"))
                for c in dict.fromkeys([*groups.rel, *groups.h])]
    true_gap, rel_o = gap[groups.true_index], groups.rel["original"]
    ranking = GapRanking(known(auroc(true_gap, rel_o), one_class), known(auprc(true_gap, rel_o), one_class),
                         known(high_minus_low(true_gap, rel_o), one_class), known(float(rel_o.mean()), "no group"))
    return RelationSummary(
        groups=groups.n_groups, groups_excluded=excluded, contexts=contexts,
        pair_credit=float(summary["pair_credit"]), pair_d=float(summary["pair_d"]), joint=float(summary["joint"]),
        g_int_mean=float(summary["g_int_mean"]), ci_g_int_mean=intervals["g_int_mean"],
        ci=GroupIntervals(*(intervals[k] for k in ("rel_o", "pair_credit", "pair_d", "joint", "g_int_mean"))),
        gap_ranks_rel_o=ranking)
