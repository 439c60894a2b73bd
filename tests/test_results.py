"""Typed, versioned results and one definition of each table's columns.

Every JSON result type round-trips through ``to_dict``/``from_dict`` and through its file; a bad or newer file
is refused with one line naming the field; every writer of a JSON result goes through a typed result; the
writers' and readers' columns are the ones :mod:`vlaudit.results.columns` defines; the docs' "Output schemas"
are generated from the dataclasses.
"""

from __future__ import annotations

import ast
import collections.abc
import dataclasses
import importlib.util
import json
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.errors import InputError
from vlaudit.files import read_json, write_parquet, write_result
from vlaudit.records import Cycle
from vlaudit.results import columns
from vlaudit.results.catalog import RESULT_TYPES, render_markdown
from vlaudit.results.cycles import CycleEvaluationResult, PairAuditResult
from vlaudit.results.versioned import (
    Interval,
    JsonValue,
    VersionedResult,
    declared_fields,
    json_key,
    record_from_dict,
    to_json,
)

REPO = Path(__file__).resolve().parents[1]
_SAMPLES: dict[Any, Any] = {str: "text", int: 3, float: 0.25, bool: True, Path: Path("p"), type(None): None}


def _sample(hint: Any) -> Any:
    """A value that fits a field's annotation down to its leaves (records built field by field)."""
    if hint is Any or hint == JsonValue:
        return {"any": None, "list": [1, "a"]}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        return _sample(next(a for a in args if a is not type(None)))
    if origin is typing.Literal:
        return args[0]
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        return hint(**{f.name: _sample(hints[f.name]) for f in dataclasses.fields(hint) if f.name != "extra"})
    if origin in (list, collections.abc.Sequence):
        return [_sample(args[0])] if args else ["a", 1]
    if origin is tuple:
        return tuple(_sample(a) for a in args if a is not Ellipsis)
    if origin in (dict, collections.abc.Mapping):
        return {"key": _sample(args[1])} if args else {"key": [1, 2]}
    return _SAMPLES[hint]


def _instance(cls: type[VersionedResult], **extra: Any) -> VersionedResult:
    hints = typing.get_type_hints(cls)
    return cls(**{name: _sample(hints[name]) for name in declared_fields(cls)}, extra=extra)


@pytest.mark.parametrize("cls", RESULT_TYPES, ids=lambda c: c.__name__)
def test_every_result_round_trips_through_its_file(cls: type[VersionedResult], tmp_path: Path) -> None:
    result = _instance(cls, note="an optional key is kept")
    data = result.to_dict()
    assert next(iter(data)) == "schema_version" and data["schema_version"] == cls.schema_version >= 1
    assert list(data)[1:] == [*declared_fields(cls), "note"]
    assert cls.from_dict(data) == result
    written = read_json(write_result(tmp_path / "out.json", result))
    assert written == data and cls.from_dict(written, path=tmp_path / "out.json") == result
    assert cls.file_name and cls.written_by and cls.__doc__


def test_a_file_without_a_version_reads_as_version_one() -> None:
    legacy = {"files": ["a.csv"], "weighting": "pair", "rows": [], "warnings": []}
    result = PairAuditResult.from_dict(legacy)
    assert result.schema_version == 1 and result.to_dict() == {"schema_version": 1, **legacy}


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"schema_version": 2}, "schema_version", "newer than this vlaudit reads"),
    ({"schema_version": True}, "schema_version", "positive integer"),
    ({"schema_version": "1"}, "schema_version", "positive integer"),
    ({"rows": {"not": "a list"}}, "rows", "expected a list, found an object"),
    ({"weighting": None}, "weighting", "expected str, found null"),
])
def test_bad_files_are_refused_naming_the_field(change: dict, field: str, message: str) -> None:
    data = {"schema_version": 1, "files": [], "weighting": "pair", "rows": [], "warnings": []} | change
    with pytest.raises(InputError) as caught:
        PairAuditResult.from_dict(data, path="audit_pairs.json")
    assert caught.value.field == field and message in str(caught.value) and "audit_pairs.json" in str(caught.value)


