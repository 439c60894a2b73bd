"""Hand-computed support-axis and permutation quantities on a 7-item table (VCA §3, §9, §12, §18)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vca_fixtures import SUPPORT_LABELS, SUPPORT_MARGINS, rows_from_arrays

from vlaudit.metrics.vca import permutation, support
from vlaudit.sources.margins import runs_from_rows


@pytest.fixture
def run():
    (only,) = runs_from_rows(rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS))
    return only


@pytest.fixture
def events(run):
    d = support.prediction_direction(run.margins["original"])
    gap = support.image_gap(run.margins)
    dep = support.dependence(gap)
    return d, gap, dep, support.correctness(d, run.labels)


def test_direction_gap_and_dep(run, events) -> None:
    d, gap, dep, correct = events
    assert d.tolist() == [1, -1, 1, 1, -1, -1, 1]  # the exact zero of i3 maps to yes
    assert gap.tolist() == [1.0, -2.0, 1.5, 0.0, 1.0, 1.5, -2.0]
    assert dep.tolist() == [True, False, True, False, True, True, False]  # G = 0 is not credited
    assert correct.tolist() == [True, True, False, True, False, False, False]
    assert support.aligned_support(d, run.margins["text"]).tolist() == [1.0, -0.5, -1.0, 0.0, 1.0, -1.0, 3.0]


def test_decomposition_taxonomy(events) -> None:
    _, _, dep, correct = events
    rates = support.decomposition(dep, correct)
    assert rates["acc"] == pytest.approx(3 / 7)
    assert rates["dep"] == pytest.approx(4 / 7)
    assert rates["dcc"] == pytest.approx(1 / 7)
    assert rates["cu"] == pytest.approx(2 / 7)
    assert rates["wrong_dep"] == pytest.approx(3 / 7)
    assert rates["wrong_nodep"] == pytest.approx(1 / 7)
    assert rates["credited_precision"] == pytest.approx(1 / 4)
    cells = rates["dcc"] + rates["cu"] + rates["wrong_dep"] + rates["wrong_nodep"]
    assert cells == pytest.approx(1.0)


def test_label_free_decomposition(events) -> None:
    _, _, dep, _ = events
    rates = support.decomposition(dep, None)
    assert rates["dep"] == pytest.approx(4 / 7)
    assert rates["acc"] is None and rates["dcc"] is None and rates["cu"] is None


def test_strict_isolation(run) -> None:
    assert support.strict_isolation(run.margins).tolist() == [False, False, True, False, False, True, False]


def test_decision_survival(run, events) -> None:
    _, _, dep, _ = events
    s = support.decision_survival(run.margins, dep)
    assert s["n_dep"] == 4
    assert s["text_same"] == pytest.approx(2 / 4)
    assert s["blank_same"] == pytest.approx(1 / 4)
    assert s["both_same"] == pytest.approx(1 / 4)
    assert s["any_changes"] == pytest.approx(3 / 4)


def test_stratified_and_balanced(run, events) -> None:
    d, _, dep, correct = events
    strict = support.strict_isolation(run.margins)
    strata = support.stratified(d, dep, correct, strict, run.labels)
    yes, no = strata["prediction"]["yes"], strata["prediction"]["no"]
    assert (yes["n"], no["n"]) == (4, 3)
    assert [yes[k] for k in ("acc", "dep", "dcc", "cu", "strict")] == pytest.approx([0.5, 0.5, 0.25, 0.25, 0.25])
    assert [no[k] for k in ("acc", "dep", "dcc", "cu", "strict")] == pytest.approx([1 / 3, 2 / 3, 0, 1 / 3, 1 / 3])
    gy, gn = strata["gold"]["yes"], strata["gold"]["no"]
    assert [gy[k] for k in ("acc", "dep", "dcc", "cu", "strict")] == pytest.approx([0.5, 0.75, 0.25, 0.25, 0.25])
    assert [gn[k] for k in ("acc", "dep", "dcc", "cu", "strict")] == pytest.approx([1 / 3, 1 / 3, 0, 1 / 3, 1 / 3])
    pb = support.balanced(strata["prediction"])
    assert pb["acc"] == pytest.approx(5 / 12)
    assert pb["dcc"] == pytest.approx(1 / 8)
    assert pb["cu"] == pytest.approx(7 / 24)


def test_gap_summary(events) -> None:
    _, gap, _, _ = events
    s = support.gap_summary(gap)
    assert s["mean"] == pytest.approx(1 / 7)
    assert s["q50"] == pytest.approx(1.0)
    assert (s["min"], s["max"]) == (-2.0, 1.5)
    assert s["near_zero_0.01"] == pytest.approx(1 / 7)
    assert s["near_zero_0.1"] == pytest.approx(1 / 7)


def test_alternate_controls_gap(run) -> None:
    gap = support.image_gap(run.margins, ("text",))
    assert gap[0] == 1.0 and gap[1] == 1.5  # i2: r_o = 1, r_t = −0.5
    with pytest.raises(ValueError):
        support.image_gap(run.margins, ())


def test_permutation_calibration(run, events) -> None:
    _, _, dep, correct = events
    dep_perm = permutation.permutation_dependence(run.margins)
    assert dep_perm.tolist() == [False, True, True, True, False, True, True]
    p = permutation.permutation_summary(dep, dep_perm, correct)
    assert p["dep_perm"] == pytest.approx(5 / 7)
    assert p["dcc_perm"] == pytest.approx(2 / 7)
    assert p["delta_dcc"] == pytest.approx(-1 / 7)
    assert p["cu_perm"] == pytest.approx(1 / 7)
    assert p["orig_only"] == pytest.approx(1 / 7)
    assert p["perm_only"] == pytest.approx(2 / 7)
    cu = support.decomposition(dep, correct)["cu"]
    assert p["cu_perm"] - cu == pytest.approx(p["delta_dcc"])
    label_free = permutation.permutation_summary(dep, dep_perm, None)
    assert label_free["dcc_perm"] is None and label_free["dep_perm"] == pytest.approx(5 / 7)


def test_empty_stratum_gives_nan() -> None:
    d = np.array([1.0, 1.0])
    dep = np.array([True, False])
    strata = support.stratified(d, dep, np.array([True, True]), np.array([False, False]), None)
    assert strata["prediction"]["no"]["n"] == 0
    assert math.isnan(strata["prediction"]["no"]["acc"])
