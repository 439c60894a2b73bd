"""The noise floor's order-statistic upper bound of the p99 against a brute-force
simulation: the coverage it reports is the coverage it has, at least 95% from 299 units on; the old linear p99
of few records was exceeded by a fresh record far more often than 1%."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.metrics.vca.noise import quantile_upper_bound, units_for_bound

TRUE_P99 = float(np.log(100.0))  # |Δ| ~ Exponential(1): P(|Δ| > ξ) = e^−ξ = 0.01


def test_units_needed_for_a_bound() -> None:
    assert units_for_bound() == 299 and units_for_bound(0.99, 0.90) == 230 and units_for_bound(0.9, 0.95) == 29
    assert not quantile_upper_bound(np.arange(298)).bounded and quantile_upper_bound(np.arange(299)).bounded


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 700))
def test_the_order_is_the_first_whose_binomial_coverage_reaches_the_level(n: int) -> None:
    """Brute force over every order u: P(X_(u) ≥ ξ_q) = P(Bin(n, q) ≤ u − 1) = Σ_{j<u} C(n, j) q^j (1 − q)^(n−j),
    each term in logs (C(n, j)·0.01^(n−j) under- and overflows a float)."""
    from math import exp, lgamma, log

    q = 0.99
    terms = [exp(lgamma(n + 1) - lgamma(j + 1) - lgamma(n - j + 1) + j * log(q) + (n - j) * log(1 - q))
             for j in range(n)]
    coverage = np.cumsum(terms)  # coverage[u − 1] = P(Bin(n, q) ≤ u − 1)
    first = next((u for u in range(1, n + 1) if coverage[u - 1] >= 0.95), None)
    bound = quantile_upper_bound(np.arange(n, dtype=np.float64))
    assert bound.order == (first if first is not None else n) and bound.bounded == (first is not None)
    assert bound.coverage == pytest.approx(coverage[bound.order - 1], abs=1e-9)
    assert bound.value == bound.order - 1  # the u-th smallest of 0..n−1


@pytest.mark.parametrize("n", [15, 100, 299, 600])
def test_the_reported_coverage_is_the_simulated_one(n: int) -> None:
    """4,000 seeded samples of n |Δ| ~ Exp(1): the share whose bound lies at or above the true p99 equals the
    reported coverage within 3 Monte Carlo SE, and a fresh |Δ| exceeds the bound at most 1% of the time from
    299 units on (the old p99 of 15 records: about 1 in 16)."""
    rng = np.random.default_rng(n)
    sims = 4000
    samples = rng.exponential(1.0, (sims, n))
    bound = quantile_upper_bound(samples[0])
    ordered = np.sort(samples, axis=1)
    values = ordered[:, bound.order - 1]
    covered = float(np.mean(values >= TRUE_P99))
    se = np.sqrt(bound.coverage * (1 - bound.coverage) / sims)
    assert abs(covered - bound.coverage) <= 3 * se + 1e-3
    exceed_new = float(np.mean(np.exp(-values)))  # P(a fresh |Δ| > τ), averaged over samples
    exceed_old = float(np.mean(np.exp(-np.quantile(samples, 0.99, axis=1))))
    if n >= 299:
        assert bound.bounded and covered >= 0.95 - 3 * se and exceed_new <= 0.01
    else:
        assert not bound.bounded and exceed_new == pytest.approx(1 / (n + 1), rel=0.1)
    if n == 15:
        assert exceed_old > 0.05  # the old floor was exceeded about 1 time in 16, not 1 in 100
