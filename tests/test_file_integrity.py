"""Files that are not what they claim: a result or run folder from a later vlaudit (a future ``schema_version``),
a hand-edited CycleAcc that is not a number, a damaged reference model in the cache. Each is refused with one
line naming the file and field, left out of the report with a one-line warning, or moved aside and rebuilt —
never read as if it were current and whole."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest


def _eval(folder: Path, *, version: object = 1, cycle_acc: object = 0.5, ci: object = (0.4, 0.6)) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "eval.json").write_text(json.dumps({
        "schema_version": version, "tol": 1e-9,
        "families": {"f": {"test": {"n": 5, "cycle_acc": cycle_acc, "ci": ci, "ties": 0}}}}))
    return folder


def test_a_future_eval_is_left_out_of_the_report_with_one_warning(cli, tmp_path) -> None:
    _eval(tmp_path / "run" / "old")
    _eval(tmp_path / "run" / "new", version=99, cycle_acc=0.91)
    code, out, err = cli("report", tmp_path / "run")
    assert code == 0 and "Traceback" not in err, err
    assert err.strip().splitlines() == [
        f"warning: {tmp_path / 'run' / 'new' / 'eval.json'}, field 'schema_version': schema_version 99 is newer "
        "than this vlaudit reads for a cycles evaluation (1); upgrade vlaudit; left out of the report"]
    html = (tmp_path / "run" / "report.html").read_text()
    assert "0.91" not in html and "91.0" not in html and "newer than this vlaudit reads" in html


@pytest.mark.parametrize(("cycle_acc", "ci"), [("0.9x", (0.4, 0.6)), (float("nan"), (0.1, "high")), (None, None),
                                                ([0.5], [0.4]), ({"v": 1}, (0.4, 0.6, 0.7))])
def test_a_cycle_acc_that_is_not_a_number_is_not_shown_as_one(cycle_acc, ci, tmp_path) -> None:
    from vlaudit.report.html_data import cycle_cells
    from vlaudit.report.html_discover import discover

    path = _eval(tmp_path / "run", cycle_acc=cycle_acc, ci=ci) / "eval.json"
    path.write_text(path.read_text().replace("NaN", '"NaN"'))
    (cell,) = cycle_cells(discover(tmp_path / "run"))
    assert cell["cycle_acc"] is None and (cell["ci"] is None or all(isinstance(b, float) for b in cell["ci"]))


@pytest.mark.parametrize("version", [99, "1", 0, True, -3, 1.5])
def test_a_result_read_back_checks_its_version(version, tmp_path) -> None:
    from vlaudit.errors import InputError
    from vlaudit.results.cycles import CycleEvaluationResult

    with pytest.raises(InputError, match=r"eval.json, field 'schema_version'"):
        CycleEvaluationResult.from_dict({"schema_version": version}, path=tmp_path / "eval.json")


def test_a_run_folder_from_a_later_vlaudit_is_refused_before_scoring(cli, toy_items, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    toy_items(tmp_path / "bench")
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"schema_version": 5, "command": "vca score", "arguments": {}}))
    code, out, err = cli("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", tmp_path / "bench" / "items.jsonl",
                         "--images", tmp_path / "bench" / "images", "--out", run)
    assert code == 2 and err.strip().splitlines() == [
        f"error: {run / 'manifest.json'}, field 'schema_version': schema_version 5 is newer than this vlaudit reads "
        "for a run manifest (1); upgrade vlaudit"], err
    assert not (tmp_path / "cache").exists() and sorted(p.name for p in run.iterdir()) == ["manifest.json"]


@pytest.mark.parametrize("damage", ["truncated", "one byte changed", "deleted"])
def test_a_damaged_reference_model_is_moved_aside_and_rebuilt(damage, tmp_path, monkeypatch) -> None:
    from vlaudit.reference.models import reference_dir

    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path))
    folder = reference_dir("tiny-clip")
    (weights,) = folder.glob("*.safetensors")
    good = weights.read_bytes()
    if damage == "truncated":
        weights.write_bytes(good[: len(good) // 2])
    elif damage == "one byte changed":
        weights.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    else:
        weights.unlink()
    with pytest.warns(UserWarning, match=rf"reference model tiny-clip in the cache is damaged \({weights.name} "):
        again = reference_dir("tiny-clip")
    assert again == folder and weights.read_bytes() == good  # rebuilt, seeded: the same bytes
    (aside,) = (tmp_path / "ref" / "damaged").iterdir()
    assert aside.name.startswith(folder.name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert reference_dir("tiny-clip") == folder  # whole again: no warning


@pytest.mark.parametrize("content", [b"not a checkpoint\n", *(pytest.param(c, marks=pytest.mark.slow) for c in (
    b"", b"PK\x03\x04" + bytes(60), "empty state dict"))])  # each builds an RN50: one case is enough by default
def test_an_open_clip_checkpoint_that_is_not_one_is_one_line(content, cli, tmp_path, toy_items, monkeypatch) -> None:
    import torch

    toy_items(tmp_path / "bench")
    checkpoint = tmp_path / "weights.pt"
    if isinstance(content, bytes):
        checkpoint.write_bytes(content)
    else:
        torch.save({}, checkpoint)
    (tmp_path / "cycles.jsonl").write_text(json.dumps(
        {"cycle_id": "c", "family": "toy", "image_1": "img0.png", "image_2": "img1.png", "caption_1": "a",
         "caption_2": "b", "text_1": "a cat", "text_2": "a dog"}) + "\n")
    code, out, err = cli("features", "--model", f"open_clip:RN50/{checkpoint}", "--cycles", tmp_path / "cycles.jsonl",
                         "--images", tmp_path / "bench" / "images", "--out", tmp_path / "feats")
    assert code == 2 and "Traceback" not in err, err
    (line,) = err.strip().splitlines()
    assert "is not a checkpoint open_clip can load into RN50" in line and str(checkpoint) in line, line
    assert not (tmp_path / "feats").exists()


@pytest.fixture(scope="module")
def two_feature_folders(tmp_path_factory, toy_items) -> Path:
    """Features of the same cycles from two reference models (tiny-open-clip and tiny-clip)."""
    import os

    from vlaudit.cli import main

    root = tmp_path_factory.mktemp("feats")
    toy_items(root / "bench")
    (root / "cycles.jsonl").write_text(json.dumps(
        {"cycle_id": "c", "family": "toy", "image_1": "img0.png", "image_2": "img1.png", "caption_1": "a",
         "caption_2": "b", "text_1": "a cat", "text_2": "a dog"}) + "\n")
    saved, cache = sys.argv, os.environ.get("VLAUDIT_CACHE")
    os.environ["VLAUDIT_CACHE"] = str(root / "cache")
    try:
        for model in ("tiny-open-clip", "tiny-clip"):
            sys.argv = ["vlaudit", "features", "--model", f"ref:{model}", "--cycles", str(root / "cycles.jsonl"),
                        "--images", str(root / "bench" / "images"), "--out", str(root / model)]
            with pytest.raises(SystemExit) as done:
                main()
            assert done.value.code in (0, None)
    finally:
        sys.argv = saved
        os.environ.pop("VLAUDIT_CACHE") if cache is None else os.environ.__setitem__("VLAUDIT_CACHE", cache)
    return root


@pytest.mark.parametrize("table", ["images.parquet", "texts.parquet"])
def test_a_features_file_from_another_model_is_refused(table, two_feature_folders, cli, tmp_path) -> None:
    import shutil

    root = two_feature_folders
    mixed = tmp_path / "mixed"
    shutil.copytree(root / "tiny-open-clip", mixed)
    shutil.copy(root / "tiny-clip" / table, mixed / table)
    code, out, err = cli("cycles", "zero-shot", "--features", mixed, "--cycles", root / "cycles.jsonl", "--out",
                         tmp_path / "scores.csv")
    assert code == 2 and "Traceback" not in err, err
    assert err.strip().splitlines() == [
        f"error: {mixed}: {table} is not the file this run wrote (its sha256 differs from manifest.json's): copied "
        "from another run or model? rerun `vlaudit features --overwrite`"], err
    assert not (tmp_path / "scores.csv").exists()
    # a manifest without digests (written before they were recorded): the dimension still gives it away
    manifest = json.loads((mixed / "manifest.json").read_text())
    dims = {json.loads((root / m / "manifest.json").read_text())["dim"] for m in ("tiny-open-clip", "tiny-clip")}
    if len(dims) == 2:
        del manifest["files_sha256"]
        (mixed / "manifest.json").write_text(json.dumps(manifest))
        code, out, err = cli("cycles", "zero-shot", "--features", mixed, "--cycles", root / "cycles.jsonl", "--out",
                             tmp_path / "scores.csv")
        assert code == 2 and f"{mixed / table}, field 'embedding': embeddings of dimension" in err, err
    code, _, err = cli("cycles", "zero-shot", "--features", root / "tiny-clip", "--cycles", root / "cycles.jsonl",
                       "--out", tmp_path / "scores.csv")
    assert code == 0, err


def test_a_question_longer_than_the_context_fails_alone_and_the_rest_are_scored(cli, toy_items, tmp_path,
                                                                              monkeypatch) -> None:
    """ref:tiny-qwen2-vl has 4096 positions: a 30 kB question is counted by its tokenizer, a 1 MB one by its
    length (never tokenised, never sent to torch); both fail as records, the other items are scored."""
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    items = toy_items(tmp_path / "bench", n_images=2)
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    rows[1]["question"] = "Is the cat " + "very " * 6000 + "big?"
    rows[2]["question"] = "Is it " + "x" * 1_000_000 + "?"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "run"
    code, out, err = cli("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", items, "--images",
                         tmp_path / "bench" / "images", "--out", run, "--contexts", "original,text",
                         "--min-coverage", 0)  # two of four items fail by design: accept the partial run
    assert code == 0 and "Traceback" not in err, err
    failures = [json.loads(line) for line in (run / "failures.jsonl").read_text().splitlines()]
    assert sorted({f["item_id"] for f in failures}) == sorted([rows[1]["item_id"], rows[2]["item_id"]])
    reasons = {f["item_id"]: f["error"] for f in failures}
    assert "tokens, more than the model's context of 4096 tokens" in reasons[rows[1]["item_id"]]
    assert "characters, more than the model's context of 4096" in reasons[rows[2]["item_id"]]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["failures_by_reason"] == {"input too long": 4}  # 2 items x 2 contexts
    assert summary["n_scored_rows"] == 2 * (len(rows) - 2)
