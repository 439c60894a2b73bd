"""``vlaudit experiment …`` end to end on procedural scenes + ``ref:tiny-open-clip`` features (seconds each)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from vlaudit.cli import app
from vlaudit.errors import InputError

FAMILIES = "coco-object-coarse,coco-box-relation"
SPLITS = "train=0.6,val=0.2,test=0.2"
BASE = ["--epochs", "3", "--lr", "0.03", "--families", FAMILIES, "--min-cycles", "3"]  # 100 scenes: few cycles
FAST = [*BASE, "--rank", "4"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scenes, one independently built cycle split per seed (0, 1), and features incl. the OE-marked captions."""
    import torch

    from vlaudit.api.experiment_inputs import extract_seed_features
    from vlaudit.builders.cycles.coco import build_coco_cycles
    from vlaudit.builders.scenes import render_scenes

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("experiment")
    render_scenes(root / "scenes", 100, seed=0)
    cycles = {}
    for seed in (0, 1):
        cycles[seed] = root / f"seed{seed}.jsonl"
        build_coco_cycles(root / "scenes" / "instances.json", root / "scenes" / "captions.json", cycles[seed],
                          families=FAMILIES.split(","), seed=seed, splits=SPLITS, min_cycles=3)
    extract_seed_features(cycles, root / "scenes" / "images", "ref:tiny-open-clip", root / "features", marked=True)
    return {"root": root, "scenes": root / "scenes", "features": root / "features", **{f"c{s}": p for s, p in cycles.items()}}


def _run(args: list[str]) -> str:
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _inputs(world: dict[str, Path]) -> list[str]:
    return ["--seeds", "0", "1", "--cycles", str(world["c0"]), "--cycles", str(world["c1"]),
            "--features", str(world["features"])]


def _check_cell(cell: dict, seeds: tuple[str, ...] = ("0", "1")) -> None:
    """Per-seed values, and mean / sample sd computed from exactly them."""
    assert set(cell["per_seed"]) == set(seeds)
    values = [v for v in cell["per_seed"].values() if v is not None]
    assert cell["n_seeds"] == len(values)
    assert cell["mean"] == pytest.approx(np.mean(values))
    assert cell["sd"] == pytest.approx(np.std(values, ddof=1))


