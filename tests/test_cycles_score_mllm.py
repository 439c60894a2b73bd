"""`vlaudit cycles score-mllm`: MLLM yes/no margins as cycle scores, through the `vca score` runner and cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vlaudit.cli import app

pytestmark = pytest.mark.usefixtures("one_torch_thread")
runner = CliRunner()
FAMILIES = ["coco-strict-left-right", "coco-object-coarse"]


@pytest.fixture(scope="module")
def ref_cache(tmp_path_factory: pytest.TempPathFactory):
    """One reference-model cache for the module (the tiny model is built once, offline)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VLAUDIT_CACHE", str(tmp_path_factory.mktemp("vlaudit-cache")))
        yield


@pytest.fixture(scope="module")
def scene_cycles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Small procedural scenes and two exact COCO cycle families (a few blocks each, test split)."""
    from vlaudit.builders.cycles.coco import build_coco_cycles
    from vlaudit.builders.scenes import render_scenes
    from vlaudit.files import write_jsonl
    from vlaudit.sources.cycle_tables import read_cycles

    root = tmp_path_factory.mktemp("scenes")
    render_scenes(root / "scenes", 40, seed=0)
    full = root / "full.jsonl"
    build_coco_cycles(root / "scenes" / "instances.json", root / "scenes" / "captions.json", full, seed=0,
                      splits="test", min_cycles=1, families=FAMILIES)
    rows = []
    for family in FAMILIES:
        chosen = [c for c in read_cycles(full) if c.family == family][:3]
        rows += [{"cycle_id": c.cycle_id, "family": c.family, "split": c.split, "image_1": c.image_1,
                  "caption_1": c.caption_1, "image_2": c.image_2, "caption_2": c.caption_2, **c.extra}
                 for c in chosen]
    cycles = root / "cycles.jsonl"
    write_jsonl(cycles, rows)
    return cycles, root / "scenes" / "images"


def _score(cycles: Path, images: Path, out: Path, *extra: str):
    return runner.invoke(app, ["cycles", "score-mllm", "--model", "ref:tiny-qwen2-vl", "--cycles", str(cycles),
                               "--images", str(images), "--out", str(out), "--batch-size", "4", *extra])


def test_scores_are_the_query_margins_and_resume_from_cache(scene_cycles, ref_cache, tmp_path, no_network) -> None:
    from vlaudit.files import read_records
    from vlaudit.scoring.mllm_cycle_scores import CYCLE_QUERY, pair_item_id
    from vlaudit.sources.cycle_tables import read_cycles, read_scores

    cycles, images = scene_cycles
    out = tmp_path / "scores.parquet"
    result = _score(cycles, images, out)
    assert result.exit_code == 0, result.output
    cycle_list = read_cycles(cycles)
    pairs = {(u, v) for c in cycle_list for u, v, _ in c.entries()}
    scores = read_scores(out)
    assert set(scores) == pairs
    run = tmp_path / "scores.parquet.run"
    margins = {r["item_id"]: r for r in read_records(run / "margins.parquet")}
    texts = {c.caption_1: c.extra["text_1"] for c in cycle_list} | {c.caption_2: c.extra["text_2"] for c in cycle_list}
    for (u, v), score in scores.items():
        row = margins[pair_item_id(u, v)]
        assert row["context"] == "original" and row["interface"] == "yesno"
        assert row["statement"] == CYCLE_QUERY.format(caption=texts[v]) or row["statement"] is None
        assert score == row["margin"] == row["nll_no"] - row["nll_yes"]  # float64, exact round trip
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["arguments"]["query"] == CYCLE_QUERY and manifest["contexts"] == ["original"]
    summary = json.loads((run / "summary.json").read_text())
    # every distinct (prompt, image) is one query; shared image prefixes per image under the Qwen-VL family
    assert summary["n_unique_units"] == len(pairs) and summary["n_units_scored_now"] == len(pairs)

    again = _score(cycles, images, out)  # resumable: a rerun reads every margin back from the cache
    assert again.exit_code == 0, again.output
    assert json.loads((run / "summary.json").read_text())["n_units_scored_now"] == 0
    assert read_scores(out) == scores


def test_cycles_eval_on_mllm_scores_and_the_additive_identity(scene_cycles, ref_cache, tmp_path, no_network) -> None:
    from vlaudit.files import write_table
    from vlaudit.metrics.cycles import evaluate_cycle_families
    from vlaudit.sources.cycle_tables import read_cycles, read_scores

    cycles, images = scene_cycles
    out = tmp_path / "scores.csv"
    assert _score(cycles, images, out).exit_code == 0
    evaluated = tmp_path / "eval.json"
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(cycles), "--scores", str(out), "--out",
                                 str(evaluated), "--resamples", "200", "--no-plot", "--min-cycles", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads(evaluated.read_text())
    (split,) = {c.split or "unsplit" for c in read_cycles(cycles)}  # reported per (family, split), never pooled
    assert sum(data["families"][f][split]["n"] for f in FAMILIES) == len(read_cycles(cycles))
    for family in FAMILIES:
        cell = data["families"][family][split]
        assert cell["n"] == 3 and 0.0 <= cell["cycle_acc"] <= 1.0

    # s'(u, v) = s(u, v) + a(u) + b(v) leaves every cycle contrast, hence CycleAcc, unchanged (Proposition 1);
    # the additive part alone scores exactly ½.
    cycle_list = read_cycles(cycles)
    scores = read_scores(out)
    a = {u: 0.25 * (i % 7) - 1.0 for i, u in enumerate(sorted({u for u, _ in scores}))}
    b = {v: 0.5 * (i % 5) for i, v in enumerate(sorted({v for _, v in scores}))}
    shifted = {(u, v): s + a[u] + b[v] for (u, v), s in scores.items()}
    additive = {(u, v): a[u] + b[v] for (u, v) in scores}
    base = evaluate_cycle_families(cycle_list, scores, n_resamples=50, min_cycles=1)
    moved = evaluate_cycle_families(cycle_list, shifted, n_resamples=50, min_cycles=1)
    alone = evaluate_cycle_families(cycle_list, additive, n_resamples=50, min_cycles=1)
    for family in FAMILIES:
        assert moved.families[family][split].cycle_acc == base.families[family][split].cycle_acc
        assert alone.families[family][split].cycle_acc == 0.5
    write_table(tmp_path / "shifted.parquet", [{"image_id": u, "caption_id": v, "score": s}
                                                for (u, v), s in shifted.items()])
    assert read_scores(tmp_path / "shifted.parquet") == shifted


def test_query_needs_one_caption_field(scene_cycles, tmp_path) -> None:
    cycles, images = scene_cycles
    result = _score(cycles, images, tmp_path / "s.csv", "--query", "Is this {thing}?")
    assert result.exit_code != 0 and "{caption}" in str(result.exception)
    result = runner.invoke(app, ["cycles", "score-mllm", "--model", "ref:tiny-open-clip", "--cycles", str(cycles),
                                 "--images", str(images), "--out", str(tmp_path / "s.csv")])
    assert result.exit_code != 0 and "not a multimodal LLM" in str(result.exception)


@pytest.mark.slow
def test_score_mllm_on_ray_workers_equals_a_local_run(scene_cycles, reference_cache, local_ray, tmp_path,
                                                      no_network) -> None:
    cycles, images = scene_cycles
    local = _score(cycles, images, tmp_path / "local.csv")
    assert local.exit_code == 0, local.output
    remote = _score(cycles, images, tmp_path / "ray.csv", "--executor", "ray", "--workers", "2",
                    "--threads-per-worker", "1")
    assert remote.exit_code == 0, remote.output
    assert (tmp_path / "ray.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()
