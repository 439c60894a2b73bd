"""Paired comparison statistics: exact McNemar against statsmodels, the vectorised paired bootstrap against a
per-resample loop, and the pairing's properties (identical runs, swapped models, permuted items)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.stats.paired import (
    cluster_permutation_pvalues,
    exact_mcnemar,
    holm,
    mcnemar_from_counts,
    paired_bootstrap,
    paired_bootstrap_loop,
)


def _events(seed: int, m: int = 3, n: int = 120, q: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    num = (rng.random((m, n, q)) < rng.uniform(0.2, 0.8, size=(m, 1, q))).astype(np.float64)
    den = np.ones_like(num)
    den[:, :, -1] = np.repeat(rng.random((1, n)) < 0.6, m, axis=0)  # a shared conditional denominator
    num[:, :, -1] *= den[:, :, -1]
    clusters = np.array([f"g{i // 3}" if i % 5 else f"i{i}" for i in range(n)], dtype=object)
    return num, den, clusters


def test_mcnemar_equals_statsmodels_on_random_tables() -> None:
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    rng = np.random.default_rng(7)
    for _ in range(200):
        table = rng.integers(0, 40, size=(2, 2))
        if rng.random() < 0.1:
            table[0, 1] = table[1, 0] = 0
        expected = contingency.mcnemar(table, exact=True).pvalue
        assert mcnemar_from_counts(int(table[0, 1]), int(table[1, 0])) == pytest.approx(expected, rel=1e-12,
                                                                                        abs=1e-15)


def test_mcnemar_from_events_counts_the_discordant_items() -> None:
    a = np.array([1, 1, 1, 1, 0, 0, 1, 0], dtype=bool)
    b = np.array([1, 0, 0, 0, 0, 1, 1, 0], dtype=bool)
    assert exact_mcnemar(a, b) == mcnemar_from_counts(3, 1)


def test_vectorised_bootstrap_equals_the_per_resample_loop() -> None:
    num, den, clusters = _events(1)
    fast = paired_bootstrap(num, den, clusters, n_resamples=400, seed=3, chunk_cells=500)
    slow = paired_bootstrap_loop(num, den, clusters, n_resamples=400, seed=3)
    np.testing.assert_allclose(fast.values, slow.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.intervals, slow.intervals, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.difference_intervals, slow.difference_intervals, rtol=0, atol=1e-12)


def test_chunking_changes_no_bit() -> None:
    num, den, clusters = _events(2)
    whole = paired_bootstrap(num, den, clusters, n_resamples=300, seed=5)
    blocks = paired_bootstrap(num, den, clusters, n_resamples=300, seed=5, chunk_cells=97)
    assert np.array_equal(whole.difference_intervals, blocks.difference_intervals, equal_nan=True)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 60))
def test_identical_runs_give_zero_difference_and_p_one(seed: int, n: int) -> None:
    num, den, clusters = _events(seed, m=1, n=n)
    twin_num, twin_den = np.concatenate([num, num]), np.concatenate([den, den])
    result = paired_bootstrap(twin_num, twin_den, clusters, n_resamples=200, seed=seed)
    finite = ~np.isnan(result.values[0])
    assert np.all(result.difference[0, 1][finite] == 0.0)
    assert np.all(result.difference_intervals[0, 1][finite] == 0.0)
    assert np.all(cluster_permutation_pvalues(num[0] - num[0], clusters, n_permutations=300) == 1.0)
    assert exact_mcnemar(num[0, :, 0], num[0, :, 0]) == 1.0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 60))
def test_swapping_models_flips_every_sign_exactly(seed: int, n: int) -> None:
    num, den, clusters = _events(seed, m=2, n=n)
    ab = paired_bootstrap(num, den, clusters, n_resamples=200, seed=seed)
    ba = paired_bootstrap(num[::-1], den[::-1], clusters, n_resamples=200, seed=seed)
    assert np.array_equal(ab.difference[0, 1], -ba.difference[0, 1], equal_nan=True)
    assert np.array_equal(ab.difference_intervals[0, 1], -ba.difference_intervals[0, 1][:, ::-1], equal_nan=True)
    p_ab = cluster_permutation_pvalues(num[0] - num[1], clusters, n_permutations=300, seed=seed)
    p_ba = cluster_permutation_pvalues(num[1] - num[0], clusters, n_permutations=300, seed=seed)
    assert np.array_equal(p_ab, p_ba)
    assert exact_mcnemar(num[0, :, 0], num[1, :, 0]) == exact_mcnemar(num[1, :, 0], num[0, :, 0])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 60), shuffle=st.randoms(use_true_random=False))
def test_permuting_item_order_changes_no_byte(seed: int, n: int, shuffle: object) -> None:
    num, den, clusters = _events(seed, m=3, n=n)
    order = list(range(n))
    shuffle.shuffle(order)  # type: ignore[attr-defined]
    a = paired_bootstrap(num, den, clusters, n_resamples=150, seed=seed)
    b = paired_bootstrap(num[:, order], den[:, order], clusters[order], n_resamples=150, seed=seed)
    for name in ("values", "intervals", "difference", "difference_intervals"):
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
    p_a = cluster_permutation_pvalues(num[0] - num[2], clusters, n_permutations=200, seed=seed)
    p_b = cluster_permutation_pvalues((num[0] - num[2])[order], clusters[order], n_permutations=200, seed=seed)
    assert p_a.tobytes() == p_b.tobytes()


def test_permutation_test_detects_a_clear_difference() -> None:
    rng = np.random.default_rng(0)
    a = (rng.random(300) < 0.8).astype(np.float64)
    b = (rng.random(300) < 0.4).astype(np.float64)
    p = cluster_permutation_pvalues((a - b)[:, None], np.arange(300), n_permutations=999)
    assert p[0] == pytest.approx(1 / 1000)


def test_holm_matches_the_step_down_definition() -> None:
    assert holm([0.01, 0.04, 0.03, None, 0.5]) == pytest.approx([0.04, 0.09, 0.09, None, 0.5])  # type: ignore[arg-type]
    assert holm([]) == []