def test_diagnostics_end_to_end(world: dict[str, Path]) -> None:
    out = world["root"] / "diag"
    printed = _run(["experiment", "diagnostics", "--out", str(out), *_inputs(world), *FAST])
    result = json.loads((out / "diagnostics.json").read_text())
    assert result["split"] == "test" and result["seeds"] == [0, 1]
    assert result["additive_audit"]["ok"] and result["additive_audit"]["checked"] == 2 * 2 * 3
    families = {r["family"] for r in result["rows"]}
    assert families == set(FAMILIES.split(","))
    for row in result["rows"]:
        _check_cell(row["cycle_acc"])
        if row["probe"] in ("image-only", "text-only", "additive"):
            assert row["cycle_acc"]["per_seed"] == {"0": 0.5, "1": 0.5}
            assert row["tie_rate"]["per_seed"] == {"0": 1.0, "1": 1.0}
    assert {r["probe"] for r in result["rows"]} == {"image-only", "text-only", "additive", "zero-shot cosine",
                                                     "diagonal", "bilinear", "rank-4"}
    header = (out / "diagnostics.csv").read_text().splitlines()[0]
    assert "cycle_acc_seed_0" in header and "cycle_acc_sd" in header
    assert (out / "diagnostics.png").stat().st_size > 0
    assert "additive audit: 12 probe" in printed and "0.500 ± 0.000" in printed  # a value never folds
    assert max(map(len, printed.splitlines())) <= 80  # CliRunner's console is 80 columns wide
    assert "probe settings: interaction 3 epochs, lr 0.03 (cycle §E.3)" in printed
    assert "shortcut 50 epochs, lr 0.01 (cycle §E.4)" in " ".join(printed.split())
    assert set(result["probe_settings"]) == {"interaction", "additive", "shortcut"}
    # §E.4: the image-/text-only probes are trained on ordinary pairs with shortcut-bearing negatives, where they
    # are predictive (pair AUROC), and still exactly ½ on the cycles
    for row in result["rows"]:
        if row["probe"] in ("image-only", "text-only"):
            assert all(v is not None and v > 0.85 for v in row["pair_auroc"]["per_seed"].values()), row
        else:
            assert row["pair_auroc"]["mean"] is None
    assert "pair AUROC" in printed and "image CycleAcc" in " ".join(printed.split())
    # which settings are the paper's: this run departs on epochs, lr, rank and min-cycles, and says so
    settings = result["settings"]
    assert set(settings["departs"]) == {"epochs", "lr", "rank", "min_cycles"}
    assert settings["departs"]["epochs"] == {"value": 3, "paper": 8, "section": "cycle §E.3"}
    assert {"batch_size", "weight_decay", "additive_epochs", "shortcut_epochs", "shortcut_lr"} <= set(
        settings["paper"])
    assert {"min_steps", "device", "tol"} <= set(settings["not_in_paper"])
    flat = " ".join(printed.split())
    assert "departs from the paper: epochs 3 (paper 8, cycle §E.3)" in flat
    assert "not paper settings (vlaudit's): " in flat
    # each seed's build is recorded: here files without a build of this run (the fixture's own metadata)
    assert set(result["cycle_builds"]["per_seed"]) == {"0", "1"}
    assert result["cycle_builds"]["per_seed"]["0"]["pool_seed"] == 0
    assert result["cycle_builds"]["shared_pool"] is True
    assert "image pool: 100 images (pool seed 0), shared by every seed" in flat


def test_experiment_help_says_which_settings_are_the_papers() -> None:
    for command in ("diagnostics", "rank-sweep", "oe", "transfer"):
        text = " ".join(CliRunner().invoke(app, ["experiment", command, "--help"], terminal_width=200).output.split())
        for flag, source in (("--epochs", "§E.3: 8"), ("--batch-size", "§E.3: 512"), ("--min-cycles", "§D.5: 30"),
                             ("--min-steps", "not a paper setting"), ("--device", "not a paper setting"),
                             ("--threads", "not a paper setting"), ("--split-names", "not a paper setting")):
            assert flag in text and source in text, (command, flag)


def test_diagnostics_seeds_run_on_their_own_splits(world: dict[str, Path]) -> None:
    from vlaudit.sources.cycle_tables import read_cycles

    test = [{c.image_1 for c in read_cycles(world[f"c{s}"]) if c.split == "test"} for s in (0, 1)]
    train = [{c.image_1 for c in read_cycles(world[f"c{s}"]) if c.split == "train"} for s in (0, 1)]
    assert test[0] != test[1]  # independently constructed splits
    assert not test[0] & train[0] and not test[1] & train[1]  # each image-disjoint


def test_rank_sweep_end_to_end(world: dict[str, Path]) -> None:
    out = world["root"] / "rank"
    printed = _run(["experiment", "rank-sweep", "--out", str(out), *_inputs(world), *BASE, "--ranks", "1,2"])
    result = json.loads((out / "rank_sweep.json").read_text())
    assert result["ranks"] == [1, 2]
    assert {(r["family"], r["rank"]) for r in result["rows"]} == {(f, k) for f in FAMILIES.split(",") for k in (1, 2)}
    for row in result["rows"]:
        _check_cell(row["cycle_acc"])
    assert result["additive_audit"]["ok"]
    assert all(r["cycle_acc"]["per_seed"] == {"0": 0.5, "1": 0.5} for r in result["additive"])
    assert (out / "rank_sweep.png").exists() and (out / "rank_sweep.csv").exists()
    assert "r=2" in printed


