"""The vectorised paired cluster bootstrap against readable loops on the same indices (VCA §19)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from vca_fixtures import (
    RELATION_GROUPS,
    RELATION_ITEMS,
    RELATION_MARGINS,
    RELATION_STATEMENTS,
    rows_from_arrays,
)

from vlaudit.analysis.vca.report import ReportSettings, bootstrap_run, cluster_labels, run_events
from vlaudit.metrics.vca import relation, support
from vlaudit.sources.margins import runs_from_rows
from vlaudit.stats.bootstrap import (
    EXPANDED,
    ClusterBootstrap,
    bootstrap_indices,
    bootstrap_means,
    percentile_interval,
    percentile_intervals,
    resample_counts,
)
from vlaudit.stats.intervals import wilson_interval


def test_defaults_are_the_papers() -> None:
    assert inspect.signature(ClusterBootstrap.draw).parameters["n_resamples"].default == 5000  # VCA §19
    assert inspect.signature(ClusterBootstrap.draw).parameters["seed"].default == 20260719  # VCA §19


def test_resample_counts_matches_add_at() -> None:
    idx = bootstrap_indices(7, 600, seed=3)
    naive = np.zeros((600, 7))
    np.add.at(naive, (np.repeat(np.arange(600), 7), idx.ravel()), 1.0)
    np.testing.assert_array_equal(resample_counts(idx, 7), naive)


def test_existing_api_unchanged() -> None:
    values = np.arange(10.0)
    idx = bootstrap_indices(10, 100, seed=1)
    np.testing.assert_allclose(bootstrap_means(values, n_resamples=100, seed=1), values[idx].mean(axis=1))


@pytest.mark.parametrize("clustered", [False, True])
def test_cluster_bootstrap_against_loop(clustered) -> None:
    rng = np.random.default_rng(0)
    n = 40
    values = rng.normal(size=(n, 3))
    den = (rng.random(n) < 0.6).astype(float)
    clusters = np.array([f"c{k // 3}" for k in range(n)], dtype=object) if clustered else None
    plan = ClusterBootstrap.draw(n, clusters=clusters, n_resamples=200, seed=7)
    means, ratios = plan.means(values), plan.ratios(values[:, 0] * den, den)
    for b in range(plan.n_resamples):
        idx = plan.record_indices(b)
        np.testing.assert_allclose(means[b], values[idx].mean(axis=0), rtol=1e-12, atol=1e-12)
        expected = (values[idx, 0] * den[idx]).sum() / den[idx].sum() if den[idx].sum() else np.nan
        np.testing.assert_allclose(ratios[b], expected, rtol=1e-12, atol=1e-12)
    if not clustered:  # unclustered resamples are exactly the rows of the index matrix
        np.testing.assert_array_equal(np.sort(plan.record_indices(5)), np.sort(bootstrap_indices(n, 200, 7)[5]))


def test_percentile_intervals() -> None:
    rng = np.random.default_rng(1)
    samples = rng.normal(size=(500, 3))
    samples[:, 2] = np.nan
    samples[:10, 1] = np.nan
    out = percentile_intervals(samples)
    assert out[0].tolist() == list(percentile_interval(samples[:, 0]))
    assert out[1].tolist() == list(percentile_interval(samples[10:, 1]))
    assert np.isnan(out[2]).all()


def _readable_loop(run, settings):
    """Resample items (whole groups), recompute every event from the margins, and take percentiles."""
    plan = ClusterBootstrap.draw(run.n, clusters=cluster_labels(run), n_resamples=settings.n_resamples,
                                 seed=settings.seed)
    rows = []
    for b in range(plan.n_resamples):
        # draw whole clusters; a group drawn twice is two groups, so each copy gets its own label
        idx_parts, gids = [], []
        drawn = np.repeat(np.arange(plan.n_clusters), plan.counts[b].astype(int))
        for copy, cluster in enumerate(drawn):
            members = np.flatnonzero(plan.codes == cluster)
            idx_parts.append(members)
            gids += [None if run.group_ids[i] is None else f"{run.group_ids[i]}#{copy}" for i in members]
        idx = np.concatenate(idx_parts)
        m = {c: v[idx] for c, v in run.margins.items()}
        dep = support.dependence(support.image_gap(m, settings.controls))
        correct = support.correctness(support.prediction_direction(m["original"]), run.labels[idx])
        strict = support.strict_isolation(m, settings.controls)
        g = relation.relation_groups(gids, run.statements[idx], m, dep, settings.controls)
        with np.errstate(invalid="ignore"):
            rows.append([dep.mean(), strict.mean(), correct.mean(), (correct & dep).mean(),
                         (correct & ~dep).mean(), (~correct & dep).mean(),
                         (correct & dep).sum() / dep.sum() if dep.any() else np.nan,
                         g.rel["original"].mean(), g.pair_credit.mean(), g.pair_d.mean(), g.joint.mean(),
                         g.g_int.mean()])
    # the report reads the resamples at the expanded percentile's small-k tails (vlaudit.stats.bootstrap)
    return percentile_intervals(np.array(rows), settings.level, n_clusters=plan.n_clusters, method=EXPANDED)


def test_report_bootstrap_against_readable_loop() -> None:
    rng = np.random.default_rng(4)
    n_groups = 12
    items, groups, statements = [], [], []
    for k in range(n_groups):
        for j in range(3 if k % 2 else 2):
            items.append(f"{k:02d}-{j}")
            groups.append(f"g{k:02d}")
            statements.append(j == 0)
    for k in range(5):
        items.append(f"z{k}")
        groups.append(None)
        statements.append(None)
    n = len(items)
    margins = {c: rng.normal(size=n).round(3) for c in ("original", "text", "blank")}
    labels = [bool(x) for x in rng.random(n) < 0.5]
    (run,) = runs_from_rows(rows_from_arrays(margins, item_ids=items, labels=labels, group_ids=groups,
                                             statements=statements))
    settings = ReportSettings(n_resamples=150, seed=11)
    cis = bootstrap_run(run_events(run, settings.controls), settings)
    expected = _readable_loop(run, settings)
    names = ["dep", "strict", "acc", "dcc", "cu", "wrong_dep", "credited_precision", "rel_o", "pair_credit",
             "pair_d", "joint", "g_int_mean"]
    for name, row in zip(names, expected, strict=True):
        np.testing.assert_allclose(cis[name], row, rtol=1e-12, atol=1e-12, err_msg=name)


def test_relation_fixture_clusters() -> None:
    (run,) = runs_from_rows(rows_from_arrays(RELATION_MARGINS, item_ids=RELATION_ITEMS,
                                             group_ids=RELATION_GROUPS, statements=RELATION_STATEMENTS))
    labels = cluster_labels(run)
    assert labels.tolist() == ["g:G1", "g:G1", "g:G1", "g:G2", "g:G2", "i:f"]


def test_wilson_interval_known_value() -> None:
    lo, hi = wilson_interval(5, 10)
    assert (lo, hi) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def _whole_matrix(n_clusters: int, n_resamples: int, seed: int) -> np.ndarray:
    """The count matrix drawn the simple way: all resamples at once."""
    return resample_counts(bootstrap_indices(n_clusters, n_resamples, seed), n_clusters)


@pytest.mark.parametrize("chunk_cells", [1, 37, 1000, 10 ** 9])
def test_chunked_counts_equal_the_whole_matrix(chunk_cells: int) -> None:
    """Blocks of resamples drawn one after the other from one generator are the rows of the one-shot draw. Sums
    of integer-valued columns (every rate's numerator and denominator) are exact in float64, so they equal the
    unchunked ones bit for bit; real-valued columns differ only by the order BLAS adds them in (≤ 1e-13)."""
    rng = np.random.default_rng(4)
    clusters = rng.integers(0, 23, 90).astype(str)
    plan = ClusterBootstrap.draw(90, clusters=clusters, n_resamples=301, seed=11, chunk_cells=chunk_cells)
    whole = _whole_matrix(plan.n_clusters, 301, 11)
    record = rng.random((90, 4)) < 0.4
    counts = plan.cluster_sums(record)
    assert np.array_equal(plan.resample_cluster_values(counts), whole @ counts)
    assert np.array_equal(plan.resample_cluster_values(counts[:, 0]), whole @ counts[:, 0])
    sizes = whole @ plan.cluster_sizes()
    assert np.array_equal(plan.means(record), (whole @ counts) / sizes[:, None])
    real = rng.normal(size=(plan.n_clusters, 3))
    np.testing.assert_allclose(plan.resample_cluster_values(real), whole @ real, rtol=1e-13, atol=1e-13)
    assert np.array_equal(plan.counts, whole)


def test_report_intervals_do_not_depend_on_the_chunk_size(monkeypatch) -> None:
    """The VCA report's intervals from 1-resample blocks equal those from the whole matrix in one block: exactly
    for the rates (integer sums), to 1e-12 for the mean of the real-valued G_int."""
    import vlaudit.stats.bootstrap as bootstrap

    rng = np.random.default_rng(8)
    groups = [f"g{k // 2}" for k in range(40)] + [None] * 6
    (run,) = runs_from_rows(rows_from_arrays(
        {c: rng.normal(size=46).round(3) for c in ("original", "text", "blank")},
        labels=[bool(x) for x in rng.random(46) < 0.5], group_ids=groups,
        statements=[k % 2 == 0 if g else None for k, g in enumerate(groups)]))
    settings = ReportSettings(n_resamples=400)
    events = run_events(run, settings.controls)
    results = []
    for cells in (1, 10 ** 9):
        monkeypatch.setattr(bootstrap, "CHUNK_CELLS", cells)
        results.append(bootstrap_run(events, settings))
    chunked, whole = results
    assert set(chunked) == set(whole) and {"dep", "dcc", "rel_o", "g_int_mean"} <= set(whole)
    for name in whole:
        if name == "g_int_mean":
            np.testing.assert_allclose(chunked[name], whole[name], rtol=0, atol=1e-12)
        else:
            assert chunked[name] == whole[name], name
