"""The two-way (image_1 × image_2) pigeonhole bootstrap: the vectorised path
against a readable loop, its coverage on a crossed design where the cycle bootstrap under-covers, and
``compare_cycles(cluster="two-way")``.

Simulation: seed 0, 150 replicates of 300 resamples; cycles c link image_1 i(c) and image_2 j(c) of 15 images
each, value = a_i + b_j + e with a, b, e ~ N(0, 1): the tolerance is 3.5 Monte Carlo standard errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import vlaudit
from vlaudit.records import Cycle
from vlaudit.stats.bootstrap import PERCENTILE, cluster_codes, resample_counts
from vlaudit.stats.paired import antisymmetric_interval, paired_bootstrap
from vlaudit.stats.two_way import two_way_bootstrap


def test_two_way_bootstrap_against_a_readable_loop() -> None:
    rng = np.random.default_rng(0)
    n = 30
    image_1 = np.array([f"a{k % 7}" for k in range(n)], dtype=object)
    image_2 = np.array([f"b{(3 * k) % 5}" for k in range(n)], dtype=object)
    num = rng.integers(0, 2, size=(2, n, 1)).astype(float)
    den = np.ones_like(num)
    boot = two_way_bootstrap(num, den, image_1, image_2, n_resamples=200, seed=4, method=PERCENTILE, chunk_cells=64)
    first, k1 = cluster_codes(image_1)
    second, k2 = cluster_codes(image_2)
    draw_u, draw_v = np.random.default_rng([4, 1]), np.random.default_rng([4, 2])
    samples = np.empty((200, 2))
    for b in range(200):  # one resample at a time: cycles drawn as often as both their images
        u = resample_counts(draw_u.integers(0, k1, size=(1, k1)), k1)[0]
        v = resample_counts(draw_v.integers(0, k2, size=(1, k2)), k2)[0]
        reps = (u[first] * v[second]).astype(int)
        drawn = np.repeat(np.arange(n), reps)
        samples[b] = num[:, drawn, 0].sum(axis=1) / den[:, drawn, 0].sum(axis=1)
    expected = antisymmetric_interval(samples, 0.95)
    np.testing.assert_allclose(boot.intervals[:, 0], expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(boot.difference_intervals[0, 1, 0],
                               antisymmetric_interval(samples[:, 0] - samples[:, 1], 0.95)[0], atol=1e-12)
    assert boot.n_clusters == min(k1, k2) == 5
    np.testing.assert_array_equal(boot.difference_intervals[1, 0, 0], -boot.difference_intervals[0, 1, 0][::-1])


def test_two_way_covers_a_crossed_design_where_the_cycle_bootstrap_does_not() -> None:
    rng = np.random.default_rng(0)
    reps, k, per = 150, 15, 4
    n = k * per
    i = np.arange(n) % k
    j = (np.arange(n) * 7 + np.arange(n) // k) % k
    covered = {"two-way": 0, "cycle": 0}
    for r in range(reps):
        values = rng.normal(size=k)[i] + rng.normal(size=k)[j] + rng.normal(size=n)
        num = values[None, :, None]
        two = two_way_bootstrap(num, np.ones_like(num), i.astype(str), j.astype(str), n_resamples=300, seed=r)
        one = paired_bootstrap(num, np.ones_like(num), np.arange(n).astype(str), n_resamples=300, seed=r)
        covered["two-way"] += int(two.intervals[0, 0, 0] <= 0.0 <= two.intervals[0, 0, 1])
        covered["cycle"] += int(one.intervals[0, 0, 0] <= 0.0 <= one.intervals[0, 0, 1])
    two_way, cycle = covered["two-way"] / reps, covered["cycle"] / reps
    assert two_way >= 0.95 - 3.5 * math.sqrt(0.95 * 0.05 / reps), two_way
    assert cycle < 0.8 and two_way > cycle


def test_compare_cycles_two_way_names_its_unit_and_keeps_the_image_tests() -> None:
    # 40 cycles over 10 images: one connected image cluster, 10 image_1 and 10 image_2 values
    cycles = [Cycle(f"c{k:02d}", "left", f"u{k % 10}", f"v{k}a", f"u{(k + 1) % 10}", f"v{k}b", split="test")
              for k in range(40)]
    rng = np.random.default_rng(0)
    scores = [{(img, cap): float(rng.normal() + (shift if cap.endswith("a") == (img == c.image_1) else 0))
               for c in cycles for img in (c.image_1, c.image_2) for cap in (c.caption_1, c.caption_2)}
              for shift in (1.0, 0.0)]
    kwargs: dict[str, Any] = {"min_cycles": 5, "n_resamples": 200, "n_permutations": 100}
    two = vlaudit.compare_cycles(cycles, {"a": scores[0], "b": scores[1]}, cluster="two-way", **kwargs).comparison
    joined = vlaudit.compare_cycles(cycles, {"a": scores[0], "b": scores[1]}, cluster="image", **kwargs).comparison
    assert {(r.unit, r.n_clusters) for r in two.comparisons} == {("image_1×image_2", 10)}
    assert [r.p for r in two.comparisons] == [r.p for r in joined.comparisons]
    row = two.comparisons[0]
    assert row.ci is not None and row.ci[0] < row.difference < row.ci[1]
    assert joined.comparisons[0].ci is None or joined.comparisons[0].ci != row.ci
    (note,) = [w for w in two.warnings if w.startswith("two-way bootstrap")]
    assert "10 image_1 and the 10 image_2 values" in note and "1 connected image cluster " in note
    assert two.settings.cluster == "two-way"


def test_two_way_rejects_misaligned_labels() -> None:
    with pytest.raises(ValueError, match="image_1"):
        two_way_bootstrap(np.ones((1, 3, 1)), np.ones((1, 3, 1)), ["a", "b"], ["a", "b", "c"])
