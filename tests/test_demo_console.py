"""What `vlaudit demo` prints reads whole at 80 columns: one CycleAcc table, each known-answer check once and
in words (no raw dicts). The stages are faked: the printing, not the models, is tested (the full run is
tests/test_demo.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import vlaudit
from vlaudit.cli import app
from vlaudit.commands.demo import observed_text
from vlaudit.demo.pipeline import DemoConfig
from vlaudit.results.demo import DemoSummary
from vlaudit.results.missing import Missing
from vlaudit.results.versioned import to_json

FAMILIES = ("coco-box-relation", "coco-same-pair-relation", "coco-strict-above-below", "gqa-relation-object")
VERSIONS = {"vlaudit": "0", "python": "3", "numpy": "2", "torch": "2", "platform": "p", "commit": None}
# the demo's own known-answer rows, observed as the stages record them
CHECKS = [
    {"check": "grounded Acc on balanced statements (vsr-like)", "expected": ">= 0.75", "observed": 0.9133,
     "passed": True},
    {"check": "mixture D-CC = planted credited fraction (vsr-like)",
     "expected": "0.4133 inside 95% CI and |D-CC - planted| <= 0.02",
     "observed": {"dcc": 0.4133, "ci": [0.3333, 0.4867]}, "passed": True},
    {"check": "factorial: grounded responsive (mean Δ_V under the relation-free note > 0, 95% CI above 0; "
              "responsive share of correct agreement decisions >= 0.8)",
     "expected": "CI low > 0 and share >= 0.8",
     "observed": {"delta_v_mean": 9.6721, "ci": [8.2009, 11.2269], "responsive_share": 1.0}, "passed": True},
    {"check": "prior C-U - grounded C-U on prior-following statements", "expected": ">= 0.25",
     "observed": {"prior": 1.0, "grounded": 0.0, "difference": 1.0}, "passed": True},
]


def _cell(value: float) -> dict[str, Any]:
    return {"test": {"n": 40, "cycle_acc": value, "ci": [value, value], "ties": 0, "tie_rate": 0.0,
                     "per_seed": {"0": value}}}


def _summary() -> DemoSummary:
    scorers = {name: {"families": {f: _cell(value) for f in FAMILIES}}
               for name, value in (("additive", 0.5), ("zero-shot", 0.9958), ("probe-rank-64", 0.9381))}
    cycles = {"split": "test", "seeds": [0], "counts": {}, "rank_sweep": [], "files": {},
              "audit": {"max_abs_signed_degree": 0, "max_tv": 0.0, "violations": 0},
              "encoders": {spec: {"scorers": scorers} for spec in ("ref:scene-clip-spatial", "ref:scene-clip-bag")}}
    vca = {"runs": [], "planted_credited_fraction": {}, "factorial": [], "seconds": {}, "notes": []}
    return DemoSummary.from_dict({
        "config": to_json(dataclasses.asdict(DemoConfig())), "synthetic": {"checks": {}, "rows": []},
        "cycles": cycles, "vca": vca, "known_answers": CHECKS, "passed": True, "models": {}, "timings": {},
        "versions": VERSIONS, "files": {}})


def test_the_demo_prints_one_cycle_table_and_each_check_once_in_words(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vlaudit, "run_demo", lambda out_dir, config, *, log, bars: _summary())
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert not [line for line in lines if len(line) > 80]
    # one table: its header once, each (encoder, family) on one row with its three numbers
    assert sum(line.split()[:2] == ["encoder", "family"] for line in lines) == 1
    assert sum("scene-clip-spatial" in line for line in lines) == len(FAMILIES)
    row = next(line for line in lines if "scene-clip-bag" in line and "gqa-relation-object" in line)
    assert row.split()[2:] == ["0.5000", "0.9958", "0.9381"]
    assert "probe = probe-rank-64" in result.output
    said = " ".join(result.output.split())
    for check in CHECKS:  # each check once
        assert said.count(" ".join(str(check["check"]).split())) == 1, check["check"]
    assert "{'" not in result.output
    assert "D-CC 0.4133 [0.3333, 0.4867]" in said
    assert "mean Δ_V 9.6721 [8.2009, 11.2269], responsive share 1.0000" in said
    assert "prior 1.0000, grounded 0.0000, difference 1.0000" in said


def test_observed_values_read_as_numbers_and_intervals() -> None:
    assert observed_text(0.91333) == "0.9133"
    assert observed_text(True) == "True"
    assert observed_text([0.1, 0.25]) == "[0.1000, 0.2500]"
    assert observed_text({"acc": 1.0, "dcc": 1.0}) == "Acc 1.0000, D-CC 1.0000"
    assert observed_text({"dep": 0.0, "dcc": 0.0, "cu": 0.275}) == "Dep 0.0000, D-CC 0.0000, C-U 0.2750"
    assert observed_text(Missing("no items")) == str(Missing("no items"))
    assert observed_text(None) == "—"
