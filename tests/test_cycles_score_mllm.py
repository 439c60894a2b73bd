"""``vlaudit cycles score-mllm``: yes/no margins of a tiny MLLM as cycle scores, through the runner and cache."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_hf_tiny_models import tiny_model
from typer.testing import CliRunner

from vlaudit.cli import app
from vlaudit.sources.cycle_tables import read_cycles, read_scores
from vlaudit.sources.margins import read_margins
from vlaudit.tables import write_jsonl

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _cycles(root):
    from PIL import Image

    images = root / "images"
    images.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for k in range(3):
        Image.fromarray(rng.integers(0, 255, (40 + 8 * k, 48, 3), dtype=np.uint8)).save(images / f"{k:04d}.png")
    texts = {"c0": "a red square", "c1": "a blue circle", "c2": "two dogs on grass"}
    blocks = [("b0", "0", "c0", "1", "c1"), ("b1", "1", "c1", "2", "c2")]
    rows = [{"cycle_id": b, "family": "toy", "split": "test", "image_1": i1, "caption_1": c1, "image_2": i2,
             "caption_2": c2, "text_1": texts[c1], "text_2": texts[c2], "file_name_1": f"{int(i1):04d}.png",
             "file_name_2": f"{int(i2):04d}.png"} for b, i1, c1, i2, c2 in blocks]
    write_jsonl(root / "cycles.jsonl", rows)
    return root / "cycles.jsonl", images


def test_score_mllm_writes_margins_as_cycle_scores_and_cycles_eval_reads_them(tmp_path, tmp_path_factory,
                                                                               no_network):
    cycles, images = _cycles(tmp_path)
    model = tiny_model("qwen2-vl", tmp_path_factory)
    out = tmp_path / "scores.parquet"
    args = ["cycles", "score-mllm", "--model", f"hf:{model}", "--cycles", str(cycles), "--images", str(images),
            "--out", str(out), "--max-pixels", str(56 * 56 * 4)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    scores = read_scores(out)
    # two blocks share the pair (1, c1): seven distinct pairs, each scored once
    assert len(scores) == 7
    run = read_margins(tmp_path / "scores.parquet.run" / "margins.parquet")[0]
    assert run.contexts == ("original",) and run.n == 7
    margins = dict(zip(run.item_ids.tolist(), run.margins["original"].tolist(), strict=True))
    assert sorted(scores.values()) == sorted(margins.values())  # float64, bit for bit
    manifest = json.loads((tmp_path / "scores.parquet.run" / "manifest.json").read_text())
    assert "Does this caption describe the image?" in manifest["example_prompts"]["yesno/image"]
    # resumable through the cache: a second run rescoring nothing gives the same scores
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert read_scores(out) == scores
    # every entry `cycles eval` looks up is there
    assert all((i, c) in scores for cycle in read_cycles(cycles) for i, c, _ in cycle.entries())


def test_score_mllm_checks_the_image_folder_before_loading_the_model(tmp_path):
    cycles, _ = _cycles(tmp_path)
    result = CliRunner().invoke(app, ["cycles", "score-mllm", "--model", "hf:/no/such/model", "--cycles",
                                      str(cycles), "--images", str(tmp_path / "nowhere"), "--out",
                                      str(tmp_path / "s.csv")])
    assert result.exit_code != 0
    assert "folder not found" in str(result.exception)
