"""The cycle paper's experiments on frozen features, one call each: diagnostics (§5), rank sweep (§5), the
shortcut-contaminated OE (§6, Table 4) and transfer (§7); and the synthetic controls (§3)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlaudit.analysis.cycles.diagnostics import run_diagnostics, shortcut_table_rows
from vlaudit.analysis.cycles.diagnostics import table_rows as diagnostics_rows
from vlaudit.analysis.cycles.experiment import (
    ExperimentConfig,
    mean_sd_text,
    probe_notes_summary,
    unavailable_table,
)
from vlaudit.analysis.cycles.inputs import add_marked_features, extract_seed_features, load_seed_inputs
from vlaudit.analysis.cycles.oe import run_oe, seed_table_rows
from vlaudit.analysis.cycles.oe import table_rows as oe_rows
from vlaudit.analysis.cycles.provenance import settings_lines
from vlaudit.analysis.cycles.rank_sweep import run_rank_sweep
from vlaudit.analysis.cycles.rank_sweep import table_rows as rank_sweep_rows
from vlaudit.analysis.cycles.synthetic import SyntheticConfig, rank_peak_line, run_synthetic, torch_threads
from vlaudit.analysis.cycles.synthetic import table_rows as synthetic_rows
from vlaudit.analysis.cycles.transfer import run_transfer
from vlaudit.analysis.cycles.transfer import table_rows as transfer_rows
from vlaudit.errors import InputError
from vlaudit.results.cycles import CycleExperimentResult, SyntheticResult

Table = tuple[list[str], list[list[Any]]]
EXPERIMENTS = ("diagnostics", "rank-sweep", "oe", "transfer")


@dataclass(frozen=True)
class ExperimentRun:
    """One experiment's ``result`` (what its JSON holds), its mean ± sd ``table`` (columns, rows), the OE's
    per-seed ``seed_table``, the ``unavailable`` families' table (when any was withdrawn), the probe ``notes``
    (one line each), the ``settings`` lines (which settings depart from the paper's, which are vlaudit's own),
    transfer's ``correlation`` text and diagnostics' ``shortcut_table`` (§E.4, Table 8: pair AUROC beside
    CycleAcc)."""

    result: CycleExperimentResult
    table: Table
    seed_table: Table | None = None
    unavailable: Table | None = None
    notes: tuple[str, ...] = ()
    correlation: str | None = None
    settings: tuple[str, ...] = ()
    shortcut_table: Table | None = None


def _quiet(message: str) -> None:
    """The default log: a notebook caller reads what was written from the result."""


def run_experiment(name: str, cycles: Mapping[int, str | Path], *, config: ExperimentConfig, out: str | Path,
                   features: str | Path | None = None, model: str | None = None, images: str | Path | None = None,
                   marked_features: str | Path | None = None, families: Sequence[str] | None = None,
                   ranks: Sequence[int] | None = None, threads: int | None = 1,
                   log: Callable[[str], None] = _quiet) -> ExperimentRun:
    """Run experiment ``name`` (diagnostics, rank-sweep, oe or transfer) over one cycles file per seed.

    The features come from ``features`` (a folder covering every seed's cycles) or are extracted here with the
    dual encoder ``model`` from ``images`` into ``out/features``. The OE also needs the marked captions'
    features: in ``marked_features``, or extracted with the rest. ``ranks``: the rank sweep's ranks.
    """
    if name not in EXPERIMENTS:
        raise InputError(f"unknown experiment {name!r}; use {', '.join(EXPERIMENTS)}", field="name")
    out = Path(out)
    seeds = list(cycles)
    marked = name == "oe"
    if model is not None:
        if images is None:
            raise InputError("a model needs an images folder", field="images")
        features = extract_seed_features(cycles, images, model, out / "features",
                                         marked=marked and marked_features is None)
        log(f"wrote features {features}")
    if features is None:
        raise InputError("give a features folder or a model", field="features")
    inputs = load_seed_inputs(cycles, features)
    if marked:
        inputs = {s: add_marked_features(v, marked_features) for s, v in inputs.items()}
    chosen = None if families is None else list(families)
    seed_table = correlation = None
    with torch_threads(threads):
        if name == "diagnostics":
            result = run_diagnostics(inputs, seeds, config=config, families=chosen, out_dir=out)
        elif name == "rank-sweep":
            result = run_rank_sweep(inputs, seeds, ranks=list(ranks or [config.rank]), config=config,
                                    families=chosen, out_dir=out)
        elif name == "oe":
            result = run_oe(inputs, seeds, config=config, families=chosen, out_dir=out)
        else:
            result = run_transfer(inputs, seeds, config=config, families=chosen, out_dir=out)
    shortcut_table = None
    if name == "diagnostics":
        table, shortcut_table = diagnostics_rows(result), shortcut_table_rows(result)
    elif name == "rank-sweep":
        table = rank_sweep_rows(result)
    elif name == "oe":
        table, seed_table = oe_rows(result), seed_table_rows(result)
    else:
        table, correlation = transfer_rows(result), mean_sd_text(result["correlation"], 3)
    return ExperimentRun(result=result, table=table, seed_table=seed_table,
                         unavailable=unavailable_table(result) if result.get("unavailable") else None,
                         notes=tuple(probe_notes_summary(result.get("probe_notes", []))), correlation=correlation,
                         settings=tuple(settings_lines(result)), shortcut_table=shortcut_table)


@dataclass(frozen=True)
class SyntheticRun:
    """The synthetic controls' ``result`` (``synthetic.json``) and its summary ``rows`` (diagnostic, probe,
    metric, mean, sd, expected) and the rank control's ``rank_peaks`` line (the mean's and each seed's peak
    rank, §E.5), when the rank sweep ran."""

    result: SyntheticResult
    rows: list[list[Any]]
    rank_peaks: str | None = None


def synthetic_controls(seeds: Sequence[int], *, config: SyntheticConfig, out: str | Path | None = None,
                       threads: int | None = None) -> SyntheticRun:
    """Planted-signal controls with known answers (cycle paper §3), one run per seed; writes
    ``out/synthetic.json``."""
    result = run_synthetic(list(seeds), None if out is None else Path(out), config, num_threads=threads)
    return SyntheticRun(result=result, rows=synthetic_rows(result), rank_peaks=rank_peak_line(result))
