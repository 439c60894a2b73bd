"""Paired model comparison from a notebook: are model A's credit rates really higher than B's on the same
items? (VCA §3, §13, §19)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vlaudit.analysis.compare.cycles import CycleCompareSettings, compute_cycle_comparison
from vlaudit.analysis.compare.inputs import read_model_runs
from vlaudit.analysis.compare.vca import CompareSettings, compute_comparison
from vlaudit.api._inputs import as_cycles, as_scores
from vlaudit.api.results import Result, with_interval
from vlaudit.report.compare import (
    print_compare,
    print_compare_cycles,
    write_compare_cycles_files,
    write_compare_files,
)
from vlaudit.report.console import print_wrapped
from vlaudit.results.compare import CompareCyclesResult, CompareVcaResult
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    COMPARE_FAMILYWISE_ALPHA,
    COMPARE_PERMUTATIONS,
    CONFIDENCE_LEVEL,
    CYCLE_TIE_TOL,
    MIN_CYCLES,
    PRIMARY_CONTROLS,
)


def compare_vca(runs: Sequence[str | Path], *, out: str | Path | None = None,
                controls: Sequence[str] = PRIMARY_CONTROLS, n_resamples: int = BOOTSTRAP_RESAMPLES,
                seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL,
                n_permutations: int = COMPARE_PERMUTATIONS, alpha: float = COMPARE_FAMILYWISE_ALPHA,
                plot: bool = True, show: bool = False) -> Result:
    """Compare two or more models' Visual Credit Audits on the items they share (paired, VCA §19).

    Args:
        runs: ``vca score`` run folders, ``vca report`` folders inside them, or MARGINS files (one per model).
        out: when given, write ``compare.json``, ``comparisons.csv``, ``leaderboard.csv`` (and the pairwise
            PNGs with more than two models) there, as ``vlaudit compare vca`` does. A run folder's
            ``stability.json`` (``vca stability``) adds each model's decisions inside its noise floor and a
            noise band on the Acc, Dep and D-CC differences; without one it says "noise floor not measured".
        controls: the headline control contexts of G_img.
        n_resamples: paired clustered bootstrap resamples (one count matrix for every model and metric).
        seed: the seed of the bootstrap and of the permutation test.
        level: confidence level of every interval.
        n_permutations: sign flips of the paired cluster permutation test.
        alpha: family-wise error rate of the Holm adjustment (``survives``).
        plot: write the pairwise matrix PNGs.
        show: print the console tables (what the command prints).

    ``rows``: one per comparison (dataset, interface, family, metric, A, B, difference with interval, p, Holm p,
    survives); ``.save(dir)`` writes exactly what the command writes.
    """
    inputs = [read_model_runs(path) for path in runs]
    settings = CompareSettings(controls=tuple(controls), n_resamples=n_resamples, seed=seed, level=level,
                               n_permutations=n_permutations, alpha=alpha)
    record = CompareVcaResult.from_dict(compute_comparison(inputs, settings))
    return _deliver(record, "Paired model comparison", "compare.json", out=out, show=show,
                    write=lambda folder: write_compare_files(folder, record, plot=plot),
                    show_tables=lambda: print_compare(record))


def compare_cycles(cycles: Any, scores: Mapping[str, Any], *, out: str | Path | None = None,
                   tol: float = CYCLE_TIE_TOL, min_cycles: int = MIN_CYCLES, n_resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL,
                   n_permutations: int = COMPARE_PERMUTATIONS, alpha: float = COMPARE_FAMILYWISE_ALPHA,
                   plot: bool = True, show: bool = False) -> Result:
    """Compare two or more models' cycle scores on the same cycles (cycle paper §2.1, §D.5; paired, VCA §19).

    Args:
        cycles: a cycles path, table, frame, row list or list of :class:`~vlaudit.records.Cycle`.
        scores: model name → its scores (path, table, frame or (image_id, caption_id) → score mapping).
        out: when given, write ``compare_cycles.json``, ``comparisons.csv`` and ``leaderboard.csv`` (and the
            pairwise PNGs with more than two models) there.
        tol: |Δ| ≤ tol is a tie (credit ½).
        min_cycles: a (split, family) with fewer cycles is not compared.
        n_resamples: paired bootstrap resamples over cycles.
        seed: the seed of the bootstrap and the permutation test.
        level: confidence level of every interval.
        n_permutations: sign flips of the permutation test (fractional 2×2 metrics).
        alpha: family-wise error rate of the Holm adjustment.
        plot: write the pairwise matrix PNGs (more than two models).
        show: print the console tables (what the command prints).

    ``.save(dir)`` writes exactly what ``vlaudit compare cycles`` writes.
    """
    chosen = as_cycles(cycles)
    tables = {name: as_scores(table, chosen) for name, table in scores.items()}
    sources = {name: str(table) for name, table in scores.items() if isinstance(table, (str, Path))}
    settings = CycleCompareSettings(tol=tol, min_cycles=min_cycles, n_resamples=n_resamples, seed=seed, level=level,
                                    n_permutations=n_permutations, alpha=alpha)
    record = CompareCyclesResult.from_dict(compute_cycle_comparison(chosen, tables, settings, sources))
    return _deliver(record, "Paired cycle comparison", "compare_cycles.json", out=out, show=show,
                    write=lambda folder: write_compare_cycles_files(folder, record, plot=plot),
                    show_tables=lambda: print_compare_cycles(record))


def _deliver(record: CompareVcaResult | CompareCyclesResult, title: str, json_name: str, *,
             out: str | Path | None, show: bool, write: Callable[[Path], list[Path]],
             show_tables: Callable[[], None]) -> Result:
    """The comparison as a :class:`Result` (one row per comparison, its interval on the difference), written
    to ``out`` when given and printed as the command prints it when ``show``."""
    rows = [with_interval({k: v for k, v in row.items() if k != "ci"}, "difference", row["ci"])
            for row in record.comparisons]
    result = Result.of(record, rows, title=title, interval_columns=("difference",),
                       writer=lambda folder, res: write(folder))
    if out is not None:
        result.save(out)
    if show:
        show_tables()
        if out is not None:
            print_wrapped(f"wrote {Path(out) / json_name} and CSV tables in {out}")
    return result
