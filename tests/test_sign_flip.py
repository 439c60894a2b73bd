"""The exact paired sign-flip test of `compare cycles`: it equals a readable full enumeration,
clusters of one record are the item-level test, ten ½-wins give 2/2¹⁰, and its null size stays at most α —
also with 80% ties, where the old ½-credit "sign test" (2·I½(n − k, k + 1)) fell to about 0.001."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betainc

from vlaudit.stats.sign_flip import ENUMERATE_CLUSTERS, sign_flip_test

CREDIT_DIFFERENCES = st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0])


def enumerated_p(differences: list[float], clusters: list[object]) -> float:
    """The reference: sum each cluster, then count, over every one of the 2^K sign vectors, how often
    |Σ s_k D_k| reaches the observed |Σ D_k| (ties count as extreme)."""
    totals: dict[object, float] = {}
    for d, c in zip(differences, clusters, strict=True):
        totals[c] = totals.get(c, 0.0) + d
    values = list(totals.values())
    observed = abs(sum(values))
    hits = sum(abs(sum(s * v for s, v in zip(signs, values, strict=True))) >= observed - 1e-9
               for signs in itertools.product((-1.0, 1.0), repeat=len(values)))
    return hits / 2 ** len(values)


def old_half_credit_sign_test(d: np.ndarray) -> float:
    """The test `compare cycles` used before (re-expressed from vlaudit.stats.paired.fractional_sign_test):
    wins W = Σ max(d, 0), losses L, n = W + L, p = 2·I½(n − k, k + 1) with k = min(W, L)."""
    wins, losses = float(np.clip(d, 0, None).sum()), float(np.clip(-d, 0, None).sum())
    n, k = wins + losses, min(wins, losses)
    if n == 0 or k >= n / 2:
        return 1.0
    return float(min(1.0, 2.0 * betainc(n - k, k + 1.0, 0.5)))


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(CREDIT_DIFFERENCES, st.integers(0, 5)), min_size=1, max_size=12))
def test_the_test_equals_full_enumeration_on_credit_differences(rows: list[tuple[float, int]]) -> None:
    d = [r[0] for r in rows]
    clusters = [f"k{r[1]}" for r in rows]
    expected = enumerated_p(d, clusters)
    assert sign_flip_test(d, clusters).p == pytest.approx(expected, abs=1e-12)
    # off the ½ lattice the same counting is done one sign vector at a time
    assert sign_flip_test(d, clusters, resolution=None).p == pytest.approx(expected, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False).map(lambda x: round(x, 3)), min_size=1, max_size=10))
def test_arbitrary_differences_are_enumerated_exactly(d: list[float]) -> None:
    result = sign_flip_test(d, resolution=None)
    assert result.method == "exact"
    assert result.p == pytest.approx(enumerated_p(d, list(range(len(d)))), abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(st.lists(CREDIT_DIFFERENCES, min_size=1, max_size=60), st.integers(0, 2**31 - 1))
def test_every_record_its_own_cluster_is_the_item_level_test(d: list[float], seed: int) -> None:
    ids = [f"cycle-{k}" for k in range(len(d))]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(d))
    item_level = sign_flip_test(d)
    assert sign_flip_test(d, ids) == item_level
    assert sign_flip_test(np.asarray(d)[order], np.asarray(ids)[order]) == item_level  # order changes nothing


def test_ten_half_wins_give_two_in_two_to_the_ten() -> None:
    result = sign_flip_test([0.5] * 10)
    assert result.p == pytest.approx(2 / 2**10, rel=1e-12) and round(result.p, 5) == 0.00195
    assert result.method == "exact" and result.n_nonzero == 10
    assert old_half_credit_sign_test(np.full(10, 0.5)) == pytest.approx(0.0625)  # what the old test said
    assert sign_flip_test([0.5] * 10 + [0.0] * 90).p == result.p  # ties (difference 0) change nothing


def test_no_difference_gives_p_one_and_swapping_the_models_changes_nothing() -> None:
    assert sign_flip_test(np.zeros(7)).p == 1.0 and sign_flip_test([]).p == 1.0
    d = np.array([1, 0.5, -0.5, 1, 1, 0, 0.5, 1, -1, 1, 0.5, 0.5])
    assert sign_flip_test(d).p == sign_flip_test(-d).p
    with pytest.raises(ValueError, match="finite"):
        sign_flip_test([0.5, np.nan])


def test_clusters_flip_together() -> None:
    """Four cycles of one image move together: as one cluster of total 2 the evidence is one sign, p = 1."""
    d = [0.5] * 4
    assert sign_flip_test(d, ["img"] * 4).p == 1.0 and sign_flip_test(d, ["img"] * 4).n_clusters == 1
    assert sign_flip_test(d).p == pytest.approx(2 / 16)


def test_monte_carlo_agrees_with_the_exact_count_within_its_error() -> None:
    rng = np.random.default_rng(5)
    d = rng.normal(0.3, 1.0, ENUMERATE_CLUSTERS + 2)  # off the lattice, more clusters than are enumerated
    mc = sign_flip_test(d, resolution=None, n_permutations=20000, seed=1)
    signs = ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1) * 2.0 - 1.0  # all 2^18 sign vectors
    exact = float(np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-9))
    assert mc.method == "monte-carlo" and mc.n_permutations == 20000
    assert abs(mc.p - exact) <= 4 * np.sqrt(exact * (1 - exact) / 20000) + 1e-4
    assert sign_flip_test(d, resolution=None, n_permutations=2000, seed=1) == \
        sign_flip_test(d, resolution=None, n_permutations=2000, seed=1)


def _null_differences(rng: np.random.Generator, n: int, tie_share: float, cluster_size: int = 1) -> np.ndarray:
    """Per-cycle credit differences under the null: symmetric about 0, ``tie_share`` of them exactly 0; with
    ``cluster_size`` > 1 the cycles of a cluster share one sign (a clustered null)."""
    magnitude = np.where(rng.random(n) < tie_share, 0.0, rng.choice([0.5, 1.0], n))
    sign = np.repeat(rng.choice([-1.0, 1.0], -(-n // cluster_size)), cluster_size)[:n]
    return magnitude * sign


@pytest.mark.slow
@pytest.mark.parametrize(("tie_share", "cluster_size"), [(0.0, 1), (0.8, 1), (0.5, 4)])
def test_null_size_at_alpha_five_percent_stays_within_monte_carlo_error(tie_share: float,
                                                                        cluster_size: int) -> None:
    """Seeded simulation, 1,000 null data sets of 40 cycles: rejections at α = 0.05 ≤ 0.05 + 3 MC SE."""
    rng = np.random.default_rng(20260719)
    sims, n, alpha = 1000, 40, 0.05
    clusters = np.arange(n) // cluster_size
    p_new, p_old = np.empty(sims), np.empty(sims)
    for s in range(sims):
        d = _null_differences(rng, n, tie_share, cluster_size)
        p_new[s] = sign_flip_test(d, clusters).p
        p_old[s] = old_half_credit_sign_test(d)
    limit = alpha + 3 * np.sqrt(alpha * (1 - alpha) / sims)
    assert (p_new <= alpha).mean() <= limit
    if tie_share == 0.8 and cluster_size == 1:
        # the old test's size collapsed with ties (far below α: it lost its power), the new one keeps its level
        assert (p_old <= alpha).mean() < 0.01 < (p_new <= alpha).mean()
