"""`vca generate-check`: greedy generation against the margin's decision, on tiny models whose output head is set
so that what greedy decoding emits is known (a constant " yes"; " the" before " yes" while the margin says no)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import vlaudit
from vlaudit.metrics.vca.generation import agreement_summary, parse_answer

pytestmark = pytest.mark.usefixtures("one_torch_thread", "no_network")

CONSTANT, MARKER = 0, 1  # residual-stream dimensions: constant on every token / set on " the" only


def _items(root: Path) -> Path:
    from PIL import Image

    (root / "images").mkdir(parents=True)
    rng = np.random.default_rng(0)
    rows = []
    for i in range(3):
        Image.fromarray(rng.integers(0, 256, (40, 56, 3), dtype=np.uint8)).save(root / "images" / f"{i}.png")
        rows += [{"item_id": f"q{i}_{j}", "image": f"{i}.png", "question": f"Is the cat left of the dog {j}?",
                  "label": "yes" if j == 0 else "no", "dataset": "toy"} for j in range(2)]
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "items.jsonl"


def _set_head(folder: Path, *, text_first: bool) -> Path:
    """Rewrite a tiny Qwen2-VL so that greedy decoding provably emits " yes" after any prompt (or, with
    ``text_first``, " the" then " yes", while the margin prefers " no"). Why it is provable: no attention or
    MLP output writes residual dimensions CONSTANT and MARKER, so at the last position they are the token's
    embedding — C on every token, and C on MARKER for " the" only; after the final RMSNorm both are the same
    positive number h, and every logit is a multiple of h set by the output head below."""
    import torch
    import transformers

    model = transformers.AutoModelForImageTextToText.from_pretrained(folder)
    tokenizer = transformers.AutoProcessor.from_pretrained(folder).tokenizer
    yes, no, the = (tokenizer.encode(w, add_special_tokens=False) for w in (" yes", " no", " the"))
    assert len(yes) == len(no) == len(the) == 1
    head, embed = model.get_output_embeddings(), model.get_input_embeddings()
    assert head.weight.data_ptr() != embed.weight.data_ptr()
    with torch.no_grad():
        for name, module in model.named_modules():
            if name.endswith(("o_proj", "down_proj")) and "visual" not in name:
                module.weight[[CONSTANT, MARKER]] = 0.0
        embed.weight[:, CONSTANT] = 1.0
        embed.weight[:, MARKER] = 0.0
        head.weight.zero_()
        if text_first:
            embed.weight[the[0], MARKER] = 1.0
            head.weight[the[0], CONSTANT] = 1.0
            head.weight[no[0], CONSTANT] = 0.5
            head.weight[yes[0], MARKER] = 3.0
        else:
            head.weight[yes[0], CONSTANT] = 10.0
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def head_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from vlaudit.backends.tiny.mllm import build_tiny_mllm

    out = {}
    for name, text_first in (("yes", False), ("text-first", True)):
        folder = build_tiny_mllm("qwen2-vl", tmp_path_factory.mktemp(f"head-{name}"), seed=0)
        out[name] = _set_head(folder, text_first=text_first)
    return out


def _run(model: Path, tmp_path: Path) -> Path:
    items = _items(tmp_path / "bench")
    vlaudit.score_margins(vlaudit.ScoreSpec.of(model=f"hf:{model}", benchmark=items,
                                               images=items.parent / "images", out=tmp_path / "run",
                                               run=vlaudit.RunOptions(device="cpu", batch_size=4)))
    return tmp_path / "run"


def test_a_head_that_emits_yes_agrees_with_its_margin_everywhere(head_models, tmp_path: Path) -> None:
    run = _run(head_models["yes"], tmp_path)
    result = vlaudit.generate_check(run, max_new_tokens=3)
    assert {(c.context, c.prompt) for c in result.checks} == {
        (c, p) for c in ("original", "text", "blank") for p in ("with-prefix", "without-prefix")}
    for check in result.checks:
        assert check.n == 6 and check.agreement == 1.0 and check.unparseable_rate == 0.0
        assert check.confusion["yes"] == {"yes": 6, "no": 0, "unparseable": 0} and not check.disagreements
    rows = [json.loads(line) for line in (run / "generations.jsonl").read_text().splitlines()]
    assert len(rows) == 36 and all(r["text"] == " yes yes yes" and r["answer_word_index"] == 0 for r in rows)
    assert (run / "generate_check.json").is_file()


def test_text_before_the_answer_is_parsed_and_the_disagreement_listed(head_models, tmp_path: Path, cli,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(head_models["text-first"], tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = cli("vca", "generate-check", run, "--out", tmp_path / "gc", "--max-new-tokens", "2", "--all")
    assert code == 0, err
    assert "agreement 0.0%" in out and all(len(line) <= 80 or " " not in line.strip() for line in out.splitlines())
    data = json.loads((tmp_path / "gc" / "generate_check.json").read_text())
    for check in data["checks"]:
        assert check["agreement"] == 0.0 and check["confusion"]["no"]["yes"] == 6
        assert len(check["disagreements"]) == 6
        assert all(d["text"] == " the yes" and d["margin"] < 0 and d["generated_answer"] == "yes"
                   for d in check["disagreements"])
    again = vlaudit.generate_check(run, out=tmp_path / "gc", sample=None, max_new_tokens=2)
    assert again.sample.generated_now == 0  # resumed from its cache
    assert cli("report", run)[0] == 0
    html = (run / "report.html").read_text()
    assert "Likelihood vs generation" in html and "without-prefix" in html


def test_parse_answer_takes_the_first_answer_word() -> None:
    words = {"yes": "yes", "no": "no"}
    assert parse_answer(" Yes, it is.", words) == ("yes", 0)
    assert parse_answer("I think not... no.", words) == ("no", 3)
    assert parse_answer("nothing here", words) == (None, None)
    letters = {letter: letter for letter in "ABCD"}
    assert parse_answer("The answer is (c).", letters) == ("C", 3)
    summary = agreement_summary([("yes", "yes"), ("yes", None), ("no", "yes")], ["yes", "no"])
    assert summary["agreement"] == 0.5 and summary["unparseable_rate"] == pytest.approx(1 / 3)


@pytest.mark.slow
def test_mistral_common_generates_under_its_own_prompt(tiny_model, tmp_path: Path) -> None:
    """Ministral's answer opens the assistant turn (no "Answer:" prefix), so both prompt forms decode alike."""
    pytest.importorskip("mistral_common", reason="the [ministral] extra is not installed")
    items = _items(tmp_path / "bench")
    vlaudit.score_margins(vlaudit.ScoreSpec.of(model=f"hf:{tiny_model('ministral')}", benchmark=items,
                                               images=items.parent / "images", out=tmp_path / "run",
                                               run=vlaudit.RunOptions(device="cpu"), contexts=("original", "text")))
    result = vlaudit.generate_check(tmp_path / "run", max_new_tokens=2)
    assert {c.context for c in result.checks} == {"original", "text"}
    rows = [json.loads(line) for line in (tmp_path / "run" / "generations.jsonl").read_text().splitlines()]
    by_form: dict[str, dict[tuple[str, str], str]] = {}
    for row in rows:
        by_form.setdefault(row["prompt"], {})[(row["item_id"], row["context"])] = row["text"]
    assert len(rows) == 6 * 2 * 2 and by_form["with-prefix"] == by_form["without-prefix"]