def test_a_missing_field_and_a_non_object_are_refused() -> None:
    with pytest.raises(InputError, match="missing field") as caught:
        PairAuditResult.from_dict({"files": [], "rows": [], "warnings": []})
    assert caught.value.field == "weighting"
    with pytest.raises(InputError, match="must be a JSON object"):
        PairAuditResult.from_dict([1, 2])


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=60, deadline=None)
@given(extra=st.dictionaries(st.text(min_size=1, max_size=8), _JSON, max_size=4))
def test_extra_keys_survive_and_declared_keys_win(extra: dict) -> None:
    result = CycleEvaluationResult(families={}, unavailable={}, splits=["test"], min_cycles=30, tol=1e-9,
                                   n_resamples=5000, seed=0, warnings=[], extra=extra)
    data = result.to_dict()
    assert data["splits"] == ["test"] and data["schema_version"] == 1  # an extra key never overrides
    again = CycleEvaluationResult.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == json.loads(json.dumps(data))


def test_every_json_writer_goes_through_a_typed_result() -> None:
    """``write_json`` is called directly only for run manifests and the reference models' configs (not results);
    every other JSON file is ``write_result(path, typed)``."""
    allowed = {"vlaudit/files.py", "vlaudit/api/results.py",  # write_result; write_manifest (one writer)
               "vlaudit/reference/scene_vqa_train.py", "vlaudit/reference/scene_vqa.py",
               "vlaudit/reference/scene_clip.py"}
    direct = set()
    for path in (REPO / "vlaudit").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "write_json":
                direct.add(path.relative_to(REPO).as_posix())
    assert direct <= allowed, sorted(direct - allowed)


# ---- one definition of each table's columns -------------------------------------------------------------


def test_margins_writer_and_reader_share_one_schema() -> None:
    from vlaudit.scoring.run import runner
    from vlaudit.sources import margins

    assert runner.margins_schema() == columns.MARGINS.arrow_schema()
    assert runner.MARGIN_COLUMNS == columns.MARGINS.names and len(runner.MARGIN_COLUMNS) == 39
    assert margins.KEY_COLUMNS == ("model", "dataset", "item_id", "context") == columns.MARGINS.required
    assert set(margins.SCHEMA_COLUMNS) <= set(columns.MARGINS.known)
    assert set(runner.GEOMETRY_COLUMNS) <= set(columns.MARGINS.names)


def test_a_margins_table_written_with_the_schema_reads_back(tmp_path: Path) -> None:
    """Known answer: the reader recovers each written margin and carries the written extra columns along."""
    from vlaudit.sources.margins import read_margins

    rows = []
    for item, (m_o, m_t) in {"a": (2.0, -1.0), "b": (-0.5, 0.25)}.items():
        for context, margin in (("original", m_o), ("text", m_t)):
            row = dict.fromkeys(columns.MARGINS.names)
            row.update(model="m", dataset="d", item_id=item, context=context, interface="yesno", margin=margin,
                       label="yes", status="ok", subject="cat", union_pct=12.5)
            rows.append(row)
    path = write_parquet(tmp_path / "margins.parquet", pa.Table.from_pylist(rows, schema=columns.MARGINS.arrow_schema()))
    assert tuple(pq.read_schema(path).names) == columns.MARGINS.names
    (run,) = read_margins(path)
    assert list(run.item_ids) == ["a", "b"]
    np.testing.assert_array_equal(run.margins["original"], [2.0, -0.5])
    np.testing.assert_array_equal(run.margins["text"], [-1.0, 0.25])


