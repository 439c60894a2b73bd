"""Wording diagnostics (VCA §18): `vca score --template FILE` and `--system TEXT`, in the manifest and cache key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vlaudit.cli import app

pytestmark = pytest.mark.usefixtures("one_torch_thread")
runner = CliRunner()
PARAPHRASE = {"yesno": "Question: {question} Reply with yes or no."}
NEUTRAL = "You answer questions about images."


def test_default_wording_is_unchanged() -> None:
    from vlaudit.backends import hf_mllm

    # the default template fingerprint (part of every model fingerprint, hence every cache key) is the old one
    assert hf_mllm.template_fingerprint() == {
        "question_templates": hf_mllm.QUESTION_TEMPLATES, "generation_prefix": hf_mllm.GENERATION_PREFIX,
        "qwen_system": hf_mllm.QWEN_SYSTEM, "verbalizers": hf_mllm.ANSWER_WORDS}
    assert hf_mllm.merge_question_templates(None) == hf_mllm.QUESTION_TEMPLATES
    merged = hf_mllm.merge_question_templates(PARAPHRASE)
    assert merged["yesno"] == PARAPHRASE["yesno"] and merged["truefalse"] == hf_mllm.QUESTION_TEMPLATES["truefalse"]


def test_backend_wording_options(tiny_model, tmp_path_factory) -> None:
    from vlaudit.backends.hf_mllm import QWEN_SYSTEM
    from vlaudit.backends.registry import load_backend

    model = f"hf:{tiny_model('qwen2-vl')}"
    default = load_backend(model, interfaces=["yesno"])
    assert [m["role"] for m in default.messages("Is it?", "yesno", True)] == ["system", "user"]
    assert QWEN_SYSTEM in default.prompt("Is it?", "yesno", True)
    worded = load_backend(model, interfaces=["yesno"], question_templates=PARAPHRASE, system=NEUTRAL)
    prompt = worded.prompt("Is it?", "yesno", True)
    assert "Question: Is it? Reply with yes or no." in prompt and NEUTRAL in prompt and QWEN_SYSTEM not in prompt
    assert worded.describe()["template"]["system"] == NEUTRAL
    assert worded.describe()["template"]["question_templates"]["yesno"] == PARAPHRASE["yesno"]
    silent = load_backend(model, interfaces=["yesno"], system="")
    assert [m["role"] for m in silent.messages("Is it?", "yesno", False)] == ["user"]


def _score(model: Path, bench: Path, out: Path, *extra: str):
    return runner.invoke(app, ["vca", "score", "--model", f"hf:{model}", "--benchmark", str(bench / "items.jsonl"),
                               "--images", str(bench / "images"), "--out", str(out), "--contexts", "original,text",
                               "--batch-size", "4", *extra])


def test_cli_template_and_system_enter_manifest_and_cache_key(make_benchmark, tiny_model, tmp_path, tmp_path_factory, no_network) -> None:
    from vlaudit.hashing import sha256_text
    from vlaudit.tables import read_records

    model = tiny_model("qwen2-vl")
    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=2, questions=2)
    run = tmp_path / "run"
    first = _score(model, bench, run)
    assert first.exit_code == 0, first.output
    n_units = json.loads((run / "summary.json").read_text())["n_unique_units"]
    template = tmp_path / "paraphrase.json"
    template.write_text(json.dumps(PARAPHRASE))
    # a changed wording is a run with other arguments: replacing its results takes --overwrite
    worded = _score(model, bench, run, "--template", str(template), "--overwrite")
    assert worded.exit_code == 0, worded.output
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_units_from_cache"] == 0 and summary["n_units_scored_now"] == n_units  # new key, new margins
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["arguments"]["question_templates"] == PARAPHRASE
    assert manifest["backend"]["template"]["question_templates"]["yesno"] == PARAPHRASE["yesno"]
    assert "Reply with yes or no." in manifest["example_prompts"]["yesno/image"]
    # every margin was scored on the paraphrased prompt
    from vlaudit.backends.registry import load_backend

    worded_backend = load_backend(f"hf:{model}", interfaces=["yesno"], question_templates=PARAPHRASE)
    questions = {r["item_id"]: r["question"] for r in read_records(bench / "items.jsonl")}
    for row in read_records(run / "margins.parquet"):
        prompt = worded_backend.prompt(questions[row["item_id"]], "yesno", row["context"] != "text")
        assert row["prompt_hash"] == sha256_text(prompt) and "Reply with yes or no." in prompt
    again = _score(model, bench, run, "--template", str(template))  # same wording: resumed from the cache
    assert again.exit_code == 0 and json.loads((run / "summary.json").read_text())["n_units_scored_now"] == 0
    neutral = _score(model, bench, run, "--template", str(template), "--system", NEUTRAL, "--overwrite")
    assert neutral.exit_code == 0, neutral.output
    assert json.loads((run / "summary.json").read_text())["n_units_from_cache"] == 0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["arguments"]["system"] == NEUTRAL and NEUTRAL in manifest["example_prompts"]["yesno/text"]


@pytest.mark.parametrize("content, message", [
    ('{"yesno": "no field here"}', "exactly one {question}"),
    ('{"maybe": "{question}?"}', "unknown interface 'maybe'"),
    ('["{question}"]', "non-empty JSON object"),
])
def test_bad_template_files_name_file_and_field(make_benchmark, tmp_path, content, message) -> None:
    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=2, questions=1)
    template = tmp_path / "t.json"
    template.write_text(content)
    result = runner.invoke(app, ["vca", "score", "--model", "hf:/nonexistent-model", "--benchmark",
                                 str(bench / "items.jsonl"), "--images", str(bench / "images"), "--out",
                                 str(tmp_path / "run"), "--template", str(template)])
    assert result.exit_code != 0
    assert message in str(result.exception) and "t.json" in str(result.exception)  # before any model loads
