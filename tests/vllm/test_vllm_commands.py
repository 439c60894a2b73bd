"""`vca generate-check` and `cycles score-mllm` on a `vllm:` model, on the tiny head_dim-32
Qwen2-VL in a real vLLM engine: generate-check decodes with the session's engine; score-mllm loads its own
engine from the command line, as a user's run does (a process of its own: an engine shut down in the test
process would take the session engine's parallel groups with it), and its cycle scores equal those of the
same command on the `hf:` backend (run in this process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

import vlaudit
from vlaudit.cli import app
from vlaudit.sources.cycle_tables import read_scores

MARGIN_TOL = 1e-5  # tests/vllm/test_vllm_backend.py states why


def two_cycles(root: Path) -> Path:
    """Two exact cycles over four small images (tests/tiny_cycles.py's, written here: tests/ is not put on
    the path beside a folder named vllm)."""
    (root / "images").mkdir(parents=True)
    rows = []
    for k in range(2):
        ids = [f"u{k}a", f"u{k}b"]
        for n, image_id in enumerate(ids):
            Image.new("RGB", (24, 24), (60 * k + 30 * n, 120, 30)).save(root / "images" / f"{image_id}.png")
        rows.append({"cycle_id": f"c{k}", "family": "f", "split": "test", "image_1": ids[0], "image_2": ids[1],
                     "caption_1": f"v{k}a", "caption_2": f"v{k}b", "text_1": f"a dog left of a cat {k}",
                     "text_2": f"a dog right of a cat {k}"})
    path = root / "cycles.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_generate_check_runs_on_the_vllm_engine(tmp_path, make_benchmark, vllm_model, vllm_backend) -> None:
    backend = vllm_backend("qwen2-vl")
    items = make_benchmark(tmp_path, n_images=2, questions=2)
    spec = vlaudit.ScoreSpec.of(model=vllm_model("qwen2-vl"), benchmark=items, images=tmp_path / "images",
                                out=tmp_path / "run", contexts=("original", "text"))
    vlaudit.score_margins(spec, backend=backend)
    result = vlaudit.generate_check(tmp_path / "run", sample=None, max_new_tokens=2, model=backend)
    assert (tmp_path / "run" / "generate_check.json").is_file()
    assert {check.context for check in result.checks} == {"original", "text"}
    assert all(check.n == 4 for check in result.checks)  # 2 images × 2 questions, every item (sample=None)
    assert all(0.0 <= check.agreement <= 1.0 for check in result.checks if check.agreement is not None)


def test_cycles_score_mllm_on_vllm_equals_the_hf_backends_scores(tmp_path, hd32_model) -> None:
    cycles = two_cycles(tmp_path)
    folder = hd32_model("qwen2-vl")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    scores = {}
    for prefix in ("vllm", "hf"):
        args = ["cycles", "score-mllm", "--model", f"{prefix}:{folder}", "--cycles", str(cycles), "--images",
                str(tmp_path / "images"), "--out", str(tmp_path / f"{prefix}.csv"), "--dtype", "float32",
                "--device", "cpu"]
        if prefix == "vllm":  # its own process (the module docstring says why); eager: conftest.EAGER
            done = subprocess.run([sys.executable, "-m", "vlaudit", *args, "--enforce-eager"], env=env, capture_output=True, text=True,
                                  check=False)
            assert done.returncode == 0, done.stderr[-3000:]
        else:  # the reference in this process: no engine, and a process start saved
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, result.output[-3000:]
        scores[prefix] = read_scores(tmp_path / f"{prefix}.csv")
    assert set(scores["vllm"]) == set(scores["hf"]) and len(scores["hf"]) == 8
    for key, value in scores["hf"].items():
        assert scores["vllm"][key] == pytest.approx(value, abs=MARGIN_TOL)
