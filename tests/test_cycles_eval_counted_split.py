"""``cycles eval`` of a test-only COCO build counts what the build counted (cycle paper §D.5: validation
cycles): the train2017 build's val cycles, recorded in the test build's metadata — not the test cycles, which
withdrew every family the build kept."""

from __future__ import annotations

import json
from pathlib import Path

from coco_files import LEFT, RIGHT, coco_files

import vlaudit
from vlaudit.builders.cycles import build_coco_cycles
from vlaudit.builders.cycles.build_steps import sidecar_paths
from vlaudit.sources.cycle_tables import read_cycles

FAMILY = "coco-strict-left-right"


def _builds(tmp_path: Path) -> tuple[Path, int, int]:
    """A train/val build of 16 images and a test build of 4 with ``--validation-from`` it and the minimum at
    the val count: kept by the build although it has fewer test cycles than the minimum."""
    train_dir, test_dir = tmp_path / "train2017", tmp_path / "val2017"
    train_dir.mkdir()
    test_dir.mkdir()
    train_instances, _ = coco_files(train_dir, [LEFT, RIGHT] * 8)
    test_instances, _ = coco_files(test_dir, [LEFT, RIGHT] * 2)
    train = build_coco_cycles(train_instances, None, tmp_path / "train.jsonl", families=[FAMILY],
                              splits="train=0.5,val=0.5", min_cycles=1)
    val = train["counts"][FAMILY]["val"]
    test_out = tmp_path / "test.jsonl"
    test = build_coco_cycles(test_instances, None, test_out, families=[FAMILY], splits="test", min_cycles=val,
                             validation_from=sidecar_paths(tmp_path / "train.jsonl")[1])
    n_test = test["counts"][FAMILY]["test"]
    assert 1 <= n_test < val and test["validation_counts"] == {FAMILY: val}
    return test_out, val, n_test


def _scores(cycles_path: Path) -> dict[tuple[str, str], float]:
    """Matched pairs score 1, crossed pairs 0: every cycle is won."""
    return {(image, caption): float(sign > 0) for cycle in read_cycles(cycles_path)
            for image, caption, sign in cycle.entries()}


def test_the_test_build_keeps_the_families_its_build_kept(tmp_path: Path, cli) -> None:
    test_out, val, n_test = _builds(tmp_path)
    result = vlaudit.evaluate_cycles(test_out, _scores(test_out), min_cycles=val, n_resamples=20).evaluation
    assert list(result.families) == [FAMILY] and not result.unavailable
    assert result.families[FAMILY]["test"].n == n_test and result.families[FAMILY]["test"].cycle_acc == 1.0
    assert result.min_cycles_counted == f"val of {sidecar_paths(tmp_path / 'train.jsonl')[1]}"
    # one more than the val count: withdrawn, its entry carries the val count beside the test count
    result = vlaudit.evaluate_cycles(test_out, _scores(test_out), min_cycles=val + 1, n_resamples=20).evaluation
    assert result.unavailable == {FAMILY: {"test": n_test, "val": val}} and not result.families
    # the command prints which cycles the minimum counted
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(json.dumps({"image_id": i, "caption_id": c, "score": s}) + "\n"
                              for (i, c), s in _scores(test_out).items()), encoding="utf-8")
    code, out, err = cli("cycles", "eval", "--cycles", test_out, "--scores", scores, "--out", tmp_path / "e.json",
                         "--min-cycles", val + 1, "--resamples", 20, "--no-plot")
    assert code == 2 and "no family" in err  # nothing reached the minimum: no eval.json is written
    assert f"unavailable: {FAMILY} (fewer than {val + 1} val of" in " ".join(out.split())


def test_an_older_test_build_reads_the_train_builds_metadata_it_names(tmp_path: Path) -> None:
    """A metadata file written before ``validation_counts`` was recorded: the train build it names is read; when
    that file is gone the evaluated cycles are counted and a warning says so."""
    test_out, val, n_test = _builds(tmp_path)
    meta_path = sidecar_paths(test_out)[1]
    meta = json.loads(meta_path.read_text())
    del meta["validation_counts"]
    meta_path.write_text(json.dumps(meta))
    result = vlaudit.evaluate_cycles(test_out, _scores(test_out), min_cycles=val, n_resamples=20).evaluation
    assert list(result.families) == [FAMILY]
    sidecar_paths(tmp_path / "train.jsonl")[1].unlink()
    result = vlaudit.evaluate_cycles(test_out, _scores(test_out), min_cycles=val, n_resamples=20).evaluation
    assert result.unavailable == {FAMILY: {"test": n_test}} and result.min_cycles_counted == "test"
    assert any("which is not here: the minimum counts the evaluated cycles" in w for w in result.warnings)
