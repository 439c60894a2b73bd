"""Small-sample behaviour of the clustered statistics: the figures of docs/concepts/statistics.md.

Seeded simulations (:mod:`vlaudit.stats.coverage`): k clusters of 9 records (a factorial stem's nine cells),
intra-cluster correlation 0.3, rate 0.7; two models that differ per cluster by ±0.2 but not on average.
Per k: the coverage of the 95% cluster-bootstrap interval of one model's rate (``vca report``) and of the
paired difference A − B (``compare``), for the plain percentile interval and for the expanded percentile
interval (the default, :data:`vlaudit.stats.bootstrap.EXPANDED`), 2,000 replicates of 1,000 resamples each;
the coverage of the item-level Wilson interval of the rate, plain and design-effect corrected (2,000
replicates, closed form); the null
rejection rate at α = 0.05 of the paired sign-flip test flipping whole clusters (what ``compare`` runs) and
flipping each record alone (the unit ignored), 1,000 replicates of 999 flips.

    .venv/bin/python benchmarks/cluster_coverage.py [--reps 2000] [--clusters 5 10 16 20 30 50]

The measured table (seed 0, the defaults) is printed in docs/concepts/statistics.md;
:data:`vlaudit.settings.SMALL_SAMPLE_COVERAGE` quotes the default (expanded) interval's coverage of a rate.

Last line: ``min_clusters=<MIN_CLUSTERS> coverage_at_min=<expanded rate coverage at MIN_CLUSTERS>
percentile_at_min=<percentile rate coverage there>``; goal ≥ 0.92.
"""

from __future__ import annotations

import argparse

from vlaudit.settings import MIN_CLUSTERS
from vlaudit.stats.bootstrap import EXPANDED, PERCENTILE
from vlaudit.stats.coverage import (
    Clustered,
    bootstrap_coverage,
    difference_coverage,
    item_wilson_coverage,
    sign_flip_size,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="replicates per coverage figure")
    parser.add_argument("--clusters", type=int, nargs="+", default=[5, 10, 16, 20, 30, 50])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{'clusters':>8} {'rate pct':>8} {'rate exp':>8} {'diff pct':>8} {'diff exp':>8} {'wilson':>7} "
          f"{'wilson deff':>11} {'size (cluster)':>14} {'size (item)':>11}")
    at_min: dict[str, float] = {}
    for k in args.clusters:
        design = Clustered(k)
        rates = {m: bootstrap_coverage(design, reps=args.reps, seed=args.seed, method=m) for m in (PERCENTILE, EXPANDED)}
        diffs = {m: difference_coverage(design, reps=args.reps, seed=args.seed, method=m) for m in (PERCENTILE, EXPANDED)}
        plain = item_wilson_coverage(design, reps=args.reps, seed=args.seed, clustered=False)
        deff = item_wilson_coverage(design, reps=args.reps, seed=args.seed)
        size = sign_flip_size(design, reps=args.reps // 2, seed=args.seed)
        naive = sign_flip_size(design, reps=args.reps // 2, seed=args.seed, by_item=True)
        print(f"{k:>8} {rates[PERCENTILE]:>8.3f} {rates[EXPANDED]:>8.3f} {diffs[PERCENTILE]:>8.3f} "
              f"{diffs[EXPANDED]:>8.3f} {plain:>7.3f} {deff:>11.3f} {size:>14.3f} {naive:>11.3f}", flush=True)
        if k == MIN_CLUSTERS:
            at_min = rates
    if not at_min:
        at_min = {m: bootstrap_coverage(Clustered(MIN_CLUSTERS), reps=args.reps, seed=args.seed, method=m)
                  for m in (PERCENTILE, EXPANDED)}
    print(f"min_clusters={MIN_CLUSTERS} coverage_at_min={at_min[EXPANDED]:.3f} "
          f"percentile_at_min={at_min[PERCENTILE]:.3f}")


if __name__ == "__main__":
    main()
