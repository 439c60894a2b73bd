"""``vca score --template FILE`` / ``--system TEXT``: wording diagnostics (VCA §18) in the prompt, the manifest and
the cache key; the defaults keep every prompt and fingerprint as before."""

from __future__ import annotations

import json

import pytest
from test_hf_tiny_models import make_benchmark, tiny_model
from typer.testing import CliRunner

from vlaudit.backends.hf_mllm import check_question_template, question_text, template_fingerprint
from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.sources.margins import read_margins

pytestmark = pytest.mark.usefixtures("one_torch_thread")
TEMPLATE = "Consider the picture. {question} Reply with {positive} or {negative} only."
SYSTEM = "Answer the user's question with exactly yes or no."


def test_question_template_fields_and_checks():
    assert question_text("Is it red?", "yesno") == "Is it red? Answer yes or no."
    assert question_text("Is it red?", "truefalse", TEMPLATE) == \
        "Consider the picture. Is it red? Reply with true or false only."
    for bad in ("no placeholder here", "{question} {colour}", "{question"):
        with pytest.raises(InputError, match="template"):
            check_question_template(bad)
    assert "question_template_override" not in template_fingerprint()  # default cache keys unchanged


def test_backend_uses_the_overrides_in_prompt_and_describe(tmp_path_factory, no_network):
    from vlaudit.backends.registry import load_backend

    model = tiny_model("qwen2-vl", tmp_path_factory)
    default = load_backend(f"hf:{model}", interfaces=["yesno"], weights=False)
    custom = load_backend(f"hf:{model}", interfaces=["yesno"], weights=False, system=SYSTEM,
                          question_template=TEMPLATE)
    plain, changed = default.prompt("Is it red?", "yesno", True), custom.prompt("Is it red?", "yesno", True)
    assert "You are a helpful assistant." in plain and SYSTEM not in plain
    assert SYSTEM in changed and "You are a helpful assistant." not in changed
    assert "Consider the picture. Is it red? Reply with yes or no only." in changed
    # describe() (every cache key) carries template_fingerprint(question_template, system)
    assert template_fingerprint(custom.question_template, custom.system)["system_override"] == SYSTEM
    assert template_fingerprint(default.question_template, default.system) == template_fingerprint()


def test_vca_score_with_template_and_system_records_them_and_needs_overwrite_to_change(tmp_path, tmp_path_factory,
                                                                                        no_network):
    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=2, questions=2)
    model = tiny_model("qwen2-vl", tmp_path_factory)
    (tmp_path / "t.txt").write_text(TEMPLATE + "\n", encoding="utf-8")
    base = ["vca", "score", "--model", f"hf:{model}", "--benchmark", str(bench / "items.jsonl"), "--images",
            str(bench / "images"), "--max-pixels", str(56 * 56 * 4)]
    result = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "run"), "--template", str(tmp_path / "t.txt"),
                                      "--system", SYSTEM])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["arguments"]["template"] == TEMPLATE and manifest["arguments"]["system"] == SYSTEM
    assert SYSTEM in manifest["example_prompts"]["yesno/image"]
    assert read_margins(tmp_path / "run" / "margins.parquet")[0].n == 4
    # the same folder without the template is another run: refused unless --overwrite
    again = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "run")])
    assert isinstance(again.exception, InputError) and "template" in str(again.exception)
    (tmp_path / "bad.txt").write_text("no field", encoding="utf-8")
    bad = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "run2"), "--template", str(tmp_path / "bad.txt")])
    assert isinstance(bad.exception, InputError) and not (tmp_path / "run2" / "manifest.json").exists()
