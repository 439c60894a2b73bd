"""Intervals that hold their coverage on clustered data.

* The expanded percentile interval (Hesterberg 2015), the default cluster-bootstrap interval: its tails by
  hand, and its coverage measured by a seeded simulation at 5/10/20/50 clusters within Monte Carlo error of
  the figures docs/concepts/statistics.md prints (which the full-size ``benchmarks/cluster_coverage.py``
  measured), never below the plain percentile interval's on the same replicates.
* The design-effect-corrected Wilson interval (credited precision, decision survival, the factorial's
  per-model rates): known answers by hand, and coverage near 95% at intra-cluster correlation 0.3 with 16
  and 50 clusters of 9 items, where the item-level Wilson interval covers about 70%.

Simulations: seed 0 (bootstrap: seed 1), 300 replicates of 400 resamples (bootstrap) and 2,000 replicates
(Wilson, closed form); the tolerance is 3.5 Monte Carlo standard errors of the documented coverage plus the
resampling noise of 400 instead of 1,000 resamples (0.01).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm
from scipy.stats import t as student_t

from vlaudit.stats.bootstrap import EXPANDED, PERCENTILE, expanded_tail, interval_tail, percentile_intervals
from vlaudit.stats.coverage import Clustered, bootstrap_coverage, difference_coverage, item_wilson_coverage
from vlaudit.stats.intervals import (
    clustered_wilson_bounds,
    clustered_wilson_interval,
    wilson_bounds,
    wilson_interval,
)
from vlaudit.stats.paired import antisymmetric_interval, paired_bootstrap

DOCS = Path(__file__).resolve().parents[1] / "docs" / "concepts" / "statistics.md"


def _documented() -> dict[int, dict[str, float]]:
    """The coverage table of docs/concepts/statistics.md: clusters → its columns (fractions)."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("### Coverage and size measured", 1)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 7 and cells[0].isdigit():
            values = [float(c.rstrip("%")) / (100 if c.endswith("%") else 1) for c in cells[1:7]]
            rows[int(cells[0])] = dict(zip(("rate_pct", "rate_exp", "diff_pct", "diff_exp", "wilson", "wilson_deff"),
                                           values, strict=True))
    return rows


def test_expanded_tail_by_hand() -> None:
    """α'/2 = Φ(−√(k/(k − 1))·t_{k−1}(0.975)): 5 clusters read the 0.095% quantile, 50 about 2.1%."""
    z5 = math.sqrt(5 / 4) * student_t.ppf(0.975, 4)
    assert expanded_tail(0.95, 5) == pytest.approx(norm.cdf(-z5), rel=1e-12)
    assert expanded_tail(0.95, 5) == pytest.approx(0.000955, abs=5e-6)
    assert 0.020 < expanded_tail(0.95, 50) < 0.022
    assert expanded_tail(0.95, 1) == pytest.approx(0.025) and interval_tail(0.95, None, PERCENTILE) == pytest.approx(0.025)
    tails = [expanded_tail(0.95, k) for k in (2, 3, 5, 10, 20, 50, 1000, 10**6)]
    assert all(a < b for a, b in zip(tails, tails[1:], strict=False)) and tails[-1] == pytest.approx(0.025, abs=1e-5)
    with pytest.raises(ValueError, match="number of clusters"):
        interval_tail(0.95, None, EXPANDED)


def test_expanded_interval_contains_the_percentile_one_and_stays_antisymmetric() -> None:
    rng = np.random.default_rng(0)
    samples = rng.normal(size=(2000, 3))
    plain = percentile_intervals(samples)
    wide = percentile_intervals(samples, n_clusters=8, method=EXPANDED)
    assert (wide[:, 0] < plain[:, 0]).all() and (wide[:, 1] > plain[:, 1]).all()
    both = antisymmetric_interval(samples, n_clusters=8, method=EXPANDED)
    np.testing.assert_array_equal(antisymmetric_interval(-samples, n_clusters=8, method=EXPANDED), -both[:, ::-1])


