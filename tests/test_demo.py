"""`vlaudit demo --quick`: the known-answer run end to end, offline, with the shipped reference encoders."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import vlaudit
from vlaudit.cli import app
from vlaudit.demo.pipeline import DemoConfig, cycle_checks
from vlaudit.results.cycles import CycleBuildMeta, SyntheticResult
from vlaudit.results.demo import (
    DemoCycleAudits,
    DemoCycleEvaluation,
    DemoCycleStage,
    DemoSummary,
    DemoVcaKnownAnswers,
    ProbeNotes,
)
from vlaudit.results.vca.outputs import FactorialResult, ScoringSummary, VcaReportResult
from vlaudit.results.versioned import record_from_dict, to_json

# the smallest stage summaries a DemoSummary holds (stages faked where the wiring, not the models, is tested)
EMPTY_CYCLE_STAGE = {"split": "test", "seeds": [0], "counts": {}, "encoders": {}, "rank_sweep": [], "files": {},
                     "audit": {"max_abs_signed_degree": 0, "max_tv": 0.0, "violations": 0}}
EMPTY_VCA_STAGE = {"runs": [], "planted_credited_fraction": {}, "factorial": [], "seconds": {}, "notes": []}
VERSIONS = {"vlaudit": "0", "python": "3", "numpy": "2", "torch": "2", "platform": "p", "commit": None}


def _fake_summary(known_answers: list[dict[str, Any]]) -> DemoSummary:
    """What a faked ``run_demo`` returns: empty stages and these checks."""
    return DemoSummary.from_dict({
        "config": to_json(dataclasses.asdict(DemoConfig.quick_config())), "synthetic": {"checks": {}, "rows": []}, "cycles": EMPTY_CYCLE_STAGE, "vca": EMPTY_VCA_STAGE,
        "known_answers": known_answers, "passed": all(row["passed"] for row in known_answers), "models": {},
        "timings": {}, "versions": VERSIONS, "files": {}})

@pytest.mark.slow
def test_quick_demo_passes_its_known_answers(tmp_path: Path, no_network: None, versioned_outputs) -> None:
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--out", str(out), "--quick"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    for relative in summary["files"].values():
        assert (out / relative).is_file(), relative
    checks = summary["known_answers"]
    assert checks and all(row["passed"] for row in checks), [r for r in checks if not r["passed"]]
    assert all(set(row) == {"check", "expected", "observed", "passed"} for row in checks)
    encoders = summary["cycles"]["encoders"]
    assert set(encoders) == {"ref:scene-clip-spatial", "ref:scene-clip-bag"}
    for entry in encoders.values():
        assert {"additive", "zero-shot", "probe-rank-1", "probe-rank-64"} <= set(entry["scorers"])
        for scorer in entry["scorers"].values():
            for family, splits in scorer["families"].items():
                assert set(splits) == {"test"}, family
                assert {"n", "cycle_acc", "ci", "tie_rate"} <= set(splits["test"])
    # Proposition 1 on every family; the bag encoder's role swaps are exact ties (bag-of-words text tower)
    for entry in encoders.values():
        for splits in entry["scorers"]["additive"]["families"].values():
            assert splits["test"]["cycle_acc"] == 0.5 and splits["test"]["tie_rate"] == 1.0
    bag = encoders["ref:scene-clip-bag"]["scorers"]["zero-shot"]["families"]["coco-strict-left-right"]["test"]
    assert bag["tie_rate"] == 1.0
    assert {row["rank"] for row in summary["cycles"]["rank_sweep"]} == {1, 64}
    assert summary["timings"] and summary["versions"]["vlaudit"]
    # the report names every model for what it is: a planted calibration instrument is never a real model
    assert summary["models"]["ref:scene-vqa-mixture"].startswith("calibration instrument")
    assert "known-answer checks passed" in result.output
    # every run folder and built dataset carries the one manifest type with the arguments it was made with
    manifests = sorted(out.rglob("manifest.json"))
    assert manifests
    for path in manifests:
        data = json.loads(path.read_text())
        assert data["schema_version"] == 1 and data["arguments"], path
        assert data["command"] in ("vca score", "features", "data factorial"), path
    # every JSON the demo writes is a typed result (the scenes are COCO/GQA-format inputs, not results)
    versioned_outputs(out, {"summary.json": DemoSummary, "cycles/eval.json": DemoCycleEvaluation,
                            "cycles/*/audit.json": DemoCycleAudits, "*.meta.json": CycleBuildMeta,
                            "*/probe_notes.json": ProbeNotes, "vca/known_answers.json": DemoVcaKnownAnswers,
                            "synthetic/synthetic.json": SyntheticResult, "vca/*/vca.json": VcaReportResult,
                            "vca/*/factorial.json": FactorialResult, "vca/*/summary.json": ScoringSummary},
                      skip=("*/scenes/*",))


def _summary(left_right: float) -> DemoCycleStage:
    def cell(value: float, tie_rate: float = 0.0) -> dict:
        return {"test": {"n": 40, "cycle_acc": value, "ci": [value, value], "ties": int(40 * tie_rate),
                         "tie_rate": tie_rate, "per_seed": {"0": value}}}

    families = ("coco-object-coarse", "coco-strict-left-right")
    scorers = {"additive": {"families": {f: cell(0.5, 1.0) for f in families}},
               "zero-shot": {"families": {"coco-object-coarse": cell(0.95), "coco-strict-left-right": cell(0.5)}},
               "probe-rank-64": {"families": {"coco-strict-left-right": cell(left_right)}}}
    return record_from_dict(DemoCycleStage, EMPTY_CYCLE_STAGE | {
        "encoders": {spec: {"scorers": scorers} for spec in DemoConfig().encoders}}, path="<cycles>")


def test_cycle_checks_flag_a_missed_known_answer() -> None:
    config = DemoConfig()
    rows = {row.check: row.passed for row in cycle_checks(_summary(0.9), config)}
    # the bag encoder "recovering" left/right (0.9) is a failure; the spatial one at 0.9 passes
    assert rows["ref:scene-clip-spatial: coco-strict-left-right probe-rank-64 CycleAcc"] is True
    assert rows["ref:scene-clip-bag: coco-strict-left-right probe-rank-64 CycleAcc (left/right absent)"] is False
    rows = {row.check: row.passed for row in cycle_checks(_summary(0.55), config)}
    assert rows["ref:scene-clip-spatial: coco-strict-left-right probe-rank-64 CycleAcc"] is False
    assert all(rows[k] for k in rows if "spatial: coco-strict" not in k)


def test_demo_exits_non_zero_when_a_check_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    def fake_run_demo(out_dir, config, *, log, bars):  # type: ignore[no-untyped-def]
        return _fake_summary([{"check": "planted", "expected": ">= 1", "observed": 0, "passed": False}])

    monkeypatch.setattr(vlaudit, "run_demo", fake_run_demo)  # the facade name the command calls
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path), "--quick"])
    assert result.exit_code == 1
    assert "1 known-answer check(s) failed" in result.output


def test_demo_models_go_where_they_can_be_audited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vlaudit.backends.registry import UnknownBackendError

    seen = {}

    def fake_run_demo(out_dir, config, *, log, bars):  # type: ignore[no-untyped-def]
        seen["config"] = config
        return _fake_summary([])

    monkeypatch.setattr(vlaudit, "run_demo", fake_run_demo)  # the facade name the command calls
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "d"), "--quick", "--model", "hf:/some/dir",
                                      "--model", "open_clip:ViT-B-32"])
    assert result.exit_code == 0, result.output
    assert seen["config"].vca_models == ("hf:/some/dir",) and seen["config"].models == ("open_clip:ViT-B-32",)
    bad = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "e"), "--model", "nosuch:thing"])
    assert isinstance(bad.exception, UnknownBackendError)  # before any work: nothing written
    assert not (tmp_path / "e").exists()


@pytest.mark.slow
def test_a_users_yes_no_model_is_audited_in_the_vca_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from vlaudit.demo.vca import VcaStageConfig, run_vca_stage

    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    config = replace(VcaStageConfig.quick(), n_scenes=30, factorial_stems_per_relation=1, n_resamples=50,
                     extra_models=("ref:tiny-qwen2-vl",))
    result = run_vca_stage(tmp_path / "vca", config, log=lambda message: None)
    extra = [run for run in result.runs if run.model == "ref:tiny-qwen2-vl"]
    assert extra and {run.interface for run in extra} == {"yesno", "truefalse"}
    assert (tmp_path / "vca" / "tiny-qwen2-vl" / "report" / "vca.json").is_file()
    # the known answers are about the planted references only
    assert all("tiny-qwen2-vl" not in row.check for row in result.known_answers)


def test_vca_stage_gets_its_own_config_sized_like_the_demo() -> None:
    from dataclasses import replace

    from vlaudit.demo.pipeline import vca_stage_config
    from vlaudit.demo.vca import VcaStageConfig

    quick = DemoConfig.quick_config().with_seed(7)
    assert vca_stage_config(quick) == replace(VcaStageConfig.quick(), seed=7, n_resamples=quick.n_resamples)
    full = DemoConfig().with_seed(3)
    assert vca_stage_config(full) == replace(VcaStageConfig(), seed=3, n_resamples=full.n_resamples)


def test_run_demo_returns_the_typed_summary_it_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run_demo returns the versioned DemoSummary that summary.json holds (stages faked: the wiring, not the
    models, is under test here; the quick demo test runs them)."""
    import vlaudit.demo.pipeline as demo
    from vlaudit.results.cycles import SyntheticResult

    synthetic = SyntheticResult(seeds=[0], config={}, rows=[], checks={"planted": True}, checks_per_seed={})
    monkeypatch.setattr(demo, "run_synthetic", lambda *args, **kwargs: synthetic)
    cycles = record_from_dict(DemoCycleStage, EMPTY_CYCLE_STAGE | {"files": {"plot": "cycles/p.png"}}, path="<c>")
    monkeypatch.setattr(demo, "_cycle_stage", lambda *args: cycles)
    monkeypatch.setattr(demo, "cycle_checks", lambda cycles, config: [])
    monkeypatch.setattr(demo, "_vca_stage", lambda *args: DemoVcaKnownAnswers.from_dict(
        EMPTY_VCA_STAGE | {"known_answers": []}))
    monkeypatch.setattr(demo, "_report", lambda out: "report.html")
    summary = demo.run_demo(tmp_path, DemoConfig.quick_config(), log=lambda message: None)
    assert isinstance(summary, DemoSummary) and summary.schema_version == 1
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved == json.loads(json.dumps(summary.to_dict()))  # JSON turns the config's tuples into lists
    assert DemoSummary.from_dict(saved).to_dict() == saved
    assert summary.passed and summary.files["report"] == "report.html"
    assert [row.check for row in summary.known_answers] == ["synthetic control: planted"]
    assert summary.cycles.files == {"plot": "cycles/p.png"} and summary.vca.runs == []


