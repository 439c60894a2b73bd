"""Paired model comparison from a notebook: are model A's credit rates really higher than B's on the same
items? (VCA §3, §13, §19)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from vlaudit.analysis.compare.cycles import CycleCompareSettings, compute_cycle_comparison
from vlaudit.analysis.compare.vca import CompareSettings, compute_comparison
from vlaudit.analysis.stats_options import StatsOptions, spreads_stats
from vlaudit.api.input_records import as_cycles, as_scores
from vlaudit.api.inputs import CyclesInput, ScoresInput
from vlaudit.api.results import Result, Row, with_interval
from vlaudit.errors import InputError
from vlaudit.records import Cycle
from vlaudit.report.compare import write_compare_cycles_files, write_compare_files
from vlaudit.results.compare import (
    CompareCyclesResult,
    CompareVcaResult,
    Comparison,
    VcaBandComparison,
)
from vlaudit.results.versioned import to_json
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
from vlaudit.sources.compared_runs import ModelRuns, read_model_runs


class VcaComparisonResult(Result):
    """The result of :func:`compare_vca`: ``comparison`` is the typed ``compare.json``."""

    @property
    def comparison(self) -> CompareVcaResult:
        assert isinstance(self.result, CompareVcaResult)
        return self.result


class CycleComparisonResult(Result):
    """The result of :func:`compare_cycles`: ``comparison`` is the typed ``compare_cycles.json``."""

    @property
    def comparison(self) -> CompareCyclesResult:
        assert isinstance(self.result, CompareCyclesResult)
        return self.result


@spreads_stats(controls="controls", resamples="n_resamples", seed="seed", level="level",
               permutations="n_permutations", cluster="cluster")
def compare_vca(runs: Sequence[str | Path], *, out: str | Path | None = None,
                controls: Sequence[str] = PRIMARY_CONTROLS, n_resamples: int = BOOTSTRAP_RESAMPLES,
                seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL,
                n_permutations: int = COMPARE_PERMUTATIONS, alpha: float = COMPARE_FAMILYWISE_ALPHA,
                cluster: str | None = None, plot: bool = True,
                stats: StatsOptions | None = None) -> VcaComparisonResult:
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
        alpha: family-wise error rate of the Holm adjustment (``survives``), within each Holm family.
        cluster: the margins column whose values are the resampling unit (``image``, ``item_id``,
            ``group_id``, ...); None: the unit the items declare (factorial stem, edit, image), else the
            relation group, else the item.
        plot: write the pairwise matrix PNGs.
        stats: the statistics options as one :class:`~vlaudit.StatsOptions` record instead (checked as
            built; its fields, defaults included, replace the keywords they name; giving both is refused).

    ``rows``: one per comparison (dataset, interface, family, metric, A, B, difference with interval, p, Holm p,
    survives; the noise band of Acc, Dep and D-CC as ``noise_band_lo`` / ``noise_band_hi``); ``comparison`` is
    the typed ``compare.json``; ``.save(dir)`` writes exactly what the command writes;
    :func:`~vlaudit.report.compare.compare_view` of ``comparison`` is what it prints.
    """
    inputs = [read_model_runs(path) for path in runs]
    refuse_circular_beside_plain(inputs)
    settings = CompareSettings(controls=tuple(controls), n_resamples=n_resamples, seed=seed, level=level,
                               n_permutations=n_permutations, alpha=alpha, cluster=cluster)
    record = compute_comparison(inputs, settings)
    if not record.comparisons:
        raise InputError(_nothing_compared_vca(record), field="runs")
    result = VcaComparisonResult.of(record, _rows(record.comparisons), title="Paired model comparison",
                                    interval_columns=("difference",),
                                    writer=lambda folder, _: write_compare_files(folder, record, plot=plot))
    if out is not None:
        result.save(out)
    return result


@spreads_stats(resamples="n_resamples", seed="seed", level="level", permutations="n_permutations",
               cluster="cluster")
