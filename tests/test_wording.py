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
    from vlaudit.backends.hf import mllm as hf_mllm

    # the default template fingerprint (part of every model fingerprint, hence every cache key) is the old one
    assert hf_mllm.template_fingerprint() == {
        "question_templates": hf_mllm.QUESTION_TEMPLATES, "generation_prefix": hf_mllm.GENERATION_PREFIX,
        "qwen_system": hf_mllm.QWEN_SYSTEM, "verbalizers": hf_mllm.ANSWER_WORDS}
    assert hf_mllm.merge_question_templates(None) == hf_mllm.QUESTION_TEMPLATES
    merged = hf_mllm.merge_question_templates(PARAPHRASE)
    assert merged["yesno"] == PARAPHRASE["yesno"] and merged["truefalse"] == hf_mllm.QUESTION_TEMPLATES["truefalse"]


def test_backend_wording_options(tiny_model, tmp_path_factory) -> None:
    from vlaudit.backends.hf.mllm import QWEN_SYSTEM
    from vlaudit.backends.options import HfOptions
    from vlaudit.backends.registry import ModelRef, load_backend

    model = f"hf:{tiny_model('qwen2-vl')}"
    default = load_backend(model, interfaces=["yesno"])
    assert [m["role"] for m in default.messages("Is it?", "yesno", True)] == ["system", "user"]
    assert QWEN_SYSTEM in default.prompt("Is it?", "yesno", True)
    worded = load_backend(ModelRef(model, HfOptions(system=NEUTRAL)), interfaces=["yesno"],
                          question_templates=PARAPHRASE)
    prompt = worded.prompt("Is it?", "yesno", True)
    assert "Question: Is it? Reply with yes or no." in prompt and NEUTRAL in prompt and QWEN_SYSTEM not in prompt
    assert worded.describe()["template"]["system"] == NEUTRAL
    assert worded.describe()["template"]["question_templates"]["yesno"] == PARAPHRASE["yesno"]
    silent = load_backend(ModelRef(model, HfOptions(system="")), interfaces=["yesno"])
    assert [m["role"] for m in silent.messages("Is it?", "yesno", False)] == ["user"]


def _score(model: Path, bench: Path, out: Path, *extra: str):
    return runner.invoke(app, ["vca", "score", "--model", f"hf:{model}", "--benchmark", str(bench / "items.jsonl"),
                               "--images", str(bench / "images"), "--out", str(out), "--contexts", "original,text",
                               "--batch-size", "4", *extra])


def test_cli_template_and_system_enter_manifest_and_cache_key(make_benchmark, tiny_model, tmp_path, tmp_path_factory, no_network) -> None:
    from vlaudit.files import read_records
    from vlaudit.hashing import sha256_text

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


# --- the fixed-200 VSR wording diagnostics (VCA §18) ---------------------------------------------------------


def test_named_neutral_system_message_is_the_papers_qwen_instruction(tiny_model) -> None:
    from vlaudit.backends.hf.mllm import resolve_system
    from vlaudit.backends.options import HfOptions
    from vlaudit.backends.registry import ModelRef, load_backend

    text = "Answer the user's question with exactly yes or no."
    assert resolve_system("qwen-neutral") == text and resolve_system(NEUTRAL) == NEUTRAL
    assert resolve_system(None) is None and resolve_system("") == ""
    named = load_backend(ModelRef(f"hf:{tiny_model('qwen2-vl')}", HfOptions(system="qwen-neutral")),
                         interfaces=["yesno"])
    prompt = named.prompt("Is it?", "yesno", True)
    assert text in prompt and "You are a helpful assistant." not in prompt
    assert named.describe()["template"]["system"] == text  # the cache key holds the text, not the name


