"""Bring-your-own pairs JSONL → cycles, and the ``vlaudit cycles build/audit`` command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pairs_files import pairs_rows
from typer.testing import CliRunner

from vlaudit.api.cycles import build_cycles
from vlaudit.builders.cycles import audit_cycles_file, build_jsonl_cycles
from vlaudit.builders.cycles.rules import RELATIONS
from vlaudit.errors import InputError
from vlaudit.results.cycles import CycleBuildMeta, CycleBuildSummary
from vlaudit.sources import pairs_jsonl


def write(tmp: Path, rows: list[dict]) -> Path:
    path = tmp / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_relation_vocabulary_matches_the_rules() -> None:
    assert pairs_jsonl.RELATIONS == RELATIONS


def test_pairs_build_and_audit(tmp_path: Path) -> None:
    path = write(tmp_path, pairs_rows())
    out = tmp_path / "c.jsonl"
    summary = build_jsonl_cycles(path, out, splits="test", min_cycles=1)
    rows = {r["family"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert summary["counts"]["pairs-relation"]["test"] == 1
    rel = rows["pairs-relation"]
    assert {rel["caption_1"], rel["caption_2"]} == {"a1", "b1"} and rel["relation_1"]["relation"] in RELATIONS
    assert rows["pairs-object"]["image_1"] in {"a", "b", "c"}
    audit = audit_cycles_file(out, [path])
    assert audit["validity_violations"] == 0 and audit["max_abs_signed_degree"] == 0



def test_the_api_returns_the_typed_build_summary_and_writes_typed_metadata(tmp_path: Path) -> None:
    summary = build_cycles("jsonl", out=tmp_path / "c.jsonl", pairs=write(tmp_path, pairs_rows()), splits="test",
                           min_cycles=1)
    assert isinstance(summary, CycleBuildSummary) and summary.cycles_written == 2
    assert summary.counts["pairs-relation"]["test"] == 1 and summary.splits == {"test": 1.0}
    meta = CycleBuildMeta.from_dict(json.loads(Path(summary.paths["meta"]).read_text()))
    assert meta.counts == summary.counts and meta.cycles_file == str(tmp_path / "c.jsonl")


@pytest.mark.parametrize(("mutate", "field", "record"), [
    (lambda r: r[0].pop("caption"), "caption", "line 1"),
    (lambda r: r[1]["triples"][0].__setitem__("relation", "inside"), "relation", "line 2, triples[0]"),
    (lambda r: r[0]["objects"][0].__setitem__("box", [90, 40, 20, 20]), "box", "line 1, objects[0]"),
    (lambda r: r[3].__setitem__("caption_id", "a1"), "caption_id", "line 4"),
    (lambda r: r[3].__setitem__("objects", [{"name": "dog"}]), "objects", "line 4"),
    (lambda r: r[2].pop("objects"), "objects", "image c"),
])
def test_bad_pairs(tmp_path: Path, mutate, field: str, record: str) -> None:
    rows = pairs_rows()
    mutate(rows)
    with pytest.raises(InputError) as info:
        pairs_jsonl.read_pairs_jsonl(write(tmp_path, rows))
    assert info.value.field == field and info.value.record == record


def test_cli_build_and_audit(tmp_path: Path, shared_data: Path) -> None:
    from vlaudit.commands import cycles_build  # noqa: F401  (registers the commands)
    from vlaudit.commands._apps import app

    ann = shared_data / "coco_val2017_sample" / "annotations"
    out = tmp_path / "cycles.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["cycles", "build", "coco", "--instances", str(ann / "instances_val2017_subset20.json"),
                                 "--captions", str(ann / "captions_val2017_subset20.json"), "--out", str(out),
                                 "--splits", "test", "--min-cycles", "3", "--margin-x", "0.1"])
    assert result.exit_code == 0, result.output
    assert "coco-object-coarse" in result.output and "< 3" in result.output and "Table 6" in result.output
    assert json.loads((tmp_path / "cycles.meta.json").read_text())["rules"]["margin_x"] == 0.1
    audit = tmp_path / "audit.json"
    result = runner.invoke(app, ["cycles", "audit", str(out), "--annotations", str(ann / "instances_val2017_subset20.json"),
                                 "--out", str(audit)])
    assert result.exit_code == 0, result.output
    assert json.loads(audit.read_text())["validity_violations"] == 0
    assert "Table 5" in result.output and "0 / 0 / 0" in result.output and "coco-object-coarse" in result.output
    # a tampered block: the audit prints the violation and exits non-zero
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    coarse = next(r for r in rows if r["family"] == "coco-object-coarse")
    coarse["text_2"] = coarse["text_1"]
    out.write_text(json.dumps(coarse) + "\n")
    result = runner.invoke(app, ["cycles", "audit", str(out), "--annotations", str(ann / "instances_val2017_subset20.json"),
                                 "--out", str(audit)])
    assert result.exit_code == 1 and json.loads(audit.read_text())["validity_violations"] == 1
    pairs = write(tmp_path, pairs_rows())
    result = runner.invoke(app, ["cycles", "build", "jsonl", "--pairs", str(pairs), "--out", str(tmp_path / "p.jsonl"),
                                 "--splits", "test", "--min-cycles", "1"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["cycles", "build", "gqa", "--scene-graphs", str(shared_data / "gqa" /
                                 "train_sceneGraphs_sample.json"), "--out", str(tmp_path / "g.jsonl")])
    # every family of the 14-image sample is below the default --min-cycles: the table still shows them all,
    # and the command fails rather than leave an empty cycles file for the next step to trip over
    assert "gqa-binding" in result.output and "no family reached" in str(result.exception)
    assert not (tmp_path / "g.jsonl").exists() and (tmp_path / "g.failed.json").exists()
