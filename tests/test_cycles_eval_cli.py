"""`vlaudit cycles eval` end to end on small files with hand-computed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.sources.cycle_tables import read_cycles, read_scores
from vlaudit.tables import write_jsonl, write_table

runner = CliRunner()

CYCLES = [
    # family A: one clear win (Δ = 2), one exact tie (Δ = 0), one near tie within tol (Δ = 5e-10)
    {"cycle_id": "a1", "family": "A", "image_1": 1, "caption_1": 11, "image_2": 2, "caption_2": 12, "note": "x"},
    {"cycle_id": "a2", "family": "A", "image_1": 3, "caption_1": 13, "image_2": 4, "caption_2": 14},
    {"cycle_id": "a3", "family": "A", "image_1": 5, "caption_1": 15, "image_2": 6, "caption_2": 16},
    # family B: one loss (Δ = −1)
    {"cycle_id": "b1", "family": "B", "image_1": 1, "caption_1": 12, "image_2": 3, "caption_2": 13},
]


def _scores() -> list[dict]:
    s = {
        (1, 11): 1.0, (2, 12): 1.0, (1, 12): 0.0, (2, 11): 0.0,  # a1: Δ = 2
        (3, 13): 0.5, (4, 14): 0.5, (3, 14): 0.5, (4, 13): 0.5,  # a2: Δ = 0
        (5, 15): 0.5 + 5e-10, (6, 16): 0.5, (5, 16): 0.5, (6, 15): 0.5,  # a3: Δ = 5e-10
        (3, 12): 1.0,  # b1: s(1,12) + s(3,13) − s(1,13) − s(3,12) = 0 + 0.5 − 0.5 − 1 = −1
        (1, 13): 0.5,
    }
    return [{"image_id": u, "caption_id": v, "score": x} for (u, v), x in s.items()]


@pytest.mark.parametrize("scores_name", ["scores.csv", "scores.jsonl", "scores.parquet"])
def test_cycles_eval_hand_computed(tmp_path: Path, scores_name: str) -> None:
    write_jsonl(tmp_path / "cycles.jsonl", CYCLES)
    write_table(tmp_path / scores_name, _scores())
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(tmp_path / "cycles.jsonl"),
                                 "--scores", str(tmp_path / scores_name), "--out", str(out), "--resamples", "300"])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["families"]["A"]["n"] == 3
    assert data["families"]["A"]["cycle_acc"] == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert data["families"]["A"]["ties"] == 2
    assert data["families"]["B"] == {"n": 1, "cycle_acc": 0.0, "ties": 0, "ci": [0.0, 0.0]}
    assert data["overall"]["cycle_acc"] == pytest.approx(2 / 4)
    lo, hi = data["overall"]["ci"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    assert "CycleAcc" in result.output
    assert out.with_suffix(".png").read_bytes().startswith(b"\x89PNG")


def test_tighter_tolerance_breaks_the_near_tie(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "cycles.jsonl", CYCLES)
    write_table(tmp_path / "scores.csv", _scores())
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(tmp_path / "cycles.jsonl"), "--scores",
                                 str(tmp_path / "scores.csv"), "--out", str(out), "--tol", "1e-10"])
    assert result.exit_code == 0, result.output
    family = json.loads(out.read_text())["families"]["A"]
    assert (family["ties"], family["cycle_acc"]) == (1, pytest.approx((1 + 0.5 + 1) / 3))


def test_missing_pair_names_block_and_pair(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "cycles.jsonl", CYCLES)
    write_table(tmp_path / "scores.csv", [r for r in _scores() if (r["image_id"], r["caption_id"]) != (3, 12)])
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(tmp_path / "cycles.jsonl"), "--scores",
                                 str(tmp_path / "scores.csv"), "--out", str(tmp_path / "o.json")])
    assert isinstance(result.exception, InputError)
    assert "cycle 'b1'" in str(result.exception) and "image_id='3', caption_id='12'" in str(result.exception)
    assert not (tmp_path / "o.json").exists()


def test_conflicting_duplicate_score_is_an_error(tmp_path: Path) -> None:
    write_table(tmp_path / "scores.csv", _scores() + [{"image_id": 1, "caption_id": 11, "score": 7.0}])
    with pytest.raises(InputError, match=r"scores.csv.*duplicated"):
        read_scores(tmp_path / "scores.csv")


def test_bad_cycles_rows_name_the_field(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "c.jsonl", [{**CYCLES[0], "caption_2": None}])
    with pytest.raises(InputError, match=r"c.jsonl, record row 1, field 'caption_2': missing"):
        read_cycles(tmp_path / "c.jsonl")
    write_jsonl(tmp_path / "d.jsonl", [CYCLES[0], CYCLES[0]])
    with pytest.raises(InputError, match="duplicate cycle_id"):
        read_cycles(tmp_path / "d.jsonl")
    write_jsonl(tmp_path / "e.jsonl", [{**CYCLES[0], "image_2": 1}])
    with pytest.raises(InputError, match="two different images"):
        read_cycles(tmp_path / "e.jsonl")


def test_extra_columns_are_carried(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "cycles.jsonl", CYCLES)
    assert read_cycles(tmp_path / "cycles.jsonl")[0].extra == {"note": "x"}


def test_tables_keep_columns_missing_from_the_first_row(tmp_path: Path) -> None:
    from vlaudit.tables import read_table

    rows = [{"a": 1}, {"a": 2, "b": "x"}]
    for name in ("t.parquet", "t.csv", "t.jsonl"):
        write_table(tmp_path / name, rows)
        table = read_table(tmp_path / name)
        assert table.column_names == ["a", "b"]
        assert table.column("b").to_pylist() == [None, "x"]


def test_non_finite_or_boolean_scores_are_errors(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("image_id,caption_id,score\n1,11,0.5\n1,12,inf\n")
    with pytest.raises(InputError, match=r"s.csv, record row 2, field 'score'.*not a finite number"):
        read_scores(tmp_path / "s.csv")
    write_jsonl(tmp_path / "b.jsonl", [{"image_id": 1, "caption_id": 11, "score": True}])
    with pytest.raises(InputError, match="not a finite number"):
        read_scores(tmp_path / "b.jsonl")


def test_bad_options_are_usage_errors(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "cycles.jsonl", CYCLES)
    write_table(tmp_path / "scores.csv", _scores())
    base = ["cycles", "eval", "--cycles", str(tmp_path / "cycles.jsonl"), "--scores", str(tmp_path / "scores.csv"),
            "--out", str(tmp_path / "o.json")]
    for extra in (["--tol", "-1"], ["--resamples", "0"]):
        result = runner.invoke(app, base + extra)
        assert result.exit_code == 2, result.output
    assert not (tmp_path / "o.json").exists()


def test_outputs_get_ordinary_permissions(tmp_path: Path) -> None:
    import os

    path = write_jsonl(tmp_path / "x.jsonl", [{"a": 1}])
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
