"""Speed of the vectorised VCA report against a straightforward per-resample loop (VCA §19).

Synthetic margins: 8 runs (4 models × 2 datasets) × 1,000 items × 4 contexts (original, text, blank,
mismatch), labels, and on one dataset 500 true/false groups (cluster bootstrap by group). Both paths use the
same count matrix per run (seed 20260719, 5,000 resamples) and must give identical intervals.

Prints the time of the full vectorised report (``compute_report``), the time of the bootstrap stage done
vectorised and as a readable loop over resamples; then the large case, the full report on 8 runs × 100,000
items (``--large-items``) with its seconds and peak resident memory (the bootstrap redraws its count matrix in
blocks of resamples, so the peak does not grow with resamples × items). Last line: ``ratio=<loop/vectorised>
seconds=<report> max_ci_diff=<vectorised vs loop> large_s=<report> large_peak_gb=<peak RSS>``.
Goals: seconds < 10, ratio ≥ 20, the intervals equal (≤ 1e-12); large peak ≤ 2 GB.

    .venv/bin/python benchmarks/vca_report_speed.py [--large-items 100000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from peak_memory import peak_gb, reset_peak

from vlaudit.analysis.vca.report import (
    ReportSettings,
    bootstrap_run,
    cluster_labels,
    compute_report,
    run_events,
)
from vlaudit.metrics.vca import support
from vlaudit.sources.margins import MarginRun
from vlaudit.stats.bootstrap import EXPANDED, ClusterBootstrap, percentile_intervals

N_ITEMS = 1000
N_RESAMPLES = 5000


def synthetic_runs(seed: int = 0, n_items: int = N_ITEMS) -> list[MarginRun]:
    rng = np.random.default_rng(seed)
    runs = []
    for model in ("qwen", "internvl", "llava", "ministral"):
        for dataset in ("vsr", "gsr"):
            labels = rng.random(n_items) < 0.5
            signal = np.where(labels, 1.0, -1.0) * rng.gamma(2.0, 1.0, n_items)
            prior = rng.normal(0.3, 1.0, n_items)
            margins = {"original": signal + prior, "text": prior + rng.normal(0, 0.5, n_items),
                       "blank": prior + rng.normal(0, 0.5, n_items),
                       "mismatch": prior + rng.normal(0, 1.0, n_items)}
            groups = statements = None
            if dataset == "gsr":
                groups = np.array([f"p{i // 2}" for i in range(n_items)], dtype=object)
                statements = np.arange(n_items) % 2 == 0
                labels = statements.copy()
            ids = np.array([f"{i:05d}" for i in range(n_items)], dtype=object)
            runs.append(MarginRun(model, dataset, "yesno", ids, margins, labels, groups, statements))
    return runs


def loop_bootstrap(run: MarginRun, settings: ReportSettings) -> np.ndarray:
    """The readable reference: for every resample, gather its records and recompute every rate."""
    plan = ClusterBootstrap.draw(run.n, clusters=cluster_labels(run), n_resamples=settings.n_resamples,
                                 seed=settings.seed)
    rows = []
    for b in range(plan.n_resamples):
        idx = plan.record_indices(b)
        m = {c: v[idx] for c, v in run.margins.items()}
        d = support.prediction_direction(m["original"])
        dep = support.image_gap(m, settings.controls) > 0
        dep_perm = support.image_gap(m, settings.controls, original=m["mismatch"]) > 0
        strict = support.strict_isolation(m, settings.controls)
        correct = support.correctness(d, run.labels[idx])
        dcc, dcc_perm = correct & dep, correct & dep_perm
        rows.append([dep.mean(), strict.mean(), correct.mean(), dcc.mean(), (correct & ~dep).mean(),
                     (~correct & dep).mean(), dep_perm.mean(), dcc_perm.mean(), (correct & ~dep_perm).mean(),
                     dcc.mean() - dcc_perm.mean(), dcc.sum() / dep.sum()])
    return percentile_intervals(np.array(rows), settings.level, n_clusters=plan.n_clusters, method=EXPANDED)


def large_case(n_items: int, settings: ReportSettings) -> tuple[float, float, bool]:
    """Seconds and peak GB of the full report on 8 runs × ``n_items`` (the peak counts the whole process,
    inputs included, from a reset after the small case where Linux allows it)."""
    reset = reset_peak()
    runs = synthetic_runs(1, n_items)
    start = time.perf_counter()
    compute_report(runs, settings)
    return time.perf_counter() - start, peak_gb(), reset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large-items", type=int, default=100_000, help="Items per run of the large case.")
    args = parser.parse_args()
    settings = ReportSettings(n_resamples=N_RESAMPLES)
    runs = synthetic_runs()
    start = time.perf_counter()
    compute_report(runs, settings)
    report_seconds = time.perf_counter() - start

    events = [run_events(run, settings.controls) for run in runs]
    start = time.perf_counter()
    vectorised = [bootstrap_run(ev, settings) for ev in events]
    vec_seconds = time.perf_counter() - start
    start = time.perf_counter()
    looped = [loop_bootstrap(run, settings) for run in runs]
    loop_seconds = time.perf_counter() - start

    names = ["dep", "strict", "acc", "dcc", "cu", "wrong_dep", "dep_perm", "dcc_perm", "cu_perm", "delta_dcc",
             "credited_precision"]
    worst = max(abs(v[name][j] - lp[i, j]) for v, lp in zip(vectorised, looped, strict=True)
                for i, name in enumerate(names) for j in (0, 1))
    print(f"runs={len(runs)} items/run={N_ITEMS} resamples={N_RESAMPLES}")
    print(f"full vectorised report: {report_seconds:.2f} s")
    print(f"bootstrap stage: vectorised {vec_seconds:.3f} s, per-resample loop {loop_seconds:.2f} s")
    print(f"max |CI difference| = {worst:.2e}")
    large_seconds, large_peak, reset = large_case(args.large_items, settings)
    print(f"large: runs={len(runs)} items/run={args.large_items} resamples={N_RESAMPLES}")
    print(f"large report: {large_seconds:.1f} s, peak {large_peak:.2f} GB "
          f"({'reset after the small case' if reset else 'whole process'})")
    print(f"ratio={loop_seconds / vec_seconds:.1f} seconds={report_seconds:.2f} max_ci_diff={worst:.2e} "
          f"large_s={large_seconds:.1f} large_peak_gb={large_peak:.2f}")


if __name__ == "__main__":
    main()