@pytest.mark.usefixtures("reference_cache", "one_torch_thread")
def test_a_demo_scoring_run_records_the_spec_vca_score_records(tmp_path: Path, cli, toy_items) -> None:
    """The demo's VCA run folders carry the one manifest type with the run's spec under ``arguments`` (they
    recorded a hand-made dict before), so ``vca score`` with the same options resumes such a run."""
    from vlaudit.demo.vca import _score
    from vlaudit.results.manifest import RunManifest
    from vlaudit.sources.items import read_items

    items = toy_items(tmp_path / "bench")
    images, run = tmp_path / "bench" / "images", tmp_path / "run"
    _score("ref:tiny-qwen2-vl", read_items(items), images, run, ("original", "text", "blank"), ("yesno",), 1,
           tmp_path / "scenes")
    manifest = RunManifest.from_dict(json.loads((run / "manifest.json").read_text()))
    arguments = manifest.arguments
    assert manifest.schema_version == 1 and manifest.command == "vca score" == arguments["command"]
    assert arguments["seed"] == 1 and arguments["contexts"] == ["original", "text", "blank"]
    assert arguments["images"] == str(images.resolve()) and len(arguments["items_sha256"]) == 64
    margins = (run / "margins.parquet").read_bytes()
    code, _, err = cli("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", items, "--images", images,
                       "--out", run, "--seed", "1")
    assert code == 0, err  # the same spec: resumed from the cache, not refused
    assert (run / "margins.parquet").read_bytes() == margins


