"""``vca report``'s CSV files keep numeric columns numeric: a value that is not
computable is an empty cell, and its reason is in the text column beside it."""

from __future__ import annotations

import csv
from pathlib import Path

from vca_fixtures import SUPPORT_LABELS, SUPPORT_MARGINS, rows_from_arrays

from vlaudit.analysis.vca.report import ReportSettings, compute_report
from vlaudit.report.vca_files import write_report_files
from vlaudit.results.cells import numeric_csv_rows
from vlaudit.results.missing import Missing
from vlaudit.sources.margins import runs_from_rows


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_numeric_csv_rows_move_the_reason_beside_its_column() -> None:
    rows = numeric_csv_rows([{"a": 1.0, "b": Missing("one class"), "c": 2}, {"a": Missing("no items"), "b": 0.5, "c": 3}])
    assert list(rows[0]) == ["a", "a_missing", "b", "b_missing", "c"]
    assert rows[0] == {"a": 1.0, "a_missing": None, "b": None, "b_missing": "one class", "c": 2}
    assert rows[1] == {"a": None, "a_missing": "no items", "b": 0.5, "b_missing": None, "c": 3}


def test_report_csv_columns_without_a_noise_floor_stay_numeric(tmp_path: Path) -> None:
    (run,) = runs_from_rows(rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS))
    report = compute_report([run], ReportSettings(n_resamples=50))
    write_report_files(tmp_path, report, plot=False)
    (row,) = _read(tmp_path / "headline.csv")
    for column in ("noise_tau", "n_decision_in_noise", "n_credit_in_noise", "acc_noise_lo", "dcc_noise_hi"):
        assert row[column] == "", column
    assert "not measured" in row["noise_missing"] and not row["noise_missing"].startswith("—")
    float(row["acc"]), float(row["acc_lo"])
    for name in ("headline.csv", "taxonomy.csv", "stratified.csv", "survival.csv"):
        for line in _read(tmp_path / name):
            for key, value in line.items():
                assert key.endswith("_missing") or not value.startswith("—"), (name, key, value)
