"""The Visual Credit Audit's validity, held-out filter and proxy analyses over scored runs (VCA §12–§16).

Each function reads the runs (MARGINS tables or ``vca score`` folders), computes the analysis, writes its JSON,
CSV tables and plot into ``out`` exactly as the matching ``vlaudit vca …`` command does, and returns the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from vlaudit.analysis.stats_options import StatsOptions, spreads_stats
from vlaudit.analysis.vca.heldout_filter import FilterSettings, compute_filter
from vlaudit.analysis.vca.proxies import ProxySettings, compute_proxies
from vlaudit.analysis.vca.scored_runs import (
    JoinedEdits,
    RunScores,
    join_edits,
    run_info,
    run_scores,
)
from vlaudit.analysis.vca.validity import ValiditySettings, compute_validity
from vlaudit.report.vca_analyses import write_filter, write_proxies, write_validity
from vlaudit.results.vca.outputs import VcaFilterResult, VcaProxiesResult, VcaValidityResult
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    FILTER_COVERAGES,
    FILTER_PRIMARY_COVERAGE,
    HL_RESAMPLES,
    PRIMARY_CONTROLS,
)
from vlaudit.sources.edit_outcomes import read_edit_outcomes
from vlaudit.sources.margin_runs import read_margin_runs
from vlaudit.sources.margins import normalize_interface
from vlaudit.sources.vsr import read_meta_categories

Log = Callable[[str], None]


def _quiet(message: str) -> None:
    """The default log: a notebook caller reads the runs and warnings from the result instead."""


def _scores(runs: Sequence[str | Path], interface: str, controls: tuple[str, ...], log: Log, warn: Log) -> list[RunScores]:
    """Read the runs and compute their events; each run's exclusion warnings go to ``warn`` (items lacking a
    headline control are excluded from every quantity and counted, never silently)."""
    scores = run_scores(read_margin_runs([Path(r) for r in runs], normalize_interface(interface)), controls)
    infos = [run_info(s) for s in scores]
    log("runs: " + "; ".join(f"{i['model']} on {i['dataset']} (n={i['n']}, split {'+'.join(i['splits'])})"
                             for i in infos))
    for s in scores:
        for warning in getattr(s.events, "warnings", []):
            warn(f"warning: {warning}")
    return scores


def _joined(edits: str | Path | None, edit_items: str | Path | None, scores: list[RunScores],
            edits_dataset: str | None) -> JoinedEdits | None:
    if edits is None:
        return None
    return join_edits(read_edit_outcomes(Path(edits), None if edit_items is None else Path(edit_items)), scores,
                      dataset=edits_dataset, path=str(edits))


@spreads_stats(controls="controls", resamples="n_resamples", seed="seed")
def vca_validity(runs: Sequence[str | Path], *, out: str | Path, edits: str | Path | None = None,
                 edit_items: str | Path | None = None, edits_dataset: str | None = None, interface: str = "yesno",
                 controls: Sequence[str] = PRIMARY_CONTROLS, n_resamples: int = BOOTSTRAP_RESAMPLES,
                 hl_resamples: int = HL_RESAMPLES, seed: int = BOOTSTRAP_SEED, folds: int = 5, repeats: int = 10,
                 plot: bool = True, log: Log = _quiet, warn: Log = _quiet,
                 stats: StatsOptions | None = None) -> VcaValidityResult:
    """Validity of the audit's decisions (VCA §12–§13): single-control discordance, the shared-margin control and
    the edit-grouped incremental control; writes ``validity.json``, CSV tables and ``validity.png`` into ``out``.
    ``stats``: ``controls``, ``n_resamples``, ``seed`` as one :class:`~vlaudit.StatsOptions` record instead
    (checked as built; its fields, defaults included, replace those keywords; giving both is refused)."""
    settings = ValiditySettings(controls=tuple(controls), n_resamples=n_resamples, hl_resamples=hl_resamples,
                                seed=seed, folds=folds, repeats=repeats)
    scores = _scores(runs, interface, settings.controls, log, warn)
    result = compute_validity(scores, _joined(edits, edit_items, scores, edits_dataset), settings)
    write_validity(Path(out), result, plot=plot)
    return result


@spreads_stats(controls="controls", resamples="n_resamples", seed="seed")
def vca_filter(runs: Sequence[str | Path], *, out: str | Path, coverages: Sequence[float] = FILTER_COVERAGES,
               primary: float = FILTER_PRIMARY_COVERAGE, interface: str = "yesno",
               controls: Sequence[str] = PRIMARY_CONTROLS, n_resamples: int = BOOTSTRAP_RESAMPLES,
               seed: int = BOOTSTRAP_SEED, plot: bool = True, log: Log = _quiet, warn: Log = _quiet,
               stats: StatsOptions | None = None) -> VcaFilterResult:
    """The held-out credit filter (VCA §14): groups kept by the other models' credit, evaluated on each held-out
    model (Acc, Blind Gap, Visual Gain, Dep); writes ``filter.json``, CSV tables and ``filter.png``.
    ``stats``: ``controls``, ``n_resamples``, ``seed`` as one :class:`~vlaudit.StatsOptions` record instead
    (checked as built; its fields, defaults included, replace those keywords; giving both is refused)."""
    settings = FilterSettings(coverages=tuple(coverages), primary=primary, n_resamples=n_resamples, seed=seed,
                              controls=tuple(controls))
    result = compute_filter(_scores(runs, interface, settings.controls, log, warn), settings)
    write_filter(Path(out), result, plot=plot)
    return result


@spreads_stats(controls="controls", resamples="n_resamples", seed="seed")
def vca_proxies(runs: Sequence[str | Path], *, out: str | Path, edits: str | Path | None = None,
                edit_items: str | Path | None = None, edits_dataset: str | None = None,
                meta: str | Path | None = None, interface: str = "yesno",
                controls: Sequence[str] = PRIMARY_CONTROLS, n_resamples: int = BOOTSTRAP_RESAMPLES,
                seed: int = BOOTSTRAP_SEED, plot: bool = True, log: Log = _quiet, warn: Log = _quiet,
                stats: StatsOptions | None = None) -> VcaProxiesResult:
    """Proxy measures beside the credit audit (VCA §15–§16): FPVG-style, sufficiency/comprehensiveness, control
    aggregation, control-set stability, relation families; writes ``proxies.json``, CSV tables, ``proxies.png``.
    ``stats``: ``controls``, ``n_resamples``, ``seed`` as one :class:`~vlaudit.StatsOptions` record instead
    (checked as built; its fields, defaults included, replace those keywords; giving both is refused)."""
    settings = ProxySettings(controls=tuple(controls), n_resamples=n_resamples, seed=seed)
    scores = _scores(runs, interface, settings.controls, log, warn)
    result = compute_proxies(scores, _joined(edits, edit_items, scores, edits_dataset), settings,
                             read_meta_categories(Path(meta)) if meta else None)
    write_proxies(Path(out), result, plot=plot)
    return result
