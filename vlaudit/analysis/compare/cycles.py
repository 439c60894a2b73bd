"""Paired comparison of models' cycle scores on the same cycles (cycle paper §2.1, §D.5; VCA §19's bootstrap).

Every model scores the same cycles; per split (never pooled) and family (and ``all`` families of a split when
it has several), for every pair of models:

* ΔCycleAcc = CycleAcc_A − CycleAcc_B, credits 1 / ½ / 0 per cycle (Δ > tol / |Δ| ≤ tol / else), with a
  paired bootstrap interval over cycles (one set of resampled cycles for every model,
  :func:`vlaudit.stats.paired.paired_bootstrap`) and the exact paired sign-flip test on the per-cycle credit
  differences (which take the values 0, ±½, ±1), the signs flipped per cluster (the cycle unless the cycles
  declare a coarser unit): :func:`vlaudit.stats.sign_flip.sign_flip_test`, exact by enumeration when
  feasible, Monte Carlo otherwise; both models' tie rates (|Δ| ≤ tol);
* on cycles from 2×2 benchmarks, the benchmark's own metrics (Winoground text / image / group, NaturalBench
  Acc / Q-Acc / I-Acc / G-Acc, :mod:`vlaudit.metrics.two_by_two`) with the same paired bootstrap; the exact
  McNemar test for the all-or-nothing ones (text, image, group, G-Acc) when each cluster is one block (with
  ``--cluster image`` the exact sign flip of the clusters' totals instead), the paired cluster permutation
  test for the fractional ones.

The leaderboard ranks from the paired comparisons as ``compare vca`` does (:mod:`vlaudit.analysis.compare.ranks`).
A family with fewer than ``min_cycles`` cycles in a split is not compared (listed in ``skipped``, §D.5).
The resampling unit is the cycle (cycles that share an image are treated as independent: a caveat every
output states, ``warnings`` included), or ``cluster="image"``: cycles joined whenever they share an image
(:func:`vlaudit.metrics.cycles.cycle_unit`; ``warnings`` says how many connected clusters that leaves), or
``cluster="two-way"``: the intervals resample image_1 and image_2 independently, each cycle weighted by both
its images' draws (the pigeonhole bootstrap, :mod:`vlaudit.stats.two_way`; ``n_clusters`` is the smaller
number of distinct images), the tests flip the connected image clusters as under ``image``. Holm's adjustment runs within each (benchmark or CycleAcc, split, family) cell
(:mod:`vlaudit.stats.multiplicity`); ``survives`` says whether the adjusted p is at most α.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.analysis.compare.ranks import holm_adjusted, ranked
from vlaudit.errors import InputError
from vlaudit.metrics.cycles import (
    block_scores,
    checked_contrasts,
    cycle_credit,
    cycle_unit,
    cycle_unit_notes,
    split_of,
)
from vlaudit.metrics.two_by_two import (
    ALL_TAGS,
    benchmark_groups,
    metric_names,
    naturalbench_outcomes,
    winoground_outcomes,
)
from vlaudit.records import Cycle
from vlaudit.results.compare import (
    BenchmarkComparison,
    CompareCyclesResult,
    CycleComparison,
    CycleLeaderboardRow,
    CycleModel,
    CycleSkipped,
    CycleTest,
)
from vlaudit.results.compare import CycleCompareSettings as CycleCompareSettingsRecord
from vlaudit.results.versioned import Interval
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    COMPARE_FAMILYWISE_ALPHA,
    COMPARE_PERMUTATIONS,
    CONFIDENCE_LEVEL,
    CYCLE_TIE_TOL,
    MIN_CYCLES,
    NATURALBENCH_YES_THRESHOLD,
)
from vlaudit.stats.bootstrap import EXPANDED
from vlaudit.stats.clusters import ResamplingUnit, small_sample_cells
from vlaudit.stats.paired import (
    cluster_permutation_pvalues,
    exact_mcnemar,
    paired_bootstrap,
)
from vlaudit.stats.sign_flip import sign_flip_test
from vlaudit.stats.two_way import two_way_bootstrap

#: ``cluster="two-way"``: the image_1 × image_2 pigeonhole bootstrap (:mod:`vlaudit.stats.two_way`)
TWO_WAY = "two-way"
TWO_WAY_UNIT = "image_1×image_2"

WHOLE_METRICS = ("text", "image", "group", "g_acc")  # 0/1 per block: exact McNemar



@dataclass(frozen=True)
class CycleCompareSettings:
    """Options of a cycle comparison; defaults from :mod:`vlaudit.settings`."""

    tol: float = CYCLE_TIE_TOL
    min_cycles: int = MIN_CYCLES
    n_resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    level: float = CONFIDENCE_LEVEL
    n_permutations: int = COMPARE_PERMUTATIONS
    alpha: float = COMPARE_FAMILYWISE_ALPHA
    threshold: float = NATURALBENCH_YES_THRESHOLD
    #: ``--cluster``: the cycles' resampling unit (None: the cycle; ``image``: cycles sharing an image joined)
    cluster: str | None = None

    def record(self) -> CycleCompareSettingsRecord:
        """The settings as ``compare_cycles.json`` writes them."""
        return CycleCompareSettingsRecord(tol=self.tol, min_cycles=self.min_cycles, n_resamples=self.n_resamples,
                                          seed=self.seed, level=self.level, n_permutations=self.n_permutations,
                                          alpha=self.alpha, threshold=self.threshold, cluster=self.cluster,
                                          interval=EXPANDED)


def _num(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _pair(values: np.ndarray) -> Interval | None:
    return None if np.isnan(values).any() else (float(values[0]), float(values[1]))


@dataclass(frozen=True)
class _Cell:
    """Where a block of rows was compared: the 2×2 benchmark (None for CycleAcc), split and family."""

    benchmark: str | None
    split: str
    family: str


def _holm_family(where: _Cell) -> str:
    """One Holm family per (benchmark or CycleAcc, split, family) cell (:mod:`vlaudit.stats.multiplicity`)."""
    return f"{where.benchmark or 'CycleAcc'}/{where.split}/{where.family}"


def _block(names: Sequence[str], values: np.ndarray, unit: ResamplingUnit, metrics: Sequence[str],
           settings: CycleCompareSettings, where: _Cell, ties: np.ndarray | None,
           images: tuple[np.ndarray, np.ndarray] | None = None
           ) -> tuple[list[CycleComparison | BenchmarkComparison], list[CycleLeaderboardRow]]:
    """Rows of one cell: ``values`` is ``(m, n, q)`` per-cycle outcomes, ``unit`` the cell's clusters (the
    cycles by default); ``ties`` ``(m, n)`` (CycleAcc) or None (a 2×2 benchmark's metrics); ``images`` the
    cycles' (image_1, image_2) under the two-way bootstrap (``cluster="two-way"``: the intervals resample both
    images, :mod:`vlaudit.stats.two_way`; the tests flip ``unit``'s connected image clusters). ``p_holm`` and
    ``survives`` are None: Holm runs over the families of the whole table."""
    ids = unit.labels
    if images is None:
        boot = paired_bootstrap(values, np.ones_like(values), ids, n_resamples=settings.n_resamples,
                                seed=settings.seed, level=settings.level)
    else:
        boot = two_way_bootstrap(values, np.ones_like(values), images[0], images[1],
                                 n_resamples=settings.n_resamples, seed=settings.seed, level=settings.level)
    n_clusters = boot.n_clusters
    n = int(values.shape[1])
    board: list[CycleLeaderboardRow] = []
    for j, metric in enumerate(metrics):
        board.extend(CycleLeaderboardRow(benchmark=where.benchmark, split=where.split, family=where.family,
                                         metric=metric, model=name, n=n, value=_num(boot.values[a, j]),
                                         ci=_pair(boot.intervals[a, j]), unit=unit.unit, n_clusters=n_clusters,
                                         rank=None)
                     for a, name in enumerate(names))
    rows: list[CycleComparison | BenchmarkComparison] = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            perm = cluster_permutation_pvalues(values[a] - values[b], ids, n_permutations=settings.n_permutations,
                                               seed=settings.seed)
            for j, metric in enumerate(metrics):
                test: CycleTest
                if metric == "cycle_acc":
                    test, p = "sign-flip", sign_flip_test(values[a, :, j] - values[b, :, j], ids,
                                                          n_permutations=settings.n_permutations,
                                                          seed=settings.seed).p
                elif metric in WHOLE_METRICS and unit.independent:
                    test, p = "mcnemar", exact_mcnemar(values[a, :, j] > 0, values[b, :, j] > 0)
                elif metric in WHOLE_METRICS:  # 0/1 per block, clustered: the exact sign flip of cluster totals
                    test, p = "sign-flip", sign_flip_test(values[a, :, j] - values[b, :, j], ids,
                                                          n_permutations=settings.n_permutations,
                                                          seed=settings.seed).p
                else:
                    test, p = "permutation", float(perm[j])
                value_a, value_b = _num(boot.values[a, j]), _num(boot.values[b, j])
                difference, ci = _num(boot.difference[a, b, j]), _pair(boot.difference_intervals[a, b, j])
                if where.benchmark is None and ties is not None:
                    rows.append(CycleComparison(
                        split=where.split, family=where.family, metric=metric, model_a=names[a], model_b=names[b],
                        n=n, unit=unit.unit, n_clusters=n_clusters, value_a=value_a, value_b=value_b,
                        difference=difference, ci=ci, test=test, p=p, holm_family=_holm_family(where),
                        tie_rate_a=float(ties[a].mean()), tie_rate_b=float(ties[b].mean()), p_holm=None,
                        survives=None))
                else:
                    rows.append(BenchmarkComparison(
                        benchmark=str(where.benchmark), split=where.split, family=where.family, metric=metric,
                        model_a=names[a], model_b=names[b], n=n, unit=unit.unit, n_clusters=n_clusters,
                        value_a=value_a,
                        value_b=value_b, difference=difference, ci=ci, test=test, p=p,
                        holm_family=_holm_family(where), p_holm=None, survives=None))
    return rows, board


def compute_cycle_comparison(cycles: Sequence[Cycle], scores: Mapping[str, Mapping[tuple[str, str], float]],
                             settings: CycleCompareSettings | None = None,
                             sources: Mapping[str, str] | None = None) -> CompareCyclesResult:
    """Every comparison of the module docstring (what ``compare cycles`` writes as ``compare_cycles.json``)."""
    settings = settings or CycleCompareSettings()
    names = list(scores)
    if len(names) < 2:
        raise InputError(f"a comparison needs at least two score tables; got {len(names)}", field="scores")
    if not cycles:
        raise InputError("no cycles to compare on", field="cycles")
    matrices = np.stack([block_scores(cycles, scores[name], source=(sources or {}).get(name)) for name in names])
    deltas = np.stack([checked_contrasts(cycles, matrix, source=(sources or {}).get(name))
                       for name, matrix in zip(names, matrices, strict=True)])
    credits = cycle_credit(deltas, settings.tol)
    ties = np.abs(deltas) <= settings.tol
    two_way = settings.cluster == TWO_WAY
    unit = cycle_unit(cycles, "image") if two_way else cycle_unit(cycles, settings.cluster)
    if two_way:  # the rows name the two-way unit; the tests flip the connected image clusters
        unit = ResamplingUnit(unit.labels, TWO_WAY_UNIT, TWO_WAY)
    pairs = (np.array([str(c.image_1) for c in cycles], dtype=object),
             np.array([str(c.image_2) for c in cycles], dtype=object))

    def images_of(which: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The (image_1, image_2) of the cycles ``which`` selects (a mask or indices, in the cell's order)."""
        return (pairs[0][which], pairs[1][which]) if two_way else None

    splits = np.array([split_of(c) for c in cycles], dtype=object)
    families = np.array([c.family for c in cycles], dtype=object)
    comparisons: list[CycleComparison | BenchmarkComparison] = []
    leaderboard: list[CycleLeaderboardRow] = []
    skipped: list[CycleSkipped] = []
    for split in sorted(set(splits.tolist())):
        in_split = splits == split
        tags = {tag: in_split & (families == tag) for tag in sorted(set(families[in_split].tolist()))}
        if len(tags) > 1:
            tags = {ALL_TAGS: in_split, **tags}
        for tag, mask in tags.items():
            if int(mask.sum()) < settings.min_cycles:
                skipped.append(CycleSkipped(split=split, family=tag, metric="cycle_acc",
                                            reason=f"{int(mask.sum())} cycles, fewer than {settings.min_cycles}"))
                continue
            rows, board = _block(names, credits[:, mask, None], unit.subset(mask), ["cycle_acc"], settings,
                                 _Cell(None, split, tag), ties[:, mask], images_of(mask))
            comparisons.extend(rows)
            leaderboard.extend(board)
    for (benchmark, kind), indexes in sorted(benchmark_groups(cycles).items()):
        chosen = np.array(indexes, dtype=np.int64)
        metrics = list(metric_names(kind))
        outcomes = [winoground_outcomes(matrices[a, chosen]) if kind == "winoground"
                    else naturalbench_outcomes(matrices[a, chosen], settings.threshold) for a in range(len(names))]
        values = np.stack([np.column_stack([o[m] for m in metrics]) for o in outcomes])
        for split in sorted(set(splits[chosen].tolist())):
            in_split = splits[chosen] == split
            fams = families[chosen]
            tags = {tag: in_split & (fams == tag) for tag in sorted(set(fams[in_split].tolist()))}
            if len(tags) > 1:
                tags = {ALL_TAGS: in_split, **tags}
            for tag, mask in tags.items():
                rows, board = _block(names, values[:, mask], unit.subset(chosen).subset(mask), metrics, settings,
                                     _Cell(benchmark, split, tag), None, images_of(chosen[mask]))
                comparisons.extend(rows)
                leaderboard.extend(board)
    adjusted = holm_adjusted(comparisons, settings.alpha)
    return CompareCyclesResult(
        models=[CycleModel(model=name, source=(sources or {}).get(name), tie_rate=float(ties[a].mean()))
                for a, name in enumerate(names)],
        comparisons=adjusted,
        leaderboard=ranked(leaderboard, adjusted, lambda r: (r.benchmark, r.split, r.family, r.metric)),
        skipped=skipped, settings=settings.record(),
        warnings=[*cycle_unit_notes(cycles, unit),
                  *small_sample_cells({f"{r.benchmark or 'CycleAcc'}/{r.split}/{r.family}": r.n_clusters
                                       for r in adjusted}, unit.unit)])
