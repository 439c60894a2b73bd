"""The VCA report's typed records: what ``vca_report`` returns is what ``vca.json`` holds, read back to the
leaves; a value that is not computable is None (never NaN), and a file written before reads the same."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from vca_fixtures import SUPPORT_LABELS, SUPPORT_MARGINS, rows_from_arrays

import vlaudit
from vlaudit.errors import InputError
from vlaudit.results.vca.audit import PermutationAxis, RunAudit
from vlaudit.results.vca.outputs import VcaReportResult


def _walk(value: object) -> list[object]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _walk(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _walk(v)]
    return [value]


def test_the_saved_report_reads_back_as_the_returned_records(tmp_path: Path) -> None:
    result = vlaudit.vca_report(rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS), n_resamples=30)
    (run,) = result.audit.runs
    assert isinstance(run, RunAudit) and isinstance(run.perm, PermutationAxis)
    # known answer: m_o ≥ 0 answers yes, no, yes, yes, no, no, yes against yes, no, no, yes, yes, yes, no
    assert run.acc == pytest.approx(3 / 7) and run.dcc is not None and run.cu is not None
    assert run.dcc + run.cu == pytest.approx(run.acc)
    assert run.ci.acc is not None and run.ci.acc[0] <= run.acc <= run.ci.acc[1]
    result.save(tmp_path)
    written = json.loads((tmp_path / "vca.json").read_text())
    assert VcaReportResult.from_dict(written, path=tmp_path / "vca.json") == result.audit
    assert written == result.audit.to_dict() == result.data
    assert not any(isinstance(leaf, float) and math.isnan(leaf) for leaf in _walk(written))


def test_an_unlabelled_run_has_no_rates_to_credit_and_says_so_with_none() -> None:
    (run,) = vlaudit.vca_report(rows_from_arrays(SUPPORT_MARGINS), n_resamples=20).audit.runs
    assert (run.labelled, run.acc, run.dcc, run.cu) == (False, None, None, None)
    assert run.ci.acc is None and run.ci.dep is not None  # Dep needs no label
    assert run.taxonomy.credited_precision is None and run.taxonomy.wilson_credited_precision is None
    assert run.relation is None  # no relation groups


def test_a_report_written_before_reads_an_absent_axis_and_an_empty_interval_as_none(tmp_path: Path) -> None:
    data = vlaudit.vca_report(rows_from_arrays(SUPPORT_MARGINS), n_resamples=20).audit.to_dict()
    (run,) = data["runs"]
    del run["relation"]
    run["ci"]["acc"] = [None, None]
    again = VcaReportResult.from_dict(data, path="old/vca.json")
    assert again.runs[0].relation is None and again.runs[0].ci.acc is None


def test_a_bad_leaf_names_its_field_path() -> None:
    data = vlaudit.vca_report(rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS), n_resamples=20).data
    data["runs"][0]["perm"]["n"] = "seven"
    with pytest.raises(InputError, match=r"runs\[0\]\.perm\.n"):
        VcaReportResult.from_dict(data, path="vca.json")
