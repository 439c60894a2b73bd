"""The cycle paper's experiments on frozen features, one call each: diagnostics (§5.2), rank sweep (§5.4), the
shortcut-contaminated OE (§5.5, Table 4) and transfer (§5.6); and the synthetic controls (§5.1, Table 1).

The files are read here (:mod:`vlaudit.api.experiment_inputs`); every experiment then runs through the one
driver :func:`~vlaudit.analysis.cycles.driver.run_cycle_experiment` on the loaded data."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vlaudit.analysis.cycles.across_seeds import Table, mean_sd_text, unavailable_table
from vlaudit.analysis.cycles.diagnostics import Diagnostics, shortcut_table_rows
from vlaudit.analysis.cycles.diagnostics import table_rows as diagnostics_rows
from vlaudit.analysis.cycles.driver import run_cycle_experiment
from vlaudit.analysis.cycles.experiment import ExperimentConfig, SeedInputs, probe_notes_summary
from vlaudit.analysis.cycles.oe import OutlierExposure, seed_table_rows
from vlaudit.analysis.cycles.oe import table_rows as oe_rows
from vlaudit.analysis.cycles.provenance import settings_lines
from vlaudit.analysis.cycles.rank_sweep import RankSweep
from vlaudit.analysis.cycles.rank_sweep import table_rows as rank_sweep_rows
from vlaudit.analysis.cycles.synthetic import SyntheticConfig, rank_peak_line, run_synthetic, torch_threads
from vlaudit.analysis.cycles.synthetic import table_rows as synthetic_rows
from vlaudit.analysis.cycles.transfer import Transfer
from vlaudit.analysis.cycles.transfer import table_rows as transfer_rows
from vlaudit.api.experiment_inputs import add_marked_features, extract_seed_features, load_seed_inputs
from vlaudit.errors import InputError
from vlaudit.results.cycle_experiments import (
    AdditiveAudit,
    DiagnosticsResult,
    OeResult,
    RankSweepResult,
    TransferResult,
)
from vlaudit.results.cycles import SyntheticResult

EXPERIMENTS = ("diagnostics", "rank-sweep", "oe", "transfer")
#: what :func:`run_experiment` returns in ``ExperimentRun.result``: the experiment's typed ``NAME.json``
ExperimentResult = DiagnosticsResult | RankSweepResult | OeResult | TransferResult


@dataclass(frozen=True)
class ExperimentRun:
    """One experiment's ``result`` (what its JSON holds), its mean ± sd ``table`` (columns, rows), the OE's
    per-seed ``seed_table``, the ``unavailable`` families' table (when any was withdrawn), the probe ``notes``
    (one line each), the ``settings`` lines (which settings depart from the paper, which are vlaudit's own),
    transfer's ``correlation`` text (mean ± sd; ``correlation_per_seed``: each seed's), diagnostics'
    ``shortcut_table`` (§E.4, Table 8: pair AUROC beside
    CycleAcc) and the ``additive_audit`` of the experiments that run one (diagnostics, rank sweep; §E.4)."""

    result: ExperimentResult
    table: Table
    seed_table: Table | None = None
    unavailable: Table | None = None
    notes: tuple[str, ...] = ()
    correlation: str | None = None
    settings: tuple[str, ...] = ()
    shortcut_table: Table | None = None
    additive_audit: AdditiveAudit | None = None
    correlation_per_seed: str | None = None


def _quiet(message: str) -> None:
    """The default log: a notebook caller reads what was written from the result."""


def _run(name: str, loaded: Mapping[int, SeedInputs], seeds: list[int], config: ExperimentConfig,
         families: Sequence[str] | None, ranks: Sequence[int] | None, out: Path) -> ExperimentResult:
    """The one driver on experiment ``name``."""
    if name == "diagnostics":
        return run_cycle_experiment(Diagnostics(), loaded, seeds, config=config, families=families, out_dir=out)
    if name == "rank-sweep":
        chosen = tuple(int(r) for r in (ranks or [config.rank]))
        if min(chosen) < 1:
            raise InputError(f"ranks must be ≥ 1, got {list(chosen)}", field="ranks")
        return run_cycle_experiment(RankSweep(chosen), loaded, seeds, config=config, families=families, out_dir=out)
    if name == "oe":
        wanted = None if families is None else tuple(families)
        return run_cycle_experiment(OutlierExposure(wanted), loaded, seeds, config=config, families=families,
                                    out_dir=out)
    return run_cycle_experiment(Transfer(), loaded, seeds, config=config, families=families, out_dir=out)


def run_experiment(name: str, cycles: Mapping[int, str | Path], *, config: ExperimentConfig, out: str | Path,
                   features: str | Path | None = None, model: str | None = None, images: str | Path | None = None,
                   marked_features: str | Path | None = None, families: Sequence[str] | None = None,
                   ranks: Sequence[int] | None = None, threads: int | None = 1,
                   log: Callable[[str], None] = _quiet, test_cycles: Mapping[int, str | Path] | None = None,
                   test_images: str | Path | None = None) -> ExperimentRun:
    """Run experiment ``name`` (diagnostics, rank-sweep, oe or transfer) over one cycles file per seed.

    The features come from ``features`` (a folder covering every seed's cycles) or are extracted here with the
    dual encoder ``model`` from ``images`` into ``out/features``. The OE also needs the marked captions'
    features: in ``marked_features``, or extracted with the rest. ``ranks``: the rank sweep's ranks.
    ``test_cycles``: the paper's COCO protocol (cycle paper §D.5: train and validation cycles from train2017,
    test cycles from val2017, three split seeds) — per seed a second cycles file holding the test split (a
    ``cycles build coco --splits test --validation-from`` the seed's train build), read beside ``cycles``
    (which then hold train and val) with both builds' metadata recorded in ``cycle_builds``; its images are
    under ``test_images`` (default ``images``).
    """
    if name not in EXPERIMENTS:
        raise InputError(f"unknown experiment {name!r}; use {', '.join(EXPERIMENTS)}", field="name")
    out = Path(out)
    seeds = list(cycles)
    if test_cycles is not None and set(test_cycles) != set(seeds):
        raise InputError(f"test cycles for seeds {sorted(test_cycles)}, train/val cycles for seeds {sorted(seeds)}: "
                         "give one test build per seed", field="test_cycles")
    marked = name == "oe"
    if model is not None:
        if images is None:
            raise InputError("a model needs an images folder", field="images")
        features = extract_seed_features(cycles, images, model, out / "features",
                                         marked=marked and marked_features is None, test_paths=test_cycles,
                                         test_images=test_images)
        log(f"wrote features {features}")
    if features is None:
        raise InputError("give a features folder or a model", field="features")
    inputs = load_seed_inputs(cycles, features, test_cycles)
    if marked:
        inputs = {s: add_marked_features(v, marked_features) for s, v in inputs.items()}
    chosen = None if families is None else list(families)
    with torch_threads(threads):
        result = _run(name, inputs, seeds, config, chosen, ranks, out)
    shortcut_table = seed_table = correlation = per_seed = audit = None
    if isinstance(result, DiagnosticsResult):
        table, shortcut_table, audit = diagnostics_rows(result), shortcut_table_rows(result), result.additive_audit
    elif isinstance(result, RankSweepResult):
        table, audit = rank_sweep_rows(result), result.additive_audit
    elif isinstance(result, OeResult):
        table, seed_table = oe_rows(result), seed_table_rows(result)
    else:
        table, correlation = transfer_rows(result), mean_sd_text(result.correlation, 3)
        per_seed = ", ".join(f"seed {s}: {'—' if v is None else f'{v:.3f}'}"
                             for s, v in result.correlation.per_seed.items())
    return ExperimentRun(result=result, table=table, seed_table=seed_table,
                         unavailable=unavailable_table(result) if result.unavailable else None,
                         notes=tuple(probe_notes_summary(result.probe_notes)), correlation=correlation,
                         settings=tuple(settings_lines(result)), shortcut_table=shortcut_table,
                         additive_audit=audit, correlation_per_seed=per_seed)


@dataclass(frozen=True)
class SyntheticRun:
    """The synthetic controls' ``result`` (``synthetic.json``) and its summary ``rows`` (diagnostic, probe,
    metric, mean, sd, expected) and the rank control's ``rank_peaks`` line (the mean's and each seed's peak
    rank, §E.5), when the rank sweep ran."""

    result: SyntheticResult
    rows: list[list[object]]
    rank_peaks: str | None = None


def synthetic_controls(seeds: Sequence[int], *, config: SyntheticConfig, out: str | Path | None = None,
                       threads: int | None = None) -> SyntheticRun:
    """Planted-signal controls with known answers (cycle paper §5.1, Table 1), one run per seed; writes
    ``out/synthetic.json``."""
    result = run_synthetic(list(seeds), None if out is None else Path(out), config, num_threads=threads)
    return SyntheticRun(result=result, rows=synthetic_rows(result), rank_peaks=rank_peak_line(result))
