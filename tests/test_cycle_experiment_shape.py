"""One shape for the cycle experiments: the driver, the shared additive audit, typed records to the leaves, and
an analysis that reads nothing from disk."""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from experiment_planted import merge, planted_inputs

from vlaudit.analysis.cycles.across_seeds import SeedRow, additive_audit, aggregate, flat_rows
from vlaudit.analysis.cycles.driver import run_cycle_experiment, run_fields
from vlaudit.analysis.cycles.experiment import ExperimentConfig, SeedInputs
from vlaudit.analysis.cycles.provenance import settings_lines
from vlaudit.errors import InputError
from vlaudit.results.cycle_experiments import (
    EXPERIMENT_RESULTS,
    AdditiveAudit,
    AdditiveFailure,
    CycleBuilds,
    CycleExperimentResult,
    ExperimentRun,
    ProbeNote,
    SeedAggregate,
    SeedBuild,
    Withdrawn,
)
from vlaudit.results.cycles import CycleAccCell
from vlaudit.results.missing import Missing
from vlaudit.results.versioned import JsonValue, declared_fields, record_from_dict

CONFIG = ExperimentConfig(min_cycles=30)


@dataclass(frozen=True)
class CountRow:
    family: str
    test_cycles: SeedAggregate


@dataclass(frozen=True, kw_only=True)
class CountResult(CycleExperimentResult):
    """A toy experiment's result: the test cycles per family."""

    rows: list[CountRow]


@dataclass(frozen=True)
class CountTestCycles:
    """A toy experiment with a known answer: each seed's number of test cycles per kept family."""

    name: str = "count"
    file_stem: str = "count"
    kinds: tuple[str, ...] = ("interaction",)

    def run_seed(self, inputs: SeedInputs, config: ExperimentConfig, families: Sequence[str],
                 notes: list[ProbeNote]) -> list[SeedRow]:
        notes.append(ProbeNote(probe=f"seed {inputs.seed}", note="counted"))
        return [{"family": f, "test_cycles": len(inputs.select(config.test_split, f))} for f in families]

    def aggregate(self, per_seed: Mapping[int, Sequence[SeedRow]], run: ExperimentRun, config: ExperimentConfig,
                  families: Mapping[int, Sequence[str]]) -> CountResult:
        rows = [CountRow(family=str(family), test_cycles=cells["test_cycles"])
                for (family,), cells in aggregate(per_seed, ("family",), ("test_cycles",))]
        return CountResult(**run_fields(run), rows=rows)

    def write(self, result: CountResult, out_dir: Path, config: ExperimentConfig) -> dict[str, str]:
        (out_dir / "count.txt").write_text("plot")
        return {"plot": str(out_dir / "count.txt")}

    def csv(self, result: CountResult, config: ExperimentConfig) -> tuple[list[dict[str, JsonValue]], str | None]:
        return flat_rows(result.rows, ("family",), ("test_cycles",)), config.test_split


def _inputs(seed: int, short_val: int) -> SeedInputs:
    return merge(seed, [planted_inputs(seed, family="kept", splits=(("train", 40), ("val", 30), ("test", 20))),
                        planted_inputs(seed + 50, family="short",
                                       splits=(("train", 40), ("val", short_val), ("test", 12)))])


def test_the_driver_runs_every_seed_withdraws_per_seed_and_writes_what_it_returns(tmp_path: Path) -> None:
    inputs = {0: _inputs(0, 29), 1: _inputs(1, 30)}
    result = run_cycle_experiment(CountTestCycles(), inputs, [0, 1], config=CONFIG, out_dir=tmp_path)
    rows = {r.family: r.test_cycles for r in result.rows}
    assert rows["kept"] == SeedAggregate(per_seed={"0": 20, "1": 20}, mean=20.0, sd=0.0, n_seeds=2)
    assert rows["short"].per_seed == {"0": None, "1": 12} and rows["short"].n_seeds == 1  # §D.5 in seed 0 only
    assert result.unavailable == [Withdrawn(family="short", seed=0, cycles={"train": 40, "val": 29, "test": 12},
                                            withdrawn_by="experiment")]
    assert result.experiment == "count" and result.split == "test" and result.seeds == [0, 1]
    assert result.probe_notes == [ProbeNote(probe="seed 0", note="counted"), ProbeNote(probe="seed 1", note="counted")]
    assert set(result.probe_settings) == {"interaction"} and result.config["min_cycles"] == 30
    assert result.files == {"plot": str(tmp_path / "count.txt"), "json": str(tmp_path / "count.json"),
                            "csv": str(tmp_path / "count.csv")}
    saved = json.loads((tmp_path / "count.json").read_text())
    assert CountResult.from_dict(saved) == result and saved["rows"][0]["test_cycles"]["per_seed"]["0"] == 20
    header, *lines = (tmp_path / "count.csv").read_text().replace('"', "").splitlines()
    assert header.startswith("split,family,test_cycles_seed_0") and all(line.startswith("test,") for line in lines)
    unsaved = run_cycle_experiment(CountTestCycles(), inputs, [0, 1], config=CONFIG)
    assert unsaved.files == {} and unsaved.rows == result.rows


