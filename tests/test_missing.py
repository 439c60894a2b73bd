"""A figure that cannot be computed carries its reason (:class:`vlaudit.results.missing.Missing`), and every
renderer prints that reason where the number would stand: the console, the CSV tables, the JSON and the HTML.

Planted case: ``vca validity`` with edit outcomes that have no ``pair_d`` column, so the Pair D increment
(VCA §15) is not computable, and a target with one outcome class.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from typer.testing import CliRunner
from vca_panel_fixtures import edit_rows, panel_rows

from vlaudit.cli import app
from vlaudit.files import write_table
from vlaudit.report.html_page import esc
from vlaudit.results.cells import csv_rows
from vlaudit.results.missing import DASH, Missing, is_missing, known, reason_of, shown, value_or
from vlaudit.results.vca.outputs import VcaValidityResult
from vlaudit.results.vca.validity import IncrementalRow
from vlaudit.results.versioned import UNRECORDED, to_json

PAIR_D = "the edit outcomes have no pair_d (or joint) column"


def test_missing_is_written_as_its_reason_and_read_back():
    gone = Missing("one cluster")
    assert to_json(gone) == {"missing": "one cluster"}
    assert str(gone) == shown(gone) == f"{DASH} (one cluster)" == "— (one cluster)"
    assert shown(0.25, "{:.2f}") == "0.25" and shown(None) == DASH
    assert known(float("nan"), "one class") == Missing("one class") and known(np.float64(0.5), "x") == 0.5
    assert value_or(gone, 0.0) == 0.0 and value_or(0.5, 0.0) == 0.5
    assert reason_of(gone) == "one cluster" and reason_of(0.5) is None
    assert is_missing(gone) and is_missing(None) and not is_missing(0.0)


def _pair_d_row(**figures):
    base = {"base_rate": 0.5, "baseline": 0.6, "augmented": 0.7, "delta": 0.1, "delta_lo": 0.0, "delta_hi": 0.2}
    return IncrementalRow("Pair D within Rel_o", "Flip+visibility", "Pair D", 3, 12, **(base | figures))


def test_an_older_files_null_reads_as_missing_saying_no_reason_was_recorded():
    row = to_json(_pair_d_row())
    row |= {"delta": None, "delta_lo": None, "delta_hi": None, "reason": "the target has one class"}
    data = {"schema_version": 1, "standalone": [], "incremental": [row], "shared_margin": [],
            "discordance": {"rows": [], "per_run": [], "n": 0, "n_high": 0, "n_low": 0, "split_rule": "",
                            "high_conf_uncredited_range": [0.0, 0.0]}}
    (read,) = VcaValidityResult.from_dict(data, path="validity.json").incremental
    assert read.delta == Missing(UNRECORDED) and read.baseline == 0.6


def test_a_csv_column_with_a_reason_keeps_the_reason_and_the_numbers():
    rows = csv_rows([_pair_d_row(delta=Missing("one class")), _pair_d_row()], dataset="gsr")
    assert list(rows[0])[:2] == ["dataset", "analysis"]
    assert [r["delta"] for r in rows] == ["— (one class)", "0.1"]
    assert [r["baseline"] for r in rows] == [0.6, 0.6]  # a column with no reason stays numeric


@pytest.fixture(scope="module")
def validity_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("validity")
    write_table(root / "m.csv", panel_rows(8))
    write_table(root / "edit_outcomes.csv", edit_rows(8))  # no pair_d column
    out = root / "val"
    result = CliRunner().invoke(app, ["vca", "validity", str(root / "m.csv"), "--edits",
                                      str(root / "edit_outcomes.csv"), "--out", str(out), "--resamples", "40",
                                      "--hl-resamples", "20", "--repeats", "1", "--no-plot"])
    assert result.exit_code == 0, result.output
    return out, " ".join(result.output.split())


def test_the_console_prints_the_reason_in_the_table(validity_run):
    _, said = validity_run
    assert f"— ({PAIR_D})" in said


def test_the_csv_prints_the_reason_in_the_cell(validity_run):
    out, _ = validity_run
    with (out / "incremental.csv").open(encoding="utf-8") as handle:
        (row,) = [r for r in csv.DictReader(handle) if r["analysis"] == "Pair D within Rel_o"]
    assert row["delta"] == row["baseline"] == f"— ({PAIR_D})"


def test_the_json_holds_the_reason(validity_run):
    out, _ = validity_run
    data = json.loads((out / "validity.json").read_text(encoding="utf-8"))
    (row,) = [r for r in data["incremental"] if r["analysis"] == "Pair D within Rel_o"]
    assert row["delta"] == {"missing": PAIR_D}
    read = VcaValidityResult.from_dict(data).incremental
    assert [r.delta for r in read if r.analysis == "Pair D within Rel_o"] == [Missing(PAIR_D)]


def test_the_html_prints_the_reason():
    assert esc(Missing("one cluster <of 1>")) == "— (one cluster &lt;of 1&gt;)"


def test_the_report_prints_why_a_table_11_figure_is_missing(capsys, monkeypatch):
    """A benchmark whose items have RelE geometry but no IrrE view: the IrrE cells of VCA Table 11 say so in
    the console, the CSV row and the HTML report."""
    from vca_fixtures import SUPPORT_LABELS, SUPPORT_MARGINS, rows_from_arrays

    from vlaudit.analysis.vca.events import ReportSettings
    from vlaudit.analysis.vca.report import run_events, summarize_run
    from vlaudit.commands._render import show
    from vlaudit.report.html_data import VcaRun
    from vlaudit.report.html_sections import erasure_geometry_table
    from vlaudit.report.vca_console import geometry_view
    from vlaudit.report.vca_files import geometry_rows
    from vlaudit.sources.margins import runs_from_rows

    monkeypatch.setenv("COLUMNS", "120")
    rows = rows_from_arrays({**SUPPORT_MARGINS, "rele": [0.1] * 7}, labels=SUPPORT_LABELS)
    geometry = {"union_pct": 12.5, "rele_erased_pct": 10.0, "irre_erased_pct": None, "irre_erased_in_union_pct": None}
    (run,) = runs_from_rows([r | geometry for r in rows])
    audit = summarize_run(run_events(run), ReportSettings(n_resamples=20))
    assert audit.erasure_geometry.irre_erased_pct == Missing("no IrrE view")
    show(geometry_view([audit]))
    assert "— (no IrrE view)" in capsys.readouterr().out
    (row,) = csv_rows(geometry_rows([audit]))
    assert row["irre_zero_overlap_pct"] == "— (no IrrE view)" and row["rele_erased_pct"] == 10.0
    assert "— (no IrrE view)" in erasure_geometry_table([VcaRun.of(audit, "vca.json")])
