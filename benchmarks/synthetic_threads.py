"""Wall time of the default synthetic controls (``run_synthetic``) with 1 torch thread versus the default count.

The probes are tiny (16-dim features, batches of 512), so per-op thread hand-off can cost more than it saves,
especially when the cores are shared. Both runs happen in this process on the same seeds and must give identical
results apart from float rounding of the reductions (checked: the per-row means differ by < 1e-3).

Last line: ``ratio=<seconds with the default thread count / seconds with 1 thread> threads=<default count>``.
Run: ``.venv/bin/python benchmarks/synthetic_threads.py [--seeds 0 1 2]``.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()

    import torch

    from vlaudit.analysis.cycles.synthetic import run_synthetic

    default_threads = torch.get_num_threads()
    timings, results = {}, {}
    for label, threads in (("one", 1), ("default", default_threads)):
        start = time.perf_counter()
        results[label] = run_synthetic(args.seeds, None, num_threads=threads)
        timings[label] = time.perf_counter() - start
        print(f"{label:8s} threads={threads}: {timings[label]:.2f} s")
    gap = max(abs(a.mean - b.mean) for a, b in zip(results["one"].rows, results["default"].rows, strict=True))
    print(f"max |mean difference| between the two runs: {gap:.2e}")
    print(f"ratio={timings['default'] / timings['one']:.2f} threads={default_threads}")


if __name__ == "__main__":
    main()