def test_wording_items_draw_200_vsr_rows_stratified_with_three_wordings(shared_data, tmp_path) -> None:
    from collections import Counter

    from vlaudit.builders.wording import WORDINGS, wording_items
    from vlaudit.sources.items import read_items
    from vlaudit.sources.vsr import read_vsr

    rows = read_vsr(shared_data / "vsr" / "random_test.jsonl")
    built = wording_items(rows, dataset="vsr-random", split="test")
    assert len(built.items) == 600 and built.counts["n_sources"] == 200
    assert built.counts["by_direction"] == {"above": 50, "below": 50, "left": 50, "right": 50}
    by_source: dict[str, list] = {}
    for item in built.items:
        by_source.setdefault(item.extra["source_id"], []).append(item)
    line = {row.line: row for row in rows}
    for members in by_source.values():
        canonical, *synonyms = members
        source = line[canonical.extra["source_line"]]
        assert [m.extra["wording"] for m in members] == ["canonical", "synonym", "synonym"]
        assert canonical.extra["phrase"] == source.relation and f" {source.relation} the " in source.caption
        assert {m.extra["phrase"] for m in members} == set(WORDINGS[canonical.extra["direction"]])
        assert len({(m.image, m.label, m.subject, m.object) for m in members}) == 1
    assert Counter(i.label for i in built.items if i.extra["wording"] == "canonical") == built.counts["labels"]
    again = wording_items(rows, dataset="vsr-random", split="test")
    assert [i.item_id for i in again.items] == [i.item_id for i in built.items]  # one seeded draw
    other = wording_items(rows, dataset="vsr-random", split="test", seed=1)
    assert {i.item_id for i in other.items} != {i.item_id for i in built.items}
    out = tmp_path / "wording.jsonl"
    result = runner.invoke(app, ["data", "vsr-wording", str(shared_data / "vsr" / "random_test.jsonl"),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "left: 50 rows → 150 items" in result.output and "qwen-neutral" in result.output
    assert len(read_items(out)) == 600
    assert json.loads((tmp_path / "wording.summary.json").read_text())["system_messages"]["qwen-neutral"]


def _wording_margins(plan: dict[str, tuple[float, float]], model: str = "m") -> list[dict]:
    """Margins rows of a planted run: item → (m_o, m_text); blank 0 for every item; gold answer yes."""
    rows = []
    for item, (original, text) in plan.items():
        for context, margin in (("original", original), ("text", text), ("blank", 0.0)):
            rows.append({"model": model, "dataset": "vsr", "item_id": item, "context": context,
                         "interface": "yesno", "margin": margin, "label": "yes"})
    return rows


def test_wording_agreement_recovers_planted_flips(tmp_path, versioned_outputs) -> None:
    from vlaudit.files import write_table
    from vlaudit.sources.items import BenchmarkItem, write_items

    items = [BenchmarkItem(item_id=f"s{s}-w{w}", image="a.png", question="q", label="yes", dataset="vsr",
                           extra={"wording": "canonical" if w == 0 else "synonym", "source_id": f"s{s}",
                                  "phrase": "p", "direction": "left"})
             for s in range(4) for w in range(3)]
    write_items(tmp_path / "items.jsonl", items)
    # canonical: yes, credited. synonym 1: the same, but s0's text control out-supports the image (Dep lost).
    # synonym 2: s0 and s1 answer no (still credited: G_img = 2 > 0).
    plan = {f"s{s}-w0": (2.0, 0.0) for s in range(4)}
    plan |= {f"s{s}-w1": (2.0, 3.0 if s == 0 else 0.0) for s in range(4)}
    plan |= {f"s{s}-w2": (-2.0 if s < 2 else 2.0, 0.0) for s in range(4)}
    write_table(tmp_path / "default.parquet", _wording_margins(plan))
    # the canonical items under another system message: s3 answers no
    write_table(tmp_path / "system.parquet", _wording_margins(
        {f"s{s}-w0": (-2.0 if s == 3 else 2.0, 0.0) for s in range(4)}))
    out = tmp_path / "out"
    result = runner.invoke(app, ["vca", "wording", str(tmp_path / "default.parquet"), "--items",
                                 str(tmp_path / "items.jsonl"), "--system-run", str(tmp_path / "system.parquet"),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "wording.json").read_text())
    paraphrase, system = data["rows"]
    assert (paraphrase["form"], paraphrase["n"], paraphrase["n_sources"]) == ("Paraphrase", 12, 4)
    assert paraphrase["acc"] == pytest.approx(10 / 12) and paraphrase["dcc"] == pytest.approx(9 / 12)
    assert [(s["pred"], s["credit"]) for s in paraphrase["synonyms"]] == [(1.0, 0.75), (0.5, 1.0)]
    assert paraphrase["pred"] == pytest.approx(0.75) and paraphrase["credit"] == pytest.approx(0.875)
    assert (system["form"], system["n"], system["pred"], system["credit"]) == ("System", 4, 0.75, 1.0)
    assert system["acc"] == 0.75 and system["dcc"] == 0.75
    assert "Paraphrase m · n 12 · Acc 83.33 · D-CC 75.00 · Pred. 75.00 · Credit 87.50" in result.output
    from vlaudit.results.vca.outputs import WordingDiagnosticsResult

    versioned_outputs(out, {"wording.json": WordingDiagnosticsResult})
    not_wording = tmp_path / "plain.jsonl"
    write_items(not_wording, [BenchmarkItem(item_id="x", image="a.png", question="q", label="yes")])
    bad = runner.invoke(app, ["vca", "wording", str(tmp_path / "default.parquet"), "--items", str(not_wording),
                              "--out", str(tmp_path / "bad")])
    assert bad.exit_code != 0 and "not a wording item" in str(bad.exception)


def test_wording_commands_call_one_facade_function_each() -> None:
    import ast
    import inspect

    import vlaudit
    from vlaudit.commands import wording

    assert {"build_wording_items", "wording_diagnostics"} <= set(vlaudit.__all__)
    tree = ast.parse(inspect.getsource(wording))
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")):
        calls = {f"{c.func.value.id}.{c.func.attr}" for c in ast.walk(function) if isinstance(c, ast.Call)
                 and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
                 and c.func.value.id == "vlaudit"}
        assert len(calls) == 1, (function.name, calls)