@pytest.mark.slow
def test_hostile_runs_of_generate_check_and_stability(tiny_model, tmp_path: Path, cli, one_error_line,
                                                      files_under, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hostile corpus on the run-reading commands (3 cases): --max-new-tokens 10⁹ is refused at the
    model's window instead of decoding for hours, and the corrected rerun into the same --out works; a planted
    backend that cannot generate says so; a half-killed run (killed before its margins) is one line."""
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    run = _run(tiny_model("qwen2-vl"), tmp_path)
    line = one_error_line(*cli("vca", "generate-check", run, "--out", tmp_path / "gc", "--max-new-tokens",
                               "1000000000"))
    assert "--max-new-tokens" in line and "window of 4096 positions" in line
    assert not (tmp_path / "gc").exists() or files_under(tmp_path / "gc") == []
    code, _, err = cli("vca", "generate-check", run, "--out", tmp_path / "gc", "--max-new-tokens", "2",
                       "--sample", "1")
    assert code == 0, err
    half = tmp_path / "half"
    half.mkdir()
    (half / "manifest.json").write_text((run / "manifest.json").read_text())
    line = one_error_line(*cli("vca", "stability", half, "--sample", "2", "--perturbations", "batch-1"))
    assert str(half) in line
    items = _items(tmp_path / "planted")
    code, _, err = cli("vca", "score", "--model", "ref:scene-vqa-prior", "--benchmark", items, "--images",
                       items.parent / "images", "--out", tmp_path / "planted-run")
    assert code == 0, err
    line = one_error_line(*cli("vca", "generate-check", tmp_path / "planted-run", "--sample", "1"))
    assert "ref:scene-vqa-prior cannot generate text" in line
