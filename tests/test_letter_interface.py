"""The letter interface through the real path: tiny models of every family score a four-option benchmark,
the letters' log-probs equal a direct forward over prompt + letter, a letter that is not one token is
refused naming model and letter, kill -9 then resume gives byte-identical margins, and the real tokenizers'
letter ids are shown by ``models verbalizers --interface letter``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytestmark = pytest.mark.usefixtures("one_torch_thread")
REPO = Path(__file__).resolve().parents[1]
FAMILIES = ("qwen2-vl", "qwen2.5-vl", "qwen3-vl", "llava-onevision", "gemma3", "internvl", "ministral")


def _letter_benchmark(root: Path, n: int = 4) -> Path:
    rng = np.random.default_rng(1)
    (root / "images").mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n):
        Image.fromarray(rng.integers(0, 256, size=(32 + 8 * (i % 2), 40, 3), dtype=np.uint8)).save(
            root / "images" / f"im{i}.png")
        rows.append({"item_id": f"q{i}", "image": f"im{i}.png", "question": f"Where is shape {i}?",
                     "options": ["left", "right", "above", "below"][: 2 + i % 3], "label": "B",
                     "hint": "Look at the picture." if i == 0 else None, "category": "c" + str(i % 2)})
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root / "items.jsonl"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_tiny_family_scores_a_letter_benchmark(family, tiny_model, tmp_path, no_network) -> None:
    if family == "ministral":
        pytest.importorskip("mistral_common")
    import pyarrow.parquet as pq

    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    bench = _letter_benchmark(tmp_path / "bench")
    backend = load_backend(f"hf:{tiny_model(family)}", RunOptions(device="cpu"), interfaces=["letter"])
    run_scoring(backend, read_items(bench), images_dir=bench.parent / "images", out_dir=tmp_path / "run",
                contexts=["original", "text", "blank"], interfaces=["letter"])
    rows = pq.read_table(tmp_path / "run" / "margins.parquet").to_pylist()
    assert len(rows) == 12 and all(r["interface"] == "letter" and r["margin"] is None for r in rows)
    for r in rows:
        k = len(r["logp_options"])
        assert r["option_letters"] == "ABCD"[:k] and r["option_token_ids"] == list(backend.letter_ids[:k])
        assert all(v < 0 for v in r["logp_options"]) and np.logaddexp.reduce(r["logp_options"]) < 0
    assert {r["category"] for r in rows} == {"c0", "c1"}


def test_letters_read_from_one_forward_equal_a_forward_per_option(tiny_model, direct_nll) -> None:
    """Known answer: log p(letter | prompt) from the one forward equals the NLL of prompt + " letter"."""
    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.prompt.letters import letter_question
    from vlaudit.backends.registry import load_backend

    backend = load_backend(f"hf:{tiny_model('qwen2-vl')}", interfaces=["letter"])
    question = letter_question("Where is the red square?", ("left", "right", "above"), "A hint.")
    image = Image.new("RGB", (40, 32), (200, 30, 30))
    for picture in (image, None):
        [result] = backend.score([YesNoRequest("k", question, picture, "letter", n_options=3)])
        prompt = backend.prompt(question, "letter", picture is not None)
        assert prompt.endswith("from the given choices directly.<|im_end|>\n<|im_start|>assistant\nAnswer:")
        for letter, logp, token_id in zip("ABC", result.logp_options, result.option_token_ids, strict=True):
            nll, last_id, _ = direct_nll(backend, prompt, picture, f" {letter}")
            assert last_id == token_id and logp == pytest.approx(-nll, abs=1e-5)


def test_a_letter_that_is_not_one_token_is_refused_before_scoring(tiny_model, tmp_path, cli,
                                                                  one_error_line) -> None:
    rows = [{"item_id": "q", "image": None, "question": "Which?", "options": list("abcdefghijkl"), "label": "A"}]
    (tmp_path / "items.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    code, out, err = cli("vca", "score", "--model", f"hf:{tiny_model('qwen2-vl')}", "--benchmark",
                         tmp_path / "items.jsonl", "--images", tmp_path, "--out", tmp_path / "run", "--interface",
                         "letter", "--contexts", "text")
    line = one_error_line(code, out, err)
    assert f"hf:{tiny_model('qwen2-vl')}" in line and "option letter K is not one token" in line
    assert not (tmp_path / "run" / "manifest.json").exists()


def _score_cmd(model: Path, bench: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "vlaudit.cli", "vca", "score", "--model", f"hf:{model}", "--benchmark",
            str(bench), "--images", str(bench.parent / "images"), "--out", str(out), "--contexts",
            "original,text,blank", "--interface", "letter", "--batch-size", "2", "--chunk-size", "2"]


@pytest.mark.slow  # ~20 s: scores, kills (a process of its own) and resumes a letter run
def test_letter_run_killed_and_resumed_is_byte_identical(tiny_model, tmp_path, cli) -> None:
    model = tiny_model("qwen2-vl")
    bench = _letter_benchmark(tmp_path / "bench", n=8)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # the uninterrupted run and the resume through the real entry point in this process (one torch thread, as
    # in the killed process); the kill -9 needs a process of its own
    code, _, err = cli(*_score_cmd(model, bench, tmp_path / "full")[3:])
    assert code == 0, err
    resumed = tmp_path / "resumed"
    process = subprocess.Popen(_score_cmd(model, bench, resumed), env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if len(list((resumed / "cache").glob("chunk-*.jsonl"))) >= 2:
            break
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL and not (resumed / "margins.parquet").exists()
    code, _, err = cli(*_score_cmd(model, bench, resumed)[3:])
    assert code == 0, err
    summary = json.loads((resumed / "summary.json").read_text())
    assert summary["n_units_from_cache"] > 0 and summary["n_units_scored_now"] > 0
    assert (resumed / "margins.parquet").read_bytes() == (tmp_path / "full" / "margins.parquet").read_bytes()


@pytest.mark.parametrize(("family", "letters"), [("qwen2-vl", "362/425/356/422"),
                                                 ("ministral", "1065/1066/1067/1068")])
def test_models_verbalizers_shows_the_real_tokenizers_letter_ids(family, letters, real_tokenizer_model, cli) -> None:
    """Qwen's " A".." D" after "Answer:" and tekken's "A".." D" opening the turn (no space); the model is
    `models tiny --tokenizer real`'s, built once per session (tests/conftest.py)."""
    code, out, err = cli("models", "verbalizers", f"hf:{real_tokenizer_model(family)}", "--interface", "letter")
    assert code == 0, err
    ids = out.split("token ids (letter):")[1].split()[0]
    assert ids.split("/")[:4] == letters.split("/") and len(ids.split("/")) == 26
    assert "' A'" in out if family != "ministral" else "ĠA" not in out