def test_transfer_end_to_end(world: dict[str, Path]) -> None:
    out = world["root"] / "transfer"
    _run(["experiment", "transfer", "--out", str(out), *_inputs(world), *FAST])
    result = json.loads((out / "transfer.json").read_text())
    pairs = {(r["train_family"], r["test_family"]) for r in result["rows"] if r["off_diagonal"]}
    a, b = FAMILIES.split(",")
    assert pairs == {(a, b), (b, a)}
    for row in result["rows"]:
        _check_cell(row["cycle_acc"])
        if not row["off_diagonal"]:
            assert row["alignment"]["mean"] == pytest.approx(1.0)
    assert result["alignment_split"] == "val" and set(result["correlation"]["per_seed"]) == {"0", "1"}
    assert (out / "transfer.png").exists()


def test_oe_end_to_end_builds_and_encodes_itself(world: dict[str, Path]) -> None:
    out = world["root"] / "oe"
    build = (f"coco --instances {world['scenes'] / 'instances.json'} --captions {world['scenes'] / 'captions.json'} "
             f"--splits {SPLITS} --min-cycles 3 --families {FAMILIES}")
    printed = _run(["experiment", "oe", "--out", str(out), "--seeds", "0", "1", "--build", build, "--model",
                    "ref:tiny-open-clip", "--images", str(world["scenes"] / "images"), *FAST])
    result = json.loads((out / "oe.json").read_text())
    assert [r["protocol"] for r in result["rows"]] == ["Shortcut OE", "Cycle OE", "Four-entry BCE", "Text-only probe"]
    for row in result["rows"]:
        _check_cell(row["test_cycle_acc"])
        _check_cell(row["val_auroc"])
    text = next(r for r in result["rows"] if r["protocol"] == "Text-only probe")
    assert text["test_cycle_acc"]["per_seed"] == {"0": 0.5, "1": 0.5}
    diff = result["difference_cycle_minus_shortcut"]
    rows = {r["protocol"]: r["test_cycle_acc"]["per_seed"] for r in result["rows"]}
    assert diff["per_seed"] == pytest.approx({s: rows["Cycle OE"][s] - rows["Shortcut OE"][s] for s in ("0", "1")})
    # the built splits equal the fixture's (same build arguments and seeds): the per-seed build is the builder's
    assert (out / "cycles" / "seed1.jsonl").read_bytes() == world["c1"].read_bytes()
    assert "Shortcut OE" in printed and "wrote features" in printed
    # the OE run trains no additive probe: its settings name only what it trains
    assert set(result["probe_settings"]) == {"interaction", "shortcut"}
    settings_line = re.search(r"probe settings: (.*?)departs from the paper", " ".join(printed.split()))
    assert settings_line is not None and "interaction" in settings_line.group(1)
    assert "additive" not in settings_line.group(1)


def test_oe_reads_marked_captions_from_a_second_folder_by_content(world: dict[str, Path]) -> None:
    from vlaudit.analysis.cycles.oe import MARK_SUFFIX
    from vlaudit.api.experiment_inputs import add_marked_features, load_seed_inputs

    inputs = load_seed_inputs({0: world["c0"]}, world["features"])[0]
    same = add_marked_features(inputs)  # the marked rows are already in the folder
    second = add_marked_features(inputs, world["features"])  # found again by sha256(MARKER + text)
    key = inputs.cycles[0].caption_1 + MARK_SUFFIX
    np.testing.assert_array_equal(same.y[same.caption_row[key]], second.y[second.caption_row[key]])


def test_inputs_errors_are_one_line(world: dict[str, Path]) -> None:
    result = CliRunner().invoke(app, ["experiment", "diagnostics", "--out", str(world["root"] / "bad"), "--seeds",
                                      "0", "1", "--cycles", str(world["c0"]), "--features", str(world["features"])])
    assert result.exit_code == 2 and "one per seed" in result.output
    result = CliRunner().invoke(app, ["experiment", "oe", "--out", str(world["root"] / "bad"), "--seeds", "0",
                                      "--cycles", str(world["c0"]), "--features", str(world["scenes"])])
    assert result.exit_code != 0


