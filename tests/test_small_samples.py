"""Small samples and multiplicity: null sizes on clustered nulls, the measured coverage
the warning quotes, exact McNemar and Holm against statsmodels, Holm families, and how p-values and
degenerate intervals print."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.settings import MIN_CLUSTERS, PERCENTILE_COVERAGE, SMALL_SAMPLE_COVERAGE
from vlaudit.stats.bootstrap import PERCENTILE
from vlaudit.stats.coverage import Clustered, bootstrap_coverage, sign_flip_size
from vlaudit.stats.formatting import degenerate, format_interval, format_p
from vlaudit.stats.multiplicity import holm_by_family, metric_family
from vlaudit.stats.paired import exact_mcnemar, holm, mcnemar_from_counts

ALPHA = 0.05


def _mc_bound(reps: int, alpha: float = ALPHA) -> float:
    """α plus three Monte Carlo standard errors of a rejection rate over ``reps`` replicates."""
    return alpha + 3.0 * math.sqrt(alpha * (1.0 - alpha) / reps)


def test_cluster_sign_flip_holds_its_size_on_a_clustered_null() -> None:
    """16 stems of 9 items whose model difference varies by stem but is 0 on average: flipping whole stems
    rejects at most α (+ MC error); flipping items alone — the unit ignored — does not."""
    design = Clustered(16)
    reps = 200
    assert sign_flip_size(design, reps=reps, n_permutations=199, seed=1) <= _mc_bound(reps)
    assert sign_flip_size(design, reps=reps, n_permutations=199, seed=1, by_item=True) > 0.15


def test_exact_mcnemar_holds_its_size_on_independent_items() -> None:
    rng = np.random.default_rng(7)
    reps, n = 2000, 60
    rejected = 0
    for _ in range(reps):
        p = rng.uniform(0.3, 0.9, size=n)  # items differ, the two models do not
        a, b = rng.random(n) < p, rng.random(n) < p
        rejected += exact_mcnemar(a, b) <= ALPHA
    assert rejected / reps <= _mc_bound(reps)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40))
def test_exact_mcnemar_equals_statsmodels(b: int, c: int) -> None:
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    expected = contingency.mcnemar([[5, b], [c, 7]], exact=True).pvalue
    assert mcnemar_from_counts(b, c) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=30))
def test_holm_equals_statsmodels(pvalues: list[float]) -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    # statsmodels 0.15's Holm branch calls gc.collect() on every call (statsmodels/stats/multitest.py): in a test
    # worker that holds torch and tiny models that is ~0.4 s a call, and frees nothing the result depends on
    with mock.patch("gc.collect", return_value=0):
        expected = multitest.multipletests(pvalues, alpha=ALPHA, method="holm")[1]
    np.testing.assert_allclose(holm(pvalues), expected, rtol=1e-12, atol=1e-15)


def test_holm_families_adjust_each_family_alone_and_hold_the_familywise_rate() -> None:
    """Adjusting two families together or apart: apart, each family's adjusted p equals Holm on it alone; under
    the global null of independent p-values, each family's family-wise error stays at most α."""
    pvalues = [0.01, 0.02, 0.03, 0.2, 0.001, None]
    families = ["a/headline", "a/headline", "b/headline", "a/headline", "b/headline", "b/headline"]
    marks = holm_by_family(pvalues, families, ALPHA)
    assert [m[0] for m in marks] == pytest.approx([0.03, 0.04, 0.03, 0.2, 0.002, None][:5] + [None])
    assert marks[-1] == (None, None) and [m[1] for m in marks[:5]] == [True, True, True, False, True]
    rng = np.random.default_rng(3)
    reps = 2000
    errors = 0
    for _ in range(reps):
        p = rng.uniform(size=10).tolist()
        marked = holm_by_family(p, ["f1"] * 5 + ["f2"] * 5, ALPHA)
        errors += any(m[1] for m in marked[:5])
    assert errors / reps <= _mc_bound(reps)
    assert metric_family("strict") == "headline" and metric_family("dep_m") == "mismatch"
    assert metric_family("pair_d") == "groups"


def test_bootstrap_coverage_at_the_minimum_is_near_nominal_and_poor_below() -> None:
    """Quick check of the figures the warning quotes: at the minimum the interval covers near 95%, at 5
    clusters clearly less (the full-size figures: benchmarks/cluster_coverage.py)."""
    assert dict(SMALL_SAMPLE_COVERAGE)[MIN_CLUSTERS] >= 0.92
    assert bootstrap_coverage(Clustered(5), reps=300, n_resamples=400, seed=2, method=PERCENTILE) < 0.9
    assert bootstrap_coverage(Clustered(MIN_CLUSTERS), reps=300, n_resamples=400, seed=2, method=PERCENTILE) > 0.89


@pytest.mark.slow
def test_the_quoted_coverage_is_what_the_seeded_simulation_measures() -> None:
    """The figures of SMALL_SAMPLE_COVERAGE (the default expanded interval) and PERCENTILE_COVERAGE (the
    plain percentile interval) re-measured at full size (seed 0, 2,000 replicates)."""
    for k, quoted in SMALL_SAMPLE_COVERAGE:
        assert round(bootstrap_coverage(Clustered(k), reps=2000), 2) == quoted
    for k, quoted in PERCENTILE_COVERAGE:
        assert round(bootstrap_coverage(Clustered(k), reps=2000, method=PERCENTILE), 2) == quoted


def test_p_values_print_below_the_floor_and_never_as_zero() -> None:
    assert [format_p(p) for p in (0.0, 1 / 1001, 0.001, 0.0049, 0.25, 1.0, None, float("nan"))] == [
        "< 0.001", "< 0.001", "0.001", "0.005", "0.250", "1.000", "—", "—"]


def test_zero_width_intervals_print_as_a_dash() -> None:
    assert degenerate((1.0, 1.0)) and degenerate((-2 / 3, -2 / 3)) and degenerate(None)
    assert degenerate((float("nan"), 1.0)) and not degenerate((0.0, 0.25))
    assert format_interval((1.0, 1.0)) == "—" and format_interval((0.0, 0.25)) == "[+0.000, +0.250]"
    assert format_interval((0.1, 0.2), signed=False, digits=1, scale=100) == "[10.0, 20.0]"
