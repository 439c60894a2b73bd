"""Speed and memory of the paired clustered bootstrap of model differences (``vlaudit compare``; VCA §19).

Synthetic per-item events of 8 runs (models) on the same items, 5 metrics (Acc, Dep, D-CC, C-U, Strict),
items in clusters of two (relation groups), 5,000 resamples, seed 20260719. The vectorised
:func:`~vlaudit.stats.paired.paired_bootstrap` (one count matrix shared by every model and metric, drawn in
blocks of resamples) is timed against the readable per-resample loop
:func:`~vlaudit.stats.paired.paired_bootstrap_loop` on ``--items`` items; both must give the same intervals,
every model's and every pairwise difference's. Then the large case: the vectorised bootstrap alone on 8 runs ×
``--large-items`` items with its seconds and peak resident memory.

Last line: ``ratio=<loop/vectorised> max_ci_diff=<vectorised vs loop> large_s=<seconds> large_peak_gb=<peak>``.
Goals: ratio ≥ 20, intervals equal (≤ 1e-12), large peak ≤ 1 GB.

    .venv/bin/python benchmarks/compare_bootstrap.py [--items 4000] [--large-items 100000]

Measured on the shared 2-core development machine (loaded; the ratio moves with the load): full scale
(4,000 items; 8 runs × 100,000 items × 5,000 resamples) ratio 25.3 (vectorised 0.76 s, loop 19.2 s),
intervals identical (max difference 0), large case 7.4 s at a peak of 0.33 GB; quick scale (suite) ratio 30.2,
peak 0.23 GB.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from peak_memory import peak_gb, reset_peak

from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from vlaudit.stats.paired import paired_bootstrap, paired_bootstrap_loop

N_MODELS = 8


def synthetic_events(n_items: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(8, n, 5)`` numerators (acc, dep, dcc, cu, strict), denominators of 1, and clusters of two items."""
    rng = np.random.default_rng(seed)
    skill = rng.uniform(0.55, 0.9, size=(N_MODELS, 1))
    reads = rng.uniform(0.3, 0.8, size=(N_MODELS, 1))
    correct = rng.random((N_MODELS, n_items)) < skill
    dep = rng.random((N_MODELS, n_items)) < reads
    strict = dep & (rng.random((N_MODELS, n_items)) < 0.4)
    num = np.stack([correct, dep, correct & dep, correct & ~dep, strict], axis=2).astype(np.float64)
    clusters = np.array([f"g{i // 2:07d}" for i in range(n_items)], dtype=object)
    return num, np.ones_like(num), clusters


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4000, help="Items of the speed comparison.")
    parser.add_argument("--large-items", type=int, default=100_000, help="Items per run of the memory case.")
    parser.add_argument("--resamples", type=int, default=BOOTSTRAP_RESAMPLES)
    args = parser.parse_args()
    num, den, clusters = synthetic_events(args.items)
    start = time.perf_counter()
    fast = paired_bootstrap(num, den, clusters, n_resamples=args.resamples, seed=BOOTSTRAP_SEED)
    fast_s = time.perf_counter() - start
    start = time.perf_counter()
    slow = paired_bootstrap_loop(num, den, clusters, n_resamples=args.resamples, seed=BOOTSTRAP_SEED)
    slow_s = time.perf_counter() - start
    worst = max(float(np.abs(fast.intervals - slow.intervals).max()),
                float(np.abs(fast.difference_intervals - slow.difference_intervals).max()))
    print(f"runs={N_MODELS} items={args.items} metrics=5 resamples={args.resamples}")
    print(f"vectorised {fast_s:.3f} s, per-resample loop {slow_s:.2f} s, max |CI difference| = {worst:.2e}")
    del num, den, clusters, fast, slow
    reset = reset_peak()
    num, den, clusters = synthetic_events(args.large_items, seed=1)
    start = time.perf_counter()
    paired_bootstrap(num, den, clusters, n_resamples=args.resamples, seed=BOOTSTRAP_SEED)
    large_s = time.perf_counter() - start
    large_peak = peak_gb()
    print(f"large: runs={N_MODELS} items={args.large_items} resamples={args.resamples}: {large_s:.1f} s, "
          f"peak {large_peak:.2f} GB ({'reset before the large case' if reset else 'whole process'})")
    print(f"ratio={slow_s / fast_s:.1f} max_ci_diff={worst:.2e} large_s={large_s:.1f} "
          f"large_peak_gb={large_peak:.2f}")


if __name__ == "__main__":
    main()
