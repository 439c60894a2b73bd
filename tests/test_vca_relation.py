"""Hand-computed relation axis (VCA §9, §13), robustness checks (§18) and ranking metrics (§15, §19)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit
from vca_fixtures import (
    RELATION_GROUPS,
    RELATION_ITEMS,
    RELATION_MARGINS,
    RELATION_STATEMENTS,
    rows_from_arrays,
)

from vlaudit.metrics.vca import relation, robustness, support
from vlaudit.sources.margins import runs_from_rows
from vlaudit.stats.ranking import auprc, auroc, high_minus_low, macro_average


@pytest.fixture
def groups():
    (run,) = runs_from_rows(rows_from_arrays(RELATION_MARGINS, item_ids=RELATION_ITEMS,
                                             group_ids=RELATION_GROUPS, statements=RELATION_STATEMENTS))
    dep = support.dependence(support.image_gap(run.margins))
    assert dep.tolist() == [True, True, True, False, True, True]
    return relation.relation_groups(run.group_ids, run.statements, run.margins, dep)


def test_group_quantities(groups) -> None:
    assert groups.group_ids.tolist() == ["G1", "G2"]
    assert groups.codes.tolist() == [0, 0, 0, 1, 1, -1]
    assert groups.true_index.tolist() == [0, 3]
    assert groups.h["original"].tolist() == [3.0, -2.0]
    assert groups.h["text"].tolist() == [-0.5, -1.0]
    assert groups.h["blank"].tolist() == [-1.5, 0.5]
    assert groups.g_int.tolist() == [3.5, -2.5]
    assert groups.rel["original"].tolist() == [True, False]
    assert groups.rel["text"].tolist() == [False, False]
    assert groups.rel["blank"].tolist() == [False, False]  # G2: the false statement's m_b = 0 is not < 0
    assert groups.pair_credit.tolist() == [True, False]
    assert groups.pair_d.tolist() == [True, False]
    assert groups.joint.tolist() == [True, False]


def test_relation_summary(groups) -> None:
    s = relation.relation_summary(groups)
    assert s["groups"] == 2
    assert [s[k] for k in ("rel_o", "rel_t", "rel_b", "pair_credit", "pair_d", "joint")] == [0.5, 0, 0, 0.5, 0.5,
                                                                                            0.5]
    assert s["g_int_mean"] == pytest.approx(0.5)
    assert (s["h_o_mean"], s["h_t_mean"], s["h_b_mean"]) == pytest.approx((0.5, -0.75, -0.5))


def test_relation_groups_reject_bad_groups() -> None:
    m = {c: np.zeros(3) for c in ("original", "text", "blank")}
    with pytest.raises(ValueError, match="exactly one true"):
        relation.relation_groups(["g", "g", "g"], np.array([True, True, False]), m, np.ones(3, bool))
    with pytest.raises(ValueError, match="false statement"):
        relation.relation_groups(["g", "h", "h"], np.array([True, True, False]), m, np.ones(3, bool))


def test_aggregation_variants() -> None:
    m = {"original": np.array([2.0, -1.0]), "text": np.array([1.0, 0.5]), "blank": np.array([-1.0, -3.0])}
    gaps = robustness.aggregation_gaps(m)
    assert gaps["r_o-r_t"].tolist() == [1.0, 1.5]
    assert gaps["r_o-r_b"].tolist() == [3.0, -2.0]
    assert gaps["r_o-mean"].tolist() == [2.0, -0.25]
    assert gaps["r_o-max"].tolist() == support.image_gap(m).tolist()
    assert gaps["prob_max"] == pytest.approx([expit(2) - expit(1), expit(1) - expit(3)])
    assert ((gaps["prob_max"] > 0) == (gaps["r_o-max"] > 0)).all()


def test_compare_gaps_and_set_measures() -> None:
    ref = np.array([1.0, -1.0, 2.0, -2.0])
    alt = np.array([0.5, 1.0, 3.0, -1.0])
    correct = np.array([True, True, False, True])
    c = robustness.compare_gaps(ref, alt, correct)
    assert c["dep"] == 0.75 and c["agreement"] == 0.75
    assert c["spearman"] == pytest.approx(0.8)
    assert c["dcc"] == 0.5 and c["cu"] == 0.25
    assert c["cu_jaccard"] == pytest.approx(1 / 2)  # ref C-U {1, 3}, alt C-U {3}
    assert math.isnan(robustness.jaccard(np.zeros(3, bool), np.zeros(3, bool)))
    assert math.isnan(robustness.spearman(np.ones(3), np.arange(3.0)))


def test_ensemble_and_pair_stability() -> None:
    a = {"original": np.array([1.0, -3.0]), "text": np.array([0.0, 1.0])}
    b = {"original": np.array([-3.0, 1.0]), "text": np.array([2.0, 1.0]), "blank": np.array([0.0, 0.0])}
    ens = robustness.ensemble_margins(a, b)
    assert set(ens) == {"original", "text"}
    assert ens["original"].tolist() == [-1.0, -1.0] and ens["text"].tolist() == [1.0, 1.0]
    s = robustness.pair_stability(np.array([1, 0, 1, 1], bool), np.array([1, 1, 1, 0], bool),
                                  np.array([1, 0, 1], bool), np.array([1, 1, 1], bool))
    assert s["item_flip"] == 0.5
    assert s["pair_flip"] == pytest.approx(1 / 3)
    assert s["pair_jaccard"] == pytest.approx(2 / 3)
    agr = robustness.interface_agreement(np.array([1.0, -1.0]), np.array([True, False]), np.array([1.0, 1.0]),
                                         np.array([True, True]), np.array([True, True]), np.array([True, False]))
    assert agr == {"pred_agreement": 0.5, "dep_agreement": 0.5, "dcc_agreement": 1.0}


def test_ranking_metrics() -> None:
    scores, target = np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1], bool)
    assert auroc(scores, target) == pytest.approx(0.75)
    assert auprc(scores, target) == pytest.approx(0.8333333333)
    assert math.isnan(auroc(scores, np.ones(4, bool)))
    assert high_minus_low(np.arange(1.0, 7.0), np.array([0, 0, 1, 0, 1, 1], bool)) == 1.0
    assert high_minus_low(np.arange(6.0), np.array([1, 1, 0, 0, 0, 0], bool)) == -1.0
    assert math.isnan(high_minus_low(np.arange(2.0), np.array([0, 1], bool)))


def test_macro_average_over_models() -> None:
    rows = [{"model": "a", "acc": 0.5}, {"model": "a", "acc": 0.7}, {"model": "b", "acc": 0.9},
            {"model": "c", "acc": None}]
    assert macro_average(rows, ["acc"]) == {"acc": pytest.approx(0.75)}
