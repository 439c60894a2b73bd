"""A failed command must not block or mislead the next one: each case runs the real CLI in a temp
folder and checks the exit status, the one-line message and exactly the files left behind."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pairs_files import write_flip_pairs


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones included) → its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def one_error(one_error_line):
    """``one_error(code, out, err)``: the one ``error:`` line of a refused command (exit 2), whitespace
    normalised."""
    return lambda code, out, err: " ".join(one_error_line(code, out, err).split())


# ------------------------------------------------------------------------------------------ cycles build


def test_cycles_build_with_no_family_left_writes_no_cycles_file(one_error, tmp_path, cli) -> None:
    pairs = write_flip_pairs(tmp_path / "pairs.jsonl")
    out = tmp_path / "c.jsonl"
    code, stdout, err = cli("cycles", "build", "jsonl", "--pairs", pairs, "--out", out, "--splits", "test")
    line = one_error(code, stdout, err)
    assert "no family reached --min-cycles 30 (test cycles), so no cycles were written" in line  # --splits test: the minimum counted the test split
    assert str(tmp_path / "c.failed.json") in line
    assert "pairs-relation (unavailable)" in stdout  # the Table-6 report is on the console
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.failed.json", "pairs.jsonl"]
    report = json.loads((tmp_path / "c.failed.json").read_text())
    assert report["unavailable"]["pairs-relation"] == {"test": 1} and report["counts"] == {}
    # a later build that keeps a family writes the cycles and removes the stale failure report
    code, _, err = cli("cycles", "build", "jsonl", "--pairs", pairs, "--out", out, "--splits", "test",
                       "--min-cycles", "1")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.captions.jsonl", "c.jsonl", "c.meta.json",
                                                          "pairs.jsonl"]
    # failing again leaves that earlier build exactly as it was
    before = _files(tmp_path)
    one_error(*cli("cycles", "build", "jsonl", "--pairs", pairs, "--out", out, "--splits", "test"))
    after = _files(tmp_path)
    assert after.pop("c.failed.json") and after == before


# ------------------------------------------------------------------------------------------ vca score


def _score(cli, items: Path | str, images: Path | str, out: Path | str, *extra: str) -> tuple[int, str, str]:
    return cli("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", items, "--images", images,
               "--out", out, "--contexts", "original,text", *extra)


def test_vca_score_that_scored_nothing_leaves_no_run_and_no_lock(toy_items, one_error, tmp_path, reference_cache, cli) -> None:
    items = toy_items(tmp_path / "bench")
    empty = tmp_path / "empty"
    empty.mkdir()
    run = tmp_path / "run"
    line = one_error(*_score(cli, items, empty, run))
    assert "no record could be scored: 8 failed (image file not found: 8)" in line
    assert sorted(_files(run)) == ["failures.jsonl"]  # no manifest, no margins, no .lock
    # the corrected rerun into the same --out is not refused as "other arguments"
    code, _, err = _score(cli, items, tmp_path / "bench" / "images", run)
    assert code == 0, err
    assert {"manifest.json", "margins.parquet", "summary.json"} <= set(_files(run))
    assert ".lock" not in _files(run)
    # a run already there is left exactly as it was when a rerun scores nothing, even with --overwrite
    before = _files(run)
    line = one_error(*_score(cli, items, empty, run, "--overwrite"))
    assert f"the run in {run} is left as it was" in line and "first: i0_0: image file not found" in line
    assert _files(run) == before


def test_vca_score_rerun_compares_what_paths_mean_not_their_spelling(toy_items, one_error, tmp_path, reference_cache, cli,
                                                                       monkeypatch) -> None:
    toy_items(tmp_path / "bench")
    monkeypatch.chdir(tmp_path)
    code, _, err = _score(cli, "bench/items.jsonl", "bench/images", "run")
    assert code == 0, err
    margins = (tmp_path / "run" / "margins.parquet").read_bytes()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["arguments"]["benchmark"] == str(tmp_path.resolve() / "bench" / "items.jsonl")
    # the same run spelled with absolute paths, and through a "..", resumes
    code, _, err = _score(cli, tmp_path / "bench" / "items.jsonl", tmp_path / "bench" / "images",
                          tmp_path / "run")
    assert code == 0, err
    code, _, err = _score(cli, "bench/../bench/items.jsonl", "./bench/images", "run")
    assert code == 0, err
    assert (tmp_path / "run" / "margins.parquet").read_bytes() == margins
    # the same path with other content is another run
    items = tmp_path / "bench" / "items.jsonl"
    items.write_text(items.read_text().replace("Is the cat left 0?", "Is the dog left 0?"))
    line = one_error(*_score(cli, "bench/items.jsonl", "bench/images", "run"))
    assert "holds a run with other arguments (items_sha256: " in line and "--overwrite" in line
    assert (tmp_path / "run" / "margins.parquet").read_bytes() == margins
    assert not (tmp_path / "run" / ".lock").exists()


def test_api_then_cli_into_one_folder_agree_on_arguments(toy_items, one_error, tmp_path, reference_cache, cli) -> None:
    import vlaudit

    items = toy_items(tmp_path / "bench")
    images, run = tmp_path / "bench" / "images", tmp_path / "run"
    vlaudit.score_margins(vlaudit.ScoreSpec.of(model="ref:tiny-qwen2-vl", benchmark=items, images=images,
                                               out=run, contexts=("original", "text")))
    recorded = json.loads((run / "manifest.json").read_text())["arguments"]
    assert recorded["model"] == "ref:tiny-qwen2-vl" and recorded["images"] == str(images.resolve())
    assert recorded["contexts"] == ["original", "text"] and recorded["dtype"] == "auto"
    api_files = _files(run)
    line = one_error(*_score(cli, items, images, run, "--seed", "3"))
    assert f"{run}, field '--out': holds a run with other arguments (seed: 0 → 3)" in line
    assert _files(run) == api_files  # the API's run is untouched
    code, _, err = _score(cli, items, images, run)  # the same arguments: a resume, not a refusal
    assert code == 0, err
    assert (run / "margins.parquet").read_bytes() == api_files["margins.parquet"]
    # the same rows given as a list of dicts are the same run; the API refuses other arguments too
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    with pytest.raises(vlaudit.InputError, match=r"other arguments \(contexts: "):
        vlaudit.score_margins(vlaudit.ScoreSpec.of(model="ref:tiny-qwen2-vl", benchmark=rows, images=images,
                                                   out=run, contexts=("original",)))


def test_the_run_lock_is_removed_on_every_exit_path(tmp_path) -> None:
    from vlaudit.errors import InputError
    from vlaudit.scoring.run.folder import run_lock

    run = tmp_path / "run"
    with run_lock(run):
        assert (run / ".lock").exists()
        with pytest.raises(InputError, match="another vca score run is using this directory"), run_lock(run):
            pass
        assert (run / ".lock").exists()  # the refused second run did not remove the first one's lock
    assert not (run / ".lock").exists()
    with pytest.raises(RuntimeError), run_lock(run):
        raise RuntimeError("killed mid-run")
    assert not (run / ".lock").exists()
    (run / ".lock").write_text("")  # a stale lock file from a run killed by the OS is no obstacle
    os.utime(run / ".lock")
    with run_lock(run):
        pass
    assert list(run.iterdir()) == []
