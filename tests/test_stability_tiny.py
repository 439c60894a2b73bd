"""`vca stability` end to end on every tiny family (`models tiny`): real float32 vs bfloat16 and batch 1 vs 8
on the CPU. The floors printed here are real figures about transformers on the CPU (random tiny weights)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import vlaudit
from vlaudit.backends.tiny.families import MLLM_FAMILIES

pytestmark = pytest.mark.usefixtures("one_torch_thread", "no_network")

#: batch composition and padding only reorder float32 sums: far below bfloat16's rounding of the weights
EXACT_BOUND = 1e-5


def _items(root: Path) -> Path:
    from PIL import Image

    (root / "images").mkdir(parents=True)
    rng = np.random.default_rng(0)
    rows = []
    for i in range(4):
        Image.fromarray(rng.integers(0, 256, (40 + 8 * i, 56, 3), dtype=np.uint8)).save(root / "images" / f"{i}.png")
        rows += [{"item_id": f"q{i}_{j}", "image": f"{i}.png", "question": f"Is the cat left of the dog {j}?",
                  "label": "yes" if j == 0 else "no", "dataset": "toy"} for j in range(2)]
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "items.jsonl"


def _run(tiny_model, family: str, tmp_path: Path) -> Path:
    items = _items(tmp_path / "bench")
    vlaudit.score_margins(vlaudit.ScoreSpec.of(model=f"hf:{tiny_model(family)}", benchmark=items,
                                               images=items.parent / "images", out=tmp_path / "run",
                                               options={"dtype": "float32"},
                                               run=vlaudit.RunOptions(batch_size=8, device="cpu")))
    return tmp_path / "run"


@pytest.mark.parametrize("family", MLLM_FAMILIES)
def test_float32_vs_bfloat16_and_batch_1_vs_8_on_every_tiny_family(tiny_model, family: str, tmp_path: Path) -> None:
    if family == "ministral":
        pytest.importorskip("mistral_common", reason="the [ministral] extra is not installed")
    result = vlaudit.measure_stability(_run(tiny_model, family, tmp_path), perturbations=["batch-1", "dtype"])
    rows = {row.perturbation: row for row in result.perturbations}
    assert "float32" in rows["dtype"].description and "bfloat16" in rows["dtype"].description
    assert rows["batch-1"].all.p99 < EXACT_BOUND
    assert EXACT_BOUND < rows["dtype"].all.p99 <= rows["dtype"].all.max == result.noise_floor < 0.5  # < 299 units
    assert result.sample.n_records == 8 * 3 and result.forwards.scored_now == 2 * result.sample.n_units
    print(f"\n{family}: tau = {result.noise_floor:.3g} (dtype p99 {rows['dtype'].all.p99:.3g}, "
          f"batch-1 p99 {rows['batch-1'].all.p99:.3g})")


def test_padding_attention_and_prefix_cache_leave_qwen2_vl_margins_to_rounding(tiny_model, tmp_path: Path) -> None:
    result = vlaudit.measure_stability(_run(tiny_model, "qwen2-vl", tmp_path),
                                       perturbations=["padding-right", "attention", "prefix-cache"])
    assert [row.perturbation for row in result.perturbations] == ["padding-right", "attention", "prefix-cache"]
    # 24 records, but the text context of the two questions is one unit per question: each unit once
    assert all(row.all.max < EXACT_BOUND and row.all.n == result.sample.n_units < 24
               for row in result.perturbations)
    assert result.noise_floor < EXACT_BOUND


def test_the_letter_interface_has_a_floor_and_a_generation_check(tiny_model, tmp_path: Path) -> None:
    """Under the letter interface the decision margin is the chosen option's log-prob lead over the next one
    (the report's r_o), and generation is parsed with the item's option letters."""
    vlaudit.render_mcq_scenes(tmp_path / "mcq", 6, seed=0)
    vlaudit.score_margins(vlaudit.ScoreSpec.of(model=f"hf:{tiny_model('qwen2-vl')}",
                                               benchmark=tmp_path / "mcq" / "items.jsonl",
                                               images=tmp_path / "mcq" / "images", out=tmp_path / "run",
                                               interfaces=("letter",), options={"dtype": "float32"},
                                               run=vlaudit.RunOptions(device="cpu")))
    floor = vlaudit.measure_stability(tmp_path / "run", perturbations=["batch-1", "dtype"])
    rows = {row.perturbation: row for row in floor.perturbations}
    assert rows["batch-1"].all.p99 < EXACT_BOUND < rows["dtype"].all.p99 <= rows["dtype"].all.max == floor.noise_floor
    assert rows["dtype"].g_img.n == 0  # G_img flips are counted on yes/no interfaces
    check = vlaudit.generate_check(tmp_path / "run", max_new_tokens=3)
    lines = [json.loads(line) for line in (tmp_path / "run" / "generations.jsonl").read_text().splitlines()]
    assert len(lines) == 6 * 3 * 2 and all(r["answers"] == ["A", "B", "C", "D"] for r in lines)
    assert all(r["margin_answer"] in "ABCD" and r["margin"] >= 0 for r in lines)
    assert all(set(c.confusion) == set("ABCD") for c in check.checks)


@pytest.mark.slow
def test_a_run_scored_with_a_relative_hf_folder_reloads_whatever_path_form(tiny_model, cli, tmp_path: Path,
                                                                           monkeypatch) -> None:
    """`models tiny` prints "load it as hf:models/tiny"; the run records the resolved folder
    and its weights, so `vca stability` / `vca generate-check` reload the run's own model from any folder and
    under any spelling of the path (relative, ./, absolute) instead of calling it another model."""
    import shutil

    shutil.copytree(tiny_model("qwen2-vl"), tmp_path / "models" / "tiny")
    items = _items(tmp_path / "bench")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("vca", "score", "--model", "hf:models/tiny", "--benchmark", items, "--images",
                       items.parent / "images", "--out", "run", "--device", "cpu", "--dtype", "float32")
    assert code == 0, err
    code, out, err = cli("vca", "stability", "run", "--sample", "2", "--perturbations", "batch-1")
    assert code == 0 and "noise floor of" in out, err
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    for model in ("hf:../models/tiny", "hf:./../models/tiny", f"hf:{tmp_path / 'models' / 'tiny'}"):
        code, out, err = cli("vca", "stability", "../run", "--sample", "2", "--perturbations", "batch-1",
                             "--model", model)
        assert code == 0 and "(0 now)" in out, (model, err)  # resumed from the cache the first call wrote
    code, out, err = cli("vca", "generate-check", "../run", "--sample", "1", "--max-new-tokens", "2")
    assert code == 0 and "generate_check.json" in out, err
    # another folder's weights are still another model
    shutil.copytree(tmp_path / "models" / "tiny", tmp_path / "models" / "other")
    config = tmp_path / "models" / "other" / "config.json"
    config.write_text(config.read_text().replace('"vocab_size"', '"pad_token_id_unused": 0, "vocab_size"', 1))
    code, _, err = cli("vca", "stability", "../run", "--sample", "2", "--model", "hf:../models/other")
    assert code == 2 and "other settings or weights" in err, err
