"""One shape for the cycle-paper experiments on frozen features (cycle paper §5, §D.5, §E): an
:class:`Experiment` says what one seed runs and how the seeds' rows become its result; :func:`run_cycle_experiment`
does the rest, the same way for each of them — check the seeds, withdraw the families below §D.5's minimum per
seed, run every seed, aggregate, and (with an output folder) plot and write ``NAME.json`` + ``NAME.csv``.

Every experiment's result holds the same common part (:class:`~vlaudit.results.cycle_experiments.ExperimentRun`,
the base of its result type: settings and their provenance, each seed's build, probe notes, withdrawn families,
files) built here once, and adds its own rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from vlaudit.analysis.cycles.across_seeds import SeedRow
from vlaudit.analysis.cycles.experiment import (
    ExperimentConfig,
    ProbeLog,
    SeedInputs,
    check_seeds,
    select_families,
)
from vlaudit.analysis.cycles.provenance import cycle_builds
from vlaudit.files import write_result, write_table
from vlaudit.results.cycle_experiments import CycleExperimentResult, ExperimentRun, ProbeNote
from vlaudit.results.versioned import JsonValue
from vlaudit.settings import NOT_IN_PAPER_FAMILIES

R = TypeVar("R", bound=CycleExperimentResult)


def run_fields(run: ExperimentRun) -> dict[str, Any]:
    """``run``'s fields by name, as keyword arguments of an experiment's result type, whose base it is (the
    experiment's own rows beside them): ``DiagnosticsResult(**run_fields(run), rows=...)``."""
    return {f.name: getattr(run, f.name) for f in fields(ExperimentRun)}


class Experiment(Protocol[R]):
    """A cycle-paper experiment: ``name`` (the command), ``file_stem`` (``NAME.json``), the probe ``kinds`` it
    trains (their settings go in the JSON), and its three steps."""

    @property
    def name(self) -> str:
        """The experiment's command name (``rank-sweep``), the ``experiment`` of its JSON."""
        ...

    @property
    def file_stem(self) -> str:
        """The stem of its files (``rank_sweep``: ``rank_sweep.json``, ``.csv``, ``.png``)."""
        ...

    @property
    def kinds(self) -> tuple[str, ...]:
        """The probe kinds it trains (:data:`~vlaudit.analysis.cycles.experiment.PROBE_KINDS`)."""
        ...

    def run_seed(self, inputs: SeedInputs, config: ExperimentConfig, families: Sequence[str],
                 notes: list[ProbeNote]) -> list[SeedRow]:
        """One seed's rows over ``families`` (those §D.5 kept in this seed); probe notes go to ``notes``."""
        ...

    def aggregate(self, per_seed: Mapping[int, Sequence[SeedRow]], run: ExperimentRun, config: ExperimentConfig,
                  families: Mapping[int, Sequence[str]]) -> R:
        """The result: ``run`` (what every experiment records) and the rows aggregated across seeds (mean ±
        sample sd)."""
        ...

    def write(self, result: R, out_dir: Path, config: ExperimentConfig) -> dict[str, str]:
        """The plot (and any other file besides the JSON and CSV) written into ``out_dir``: name → path."""
        ...

    def csv(self, result: R, config: ExperimentConfig) -> tuple[list[dict[str, JsonValue]], str | None]:
        """``NAME.csv``: one row per reported quantity, and the split every value is computed on (a first
        column, so no number comes without one; None: the rows say it)."""
        ...


def run_cycle_experiment(experiment: Experiment[R], inputs: Mapping[int, SeedInputs], seeds: Sequence[int], *,
                         config: ExperimentConfig, families: Sequence[str] | None = None,
                         out_dir: str | Path | None = None) -> R:
    """Run ``experiment`` on every seed's own split and aggregate (cycle paper §5, §D.5); with ``out_dir``
    write its plot, ``NAME.json`` (the result, ``files`` naming what was written) and ``NAME.csv``."""
    seeds = check_seeds(seeds, inputs)
    kept, unavailable = select_families(inputs, seeds, config, families)
    notes = ProbeLog()
    per_seed = {seed: experiment.run_seed(inputs[seed], config, kept[seed], notes) for seed in seeds}
    present = {c.family for s in seeds for c in inputs[s].cycles}
    run = ExperimentRun(experiment=experiment.name, split=config.test_split, seeds=seeds, config=config.as_dict(),
                        probe_settings=config.probe_settings(experiment.kinds),
                        settings=config.settings_provenance(), cycle_builds=cycle_builds(inputs, seeds),
                        families_not_in_paper=sorted(present & set(NOT_IN_PAPER_FAMILIES)), probe_notes=notes,
                        min_cycles=config.min_cycles, unavailable=unavailable, files={}, probe_runs=notes.runs)
    result = experiment.aggregate(per_seed, run, config, kept)
    if out_dir is None:
        return result
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = experiment.write(result, out, config)
    rows, split = experiment.csv(result, config)
    paths = {"json": str(out / f"{experiment.file_stem}.json"), "csv": str(out / f"{experiment.file_stem}.csv")}
    write_table(paths["csv"], [{"split": split, **row} for row in rows] if split is not None else rows)
    result = replace(result, files={**files, **paths})
    write_result(paths["json"], result)
    return result
