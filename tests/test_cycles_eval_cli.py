"""`vlaudit cycles eval` end to end on small files with hand-computed values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.files import write_jsonl, write_table
from vlaudit.results.cycles import CycleEvaluationResult
from vlaudit.sources.cycle_tables import read_cycles, read_scores

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
def test_cycles_eval_hand_computed(tmp_path: Path, scores_name: str, versioned_outputs) -> None:
    write_jsonl(tmp_path / "cycles.jsonl", CYCLES)
    write_table(tmp_path / scores_name, _scores())
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(tmp_path / "cycles.jsonl"),
                                 "--scores", str(tmp_path / scores_name), "--out", str(out), "--resamples", "300",
                                 "--min-cycles", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    a = data["families"]["A"]["unsplit"]
    assert a["n"] == 3
    assert a["cycle_acc"] == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert a["ties"] == 2 and a["tie_rate"] == pytest.approx(2 / 3)
    lo, hi = a["ci"]
    assert 0.0 <= lo <= a["cycle_acc"] <= hi <= 1.0
    assert data["families"]["B"] == {"unsplit": {"n": 1, "cycle_acc": 0.0, "ties": 0, "tie_rate": 0.0,
                                                 "ci": [0.0, 0.0], "unit": "cycle", "n_clusters": 1}}
    assert "overall" not in data and data["splits"] == ["unsplit"] and data["unavailable"] == {}
    assert "CycleAcc" in result.output and "unsplit" in result.output
    assert out.with_suffix(".png").read_bytes().startswith(b"\x89PNG")
    versioned_outputs(tmp_path, {"out.json": CycleEvaluationResult})


def test_tighter_tolerance_breaks_the_near_tie(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "cycles.jsonl", CYCLES)
    write_table(tmp_path / "scores.csv", _scores())
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(tmp_path / "cycles.jsonl"), "--scores",
                                 str(tmp_path / "scores.csv"), "--out", str(out), "--tol", "1e-10",
                                 "--min-cycles", "1"])
    assert result.exit_code == 0, result.output
    family = json.loads(out.read_text())["families"]["A"]["unsplit"]
    assert (family["ties"], family["cycle_acc"]) == (1, pytest.approx((1 + 0.5 + 1) / 3))


def test_missing_pair_names_block_and_pair(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "cycles.jsonl", CYCLES)
    write_table(tmp_path / "scores.csv", [r for r in _scores() if (r["image_id"], r["caption_id"]) != (3, 12)])
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(tmp_path / "cycles.jsonl"), "--scores",
                                 str(tmp_path / "scores.csv"), "--out", str(tmp_path / "o.json"),
                                 "--min-cycles", "1"])
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
    from vlaudit.files import read_table

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


# ------------------------------------------------------------------------------------- splits and the minimum


def _family(family: str, split: str, n: int, *, delta: float = 1.0, start: int = 0) -> tuple[list, list]:
    """``n`` cycles of one family and split with contrast exactly ``delta``, as table rows."""
    cycles, scores = [], []
    for k in range(start, start + n):
        u1, u2, v1, v2 = (f"{split}{k}-{x}" for x in ("u1", "u2", "v1", "v2"))
        cycles.append({"cycle_id": f"{family}/{split}/{k}", "family": family, "split": split, "image_1": u1,
                       "caption_1": v1, "image_2": u2, "caption_2": v2})
        scores += [{"image_id": u1, "caption_id": v1, "score": delta},
                   *({"image_id": u, "caption_id": v, "score": 0.0} for u, v in ((u2, v2), (u1, v2), (u2, v1)))]
    return cycles, scores


def _eval(tmp_path: Path, cycles: list, scores: list | None, *extra: str, scores_name: str = "scores.csv"):
    write_jsonl(tmp_path / "cycles.jsonl", cycles)
    if scores is not None:
        write_table(tmp_path / scores_name, scores)
    out = tmp_path / "eval.json"
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(tmp_path / "cycles.jsonl"), "--scores",
                                 str(tmp_path / scores_name), "--out", str(out), "--resamples", "50", *extra])
    return result, (json.loads(out.read_text()) if out.exists() else None)


def test_eval_reports_each_split_never_pooled(tmp_path: Path) -> None:
    train_c, train_s = _family("f", "train", 30, delta=1.0)
    test_c, test_s = _family("f", "test", 30, delta=0.0)
    result, data = _eval(tmp_path, train_c + test_c, train_s + test_s)
    assert result.exit_code == 0, result.output
    cells = data["families"]["f"]
    assert cells["train"]["cycle_acc"] == 1.0 and cells["test"]["cycle_acc"] == 0.5  # never 0.75
    assert cells["test"]["tie_rate"] == 1.0 and data["splits"] == ["train", "test"]
    assert "train" in result.output and "test" in result.output and "0.7500" not in result.output
    assert (tmp_path / "eval.png").read_bytes().startswith(b"\x89PNG")
    # --split restricts; a test-only scores file is enough for it
    result, data = _eval(tmp_path, train_c + test_c, test_s, "--split", "test")
    assert result.exit_code == 0, result.output
    assert data["splits"] == ["test"] and list(data["families"]["f"]) == ["test"]
    result, _ = _eval(tmp_path, train_c + test_c, test_s, "--split", "dev")
    assert isinstance(result.exception, InputError) and "['dev'] not in the cycles" in str(result.exception)


def test_eval_withdraws_a_family_short_in_validation(tmp_path: Path) -> None:
    cycles, scores = [], []
    for family, counts in (("binding", (120, 19, 60)), ("attribute", (30, 30, 30))):
        for split, n in zip(("train", "val", "test"), counts, strict=True):
            c, s = _family(family, split, n, start=1000 if family == "attribute" else 0)
            cycles += c
            scores += s
    result, data = _eval(tmp_path, cycles, scores)
    assert result.exit_code == 0, result.output
    assert list(data["families"]) == ["attribute"]
    assert data["unavailable"] == {"binding": {"train": 120, "val": 19, "test": 60}}
    assert "unavailable: binding" in result.output and "val 19" in result.output
    # the rule counts the validation split (§D.5) whether or not it is evaluated
    result, data = _eval(tmp_path, cycles, scores, "--split", "train", "--split", "test")
    assert set(data["families"]) == {"attribute"}
    assert data["unavailable"] == {"binding": {"train": 120, "test": 60, "val": 19}}
    # nothing left: an InputError (exit 2 through the entry point), the unavailable list on the console and
    # no eval.json that a later report would take for a result
    (tmp_path / "eval.json").unlink()
    result, data = _eval(tmp_path, cycles, scores, "--min-cycles", "200")
    assert "no family reached --min-cycles 200" in str(result.exception) and "nothing was written" in str(
        result.exception)
    assert "unavailable: attribute" in result.output and data is None


# ------------------------------------------------------------------------------------- precision and ids


def _additive(n: int = 40, seed: int = 3) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    cycles, scores = [], []
    for k in range(n):
        cycles.append({"cycle_id": f"c{k}", "family": "f", "split": "test", "image_1": f"u{2 * k}",
                       "caption_1": f"v{2 * k}", "image_2": f"u{2 * k + 1}", "caption_2": f"v{2 * k + 1}"})
    a, b = rng.normal(size=2 * n) * 3, rng.normal(size=2 * n) * 3
    for c in cycles:
        for u in (c["image_1"], c["image_2"]):
            for v in (c["caption_1"], c["caption_2"]):
                scores.append({"image_id": u, "caption_id": v, "score": float(a[int(u[1:])] + b[int(v[1:])])})
    return cycles, scores


def test_float64_scores_round_trip_every_writer_exactly(tmp_path: Path) -> None:
    cycles, scores = _additive()
    rng = np.random.default_rng(0)
    extreme = [5e-324, 1e308, 0.1 + 0.2, 1 / 3, -2.0 ** -1074, *(rng.normal(size=200) * 10.0 ** rng.integers(-20, 20,
                                                                                                           200))]
    rows = scores + [{"image_id": "x", "caption_id": f"e{k}", "score": float(x)} for k, x in enumerate(extreme)]
    for name in ("s.csv", "s.jsonl", "s.parquet"):
        write_table(tmp_path / name, rows)
        back = read_scores(tmp_path / name)
        assert all(back[(r["image_id"], r["caption_id"])] == r["score"] for r in rows), name
    # additive float64 scores through CSV: exactly ½, every cycle a tie, no precision warning
    result, data = _eval(tmp_path, cycles, scores, "--min-cycles", "1")
    assert result.exit_code == 0, result.output
    cell = data["families"]["f"]["test"]
    assert (cell["cycle_acc"], cell["tie_rate"]) == (0.5, 1.0)
    assert data["warnings"] == [] and "warning" not in result.output


def test_float32_scores_warn_naming_the_file(tmp_path: Path) -> None:
    import pyarrow as pa

    from vlaudit.files import write_parquet

    cycles, scores = _additive()
    table = pa.table({"image_id": [r["image_id"] for r in scores], "caption_id": [r["caption_id"] for r in scores],
                      "score": pa.array([r["score"] for r in scores], pa.float32())})
    write_parquet(tmp_path / "f32.parquet", table)
    result, data = _eval(tmp_path, cycles, None, "--min-cycles", "1", scores_name="f32.parquet")
    assert result.exit_code == 0, result.output
    cell = data["families"]["f"]["test"]
    assert cell["cycle_acc"] != 0.5 and cell["tie_rate"] < 1.0  # storage rounding broke the exact ties
    assert "f32.parquet" in data["warnings"][0] and "float32" in data["warnings"][0]
    assert "warning" in result.output and "less than float64 precision" in result.output
    # rounded to 6 decimals in a CSV: also reduced precision
    write_table(tmp_path / "r6.csv", [{**r, "score": round(r["score"], 6)} for r in scores])
    result, data = _eval(tmp_path, cycles, None, "--min-cycles", "1", scores_name="r6.csv")
    assert "r6.csv" in data["warnings"][0] and "significant decimal digits" in data["warnings"][0]


def test_zero_padded_ids_stay_text_in_every_format(tmp_path: Path) -> None:
    from vlaudit.files import read_records, read_table

    rows = [{"image_id": "0001", "caption_id": "0002", "score": 0.25, "cycle_id": "007", "image_1": "0003",
             "note": "01"}]
    for name in ("t.csv", "t.jsonl", "t.parquet"):
        write_table(tmp_path / name, rows)
        record = read_records(tmp_path / name)[0]
        assert (record["image_id"], record["caption_id"], record["cycle_id"], record["image_1"]) == (
            "0001", "0002", "007", "0003"), name
        assert record["score"] == 0.25
        assert read_table(tmp_path / name).column("image_id").to_pylist() == ["0001"]
    # integer ids written by other tools are read as their decimal text, in every format
    ints = [{"image_id": 139, "caption_id": 7, "score": 1.5}]
    for name in ("i.csv", "i.jsonl", "i.parquet"):
        write_table(tmp_path / name, ints)
        assert read_scores(tmp_path / name) == {("139", "7"): 1.5}, name


def test_zero_padded_ids_evaluate_from_csv(tmp_path: Path) -> None:
    cycles, scores = _family("f", "test", 3)
    ids = {}
    for c in cycles:
        for key in ("image_1", "image_2", "caption_1", "caption_2"):
            ids[c[key]] = c[key] = ids.get(c[key], f"{len(ids) + 1:04d}")
    scores = [{**r, "image_id": ids[r["image_id"]], "caption_id": ids[r["caption_id"]]} for r in scores]
    result, data = _eval(tmp_path, cycles, scores, "--min-cycles", "1")
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert data["families"]["f"]["test"]["cycle_acc"] == 1.0


@pytest.mark.parametrize("name", ["s.csv", "s.jsonl"])
def test_a_bad_score_is_reported_at_its_own_row(tmp_path: Path, name: str) -> None:
    rows = [{"image_id": f"u{k}", "caption_id": "v", "score": 0.5} for k in range(100)]
    rows[80]["score"] = "high"
    if name.endswith(".csv"):
        (tmp_path / name).write_text("image_id,caption_id,score\n" + "".join(
            f"{r['image_id']},{r['caption_id']},{r['score']}\n" for r in rows))
    else:
        write_jsonl(tmp_path / name, rows)
    with pytest.raises(InputError, match=r"record row 81, field 'score': score 'high' is not a finite number"):
        read_scores(tmp_path / name)


def test_only_numeric_ids_become_text(tmp_path: Path) -> None:
    from vlaudit.files import read_records

    rows = [{"item_id": 5, "vote_true_validator_id": [1, 2], "yes_token_id": 9454, "score": 3}]
    for name in ("t.jsonl", "t.parquet", "t.csv"):
        write_table(tmp_path / name, rows if name != "t.csv" else [{**rows[0], "vote_true_validator_id": None}])
        record = read_records(tmp_path / name)[0]
        assert record["item_id"] == "5" and record["score"] == 3 and record["yes_token_id"] == 9454, name
        if name != "t.csv":
            assert record["vote_true_validator_id"] == [1, 2]
