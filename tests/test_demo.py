"""`vlaudit demo --quick`: the whole offline audit end to end (the reference models are built offline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vlaudit.cli import app


@pytest.mark.slow
def test_demo_runs_offline_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: None) -> None:
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--out", str(out), "--quick"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    for relative in summary["files"].values():
        assert (out / relative).is_file(), relative
    # Proposition 1: the additive image-only + text-only scorer is exactly at chance on every family.
    additive = {name: fams for name, fams in summary["cycles"]["cycle_acc"].items() if "additive" in name}
    assert additive and all(v == 0.5 for fams in additive.values() for v in fams.values())
    assert summary["cycles"]["audit_max_abs_signed_degree"] == 0
    assert {run["interface"] for run in summary["vca"]} == {"yesno", "truefalse"}
    assert summary["factorial"] and summary["synthetic"]["rows"]
    assert "Demo finished" in result.output
