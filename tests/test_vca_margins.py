"""The MARGINS reader: formats, margin normalisation, labels, and every validation error."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from vca_fixtures import (
    RELATION_GROUPS,
    RELATION_ITEMS,
    RELATION_MARGINS,
    RELATION_STATEMENTS,
    SUPPORT_LABELS,
    SUPPORT_MARGINS,
    rows_from_arrays,
)

from vlaudit.errors import InputError
from vlaudit.files import write_table
from vlaudit.sources.margins import missing_items, read_margins, require_contexts, runs_from_rows


def _write(tmp_path, rows, suffix):
    path = tmp_path / f"margins{suffix}"
    write_table(path, rows)
    return path


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
@pytest.mark.parametrize("margin_field", ["margin", "nll", "logp"])
def test_formats_and_margin_sources(tmp_path, suffix, margin_field) -> None:
    rows = rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS, margin_field=margin_field)
    (run,) = read_margins(_write(tmp_path, rows, suffix))
    assert run.key == ("m", "d", "yesno")
    assert run.item_ids.tolist() == [f"i{k}" for k in range(7)]
    assert run.contexts == ("original", "text", "blank", "mismatch")
    for context, values in SUPPORT_MARGINS.items():
        assert run.margins[context].dtype == np.float64
        np.testing.assert_allclose(run.margins[context], values, atol=1e-12)
    assert run.labels.tolist() == [lab == "yes" for lab in SUPPORT_LABELS]


def test_scoring_runner_parquet(tmp_path) -> None:
    """The columns the scoring runner writes, with typed nulls, booleans and extra columns."""
    rows = rows_from_arrays(RELATION_MARGINS, item_ids=RELATION_ITEMS, group_ids=RELATION_GROUPS,
                            statements=RELATION_STATEMENTS, interface="yesno", labels=[1, 0, 0, 1, 0, 1],
                            margin_field="nll")
    for row in rows:
        row["margin"] = row["nll_no"] - row["nll_yes"]
        row["relation"] = "left of"
        row["statement"] = None if row["statement"] is None else row["statement"] == "true"
        row["prompt"] = f"Is it {row['item_id']}?"
        row["seconds"] = 0.25
    table = pa.Table.from_pylist(rows)
    assert table.schema.field("statement").type == pa.bool_()
    pq.write_table(table, tmp_path / "margins.parquet")
    (run,) = read_margins(tmp_path / "margins.parquet")
    assert run.group_ids.tolist() == RELATION_GROUPS
    assert run.statements[:5].tolist() == [True, False, False, True, False]
    assert run.labels.tolist() == [True, False, False, True, False, True]
    assert run.relations.tolist() == ["left of"] * 6
    assert run.extra["prompt"][0] == "Is it a?"
    assert run.has_groups


def test_runs_split_and_sorted_rows() -> None:
    rows = (rows_from_arrays(SUPPORT_MARGINS, model="b", interface="true/false")
            + rows_from_arrays(SUPPORT_MARGINS, model="b")
            + rows_from_arrays(SUPPORT_MARGINS, model="a", dataset="x"))
    runs = runs_from_rows(rows[::-1])
    assert [r.key for r in runs] == [("a", "x", "yesno"), ("b", "d", "yesno"), ("b", "d", "truefalse")]
    assert all(r.labels is None and not r.has_groups for r in runs)


def test_labels_accept_variants() -> None:
    rows = rows_from_arrays({"original": [1.0] * 6, "text": [0.0] * 6},
                            labels=["Yes", "no", "TRUE", "false", 1, 0])
    (run,) = runs_from_rows(rows)
    assert run.labels.tolist() == [True, False, True, False, True, False]


def _error(rows, match, path="x.jsonl"):
    with pytest.raises(InputError, match=match) as info:
        runs_from_rows(rows, path=path)
    return info.value


def test_duplicate_row() -> None:
    rows = rows_from_arrays(SUPPORT_MARGINS)
    rows.append(dict(rows[3]))
    err = _error(rows, r"duplicate .*first at row 4")
    assert err.path == "x.jsonl" and err.record == f"row {len(rows)}" and err.field == "item_id"


def test_item_without_original() -> None:
    rows = [r for r in rows_from_arrays(SUPPORT_MARGINS) if not (r["item_id"] == "i2" and r["context"] == "original")]
    err = _error(rows, r"item 'i2' .* has no 'original' row")
    assert err.field == "context"


def test_context_missing_for_some_items_is_kept_as_nan_and_named() -> None:
    """A partly scored context is legitimate (the report uses the items that have it), never a read error."""
    rows = [r for r in rows_from_arrays(SUPPORT_MARGINS)
            if not (r["context"] == "blank" and r["item_id"] in ("i1", "i5"))]
    (run,) = runs_from_rows(rows, path="x.jsonl")
    assert run.contexts == ("original", "text", "blank", "mismatch")
    assert run.available("blank").tolist() == [True, False, True, True, True, False, True]
    assert np.isnan(run.margins["blank"][[1, 5]]).all() and not np.isnan(run.margins["text"]).any()
    assert missing_items(run, "blank") == ["i1", "i5"]
    assert run.subset(run.available("blank")).item_ids.tolist() == ["i0", "i2", "i3", "i4", "i6"]
    with pytest.raises(InputError, match=r"context 'blank' is missing for 2 of 7 items .*'i1', 'i5'") as info:
        require_contexts(run, ("original", "blank"))
    assert info.value.field == "context" and info.value.path == "x.jsonl"
    require_contexts(run, ("blank",), np.array([0, 2]))  # the items an analysis uses all have it


def test_failed_scoring_rows_are_skipped_and_named() -> None:
    rows = rows_from_arrays(SUPPORT_MARGINS)
    for row in rows:
        row["status"] = "ok"
    failed = next(k for k, r in enumerate(rows, start=1) if r["item_id"] == "i3" and r["context"] == "text")
    rows[failed - 1]["status"] = "error"
    (run,) = runs_from_rows(rows, path="x.jsonl")
    with pytest.raises(InputError, match=rf"context 'text' is missing for 1 of 7 items .*'i3' \(1 row\(s\) with a "
                                         rf"status other than 'ok' were skipped, first row {failed}\)"):
        require_contexts(run, ("text",))


@pytest.mark.parametrize(("statements", "match"), [
    ([True, True, False, True, False, None], r"group 'G1' .* 2 true statements .*'a', 'b'"),
    ([False, False, False, True, False, None], r"group 'G1' .* 0 true statements"),
    ([True, False, False, True, True, None], r"group 'G2' .* 2 true"),
])
def test_group_without_exactly_one_true(statements, match) -> None:
    rows = rows_from_arrays(RELATION_MARGINS, item_ids=RELATION_ITEMS, group_ids=RELATION_GROUPS,
                            statements=statements)
    err = _error(rows, match)
    assert err.field == "statement"


def test_group_without_false_or_statement() -> None:
    groups = ["G1", "G1", "G1", "G2", "G3", None]
    _error(rows_from_arrays(RELATION_MARGINS, item_ids=RELATION_ITEMS, group_ids=groups,
                            statements=[True, False, False, True, True, None]), r"group 'G2' .* no false")
    _error(rows_from_arrays(RELATION_MARGINS, item_ids=RELATION_ITEMS, group_ids=RELATION_GROUPS,
                            statements=[True, None, False, True, False, None]), r"item 'b' .* no statement")


def test_unparsable_label() -> None:
    labels = list(SUPPORT_LABELS)
    labels[2] = "maybe"
    err = _error(rows_from_arrays(SUPPORT_MARGINS, labels=labels), "unparsable label 'maybe'")
    assert err.field == "label" and err.record == "row 3"


def test_partial_or_conflicting_labels() -> None:
    rows = rows_from_arrays(SUPPORT_MARGINS, labels=[None, "no", "no", "yes", "yes", "yes", "no"])
    _error(rows, r"label is missing for 1 of 7 items .*'i0'")
    rows = rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS)
    rows[-1]["label"] = "yes"
    err = _error(rows, "label 'yes' disagrees")
    assert err.field == "label"


@pytest.mark.parametrize(("change", "field", "match"), [
    ({"margin": float("inf")}, "margin", "non-finite"),
    ({"margin": "abc"}, "margin", "not a number"),
    ({"margin": None}, "margin", "no margin"),
    ({"margin": 5.0, "nll_yes": 1.0, "nll_no": 1.5}, "margin", "disagrees with nll_no"),
    ({"context": "sideways"}, "context", "unknown context"),
    ({"interface": "multiple choice"}, "interface", "unknown interface"),
    ({"item_id": None}, "item_id", "missing required field"),
])
def test_bad_fields(change, field, match) -> None:
    rows = rows_from_arrays(SUPPORT_MARGINS)
    rows[4].update(change)
    err = _error(rows, match)
    assert err.field == field and err.record == "row 5"


def test_margin_and_nll_agreeing_is_accepted() -> None:
    rows = rows_from_arrays(SUPPORT_MARGINS, margin_field="nll")
    for row in rows:
        row["margin"] = row["nll_no"] - row["nll_yes"] + 1e-7
    (run,) = runs_from_rows(rows)
    assert run.margins["original"][0] == pytest.approx(2.0)


def test_file_errors(tmp_path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"model": "m", "dataset": "d", "item_id": "1", "margin": 1.0}) + "\n")
    with pytest.raises(InputError, match="context"):
        read_margins(path)
    with pytest.raises(InputError, match="not found"):
        read_margins(tmp_path / "absent.parquet")


def test_reads_the_scoring_runner_schema(tmp_path) -> None:
    """A margins.parquet in exactly the runner's schema (strings, float64 NLLs, status), incl. a failed row."""
    from vlaudit.scoring.run.runner import MARGIN_COLUMNS, margins_schema

    rows = []
    for row in rows_from_arrays(RELATION_MARGINS, item_ids=RELATION_ITEMS, group_ids=RELATION_GROUPS,
                                statements=RELATION_STATEMENTS, interface="yesno",
                                labels=["yes", "no", "no", "yes", "no", None], margin_field="nll"):
        row["margin"] = row["nll_no"] - row["nll_yes"]
        row["dataset"] = ""
        row["status"] = "ok"
        rows.append({name: row.get(name) for name in MARGIN_COLUMNS})
    rows[-1]["label"] = "yes"  # item f: its label sits on one row only
    failed = dict(rows[0], context="mismatch", nll_yes=None, nll_no=None, margin=None, status="failed")
    table = pa.Table.from_pylist(rows + [failed], schema=margins_schema())
    pq.write_table(table, tmp_path / "margins.parquet")
    (run,) = read_margins(tmp_path / "margins.parquet")
    assert run.key == ("m", "margins", "yesno")
    assert run.contexts == ("original", "text", "blank")
    assert run.labels.tolist() == [True, False, False, True, False, True]
    np.testing.assert_allclose(run.margins["original"], RELATION_MARGINS["original"])