def compare_cycles(cycles: CyclesInput, scores: Mapping[str, ScoresInput], *, out: str | Path | None = None,
                   tol: float = CYCLE_TIE_TOL, min_cycles: int = MIN_CYCLES, n_resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL,
                   n_permutations: int = COMPARE_PERMUTATIONS, alpha: float = COMPARE_FAMILYWISE_ALPHA,
                   cluster: str | None = None, plot: bool = True,
                   stats: StatsOptions | None = None) -> CycleComparisonResult:
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
        n_permutations: random sign flips of a test that cannot be computed exactly (the sign-flip test on
            ΔCycleAcc beyond exact enumeration; the permutation test of fractional 2×2 metrics).
        alpha: family-wise error rate of the Holm adjustment (within each benchmark, split and family).
        cluster: the resampling unit: None (the cycle), ``image`` (cycles joined whenever they share an
            image), ``two-way`` (intervals from the image_1 × image_2 pigeonhole bootstrap,
            :mod:`vlaudit.stats.two_way`; tests as under ``image``), ``image_1``, ``image_2`` or ``family``.
        plot: write the pairwise matrix PNGs (more than two models).
        stats: the statistics options as one :class:`~vlaudit.StatsOptions` record instead (checked as
            built; its fields, defaults included, replace the keywords they name; giving both is refused).

    ``rows``: one per comparison; ``comparison`` is the typed ``compare_cycles.json``; ``.save(dir)`` writes
    exactly what ``vlaudit compare cycles`` writes; :func:`~vlaudit.report.compare.compare_cycles_view` of
    ``comparison`` is what it prints.
    """
    chosen = as_cycles(cycles)
    tables = {name: as_scores(table, chosen) for name, table in scores.items()}
    sources = {name: str(table) for name, table in scores.items() if isinstance(table, (str, Path))}
    settings = CycleCompareSettings(tol=tol, min_cycles=min_cycles, n_resamples=n_resamples, seed=seed, level=level,
                                    n_permutations=n_permutations, alpha=alpha, cluster=cluster)
    record = compute_cycle_comparison(chosen, tables, settings, sources)
    if not record.comparisons:
        raise InputError(_nothing_compared_cycles(chosen, min_cycles), field="--min-cycles")
    result = CycleComparisonResult.of(record, _rows(record.comparisons), title="Paired cycle comparison",
                                      interval_columns=("difference",),
                                      writer=lambda folder, _: write_compare_cycles_files(folder, record, plot=plot))
    if out is not None:
        result.save(out)
    return result


def _rotated_ids(model: ModelRuns) -> list[str]:
    """The item ids ``vca score --circular`` wrote in ``model``'s runs (``ITEM~rJ``, with ``circular_id`` ITEM
    and ``rotation`` J: :mod:`vlaudit.builders.circular`); empty for a plain run or MMBench's published copies."""
    ids = []
    for run in model.runs:
        circular, rotation = run.extra.get("circular_id"), run.extra.get("rotation")
        if circular is None or rotation is None:
            continue
        ids += [str(i) for i, c, r in zip(run.item_ids, circular, rotation, strict=True)
                if c is not None and r is not None and str(i) == f"{c}~r{int(r)}"]
    return ids


def refuse_circular_beside_plain(inputs: Sequence[ModelRuns]) -> None:
    """A ``--circular`` run beside a plain run of the same ITEMS shares no item id (``ITEM~rJ`` against ITEM):
    refused in one line naming the circular ids, instead of "the runs share no item"."""
    rotated = [(model, _rotated_ids(model)) for model in inputs]
    circular = [(model, ids) for model, ids in rotated if ids]
    plain = [model for model, ids in rotated if not ids]
    if circular and plain:
        model, ids = circular[0]
        raise InputError(f"{model.source} is a --circular run (item ids ITEM~rJ, one per rotation of the options: "
                         f"{', '.join(ids[:3])}{', …' if len(ids) > 3 else ''}) and {plain[0].source} is not (plain "
                         "item ids), so they share no item: compare --circular runs with --circular runs, or rescore "
                         "one of them the other way", field="runs")


def _nothing_compared_vca(record: CompareVcaResult) -> str:
    """Why ``compare vca`` compared nothing, and the way out (nothing to do is exit status 2)."""
    counts = [f"{model.model} on {where}: {entry.n_compared} shared"
              + "".join(f", {n} {why}" for why, n in entry.dropped.items() if n)
              for model in record.models for where, entry in model.datasets.items()]
    if any(entry.n_compared for model in record.models for entry in model.datasets.values()):
        why = "no metric can be computed for every run (" + "; ".join(
            f"{row.metric}: {row.reason}" for row in record.skipped[:3]) + ")"
    else:
        why = "the runs share no item"
    return (f"nothing was compared: {why}; {'; '.join(counts) or 'no runs'}. Give runs scored on the same "
            "ITEMS (an item is shared when every run has its id with the same content)")


def _nothing_compared_cycles(cycles: Sequence[Cycle], min_cycles: int) -> str:
    """Why ``compare cycles`` compared nothing (every family of every split under ``--min-cycles``) and the
    way out: the largest family's count as ``--min-cycles`` (cycle paper §D.5 sets the default)."""
    counts = Counter((cycle.split or "unsplit", cycle.family) for cycle in cycles)
    if not counts:
        return "nothing was compared: no cycles"
    (split, family), most = counts.most_common(1)[0]
    return (f"nothing was compared: every family has fewer than --min-cycles {min_cycles} cycles in its split "
            f"(the largest, {family!r} on {split!r}, has {most}); rerun with --min-cycles {most} to compare them "
            "anyway (intervals on so few cycles are wide), or give more cycles")


def _rows(comparisons: Sequence[Comparison]) -> list[Row]:
    """One flat row per comparison: the record's fields, its interval on the difference as ``difference_lo`` /
    ``difference_hi`` and a noise band as ``noise_band_lo`` / ``noise_band_hi``."""
    rows = []
    for comparison in comparisons:
        written = to_json(comparison)
        assert isinstance(written, dict)
        row: Row = {}
        for key, value in written.items():
            if value is None or isinstance(value, (str, int, float, bool)):
                row[key] = value
        if isinstance(comparison, VcaBandComparison):
            with_interval(row, "noise_band", comparison.noise_band)
        rows.append(with_interval(row, "difference", comparison.ci))
    return rows
