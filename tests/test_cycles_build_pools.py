"""Which images and which counts a cycles build uses (cycle paper §D.5, Table 6): one image pool shared by the
seeds, the COCO builder's work bounds as recorded options, and the split the minimum-cycle rule counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from coco_files import LEFT, RIGHT, coco_files, read_rows
from typer.testing import CliRunner

from vlaudit.builders.cycles import build_coco_cycles
from vlaudit.builders.cycles.build_steps import sidecar_paths
from vlaudit.builders.cycles.coco import CocoCaps
from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.settings import (
    COCO_CAPTIONS_PER_IMAGE,
    COCO_CATEGORIES_PER_IMAGE,
    COCO_IMAGE_USES,
    COCO_STATEMENTS_PER_IMAGE,
    CYCLE_POOL_SEED,
)

STRICT = ["coco-strict-left-right"]


def images_of(path: Path) -> set[str]:
    return {r[k] for r in read_rows(path) for k in ("image_1", "image_2")}


def split_of(path: Path) -> dict[str, str]:
    return {r[k]: r["split"] for r in read_rows(path) for k in ("image_1", "image_2")}


def test_every_seed_builds_its_splits_inside_one_pool(tmp_path: Path) -> None:
    """§D.5: "family estimates share image pools" — three seeds, 20 of 60 images, one pool of 20."""
    instances, _ = coco_files(tmp_path, [LEFT, RIGHT] * 30)
    used: set[str] = set()
    splits = []
    for seed in (0, 1, 2):
        out = tmp_path / f"seed{seed}.jsonl"
        summary = build_coco_cycles(instances, None, out, families=STRICT, seed=seed, splits="train=0.5,val=0.5",
                                    min_cycles=1, max_images=20)
        meta = json.loads(sidecar_paths(out)[1].read_text())
        assert (meta["pool_seed"], meta["seed"], meta["images_in_pool"]) == (CYCLE_POOL_SEED, seed, 20)
        assert summary["pool_seed"] == CYCLE_POOL_SEED
        used |= images_of(out)
        splits.append(split_of(out))
    assert len(used) <= 20  # one pool for the three seeds (a pool per seed would reach ~40 distinct images)
    shared = set(splits[0]) & set(splits[1])
    assert any(splits[0][i] != splits[1][i] for i in shared)  # ... with independently drawn splits inside it
    other = tmp_path / "other.jsonl"
    build_coco_cycles(instances, None, other, families=STRICT, seed=0, splits="train=0.5,val=0.5", min_cycles=1,
                      max_images=20, pool_seed=7)
    assert images_of(other) - used  # another pool seed draws another pool


def test_the_pool_seed_is_an_option_and_is_printed(tmp_path: Path) -> None:
    instances, _ = coco_files(tmp_path, [LEFT, RIGHT] * 10)
    out = tmp_path / "c.jsonl"
    result = CliRunner().invoke(app, ["cycles", "build", "coco", "--instances", str(instances), "--out", str(out),
                                      "--families", STRICT[0], "--splits", "test", "--min-cycles", "1",
                                      "--max-images", "10", "--pool-seed", "5"])
    assert result.exit_code == 0, result.output
    assert "pool seed 5" in result.output
    assert json.loads(sidecar_paths(out)[1].read_text())["pool_seed"] == 5


def test_coco_work_bounds_are_options_recorded_in_the_metadata(tmp_path: Path) -> None:
    assert CocoCaps().as_dict() == {"captions_per_image": COCO_CAPTIONS_PER_IMAGE,
                                    "categories_per_image": COCO_CATEGORIES_PER_IMAGE,
                                    "statements_per_image": COCO_STATEMENTS_PER_IMAGE,
                                    "image_uses": COCO_IMAGE_USES, "paper_settings": False}
    assert (COCO_CAPTIONS_PER_IMAGE, COCO_CATEGORIES_PER_IMAGE, COCO_STATEMENTS_PER_IMAGE, COCO_IMAGE_USES) == (
        2, 6, 3, 1)
    dog = {"objects": [("dog", [0, 0, 50, 50])]}
    cat = {"objects": [("cat", [0, 0, 50, 50])]}
    captions = {k: ([f"A dog number {n}." for n in range(3)] if k % 2 == 0 else
                    [f"A cat number {n}." for n in range(3)]) for k in range(8)}
    instances, caps = coco_files(tmp_path, [dog, cat] * 4, captions)
    out = tmp_path / "c.jsonl"
    summary = build_coco_cycles(instances, caps, out, families=["coco-object-coarse"], splits="test", min_cycles=1)
    # each image once per family and split: 8 images make at most 4 blocks
    assert summary["counts"]["coco-object-coarse"]["test"] <= 4
    assert summary["caps"] == CocoCaps().as_dict()
    wider = CocoCaps(captions_per_image=3, image_uses=3)
    summary = build_coco_cycles(instances, caps, out, families=["coco-object-coarse"], splits="test", min_cycles=1,
                                caps=wider)
    assert summary["counts"]["coco-object-coarse"]["test"] > 4
    assert json.loads(sidecar_paths(out)[1].read_text())["caps"] == wider.as_dict()
    with pytest.raises(InputError, match="image_uses must be ≥ 1"):
        CocoCaps(image_uses=0)
    help_text = CliRunner().invoke(app, ["cycles", "build", "coco", "--help"], terminal_width=200).output
    for flag in ("--captions-per-image", "--categories-per-image", "--statements-per-image", "--image-uses",
                 "--validation-from", "--pool-seed"):
        assert flag in help_text
    assert help_text.count("not a paper setting") >= 4


def test_a_test_only_build_says_which_split_the_minimum_counted(tmp_path: Path) -> None:
    instances, _ = coco_files(tmp_path, [LEFT, RIGHT] * 3)
    out = tmp_path / "c.jsonl"
    summary = build_coco_cycles(instances, None, out, families=STRICT, splits="test", min_cycles=30)
    assert summary["min_cycles_counted"] == "test"
    result = CliRunner().invoke(app, ["cycles", "build", "coco", "--instances", str(instances), "--out", str(out),
                                      "--families", STRICT[0], "--splits", "test", "--min-cycles", "30"])
    assert "fewer than 30 test cycles" in result.output and "validation" not in result.output


def test_the_test_build_counts_the_validation_cycles_of_the_train_build(tmp_path: Path) -> None:
    """The paper's COCO protocol: train/val from train2017, test from val2017; the minimum counts val (§D.5)."""
    train_dir, test_dir = tmp_path / "train2017", tmp_path / "val2017"
    train_dir.mkdir()
    test_dir.mkdir()
    train_instances, _ = coco_files(train_dir, [LEFT, RIGHT] * 8)
    test_instances, _ = coco_files(test_dir, [LEFT, RIGHT] * 8)
    train_out = tmp_path / "train.jsonl"
    built = build_coco_cycles(train_instances, None, train_out, families=STRICT, splits="train=0.5,val=0.5",
                              min_cycles=1)
    val = built["counts"][STRICT[0]]["val"]
    meta = sidecar_paths(train_out)[1]
    test_out = tmp_path / "test.jsonl"
    # more test cycles than the minimum, too few validation cycles in the train build: withdrawn
    summary = build_coco_cycles(test_instances, None, test_out, families=STRICT, splits="test", min_cycles=val + 1,
                                validation_from=meta)
    assert summary["unavailable"] == {STRICT[0]: {"test": summary["unavailable"][STRICT[0]]["test"], "val": val}}
    assert summary["unavailable"][STRICT[0]]["test"] >= val + 1
    assert summary["min_cycles_counted"] == f"val of {meta}"
    # enough validation cycles there: kept, whatever the minimum says of the test count alone
    summary = build_coco_cycles(test_instances, None, test_out, families=STRICT, splits="test", min_cycles=val,
                                validation_from=meta)
    assert summary["counts"][STRICT[0]]["test"] >= 1 and not summary["unavailable"]
    with pytest.raises(InputError, match="same seed"):
        build_coco_cycles(test_instances, None, test_out, families=STRICT, splits="test", seed=1,
                          validation_from=meta)


def test_the_table_marks_only_the_counted_split(tmp_path: Path) -> None:
    instances, _ = coco_files(tmp_path, [LEFT, RIGHT] * 3)
    out = tmp_path / "c.jsonl"
    result = CliRunner().invoke(app, ["cycles", "build", "coco", "--instances", str(instances), "--out", str(out),
                                      "--families", STRICT[0], "--splits", "train=0.5,val=0.5",
                                      "--min-cycles", "30"], terminal_width=100)
    (row,) = [line for line in result.output.splitlines() if line.strip().startswith(STRICT[0])]
    cells = row.split("—")[1:]
    assert len(cells) == 2 and "< 30" not in cells[0] and "< 30" in cells[1]  # train unmarked, val marked