def test_cycles_writer_and_reader_share_one_schema(tmp_path: Path) -> None:
    from vlaudit.builders.cycles.build_steps import BASE_COLUMNS, new_row, write_rows_jsonl
    from vlaudit.sources.cycle_tables import CYCLE_COLUMNS, read_cycles

    assert BASE_COLUMNS == columns.CYCLES.names and CYCLE_COLUMNS == columns.CYCLES.required
    row = new_row("1", "11", "2", "12", "a cat left of a dog", "a dog left of a cat")
    assert tuple(row) == columns.CYCLES.names
    row.update(cycle_id="c1", family="left-right", split="test")
    write_rows_jsonl(tmp_path / "cycles.jsonl", [row])
    (cycle,) = read_cycles(tmp_path / "cycles.jsonl")
    assert cycle == Cycle("c1", "left-right", "1", "11", "2", "12", split="test")
    assert cycle.extra["text_1"] == "a cat left of a dog"


def test_scores_writers_and_reader_share_one_schema(tmp_path: Path) -> None:
    from vlaudit.api.cycles import features_from_arrays
    from vlaudit.files import write_table
    from vlaudit.scoring.features import cosine_rows
    from vlaudit.sources.cycle_tables import SCORE_COLUMNS, read_scores

    assert SCORE_COLUMNS == columns.SCORES.names == columns.SCORES.required
    feats = features_from_arrays(["1", "2"], np.eye(2), ["11", "12"], np.eye(2))
    rows = cosine_rows(feats, [Cycle("c", "f", "1", "11", "2", "12")])
    assert all(tuple(row) == columns.SCORES.names for row in rows)
    scores = read_scores(write_table(tmp_path / "scores.csv", rows))
    assert scores[("1", "11")] == pytest.approx(1.0) and scores[("1", "12")] == pytest.approx(0.0)


def test_items_writer_and_reader_share_one_schema(tmp_path: Path) -> None:
    from vlaudit.sources.items import ITEM_COLUMNS, BenchmarkItem, read_items, write_items

    assert ITEM_COLUMNS == columns.ITEMS.names
    assert {"item_id", "image", "question"} == set(columns.ITEMS.required)
    item = BenchmarkItem(item_id="q1", image="a.jpg", question="Is the cat left of the dog?", label="yes",
                         dataset="toy", extra={"note": "kept"})
    yes_no_columns = ITEM_COLUMNS[: ITEM_COLUMNS.index("options")]
    # a yes/no row has no multiple-choice columns at all (its file is what it was before they existed)
    assert tuple(item.to_row()) == (*yes_no_columns, "note")
    (again,) = read_items(write_items(tmp_path / "items.jsonl", [item]))
    assert again == item
    choice = BenchmarkItem(item_id="q2", image="b.jpg", question="Where is the cat?", label="B", dataset="toy",
                           options=("left", "right"), hint="a kitchen", category="spatial", cluster="b.jpg",
                           cluster_unit="image")
    assert tuple(choice.to_row()) == ITEM_COLUMNS
    for suffix in ("jsonl", "parquet"):
        (again,) = read_items(write_items(tmp_path / f"choice.{suffix}", [choice]))
        assert again == choice and again.letters == ("A", "B")


def test_a_multiple_choice_answer_outside_its_options_is_refused(tmp_path: Path) -> None:
    from vlaudit.errors import InputError
    from vlaudit.sources.items import read_items

    path = tmp_path / "items.jsonl"
    path.write_text('{"item_id": "q", "image": "a.jpg", "question": "?", "options": ["x", "y"], "label": "C"}\n')
    with pytest.raises(InputError, match=r"items.jsonl.*record 1.*label|not one of the options"):
        read_items(path)


def test_features_writer_and_reader_share_one_schema(tmp_path: Path) -> None:
    from vlaudit.scoring.features import _embedding_table, _read_embeddings

    matrix = np.arange(6, dtype=np.float32).reshape(2, 3)
    for schema in (columns.FEATURE_IMAGES, columns.FEATURE_TEXTS):
        path = write_parquet(tmp_path / "f.parquet", _embedding_table(schema, ["x", "y"], ["h1", "h2"], matrix))
        assert tuple(pq.read_schema(path).names) == schema.names
        ids, read = _read_embeddings(path, schema)
        assert ids == ["x", "y"] and np.array_equal(read, matrix)


# ---- the API and the docs --------------------------------------------------------------------------------