def test_paired_bootstrap_defaults_to_the_expanded_interval() -> None:
    rng = np.random.default_rng(1)
    num = rng.integers(0, 2, size=(2, 60, 1)).astype(float)
    clusters = np.repeat(np.arange(10), 6)
    default = paired_bootstrap(num, np.ones_like(num), clusters, n_resamples=500, seed=3)
    plain = paired_bootstrap(num, np.ones_like(num), clusters, n_resamples=500, seed=3, method=PERCENTILE)
    assert default.method == EXPANDED and plain.method == PERCENTILE
    assert default.intervals[0, 0, 0] < plain.intervals[0, 0, 0] and default.intervals[0, 0, 1] > plain.intervals[0, 0, 1]


@pytest.mark.parametrize("k", [5, 10, 20, 50])
def test_measured_coverage_matches_the_documented_table(k: int) -> None:
    """The default (expanded) interval's coverage of a rate and of A − B at k clusters, within Monte Carlo
    error of the figures the statistics page prints, and at least the plain percentile interval's."""
    documented = _documented()[k]
    reps = 300
    tolerance = 3.5 * math.sqrt(0.95 * 0.05 / reps) + 0.01
    rate = bootstrap_coverage(Clustered(k), reps=reps, n_resamples=400, seed=1)
    diff = difference_coverage(Clustered(k), reps=reps, n_resamples=400, seed=1)
    plain = bootstrap_coverage(Clustered(k), reps=reps, n_resamples=400, seed=1, method=PERCENTILE)
    assert abs(rate - documented["rate_exp"]) <= tolerance, (rate, documented)
    assert abs(diff - documented["diff_exp"]) <= tolerance, (diff, documented)
    assert rate >= plain
    assert documented["rate_exp"] >= documented["rate_pct"] and documented["diff_exp"] >= documented["diff_pct"]


def test_the_expanded_interval_covers_near_nominal_from_ten_clusters() -> None:
    """What the docs claim of the default: ≥ 93% from 10 clusters on; the plain percentile under 92% at 10."""
    table = _documented()
    assert all(table[k]["rate_exp"] >= 0.93 for k in (10, 20, 50)) and table[10]["rate_pct"] < 0.92


def test_clustered_wilson_by_hand() -> None:
    """Clusters (y, m): (2, 2), (0, 2), (2, 2), (0, 2): p̂ = 0.5, v = 4/3·4/8² = 1/12, n_eff = 0.25·12 = 3,
    read with t_3: the Wilson interval of 1.5 of 3."""
    y, m = np.array([2.0, 0.0, 2.0, 0.0]), np.full(4, 2.0)
    lo, hi = clustered_wilson_bounds(y, m)
    expected = wilson_bounds(1.5, 3.0, z=float(student_t.ppf(0.975, 3)))
    assert (float(lo), float(hi)) == pytest.approx((float(expected[0]), float(expected[1])), rel=1e-12)
    # the record-level entry point: labels, a denominator indicator; records outside it count for nothing
    successes = np.array([1, 1, 0, 0, 1, 1, 0, 0, 1, 1])
    counted = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 0])
    labels = np.array(["a", "a", "b", "b", "c", "c", "d", "d", "e", "e"], dtype=object)
    assert clustered_wilson_interval(successes, counted, labels) == pytest.approx((float(lo), float(hi)))
    # 0 of n: no spread, n_eff = n (the quantile t_{k−1})
    zero = clustered_wilson_bounds(np.zeros(4), m)
    assert float(zero[0]) == 0.0 and float(zero[1]) == pytest.approx(
        float(wilson_bounds(0.0, 8.0, z=float(student_t.ppf(0.975, 3)))[1]))
    assert np.isnan(clustered_wilson_interval([0, 0], [0, 0], ["a", "b"])).all()


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 5)), min_size=2, max_size=30))
def test_clustered_wilson_is_at_least_as_wide_as_wilson_with_its_quantile(pairs: list[tuple[int, int]]) -> None:
    """n_eff ≤ n: never narrower than the Wilson interval over all records read with the same t_{k−1}."""
    y = np.array([min(a, b) for a, b in pairs], dtype=float)
    m = np.array([b for _, b in pairs], dtype=float)
    lo, hi = clustered_wilson_bounds(y, m)
    z = float(student_t.ppf(0.975, len(pairs) - 1))
    plain = wilson_bounds(y.sum(), m.sum(), z=z)
    assert float(lo) <= float(plain[0]) + 1e-12 and float(hi) >= float(plain[1]) - 1e-12
    assert 0.0 <= float(lo) <= y.sum() / m.sum() <= float(hi) <= 1.0