def test_min_cycles_withdraws_a_family_per_seed_and_prints_its_counts(world: dict[str, Path]) -> None:
    from vlaudit.metrics.cycles import cycle_counts, withdraw_small_families
    from vlaudit.sources.cycle_tables import read_cycles

    minimum = 10  # the 100-scene splits have about 10 val/test cycles per family: some seeds fall short
    expected = [{"family": f, "seed": s, "cycles": c, "withdrawn_by": "experiment"}
                for s in (0, 1) for f, c in withdraw_small_families(
                    cycle_counts(read_cycles(world[f"c{s}"])), ["train", "val", "test"], minimum).items()]
    assert 0 < len(expected) < 4  # something is withdrawn, something is kept
    out = world["root"] / "minimum"
    args = [*_inputs(world), *BASE[:-1], str(minimum), "--ranks", "1"]
    printed = _run(["experiment", "rank-sweep", "--out", str(out), *args])
    result = json.loads((out / "rank_sweep.json").read_text())
    assert result["min_cycles"] == minimum and result["config"]["min_cycles"] == minimum
    assert sorted(result["unavailable"], key=str) == sorted(expected, key=str)
    for item in expected:
        for row in (r for r in [*result["rows"], *result["additive"]] if r["family"] == item["family"]):
            assert row["cycle_acc"]["per_seed"][str(item["seed"])] is None  # never a number in that seed
    assert "Unavailable: fewer than 10 validation cycles" in printed
    assert all(item["family"] in printed for item in expected)


def test_min_cycles_default_is_30_and_every_command_takes_it(world: dict[str, Path]) -> None:
    for command in ("diagnostics", "rank-sweep", "oe", "transfer"):
        assert "--min-cycles" in CliRunner().invoke(app, ["experiment", command, "--help"]).output
    result = CliRunner().invoke(app, ["experiment", "diagnostics", "--out", str(world["root"] / "default"),
                                      *_inputs(world), "--families", FAMILIES])
    # an InputError: the real entry point prints it as one red line and exits 2
    assert isinstance(result.exception, InputError) and "no family has 30 val cycles" in str(result.exception)


def test_a_family_the_build_withdrew_is_listed_with_the_builds_counts(world: dict[str, Path], tmp_path: Path) -> None:
    from vlaudit.analysis.cycles.experiment import ExperimentConfig, select_families
    from vlaudit.api.experiment_inputs import load_seed_inputs
    from vlaudit.builders.cycles.coco import build_coco_cycles
    from vlaudit.metrics.cycles import cycle_counts
    from vlaudit.results.cycle_experiments import Withdrawn
    from vlaudit.sources.cycle_tables import read_cycles

    # Seed 1's build again with the builder's minimum at 10: a family short of 10 in a split is not written.
    rebuilt = tmp_path / "seed1.jsonl"
    build_coco_cycles(world["scenes"] / "instances.json", world["scenes"] / "captions.json", rebuilt,
                      families=FAMILIES.split(","), seed=1, splits=SPLITS, min_cycles=10)
    full = cycle_counts(read_cycles(world["c1"]))
    gone = [f for f, cells in full.items() if min(cells.values()) < 10]
    assert gone and not {c.family for c in read_cycles(rebuilt)} & set(gone)
    inputs = load_seed_inputs({0: world["c0"], 1: rebuilt}, world["features"])
    kept, unavailable = select_families(inputs, (0, 1), ExperimentConfig(min_cycles=3))
    assert kept[0] == sorted(FAMILIES.split(",")) and not set(kept[1]) & set(gone)
    assert unavailable == [Withdrawn(family=f, seed=1, cycles=full[f], withdrawn_by="build") for f in sorted(gone)]