def test_the_fields_every_experiment_shares_are_defined_once() -> None:
    # every experiment's result type is an ExperimentRun: its keys come first in the file, in one order
    shared = [f.name for f in dataclasses.fields(ExperimentRun)]
    for kind in (*EXPERIMENT_RESULTS.values(), CountResult):
        assert list(declared_fields(kind))[:len(shared)] == shared


def test_each_seeds_build_is_a_record_and_an_unknown_one_says_why(tmp_path: Path) -> None:
    inputs = {0: _inputs(0, 30), 1: _inputs(1, 30)}
    inputs[0].build = SeedBuild(source="coco", pool_seed=7, seed=0, max_images=500, images_in_pool=480,
                                splits={"train": 0.6, "val": 0.2, "test": 0.2})
    result = run_cycle_experiment(CountTestCycles(), inputs, [0, 1], config=CONFIG, out_dir=tmp_path)
    assert result.cycle_builds.per_seed == {"0": inputs[0].build,
                                            "1": Missing("no CYCLES.meta.json beside its cycles file")}
    assert result.cycle_builds.shared_pool is True
    saved = json.loads((tmp_path / "count.json").read_text())["cycle_builds"]
    assert saved["per_seed"]["0"]["images_in_pool"] == 480
    assert saved["per_seed"]["1"] == {"missing": "no CYCLES.meta.json beside its cycles file"}
    lines = settings_lines(result)
    assert "image pool: 480 images (pool seed 7), shared by every seed; each seed draws its own splits inside it " \
           "(§D.5)" in lines
    assert "cycles build of seed 1: — (no CYCLES.meta.json beside its cycles file)" in lines
    unknown = run_cycle_experiment(CountTestCycles(), {0: _inputs(0, 30)}, [0], config=CONFIG)
    assert unknown.cycle_builds.shared_pool == Missing("no seed's cycles build is known")
    # a file of an older vlaudit: {} for a seed without metadata, null for an unknown pool
    old = record_from_dict(CycleBuilds, {"per_seed": {"0": {}}, "shared_pool": None}, path="old.json")
    assert old == CycleBuilds(per_seed={"0": SeedBuild()}, shared_pool=None)


def test_the_driver_checks_seeds_and_families_before_running() -> None:
    inputs = {0: _inputs(0, 30)}
    with pytest.raises(InputError, match="duplicated seeds"):
        run_cycle_experiment(CountTestCycles(), inputs, [0, 0], config=CONFIG)
    with pytest.raises(InputError, match="no cycles/features for seeds"):
        run_cycle_experiment(CountTestCycles(), inputs, [0, 1], config=CONFIG)
    with pytest.raises(InputError, match="in no seed's cycles"):
        run_cycle_experiment(CountTestCycles(), inputs, [0], config=CONFIG, families=["nope"])


def test_one_additive_audit_for_every_experiment_that_reports_it() -> None:
    per_seed: dict[int, list[SeedRow]] = {
        0: [{"family": "f", "rank": 1, "cycle_acc": 0.9, "tie_rate": 0.0},
            {"family": "f", "rank": "additive", "cycle_acc": 0.5, "tie_rate": 1.0}],
        1: [{"family": "f", "rank": "additive", "cycle_acc": 0.5, "tie_rate": 0.95}]}
    audit = additive_audit(per_seed, lambda row: "additive" if row["rank"] == "additive" else None)
    assert audit == AdditiveAudit(ok=False, checked=2, failures=[
        AdditiveFailure(seed=1, family="f", probe="additive", cycle_acc=0.5, tie_rate=0.95)])
    assert additive_audit({0: []}, lambda row: "additive") == AdditiveAudit(ok=False, checked=0, failures=[])
    exact = {0: [{"family": "f", "probe": "text-only", "cycle_acc": 0.5, "tie_rate": 1.0}]}
    assert additive_audit(exact, lambda row: str(row["probe"])).ok


def test_an_interval_reads_back_as_low_and_high_and_counts_stay_integers() -> None:
    cell = record_from_dict(CycleAccCell, {"n": 4, "cycle_acc": 0.5, "ties": 2, "tie_rate": 0.5,
                                           "ci": [0.25, 0.75]}, path="eval.json")
    assert cell.ci == (0.25, 0.75) and isinstance(cell.n, int)
    with pytest.raises(InputError, match=r"ci\[1\]"):
        record_from_dict(CycleAccCell, {"n": 4, "cycle_acc": 0.5, "ties": 2, "tie_rate": 0.5, "ci": [0.25, "x"]},
                         path="eval.json")
    again = record_from_dict(SeedAggregate, {"per_seed": {"0": 40, "1": 0.5}, "mean": 20.25, "sd": None,
                                             "n_seeds": 2}, path="x.json")
    assert again.per_seed == {"0": 40, "1": 0.5} and isinstance(again.per_seed["0"], int)


def test_the_cycle_analysis_reads_nothing_from_disk() -> None:
    """The experiments' inputs are read in the API (vlaudit.api.experiment_inputs); the analysis only writes."""
    readers = {"read_cycles", "read_features", "read_json", "read_table", "read_scores", "read_text", "read_bytes",
               "load", "loads", "open"}
    folder = Path(__file__).parents[1] / "vlaudit" / "analysis" / "cycles"
    for module in sorted(folder.glob("*.py")):
        tree = ast.parse(module.read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    for alias in node.names}
        called = {node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                  for node in ast.walk(tree) if isinstance(node, ast.Call)}
        assert not (imported | called) & readers, module.name