def test_a_demo_features_folder_records_the_spec_features_records(tmp_path: Path) -> None:
    """The demo embeds two cycles files (COCO and GQA) into one features folder: its manifest's arguments are
    what ``vlaudit features`` records, with both files and their fingerprints."""
    import hashlib

    from vlaudit.demo.cycles import features_arguments
    from vlaudit.scoring.run.spec import FeaturesSpec

    files = [tmp_path / "coco.jsonl", tmp_path / "gqa.jsonl"]
    for n, path in enumerate(files):
        path.write_text(f'{{"cycle_id": "c{n}"}}\n')
    arguments = features_arguments("ref:scene-clip-bag", files, tmp_path / "images", tmp_path / "features", 16)
    single = FeaturesSpec.of(model="ref:scene-clip-bag", cycles=files[0], images=tmp_path / "images",
                             out=tmp_path / "features", run=vlaudit.RunOptions(batch_size=16)).recorded()
    assert arguments["command"] == "features" and arguments["batch_size"] == 16
    assert arguments["cycles"] == [str(p.resolve()) for p in files]
    assert arguments["cycles_sha256"] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in files]
    assert {k: v for k, v in arguments.items() if not k.startswith("cycles")} == \
        {k: v for k, v in single.items() if not k.startswith("cycles")}
