"""Identities of the VCA quantities as property tests (VCA §3, §9, §12, §13, §18).

Margins are drawn on a dyadic grid (k/64, |k| ≤ 4096) and scale factors are small integers or powers of two,
so every sum, difference and product below is exact in float64 and the identities hold bit for bit rather
than up to rounding.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from vca_fixtures import rows_from_arrays

from vlaudit.analysis.vca.report import ReportSettings, compute_report, run_events
from vlaudit.files import dumps_json
from vlaudit.metrics.vca import permutation, support
from vlaudit.sources.margins import runs_from_rows

CONTEXTS = ("original", "text", "blank", "mismatch")
margin_value = st.integers(-4096, 4096).map(lambda k: k / 64.0)


@st.composite
def tables(draw, with_groups: bool = False):
    """(margins, labels, item_ids, group_ids, statements) with optional true/false groups."""
    if with_groups:
        sizes = draw(st.lists(st.integers(2, 4), min_size=1, max_size=8))
        group_ids = [f"g{k}" for k, size in enumerate(sizes) for _ in range(size)]
        statements = [j == 0 for size in sizes for j in range(size)]
        n_free = draw(st.integers(0, 4))
        group_ids += [None] * n_free
        statements += [None] * n_free
        n = len(group_ids)
    else:
        n = draw(st.integers(1, 30))
        group_ids = statements = None
    margins = {c: draw(st.lists(margin_value, min_size=n, max_size=n)) for c in CONTEXTS}
    labels = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return margins, labels, [f"it{k:03d}" for k in range(n)], group_ids, statements


def _run(table, scale: float = 1.0):
    margins, labels, ids, groups, statements = table
    scaled = {c: [scale * v for v in values] for c, values in margins.items()}
    (run,) = runs_from_rows(rows_from_arrays(scaled, item_ids=ids, labels=labels, group_ids=groups,
                                             statements=statements))
    return run


@settings(max_examples=60, deadline=None)
@given(tables())
def test_cu_is_acc_minus_dcc_and_perm_identity(table) -> None:
    ev = run_events(_run(table))
    counts = {"acc": ev.correct.sum(), "dcc": (ev.correct & ev.dep).sum(), "cu": (ev.correct & ~ev.dep).sum()}
    assert counts["cu"] == counts["acc"] - counts["dcc"]
    rates = support.decomposition(ev.dep, ev.correct)
    assert abs(rates["cu"] - (rates["acc"] - rates["dcc"])) <= 1e-12
    perm = permutation.permutation_summary(ev.dep, ev.dep_perm, ev.correct)
    assert abs((perm["cu_perm"] - rates["cu"]) - perm["delta_dcc"]) <= 1e-12
    cells = rates["dcc"] + rates["cu"] + rates["wrong_dep"] + rates["wrong_nodep"]
    assert abs(cells - 1.0) <= 1e-12


@settings(max_examples=60, deadline=None)
@given(tables(with_groups=True))
def test_joint_implies_positive_interaction(table) -> None:
    g = run_events(_run(table)).groups
    assert np.all(g.g_int[g.joint] > 0)
    assert np.all(g.pair_credit[g.joint])


@settings(max_examples=15, deadline=None)
@given(tables(with_groups=True), st.randoms(use_true_random=False))
def test_row_order_changes_nothing(table, rnd: random.Random) -> None:
    margins, labels, ids, groups, statements = table
    rows = rows_from_arrays(margins, item_ids=ids, labels=labels, group_ids=groups, statements=statements)
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    cfg = ReportSettings(n_resamples=30)
    a = compute_report(runs_from_rows(rows), cfg)
    b = compute_report(runs_from_rows(shuffled), cfg)
    # every support quantity — and, since items are sorted by id, every interval too — is unchanged
    assert dumps_json(a.result.to_dict()) == dumps_json(b.result.to_dict())
    assert a.items == b.items and a.groups == b.groups


@settings(max_examples=60, deadline=None)
@given(tables(with_groups=True), st.sampled_from([0.25, 0.5, 2.0, 3.0, 7.0, 64.0]))
def test_positive_scaling_changes_no_binary_event(table, scale) -> None:
    a, b = run_events(_run(table)), run_events(_run(table, scale))
    for name in ("direction", "dep", "correct", "strict", "dep_perm"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("pair_credit", "pair_d", "joint"):
        np.testing.assert_array_equal(getattr(a.groups, name), getattr(b.groups, name), err_msg=name)
    for c in a.groups.rel:
        np.testing.assert_array_equal(a.groups.rel[c], b.groups.rel[c])
    np.testing.assert_array_equal(b.gap, scale * a.gap)


@settings(max_examples=40, deadline=None)
@given(tables(with_groups=True), st.data())
def test_constructed_joint_groups_have_positive_interaction(table, data) -> None:
    """Force Rel_o ∧ PairD on every group (true: m_o > max(0, m_t, m_b); false: m_o < min(0, m_t, m_b))."""
    margins, labels, ids, groups, statements = table
    margins = {c: list(v) for c, v in margins.items()}
    for i, group in enumerate(groups):
        if group is None:
            continue
        step = data.draw(st.integers(1, 640)) / 64.0
        controls = (margins["text"][i], margins["blank"][i])
        margins["original"][i] = (max(0.0, *controls) + step) if statements[i] else (min(0.0, *controls) - step)
    g = run_events(_run((margins, labels, ids, groups, statements))).groups
    assert g.joint.all()
    assert np.all(g.g_int > 0)