def test_api_results_carry_their_typed_record(tmp_path: Path) -> None:
    from vlaudit.api.cycles import evaluate_cycles

    cycles = [Cycle(f"c{i}", "f", f"u{i}", f"a{i}", f"v{i}", f"b{i}", split="test") for i in range(3)]
    scores = {(c.image_1, c.caption_1): 1.0 for c in cycles} | {(c.image_2, c.caption_2): 1.0 for c in cycles}
    scores |= {(c.image_1, c.caption_2): 0.0 for c in cycles} | {(c.image_2, c.caption_1): 0.0 for c in cycles}
    result = evaluate_cycles(cycles, scores, min_cycles=1, n_resamples=50)
    assert isinstance(result.result, CycleEvaluationResult) and result.schema_version == 1
    assert result.to_dict() == result.result.to_dict() and result.to_dict()["families"]["f"]["test"]["cycle_acc"] == 1.0
    assert result.benchmarks.schema_version == 1
    written = read_json(result.save(tmp_path)[0])
    assert CycleEvaluationResult.from_dict(written) == result.result


def test_output_schemas_are_generated_into_the_docs() -> None:
    text = render_markdown()
    for cls in RESULT_TYPES:
        assert f"`{cls.__name__}` (version {cls.schema_version})" in text
        assert all(f"| `{name}` |" in text for name in declared_fields(cls))
    for table in columns.TABLES:
        assert all(f"| `{name}` |" in text for name in table.known)
    spec = importlib.util.spec_from_file_location("docs_hook", REPO / "docs" / "hooks" / "cli_reference.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = (REPO / "docs" / "reference" / "schemas.md").read_text(encoding="utf-8")
    assert hook.SCHEMAS_MARKER in page
    assert text in hook.on_page_markdown(page, None, None, None)


def test_a_result_is_read_by_attribute_not_as_a_mapping() -> None:
    result = PairAuditResult(files=["a.csv"], weighting="pair", rows=[], warnings=[], extra={"note": "x"})
    assert (result.files, result.extra["note"], result.schema_version) == (["a.csv"], "x", 1)
    with pytest.raises(TypeError):
        result["files"]  # type: ignore[index]


@dataclasses.dataclass(frozen=True)
class _Interval:
    low: float
    high: float


@dataclasses.dataclass(frozen=True)
class _Rate:
    value: float | None
    n: int
    ci: _Interval | None = None
    reason: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Nested(VersionedResult):
    rates: list[_Rate]
    by_family: dict[str, _Rate]
    kind: typing.Literal["pair", "item"]
    ids: tuple[str, ...]


def test_nested_records_write_as_objects_and_read_back_to_the_leaves() -> None:
    result = _Nested(rates=[_Rate(0.5, 4, _Interval(0.25, 0.75)), _Rate(None, 0, reason="no blocks")],
                     by_family={"a": _Rate(float("nan"), 2)}, kind="pair", ids=("x", "y"))
    data = result.to_dict()
    assert data["rates"] == [{"value": 0.5, "n": 4, "ci": {"low": 0.25, "high": 0.75}, "reason": None},
                             {"value": None, "n": 0, "ci": None, "reason": "no blocks"}]
    assert data["by_family"] == {"a": {"value": None, "n": 2, "ci": None, "reason": None}}  # NaN is never written
    assert data["ids"] == ["x", "y"]
    again = _Nested.from_dict(json.loads(json.dumps(data)))
    assert again.rates == result.rates and again.ids == ("x", "y") and again.by_family["a"].value is None
    assert isinstance(again.rates[0].ci, _Interval)


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"rates": [{"value": "high", "n": 4}]}, "rates[0].value", "expected a number, found text"),
    ({"rates": [{"value": 0.5}]}, "rates[0].n", "missing field"),
    ({"by_family": {"a": {"value": 1, "n": 2, "ci": {"low": 0}}}}, "by_family.a.ci.high", "missing field"),
    ({"kind": "cluster"}, "kind", "expected one of 'pair' | 'item'"),
    ({"ids": "xy"}, "ids", "expected a list, found text"),
])
def test_a_bad_leaf_is_refused_naming_its_field_path(change: dict, field: str, message: str) -> None:
    data = {"rates": [], "by_family": {}, "kind": "pair", "ids": []} | change
    with pytest.raises(InputError) as caught:
        _Nested.from_dict(data, path="nested.json")
    assert caught.value.field == field and message in str(caught.value) and "nested.json" in str(caught.value)


