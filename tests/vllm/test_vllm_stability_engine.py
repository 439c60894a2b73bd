"""``vca stability --perturbations engine`` on an ``hf:`` run from the command line, in its own process (as a
user runs it): the run's transformers model is freed, vLLM's engine loads with the engine settings given to
``vca stability`` and is shut down after; τ is float32 rounding on the same tiny weights; vLLM's log stays
off stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vlaudit

REPO = Path(__file__).resolve().parents[2]
MARGIN_TOL = 1e-5


def test_engine_stability_of_an_hf_run_from_the_command_line(tmp_path, make_benchmark, hf_backend) -> None:
    items = make_benchmark(tmp_path, n_images=2, questions=1)
    backend = hf_backend("qwen2-vl")
    run = tmp_path / "hf-run"
    vlaudit.score_margins(vlaudit.ScoreSpec.of(model=backend.spec, benchmark=items, images=tmp_path / "images",
                                               out=run, contexts=("original", "text"), options={"dtype": "float32"},
                                               run=vlaudit.RunOptions(device="cpu")), backend=backend)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "vlaudit", "vca", "stability", str(run), "--sample", "2",
                           "--perturbations", "engine", "--enforce-eager", "--max-model-len", "4096"],
                          env=env, capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "INFO" not in done.stdout, done.stdout[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    result = json.loads((run / "stability.json").read_text())
    (row,) = result["perturbations"]
    assert row["perturbation"] == "engine" and row["all"]["n"] == 4
    assert result["noise_floor"] <= MARGIN_TOL  # the same weights in vLLM: equal to float32 rounding


@pytest.mark.slow
def test_a_head_size_vllms_cpu_attention_refuses_is_one_line_and_the_corrected_rerun_runs(
        tmp_path, make_benchmark, hd32_model) -> None:
    """A tiny model of head_dim 16 (``vlaudit models tiny``'s default) crashes vLLM's CPU attention at the first
    forward: one line with the way out (exit 3), nothing on stdout; the corrected run (``--head-dim 32``) into
    the same folder, with other arguments, is not refused, since the crashed run scored nothing."""
    from vlaudit.backends.tiny.mllm import build_tiny_mllm

    items = make_benchmark(tmp_path, n_images=1, questions=1)
    hd16 = build_tiny_mllm("qwen2-vl", tmp_path / "hd16")
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def score(model: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "vlaudit", "vca", "score", "--model", f"vllm:{model}",
                               "--benchmark", str(items), "--images", str(tmp_path / "images"), "--out",
                               str(tmp_path / "run"), "--contexts", "original", "--enforce-eager"],
                              env=env, capture_output=True, text=True, check=False, timeout=900)

    crashed = score(hd16)
    assert crashed.returncode == 3 and "Traceback" not in crashed.stderr, crashed.stderr[-3000:]
    assert not crashed.stdout.strip(), crashed.stdout[-2000:]
    (line,) = [line for line in crashed.stderr.splitlines() if line.startswith("error:")]
    assert "RuntimeError: Unsupported CPU attention configuration: head_dim=16" in line and "--head-dim 32" in line
    fixed = score(hd32_model("qwen2-vl"))
    assert fixed.returncode == 0, fixed.stderr[-3000:]
