"""The scoring runner (`vlaudit vca score`): margins, failures, cache keys, and kill-and-resume."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vlaudit.backends.base import YesNoBackendBase

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REPO = Path(__file__).resolve().parents[1]


def _read(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


@pytest.mark.parametrize("family", ["qwen2-vl", "llava-onevision"])
def test_runner_margins_equal_direct_unbatched_forward(direct_nll, make_benchmark, tiny_model, family, tmp_path, tmp_path_factory, no_network) -> None:
    from PIL import Image

    from vlaudit.backends.base import INTERFACES
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend
    from vlaudit.contexts.image_contexts import BLANK_RGB
    from vlaudit.scoring.run.runner import MARGIN_COLUMNS, run_scoring
    from vlaudit.sources.items import read_items

    items_path = make_benchmark(tmp_path / "bench", n_images=3, questions=2)
    items = read_items(items_path)
    backend = load_backend(f"hf:{tiny_model(family)}", RunOptions(batch_size=4))
    summary = run_scoring(backend, items, images_dir=tmp_path / "bench" / "images", out_dir=tmp_path / "run",
                          contexts=["original", "text", "blank", "mismatch"], interfaces=list(INTERFACES),
                          chunk_size=5)
    rows = _read(tmp_path / "run" / "margins.parquet")
    assert len(rows) == len(items) * 4 * 2 == summary["n_scored_rows"]
    assert summary["n_unique_units"] < len(rows)  # text prompts shared by items are scored once
    assert all(tuple(row) == MARGIN_COLUMNS for row in rows)
    keys = [(r["dataset"], r["item_id"], r["context"], r["interface"]) for r in rows]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    by_id = {item.item_id: item for item in items}
    images_dir = tmp_path / "bench" / "images"
    for row in rows:
        item = by_id[row["item_id"]]
        original = Image.open(images_dir / item.image).convert("RGB")
        image = {"original": original, "text": None, "blank": Image.new("RGB", original.size, BLANK_RGB),
                 "mismatch": None}[row["context"]]
        if row["context"] == "mismatch":
            assert row["donor_image"] not in (None, item.image)
            image = Image.open(images_dir / row["donor_image"]).convert("RGB")
        assert (row["image_sha256"] is None) == (row["context"] == "text")
        prompt = backend.prompt(item.question, row["interface"], image is not None)
        yes, no = INTERFACES[row["interface"]]
        nll_yes, yes_id, n_prompt = direct_nll(backend, prompt, image, yes)
        nll_no, no_id, _ = direct_nll(backend, prompt, image, no)
        assert row["margin"] == pytest.approx(nll_no - nll_yes, abs=1e-4)
        assert row["nll_yes"] == pytest.approx(nll_yes, abs=1e-4)
        assert (row["yes_token_id"], row["no_token_id"], row["n_prompt_tokens"]) == (yes_id, no_id, n_prompt)
        assert row["status"] == "ok" and row["error"] is None and row["label"] in ("yes", "no")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert set(manifest["example_prompts"]) == {f"{i}/{m}" for i in INTERFACES for m in ("image", "text")}
    assert manifest["seed"] == 0 and manifest["packages"]["transformers"]


def test_failed_images_are_recorded_and_strict_is_fatal(make_benchmark, tiny_model, tmp_path, tmp_path_factory, no_network) -> None:
    from vlaudit.backends.registry import load_backend
    from vlaudit.errors import InputError
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    outside = tmp_path / "outside.png"
    bench = tmp_path / "bench"
    bad = ({"item_id": "corrupt", "image": "corrupt.png", "question": "Is the cat left of the dog?"},
           {"item_id": "missing", "image": "nowhere.png", "question": "Is the cat left of the dog?"},
           {"item_id": "escape", "image": "../outside.png", "question": "Is the cat left of the dog?"},
           {"item_id": "absolute", "image": str(outside), "question": "Is the cat left of the dog?"},
           {"item_id": "textonly", "image": None, "question": "Is a cat an animal?"})
    items_path = make_benchmark(bench, n_images=2, questions=1, extra=bad)
    (bench / "images" / "corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    from PIL import Image

    Image.new("RGB", (32, 32), (1, 2, 3)).save(outside)
    items = read_items(items_path)
    backend = load_backend(f"hf:{tiny_model('qwen2-vl')}", interfaces=["yesno"])
    summary = run_scoring(backend, items, images_dir=bench / "images", out_dir=tmp_path / "run",
                          contexts=["original", "text", "blank"], interfaces=["yesno"])
    assert summary["n_failed"] == 4 * 3 and summary["n_skipped"] == 2  # text-only item: no original/blank
    rows = _read(tmp_path / "run" / "margins.parquet")
    assert {r["item_id"] for r in rows} == {"q00_0", "q01_0", "textonly"}
    failures = [json.loads(line) for line in (tmp_path / "run" / "failures.jsonl").read_text().splitlines()]
    reasons = {f["item_id"]: f["error"] for f in failures if f["status"] == "failed"}
    assert "corrupt" in reasons["corrupt"] and "not found" in reasons["missing"]
    assert "outside" in reasons["escape"] and "outside" in reasons["absolute"]
    with pytest.raises(InputError, match="strict"):
        run_scoring(backend, items, images_dir=bench / "images", out_dir=tmp_path / "strict",
                    contexts=["original"], interfaces=["yesno"], strict=True)
    assert not (tmp_path / "strict" / "margins.parquet").exists()


def test_cache_reused_only_for_identical_model_and_prompt(make_benchmark, tiny_model, tmp_path, tmp_path_factory, monkeypatch,
                                                          no_network) -> None:
    from vlaudit.backends.hf import mllm as hf_mllm
    from vlaudit.backends.registry import load_backend
    from vlaudit.backends.tiny.mllm import build_tiny_mllm
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    items = read_items(make_benchmark(tmp_path / "bench", n_images=2, questions=2))
    kwargs = {"images_dir": tmp_path / "bench" / "images", "out_dir": tmp_path / "run",
              "contexts": ["original", "text"], "interfaces": ["yesno"]}
    first = load_backend(f"hf:{tiny_model('qwen2-vl')}", interfaces=["yesno"])
    s1 = run_scoring(first, items, **kwargs)
    before = (tmp_path / "run" / "margins.parquet").read_bytes()
    s2 = run_scoring(first, items, **kwargs)
    assert s2["n_units_scored_now"] == 0 and s2["n_units_from_cache"] == s1["n_unique_units"]
    assert (tmp_path / "run" / "margins.parquet").read_bytes() == before
    other_dir = build_tiny_mllm("qwen2-vl", tmp_path / "other", seed=7)  # same family, other weights
    other = load_backend(f"hf:{other_dir}", interfaces=["yesno"])
    s3 = run_scoring(other, items, **{**kwargs, "model_name": "hf:" + str(tiny_model("qwen2-vl"))})
    assert s3["n_units_from_cache"] == 0
    both = load_backend(f"hf:{tiny_model('qwen2-vl')}")  # yesno and truefalse
    s_both = run_scoring(both, items, **{**kwargs, "interfaces": ["yesno", "truefalse"]})
    assert s_both["n_units_from_cache"] == s1["n_unique_units"]  # adding an interface keeps the yesno margins
    assert s_both["n_units_scored_now"] == s1["n_unique_units"]
    monkeypatch.setitem(hf_mllm.QUESTION_TEMPLATES, "yesno", "{question} Reply yes or no.")
    s4 = run_scoring(first, items, **kwargs)
    assert s4["n_units_from_cache"] == 0 and s4["n_units_scored_now"] == s1["n_unique_units"]


def _score_cmd(model: Path, bench: Path, out: Path) -> list[str]:
    # default scoring path: batches of 3 with shared image-prefix reuse (the resumed chunks must batch alike)
    return [sys.executable, "-m", "vlaudit.cli", "vca", "score", "--model", f"hf:{model}",
            "--benchmark", str(bench / "items.jsonl"), "--images", str(bench / "images"), "--out", str(out),
            "--contexts", "original,text,blank", "--interface", "yesno,truefalse", "--batch-size", "3",
            "--chunk-size", "4", "--model-name", "tiny-qwen2-vl", "--prefix-cache"]


@pytest.mark.slow  # ~25 s: scores, kills (a process of its own), refuses another spec and resumes a run
def test_kill_and_resume_is_bit_identical(make_benchmark, tiny_model, tmp_path, tmp_path_factory, cli) -> None:
    model = tiny_model("qwen2-vl")
    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=10, questions=3)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # The uninterrupted reference runs in this process (same options as the CLI; one torch thread in both).
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    # Forced on: at these tiny image sizes the per-run decision would turn the shared-prefix path off.
    backend = load_backend(f"hf:{model}", RunOptions(batch_size=3, prefix_cache=True), interfaces=["yesno",
                                                                                                   "truefalse"])
    assert backend.prefix_cache
    run_scoring(backend, read_items(bench / "items.jsonl"), images_dir=bench / "images", out_dir=tmp_path / "full",
                contexts=["original", "text", "blank"], interfaces=["yesno", "truefalse"], chunk_size=4,
                model_name="tiny-qwen2-vl")
    resumed = tmp_path / "resumed"
    process = subprocess.Popen(_score_cmd(model, bench, resumed), env=env, cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        if len(list((resumed / "cache").glob("chunk-*.jsonl"))) >= 3:
            break
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    # the run folder after kill -9: its manifest (written when the folder opened), a partial cache, no results
    assert (resumed / "manifest.json").is_file()
    assert not (resumed / "margins.parquet").exists() and not (resumed / "summary.json").exists()
    n_partial = len(list((resumed / "cache").glob("chunk-*.jsonl")))
    # another spec into the killed run's folder is refused, naming the field, and touches nothing
    # the refusal and the resume through the real entry point in this process (the kill needs its own process)
    code, _, err = cli(*_score_cmd(model, bench, resumed)[3:], "--seed", "5")
    assert code == 2 and "seed: 0 → 5" in err, err
    assert len(list((resumed / "cache").glob("chunk-*.jsonl"))) == n_partial
    code, _, err = cli(*_score_cmd(model, bench, resumed)[3:])
    assert code == 0, err
    full_summary = json.loads((tmp_path / "full" / "summary.json").read_text())
    summary = json.loads((resumed / "summary.json").read_text())
    assert summary["n_units_from_cache"] > 0 and summary["n_units_scored_now"] > 0
    assert summary["n_units_from_cache"] + summary["n_units_scored_now"] == full_summary["n_unique_units"]
    assert n_partial < full_summary["n_chunks"]
    assert (resumed / "margins.parquet").read_bytes() == (tmp_path / "full" / "margins.parquet").read_bytes()
    cached_keys = [json.loads(line)["key"] for path in sorted((resumed / "cache").glob("chunk-*.jsonl"))
                   for line in path.read_text().splitlines()[:-1]]  # the last line seals the chunk
    assert len(cached_keys) == len(set(cached_keys)) == full_summary["n_unique_units"]
    assert (resumed / "failures.jsonl").read_bytes() == (tmp_path / "full" / "failures.jsonl").read_bytes()


def test_kill_during_the_final_write_resumes(make_benchmark, tiny_model, tmp_path, tmp_path_factory, no_network) -> None:
    """What kill -9 leaves after the last chunk: temp files of the final writes (never renamed), some results
    written and others not. A rerun rebuilds all from the cache, bit-identical, scores nothing again and
    leaves no temporary file. A rerun with other arguments that dies mid-run leaves no stale results."""
    from vlaudit.backends.registry import load_backend
    from vlaudit.scoring.run.runner import OUTPUT_FILES, run_scoring
    from vlaudit.sources.items import read_items

    items = read_items(make_benchmark(tmp_path / "bench", n_images=3, questions=2))
    backend = load_backend(f"hf:{tiny_model('qwen2-vl')}", interfaces=["yesno"])
    kwargs = {"images_dir": tmp_path / "bench" / "images", "out_dir": tmp_path / "run",
              "contexts": ["original", "text", "blank"], "interfaces": ["yesno"], "chunk_size": 4}
    first = run_scoring(backend, items, **kwargs)
    run = tmp_path / "run"
    reference = {name: (run / name).read_bytes() for name in ("margins.parquet", "failures.jsonl")}
    for leftover in OUTPUT_FILES:
        (run / f".{leftover}.abc123.tmp").write_bytes(reference["margins.parquet"][:100])  # half writes
    (run / "cache" / ".chunk-000099.jsonl.x.tmp").write_text('{"key": "ha')
    (run / "summary.json").unlink()  # killed after margins.parquet, before summary.json
    summary = run_scoring(backend, items, **kwargs)
    assert summary["n_units_scored_now"] == 0 and summary["n_unique_units"] == first["n_unique_units"]
    for name, data in reference.items():
        assert (run / name).read_bytes() == data
    assert not [p.name for p in run.rglob("*.tmp")]
    assert {p.name for p in run.iterdir()} >= set(OUTPUT_FILES)

    class Killed(BaseException):
        pass

    class DiesWhenScoring(YesNoBackendBase):  # the model process dies before the first new chunk is written
        spec, describe, prompt = backend.spec, backend.describe, backend.prompt
        verbalizer_ids = backend.verbalizer_ids

        def score(self, requests):
            raise Killed

    with pytest.raises(Killed):
        run_scoring(DiesWhenScoring(), items, **{**kwargs, "contexts": ["original", "mean"]})
    assert not (run / "margins.parquet").exists() and not (run / "summary.json").exists()
    assert json.loads((run / "manifest.json").read_text())["contexts"] == ["original", "mean"]
    run_scoring(backend, items, **kwargs)
    assert (run / "margins.parquet").read_bytes() == reference["margins.parquet"]


def test_manifest_states_everything_that_determines_the_margins(make_benchmark, tiny_model, tmp_path, tmp_path_factory, no_network) -> None:
    from vlaudit.backends.options import HfOptions
    from vlaudit.backends.registry import ModelRef, load_backend
    from vlaudit.scoring.run.manifest import git_commit
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    items = read_items(make_benchmark(tmp_path / "bench", n_images=2, questions=1))
    backend = load_backend(ModelRef(f"hf:{tiny_model('qwen2-vl')}", HfOptions(max_pixels=56 * 56 * 2,
                                                                              revision=None)), interfaces=["yesno"])
    run_scoring(backend, items, images_dir=tmp_path / "bench" / "images", out_dir=tmp_path / "run",
                contexts=["original", "text"], interfaces=["yesno"], seed=5, arguments={"seed": 5, "x": "y"})
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["spec"] == backend.spec == manifest["model"] and "revision" in manifest
    assert manifest["dtype"] == "float32" and manifest["pixel_budget"]["max_pixels"] == 56 * 56 * 2
    assert len(manifest["prompt_template_sha256"]) == 64 and manifest["seed"] == 5
    assert manifest["arguments"] == {"seed": 5, "x": "y"} and manifest["git_commit"] == git_commit()
    assert {"torch", "transformers", "vlaudit"} <= {k for k, v in manifest["packages"].items() if v}
    assert manifest["example_prompts"]["yesno/image"] == backend.prompt(items[0].question, "yesno", True)
    assert manifest["model_fingerprint"] and manifest["context_parameters"]["blank_rgb"] == [128, 128, 128]
    # the run's record is a typed ScoringRunRecord: the manifest reads back into it, key for key and in order
    from vlaudit.results.scoring_record import SCORING_RECORD_KEYS, ScoringRunRecord

    record = ScoringRunRecord.from_dict(manifest)
    assert [key for key in manifest if key in SCORING_RECORD_KEYS] == list(SCORING_RECORD_KEYS)
    assert record.to_dict() == {key: manifest[key] for key in SCORING_RECORD_KEYS}
    assert record.prefix_cache is not None and record.prefix_cache.to_dict() == manifest["prefix_cache"]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_scored_rows"] == 4 and summary["n_failed"] == 0 and "units_per_second" in summary


def test_vca_score_cli_output_reads_as_margins(make_benchmark, tiny_model, tmp_path, tmp_path_factory, no_network) -> None:
    from typer.testing import CliRunner

    from vlaudit.commands import vca_score  # noqa: F401  (registers the command)
    from vlaudit.commands._apps import app
    from vlaudit.sources.margins import read_margins

    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=3, questions=2)
    model = tiny_model("qwen2-vl")
    result = CliRunner().invoke(app, ["vca", "score", "--model", f"hf:{model}", "--benchmark",
                                      str(bench / "items.jsonl"), "--images", str(bench / "images"), "--out",
                                      str(tmp_path / "run"), "--contexts", "original,text,blank,mean,rele,irre",
                                      "--interface", "yesno,truefalse", "--max-pixels", str(56 * 56 * 4)])
    assert result.exit_code == 0, result.output
    runs = read_margins(tmp_path / "run" / "margins.parquet")
    assert {run.interface for run in runs} == {"yesno", "truefalse"}
    assert set(runs[0].margins) == {"original", "text", "blank", "mean", "rele", "irre"}
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["pixel_budget"]["max_pixels"] == 56 * 56 * 4
    assert manifest["arguments"]["contexts"] == ["original", "text", "blank", "mean", "rele", "irre"]


def test_real_coco_jpegs_score_under_all_box_free_contexts(tiny_model, shared_data, tmp_path, tmp_path_factory,
                                                          no_network) -> None:
    """Real COCO val2017 JPEGs (full size, varied aspect) through two families and the mismatch derangement."""
    from vlaudit.backends.registry import load_backend
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import BenchmarkItem

    images_dir = shared_data / "coco_val2017_sample" / "val2017"
    names = sorted(p.name for p in images_dir.glob("*.jpg"))[:5]
    assert len(names) == 5
    items = [BenchmarkItem(item_id=f"{name}-{j}", image=name, question=f"Is there a {obj} in the picture?",
                           label="yes" if j == 0 else "no", dataset="coco-sample", split="val2017")
             for name in names for j, obj in enumerate(["person", "giraffe"])]
    for family in ("qwen2-vl", "gemma3"):
        backend = load_backend(f"hf:{tiny_model(family)}", interfaces=["yesno"])
        summary = run_scoring(backend, items, images_dir=images_dir, out_dir=tmp_path / family,
                              contexts=["original", "text", "blank", "mean", "mismatch"], interfaces=["yesno"])
        assert summary["n_failed"] == 0 and summary["n_scored_rows"] == len(items) * 5
        rows = _read(tmp_path / family / "margins.parquet")
        for row in rows:
            if row["context"] == "mismatch":
                assert row["donor_image"] in names and row["donor_image"] != row["item_id"].split("-")[0]
        assert all(math.isfinite(r["margin"]) for r in rows)
