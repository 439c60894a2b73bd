"""The run folder's life (vlaudit/scoring/run/folder.py): refuse or resume, lock, clean partial files, write the
manifest and the summary. The kill -9 and resume of a real run through it is tests/test_scoring_runner.py's."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlaudit.errors import InputError
from vlaudit.results.manifest import RunManifest
from vlaudit.results.vca.outputs import DualScoringSummary
from vlaudit.scoring.run.folder import RunFolder
from vlaudit.scoring.run.spec import ScoreSpec

RESULTS = ("manifest.json", "margins.parquet", "failures.jsonl", "summary.json")


def _finished_run(folder: Path, arguments: dict[str, object]) -> RunFolder:
    run_folder = RunFolder(folder)
    with run_folder.open(outputs=RESULTS) as run:
        run.write_manifest(RunManifest(command="vca score", arguments=arguments, record={"model": "m"}))
        (folder / "margins.parquet").write_bytes(b"rows")
        (folder / "cache").mkdir()
        (folder / "cache" / "chunk-000000.jsonl").write_text("{}\n")
        run.write_summary(DualScoringSummary(model="m", n_items=1, n_groups=1, n_scored_rows=1, n_not_scored=0,
                                             n_distinct_images=1, n_distinct_texts=1, contexts={"original": 1}))
    return run_folder


def test_another_spec_is_refused_naming_the_fields_the_same_resumes_and_overwrite_replaces(tmp_path) -> None:
    folder = _finished_run(tmp_path / "run", {"model": "ref:a", "seed": 0, "batch_size": 8})
    assert (tmp_path / "run" / "manifest.json").is_file() and not (tmp_path / "run" / ".lock").exists()
    folder.check(ScoreSpec, {"model": "ref:a", "seed": 0, "batch_size": 2})  # batch size is operational
    with pytest.raises(InputError) as refused:
        folder.check(ScoreSpec, {"model": "ref:b", "seed": 0, "batch_size": 8})
    message = str(refused.value)
    assert "model: 'ref:a' → 'ref:b'" in message and "seed" not in message and "--out" in message
    assert len(message.splitlines()) == 1
    folder.check(ScoreSpec, {"model": "ref:b", "seed": 1}, overwrite=True)
    with pytest.raises(InputError, match="seed: 0 → 1"), folder.open(ScoreSpec, {"model": "ref:a", "seed": 1}):
        pass
    assert (tmp_path / "run" / "margins.parquet").exists()  # a refused open removes nothing


def test_opening_removes_partial_files_and_old_results_but_keeps_the_manifest_and_cache(tmp_path) -> None:
    run_dir = tmp_path / "run"
    _finished_run(run_dir, {"model": "ref:a"})
    (run_dir / ".margins.parquet.abc.tmp").write_bytes(b"half")  # a writer killed before its rename
    with RunFolder(run_dir).open(outputs=RESULTS):
        left = sorted(p.name for p in run_dir.iterdir())
        assert left == [".lock", "cache", "manifest.json"]
    assert not (run_dir / ".lock").exists()


def test_a_second_open_of_a_locked_folder_is_refused(tmp_path) -> None:
    folder = RunFolder(tmp_path / "run")
    with folder.open(), pytest.raises(InputError, match="another vca score run is using this directory"):
        with RunFolder(tmp_path / "run").open():
            pass
    with folder.open():  # released on exit
        pass
