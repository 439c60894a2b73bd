"""The paper's COCO protocol as one command (cycle paper §D.5: train/validation cycles from train2017, test
cycles from val2017, three split seeds): ``--build`` + ``--test-build`` build both per seed (the test build
with ``--validation-from`` the seed's train build), ``--cycles`` + ``--test-cycles`` read them, and the run
records both builds. Procedural scenes stand in for COCO: one rendering, its image ids split
into a "train2017" and a "val2017" annotation file (disjoint ids, like COCO's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vlaudit.cli import app
from vlaudit.errors import InputError

FAMILIES = "coco-box-relation"
FAST = ["--epochs", "2", "--lr", "0.03", "--families", FAMILIES, "--min-cycles", "3", "--rank", "4",
        "--seeds", "0", "1"]


@pytest.fixture(scope="module")
def coco(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import torch

    from vlaudit.builders.scenes import render_scenes

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("coco_protocol")
    render_scenes(root / "scenes", 120, seed=0)
    files: dict[str, Path] = {"root": root, "images": root / "scenes" / "images"}
    instances = json.loads((root / "scenes" / "instances.json").read_text())
    captions = json.loads((root / "scenes" / "captions.json").read_text())
    for name, keep in (("train2017", lambda i: i <= 80), ("val2017", lambda i: i > 80)):
        for kind, data in (("instances", instances), ("captions", captions)):
            part = {**data, "images": [im for im in data["images"] if keep(im["id"])],
                    "annotations": [a for a in data["annotations"] if keep(a["image_id"])]}
            files[f"{kind}_{name}"] = root / f"{kind}_{name}.json"
            files[f"{kind}_{name}"].write_text(json.dumps(part))
    return files


def _build(coco: dict[str, Path], year: str, splits: str) -> str:
    return (f"coco --instances {coco[f'instances_{year}']} --captions {coco[f'captions_{year}']} --families "
            f"{FAMILIES} --splits {splits} --min-cycles 3")


def test_one_command_builds_both_and_records_both(coco: dict[str, Path]) -> None:
    out = coco["root"] / "diag"
    result = CliRunner().invoke(app, [
        "experiment", "diagnostics", "--out", str(out), "--build", _build(coco, "train2017", "train=0.7,val=0.3"),
        "--test-build", _build(coco, "val2017", "test"), "--model", "ref:tiny-open-clip", "--images",
        str(coco["images"]), *FAST], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "diagnostics.json").read_text())
    builds = saved["cycle_builds"]
    for seed in ("0", "1"):
        train, test = builds["per_seed"][seed], builds["test_per_seed"][seed]
        assert train["instances"] == str(coco["instances_train2017"]) and train["splits"] == {"train": 0.7, "val": 0.3}
        assert test["instances"] == str(coco["instances_val2017"]) and test["splits"] == {"test": 1.0}
        assert train["seed"] == test["seed"] == int(seed)
        meta = out / "cycles" / f"seed{seed}.meta.json"
        assert test["min_cycles_counted"] == f"val of {meta}"  # §D.5: the test build counts the train build's val
        assert builds["files"][seed] == {"train": str(out / "cycles" / f"seed{seed}.jsonl"),
                                         "test": str(out / "cycles" / f"seed{seed}.test.jsonl")}
    # every test cycle is a val2017 image, every train/val cycle a train2017 one
    for name, allowed in (("seed0.test.jsonl", range(81, 121)), ("seed0.jsonl", range(1, 81))):
        rows = [json.loads(line) for line in (out / "cycles" / name).read_text().splitlines()]
        assert rows and all(int(r[k].split(":")[-1]) in allowed for r in rows for k in ("image_1", "image_2"))
    n_test = {r["family"]: r["n"]["per_seed"] for r in saved["rows"] if r["probe"] == "additive"}
    test_meta = json.loads((out / "cycles" / "seed0.test.meta.json").read_text())
    assert {f: n["0"] for f, n in n_test.items()} == {f: c["test"] for f, c in test_meta["counts"].items()}
    assert "test split: a second build per seed (the paper's COCO protocol) from" in " ".join(result.output.split())


def test_given_files_are_read_and_a_shared_split_is_refused(coco: dict[str, Path]) -> None:
    from vlaudit.api.experiment_inputs import extract_seed_features, load_seed_inputs
    from vlaudit.builders.cycles.coco import build_coco_cycles

    root = coco["root"] / "given"
    train = root / "train.jsonl"
    build_coco_cycles(coco["instances_train2017"], coco["captions_train2017"], train, families=FAMILIES.split(","),
                      seed=0, splits="train=0.7,val=0.3", min_cycles=3)
    test = root / "test.jsonl"
    build_coco_cycles(coco["instances_val2017"], coco["captions_val2017"], test, families=FAMILIES.split(","),
                      seed=0, splits="test", min_cycles=3, validation_from=root / "train.meta.json")
    features = extract_seed_features({0: train}, coco["images"], "ref:tiny-open-clip", root / "features",
                                     test_paths={0: test})
    (inputs,) = load_seed_inputs({0: train}, features, {0: test}).values()
    assert {c.split for c in inputs.cycles} == {"train", "val", "test"}
    assert inputs.test_source == str(test) and inputs.test_build is not None and inputs.test_build.seed == 0
    with pytest.raises(InputError, match=r"split\(s\) \['test'\] are in both"):
        load_seed_inputs({0: test}, features, {0: test})
    other = root / "test_seed1.jsonl"
    build_coco_cycles(coco["instances_val2017"], coco["captions_val2017"], other, families=FAMILIES.split(","),
                      seed=1, splits="test", min_cycles=3)
    with pytest.raises(InputError, match="the test build is of seed 1, the train/val build of seed 0"):
        load_seed_inputs({0: train}, features, {0: other})
