"""A text-only letter run — a base LLM scored blind, the S_t of MMStar's multimodal leakage (MMStar §4) — is
scored, warned about and reported: it has no ``original`` context, and its decision is its answer under ``text``
(``vca score --interface letter --contexts text`` ended in ``KeyError: 'original'``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from vlaudit.analysis.vca.choice_run import aligned_run, decision_context, predicted_letters
from vlaudit.analysis.vca.no_answer import no_answer_warning
from vlaudit.builders.mcq_scenes import render_mcq_scenes
from vlaudit.sources.margins import read_margins


def _score(cli, scenes: Path, out: Path, *args: object) -> None:
    code, _, err = cli("vca", "score", "--benchmark", scenes / "items.jsonl", "--images", scenes / "images",
                       "--out", out, "--interface", "letter", *args)
    assert code == 0, err
    assert "Traceback" not in err


def test_the_base_llm_text_only_letter_run_scores_and_gives_mmstar_leakage(cli, tmp_path: Path) -> None:
    """A base LLM's text-only letter run (`vca score --contexts text`) scores; its S_t is the share of items whose best text-only option is gold,
    counted here from margins.parquet by hand; ``vca report --base-llm`` gives ML = max(0, S_wv − S_t)."""
    scenes = tmp_path / "scenes"
    render_mcq_scenes(scenes, 4, seed=0, dataset="mmstar", rotations=False)
    _score(cli, scenes, tmp_path / "llm", "--model", "ref:scene-mcq-prior", "--model-name", "base-llm",
           "--contexts", "text")
    _score(cli, scenes, tmp_path / "lvlm", "--model", "ref:scene-mcq-mixture")
    llm = pd.read_parquet(tmp_path / "llm" / "margins.parquet")
    assert set(llm["context"]) == {"text"}
    best = [row.option_letters[int(np.argmax(row.logp_options))] for row in llm.itertuples()]
    s_t = float(np.mean([b == gold for b, gold in zip(best, llm["label"], strict=True)]))
    both = pd.concat([llm, pd.read_parquet(tmp_path / "lvlm" / "margins.parquet")])
    both.to_parquet(tmp_path / "both.parquet")
    code, _, err = cli("vca", "report", tmp_path / "both.parquet", "--out", tmp_path / "rep", "--resamples", 20,
                       "--no-plot", "--base-llm", "base-llm")
    assert code == 0, err
    gain = json.loads((tmp_path / "rep" / "vca.json").read_text())["runs"][0]["benchmark"]["mmstar"]
    assert gain["llm"] == "base-llm" and gain["acc_llm"] == s_t
    assert gain["ml"] == max(0.0, gain["acc_text"] - s_t)


def test_a_text_only_run_decides_under_text_and_its_ties_are_named_under_text(tmp_path: Path) -> None:
    """With only ``text`` rows the decision is the text answer (d = B on both items), the aligned support r_text
    is then ≥ 0, and a run tied there is called answerless "under text", not "under the image"."""
    rows = [{"model": "llm", "dataset": "d", "item_id": f"i{k}", "context": "text", "interface": "letter",
             "label": "A", "logp_options": [-2.0, -0.5]} for k in range(2)]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (run,) = read_margins(path)
    assert decision_context(run.margins) == "text" and decision_context(["original", "text"]) == "original"
    assert list(predicted_letters(run.choices)) == ["B", "B"]
    aligned = aligned_run(run)
    np.testing.assert_allclose(aligned.margins["text"], [1.5, 1.5])
    assert list(aligned.labels) == [False, False] and no_answer_warning(aligned) is None
    tied = [r | {"logp_options": [-1.0, -1.0]} for r in rows]
    path.write_text("".join(json.dumps(r) + "\n" for r in tied), encoding="utf-8")
    (run,) = read_margins(path)
    line = no_answer_warning(aligned_run(run))
    assert line is not None and "2 of 2 items have every option's log-probability equal in every context" in line
