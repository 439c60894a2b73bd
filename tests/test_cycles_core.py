"""The exact-cycle core: contrast, CycleAcc with the half-tie convention, audits (cycle paper §2, §A)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.errors import InputError
from vlaudit.metrics.audits import (
    audit_cycles,
    cycle_entries,
    max_abs_signed_degree,
    signed_degrees,
    total_variation,
)
from vlaudit.metrics.cycles import (
    cycle_acc,
    cycle_contrast,
    cycle_credit,
    evaluate_cycle_families,
    summarize_contrasts,
)
from vlaudit.records import Cycle
from vlaudit.sources.cycle_tables import score_lookup

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@st.composite
def cycle_sets(draw: st.DrawFn) -> list[Cycle]:
    """Random exact-cycle sets over small pools, so images and captions are shared across blocks."""
    n_images = draw(st.integers(2, 6))
    n_captions = draw(st.integers(2, 6))
    n_cycles = draw(st.integers(1, 12))
    cycles = []
    for k in range(n_cycles):
        u1, u2 = draw(st.lists(st.integers(0, n_images - 1), min_size=2, max_size=2, unique=True))
        v1, v2 = draw(st.lists(st.integers(0, n_captions - 1), min_size=2, max_size=2, unique=True))
        cycles.append(Cycle(f"c{k}", draw(st.sampled_from(["a", "b"])), f"u{u1}", f"v{v1}", f"u{u2}", f"v{v2}"))
    return cycles


@settings(max_examples=200, deadline=None)
@given(cycles=cycle_sets(), data=st.data())
def test_additive_scores_give_cycle_acc_exactly_half(cycles: list[Cycle], data: st.DataObject) -> None:
    images = {u for c in cycles for u in (c.image_1, c.image_2)}
    captions = {v for c in cycles for v in (c.caption_1, c.caption_2)}
    a = {u: data.draw(finite) for u in sorted(images)}
    b = {v: data.draw(finite) for v in sorted(captions)}
    scores = {(u, v): a[u] + b[v] for u in images for v in captions}
    result = evaluate_cycle_families(cycles, scores, n_resamples=50, min_cycles=1)
    assert result.families and not result.unavailable
    for cells in result.families.values():
        summary = cells["unsplit"]
        assert summary.cycle_acc == 0.5
        assert summary.ties == summary.n and summary.tie_rate == 1.0


@settings(max_examples=200, deadline=None)
@given(cycles=cycle_sets())
def test_valid_cycle_sets_have_zero_degrees_and_zero_tv(cycles: list[Cycle]) -> None:
    audit = audit_cycles(cycles, {f"v{k}": "w " * k for k in range(6)})
    assert audit["max_abs_signed_degree"] == 0
    assert audit["tv_image"] == 0.0
    assert audit["tv_caption"] == 0.0
    assert audit["tv_caption_length"] == 0.0


def test_signed_degree_detects_unbalanced_comparisons() -> None:
    # Theorem 1: a comparison with a non-zero degree does not cancel additive scores.
    entries = [("u1", "v1", 1), ("u2", "v2", 1), ("u1", "v2", -1)]
    images, captions = signed_degrees(entries)
    assert images == {"u1": 0, "u2": 1}
    assert captions == {"v1": 1, "v2": 0}
    assert max_abs_signed_degree(entries) == 1
    a, b = {"u1": 0.3, "u2": 2.0}, {"v1": -1.0, "v2": 0.7}
    assert sum(w * (a[u] + b[v]) for u, v, w in entries) != 0


def test_cycle_entries_labels_and_tv() -> None:
    cycle = Cycle("c", "f", "u1", "v1", "u2", "v2")
    assert [label for *_, label in cycle.entries()] == [1, 1, 0, 0]
    assert cycle_entries([cycle]) == [("u1", "v1", 1), ("u2", "v2", 1), ("u1", "v2", -1), ("u2", "v1", -1)]
    assert total_variation({"a": 1, "b": 1}, {"a": 2}) == 0.5


def test_contrast_credit_and_ties_by_hand() -> None:
    delta = cycle_contrast([1.0, 0.5, 0.2, 0.0], [1.0, 0.5, 0.2, 0.0], [0.0, 0.5, 0.2 + 1e-12, 0.0],
                           [0.0, 0.5, 0.2, 1.0])
    np.testing.assert_allclose(delta, [2.0, 0.0, -1e-12, -1.0], atol=1e-15)
    np.testing.assert_array_equal(cycle_credit(delta), [1.0, 0.5, 0.5, 0.0])
    assert cycle_acc(delta) == pytest.approx(0.5)
    # A near tie just outside the tolerance is decided, not tied.
    assert cycle_credit(np.array([2e-9, -2e-9])).tolist() == [1.0, 0.0]
    summary = summarize_contrasts(delta, n_resamples=200, seed=1)
    assert (summary.n, summary.ties) == (4, 2)
    assert summary.ci[0] <= summary.cycle_acc <= summary.ci[1]
    assert summarize_contrasts(delta, n_resamples=200, seed=1) == summary


def test_bilinear_contrast_factorizes() -> None:
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 4))
    u1, u2, v1, v2 = rng.normal(size=3), rng.normal(size=3), rng.normal(size=4), rng.normal(size=4)
    delta = cycle_contrast(u1 @ w @ v1, u2 @ w @ v2, u1 @ w @ v2, u2 @ w @ v1)
    assert delta == pytest.approx((u1 - u2) @ w @ (v1 - v2), abs=1e-12)


def test_missing_and_conflicting_scores_are_errors() -> None:
    cycles = [Cycle("blk", "f", "u1", "v1", "u2", "v2")]
    scores = {("u1", "v1"): 1.0, ("u2", "v2"): 1.0, ("u1", "v2"): 0.0}
    with pytest.raises(InputError, match=r"cycle 'blk'.*image_id='u2', caption_id='v1'"):
        evaluate_cycle_families(cycles, scores, min_cycles=1)
    with pytest.raises(InputError, match="two different scores"):
        score_lookup([("u1", "v1", 1.0), ("u1", "v1", 2.0)])
    assert score_lookup([("u1", "v1", 1.0), ("u1", "v1", 1.0)]) == {("u1", "v1"): 1.0}


def test_scores_too_large_for_the_tolerance_warn() -> None:
    cycles = [Cycle("c", "f", "u1", "v1", "u2", "v2")]
    scores = {(u, v): 1e9 for u in ("u1", "u2") for v in ("v1", "v2")}
    with pytest.warns(RuntimeWarning, match="rescale"):
        evaluate_cycle_families(cycles, scores, n_resamples=10, min_cycles=1)


def test_length_audit_needs_every_caption_text() -> None:
    with pytest.raises(InputError, match="no caption text"):
        audit_cycles([Cycle("c", "f", "u1", "v1", "u2", "v2")], {"v1": "a dog"})


def _split_family(family: str, split: str, n: int, delta: float, start: int = 0) -> tuple[list[Cycle], dict]:
    """``n`` cycles of one family and split whose contrast is exactly ``delta`` (s11 = delta, others 0)."""
    cycles, scores = [], {}
    for k in range(start, start + n):
        u1, u2, v1, v2 = f"{split}-u{2 * k}", f"{split}-u{2 * k + 1}", f"{split}-v{2 * k}", f"{split}-v{2 * k + 1}"
        cycles.append(Cycle(f"{family}/{split}/{k}", family, u1, v1, u2, v2, split=split))
        scores.update({(u1, v1): delta, (u2, v2): 0.0, (u1, v2): 0.0, (u2, v1): 0.0})
    return cycles, scores


def test_splits_are_never_pooled() -> None:
    # 30 train cycles with Δ > 0 and 30 test cycles with Δ = 0: train 1.0 and test 0.5, never 0.75.
    train, s_train = _split_family("f", "train", 30, 1.0)
    test, s_test = _split_family("f", "test", 30, 0.0)
    result = evaluate_cycle_families(train + test, {**s_train, **s_test}, n_resamples=50)
    cells = result.families["f"]
    assert set(cells) == {"train", "test"} and result.splits == ["train", "test"]
    assert (cells["train"].n, cells["train"].cycle_acc, cells["train"].tie_rate) == (30, 1.0, 0.0)
    assert (cells["test"].n, cells["test"].cycle_acc, cells["test"].ties) == (30, 0.5, 30)
    assert cells["test"].tie_rate == 1.0 and "overall" not in result.to_dict()
    # restricting to one split needs scores only for that split's cycles
    only_test = evaluate_cycle_families(train + test, s_test, splits=["test"], n_resamples=50)
    assert list(only_test.families["f"]) == ["test"] and only_test.families["f"]["test"].cycle_acc == 0.5
    with pytest.raises(InputError, match=r"split\(s\) \['dev'\] not in the cycles"):
        evaluate_cycle_families(train + test, s_test, splits=["dev"])


def test_cycles_without_a_split_are_their_own_group() -> None:
    split, s_split = _split_family("f", "test", 30, 1.0)
    loose = [Cycle(f"x{k}", "f", f"a{k}", f"b{k}", f"c{k}", f"d{k}") for k in range(30)]
    s_loose = {(u, v): 0.0 for c in loose for u, v, _ in c.entries()}
    result = evaluate_cycle_families(split + loose, {**s_split, **s_loose}, n_resamples=50)
    assert result.families["f"]["test"].cycle_acc == 1.0
    assert result.families["f"]["unsplit"].cycle_acc == 0.5


def test_a_family_short_in_validation_is_withdrawn_whole() -> None:
    # 120 / 19 / 60 cycles: the paper reports the family as unavailable, train and test included (§D.5 counts
    # the validation split).
    parts = [_split_family("binding", s, n, 1.0) for s, n in (("train", 120), ("val", 19), ("test", 60))]
    parts.append(_split_family("attribute", "train", 30, 1.0, start=1000))
    parts.append(_split_family("attribute", "val", 30, 1.0, start=1000))
    parts.append(_split_family("attribute", "test", 30, 1.0, start=1000))
    cycles = [c for part, _ in parts for c in part]
    scores = {k: v for _, s in parts for k, v in s.items()}
    result = evaluate_cycle_families(cycles, scores, n_resamples=20)
    assert list(result.families) == ["attribute"]
    assert result.unavailable == {"binding": {"train": 120, "val": 19, "test": 60}}
    # the validation count decides even when only train and test are evaluated
    result = evaluate_cycle_families(cycles, scores, splits=["train", "test"], n_resamples=20)
    assert set(result.families) == {"attribute"}
    assert result.unavailable == {"binding": {"train": 120, "test": 60, "val": 19}}
    # without a validation split the minimum applies to every evaluated split
    no_val = [c for c in cycles if c.split != "val"]
    result = evaluate_cycle_families(no_val, scores, n_resamples=20, min_cycles=61)
    assert result.unavailable == {"binding": {"train": 120, "test": 60}, "attribute": {"train": 30, "test": 30}}
    # a family absent from a split has 0 cycles there
    result = evaluate_cycle_families([c for c in cycles if not (c.family == "attribute" and c.split == "val")], scores,
                             n_resamples=20, min_cycles=10)
    assert result.unavailable == {"attribute": {"train": 30, "val": 0, "test": 30}}


def test_minimum_counts_validation_cycles_only() -> None:
    """§D.5 by hand: 30 validation cycles keep a family whatever its test count (≥ 1); 29 withdraw it."""
    from vlaudit.metrics.cycles import withdraw_small_families

    splits = ["train", "val", "test"]
    counts = {"kept": {"train": 200, "val": 30, "test": 5}, "short": {"train": 500, "val": 29, "test": 90},
              "no-train": {"val": 40, "test": 40}, "no-val": {"train": 100, "test": 100}}
    assert withdraw_small_families(counts, splits, 30) == {
        "short": {"train": 500, "val": 29, "test": 90}, "no-train": {"train": 0, "val": 40, "test": 40},
        "no-val": {"train": 100, "val": 0, "test": 100}}
    # a file without a validation split: every split must reach the minimum
    assert withdraw_small_families({"a": {"test": 29}, "b": {"test": 30}}, ["test"], 30) == {"a": {"test": 29}}


def test_reduced_precision_is_detected() -> None:
    from vlaudit.metrics.cycles import reduced_precision

    rng = np.random.default_rng(0)
    full = rng.normal(size=1000)
    assert reduced_precision(full) is None
    assert "float32" in reduced_precision(full.astype(np.float32).astype(np.float64))
    assert "6 significant" in reduced_precision(np.array([float(f"{x:.5e}") for x in full]))
    assert reduced_precision(np.array([0.5, 0.5 + 5e-10])) is None