def test_shared_image_prefix_gives_the_letters_of_full_forwards(tiny_model) -> None:
    """Several questions about one image: the Qwen prefix-cache path reads the same letter log-probs."""
    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.prompt.letters import letter_question
    from vlaudit.backends.registry import load_backend

    image = Image.new("RGB", (48, 40), (30, 140, 200))
    requests = [YesNoRequest(f"k{i}", letter_question(f"Question {i}?", ("a", "b", "c", "d")[: 2 + i]), image,
                             "letter", n_options=2 + i) for i in range(3)]
    shared = load_backend(f"hf:{tiny_model('qwen2-vl')}", RunOptions(prefix_cache=True), interfaces=["letter"])
    full = load_backend(f"hf:{tiny_model('qwen2-vl')}", RunOptions(prefix_cache=False), interfaces=["letter"])
    for a, b in zip(shared.score(requests), full.score(requests), strict=True):
        assert len(a.logp_options) == len(b.logp_options) and a.option_token_ids == b.option_token_ids
        assert np.allclose(a.logp_options, b.logp_options, atol=1e-5)


@pytest.mark.slow  # two Ray actors (the session's Ray instance: tests/conftest.py's local_ray)
def test_letter_run_on_ray_is_byte_identical_to_a_local_run(tiny_model, local_ray, tmp_path) -> None:
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import BackendLoad, ModelRef
    from vlaudit.scoring.run.ray_executor import RayExecutor
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    model = tiny_model("qwen2-vl")
    bench = _letter_benchmark(tmp_path / "bench", n=6)
    items = read_items(bench)
    load = BackendLoad(ModelRef(f"hf:{model}"), RunOptions(batch_size=2), interfaces=("letter",))
    kwargs = {"images_dir": bench.parent / "images", "contexts": ["original", "text", "blank"],
              "interfaces": ["letter"], "chunk_size": 4}
    run_scoring(load.load(), items, out_dir=tmp_path / "local", **kwargs)
    executor = RayExecutor(load, workers=2, threads=1)
    try:
        run_scoring(executor.start(), items, out_dir=tmp_path / "ray", executor=executor, **kwargs)
    finally:
        executor.shutdown()
    assert (tmp_path / "ray" / "margins.parquet").read_bytes() == (tmp_path / "local" / "margins.parquet").read_bytes()