def test_singleton_clusters_only_swap_z_for_t() -> None:
    y = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1], dtype=float)
    lo, hi = clustered_wilson_bounds(y, np.ones(10))
    # the item-level variance with the k/(k − 1) factor: n_eff = p(1 − p)/v = n − 1
    expected = wilson_bounds(0.7 * 9, 9.0, z=float(student_t.ppf(0.975, 9)))
    assert (float(lo), float(hi)) == pytest.approx((float(expected[0]), float(expected[1])))
    assert wilson_bounds(7, 10)[0] == pytest.approx(wilson_interval(7, 10)[0])


@pytest.mark.parametrize("k", [16, 50])
def test_item_level_wilson_under_covers_and_the_corrected_one_does_not(k: int) -> None:
    """ICC 0.3, 9 items per cluster, 2,000 replicates (seed 0): the plain Wilson interval over the k·9 items
    covers about 70% at nominal 95%; the design-effect-corrected one within Monte Carlo error of 95%."""
    reps = 2000
    corrected = item_wilson_coverage(Clustered(k), reps=reps, seed=0)
    plain = item_wilson_coverage(Clustered(k), reps=reps, seed=0, clustered=False)
    assert abs(corrected - 0.95) <= 3.5 * math.sqrt(0.95 * 0.05 / reps), corrected
    assert plain < 0.8
    documented = _documented()
    if k in documented:
        assert abs(corrected - documented[k]["wilson_deff"]) <= 0.02


def _clustered_rows(n_clusters: int, size: int, seed: int) -> list[dict[str, object]]:
    """One labelled run whose items come in declared stem clusters with a shared per-stem shift (clustered)."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, object]] = []
    for j in range(n_clusters):
        shift = rng.normal(0, 2)
        for i in range(size):
            k = j * size + i
            label = k % 2 == 0
            sign = 1.0 if label else -1.0
            values = {"original": sign * (shift + rng.normal(0, 0.5)), "text": rng.normal(0, 0.5),
                      "blank": rng.normal(0, 0.5)}
            for context, margin in values.items():
                rows.append({"model": "m", "dataset": "toy", "item_id": f"q{k:03d}", "context": context,
                             "margin": float(margin), "label": "yes" if label else "no",
                             "cluster": f"s{j}", "cluster_unit": "stem"})
    return rows


def test_report_wilson_intervals_are_corrected_over_the_run_clusters() -> None:
    """Credited precision and decision survival in ``vca report``: the Wilson interval over the declared
    stems (its unit the run's), not the item-level one; the bootstrap records the expanded method."""
    from vlaudit.analysis.vca.report import ReportSettings, compute_report, run_events
    from vlaudit.analysis.vca.units import run_unit
    from vlaudit.metrics.vca import support
    from vlaudit.sources.margins import runs_from_rows

    (run,) = runs_from_rows(_clustered_rows(12, 6, 4))
    audit = compute_report([run], ReportSettings(n_resamples=200)).runs[0]
    ev = run_events(run)
    labels = run_unit(run).labels
    expected = clustered_wilson_interval(ev.correct & ev.dep, ev.dep, labels)
    item_level = wilson_interval(int((ev.correct & ev.dep).sum()), int(ev.dep.sum()))
    assert audit.taxonomy.wilson_credited_precision == pytest.approx(expected)
    assert audit.taxonomy.wilson_credited_precision != pytest.approx(item_level)
    both = np.all([support.keeps_decision(support.prediction_direction(run.margins["original"]), run.margins[c])
                   for c in ("text", "blank")], axis=0)
    assert audit.survival.both_same_wilson == pytest.approx(clustered_wilson_interval(both & ev.dep, ev.dep, labels))
    assert (audit.bootstrap.method, audit.bootstrap.unit, audit.bootstrap.n_clusters) == (EXPANDED, "stem", 12)