def test_numpy_numbers_fit_number_fields_and_bools_do_not() -> None:
    base = {"families": {}, "unavailable": {}, "splits": [], "min_cycles": np.int64(30), "tol": np.float64(1e-9),
            "n_resamples": 5000, "seed": 0, "warnings": []}
    assert CycleEvaluationResult.from_dict(base).min_cycles == 30
    with pytest.raises(InputError, match="expected an integer, found a boolean"):
        CycleEvaluationResult.from_dict(base | {"seed": True})


def test_a_typed_result_nested_in_what_a_caller_writes_is_written_as_its_json(tmp_path: Path) -> None:
    from vlaudit.files import write_json
    from vlaudit.results.cycles import SyntheticResult

    record = SyntheticResult(seeds=[0], config={"n": 2}, rows=[], checks={"ok": True}, checks_per_seed={},
                             extra={"note": float("nan")})
    written = json.loads(write_json(tmp_path / "x.json", {"synthetic": record}).read_text())
    assert written == {"synthetic": {**record.to_dict(), "note": None}}  # NaN as null, as everywhere


@dataclasses.dataclass(frozen=True)
class _Gap:
    g_img: float = dataclasses.field(metadata=json_key("G_img"))


def test_a_field_may_name_a_json_key_that_is_not_a_python_name() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Gaps(VersionedResult):
        gaps: list[_Gap]

    data = Gaps(gaps=[_Gap(0.5)]).to_dict()
    assert data["gaps"] == [{"G_img": 0.5}] and Gaps.from_dict(data).gaps == [_Gap(0.5)]


@dataclasses.dataclass(frozen=True)
class _Difference:
    value: float | None
    ci: Interval | None


def test_an_interval_reads_back_as_its_two_ends_and_a_wrong_length_names_the_field() -> None:
    """``Interval`` fields (``[low, high]`` in the file) rebuild as a (low, high) tuple, each end checked."""
    data = {"value": 0.1, "ci": [-0.25, 0.5]}
    assert record_from_dict(_Difference, data, path="x.json") == _Difference(0.1, (-0.25, 0.5))
    assert to_json(_Difference(0.1, (-0.25, 0.5))) == data
    with pytest.raises(InputError, match=r"d\.ci.*expected 2 values"):
        record_from_dict(_Difference, {"value": 0.1, "ci": [0.0]}, path="x.json", name="d")
    with pytest.raises(InputError, match=r"d\.ci\[1\].*expected a number"):
        record_from_dict(_Difference, {"value": 0.1, "ci": [0.0, "high"]}, path="x.json", name="d")


def test_an_api_result_holds_flat_cells_and_imports_pandas_only_for_its_frame() -> None:
    """``Result.of`` keeps each row value a single cell (numpy numbers as Python numbers, NaN as None) and
    refuses a list, which belongs in two interval columns; ``with_interval`` adds them."""
    from vlaudit.api.results import Result, with_interval
    from vlaudit.results.demo import ProbeNotes

    record = ProbeNotes(notes=[])
    row = with_interval({"n": np.int64(3), "rate": np.float64("nan")}, "rate", (0.25, 0.75))
    result = Result.of(record, [row], title="t", interval_columns=("rate",))
    assert result.rows == [{"n": 3, "rate": None, "rate_lo": 0.25, "rate_hi": 0.75}]
    assert type(result.rows[0]["n"]) is int and result.data == record.to_dict()
    assert "0.2500" in result._repr_html_() and list(result.to_frame().columns) == ["n", "rate", "rate_lo", "rate_hi"]
    with pytest.raises(TypeError, match="'ci'.*with_interval"):
        Result.of(record, [{"ci": [0.1, 0.2]}])
