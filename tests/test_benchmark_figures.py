"""The benchmarks' own figures on hand-computed fixtures: POPE, MME acc/acc+, MMStar MG/ML, CircularEval,
per-category credit; and their place beside the audit in ``vca report``."""

from __future__ import annotations

import json

import numpy as np
import pytest


def test_pope_figures_by_hand() -> None:
    from vlaudit.metrics.vca.benchmark_figures import yes_no_figures

    # predicted yes: 1 1 1 0 0 0 ; gold yes: 1 1 0 1 0 0 → TP 2, FP 1, FN 1, TN 2
    f = yes_no_figures(np.array([1, 1, 1, 0, 0, 0], bool), np.array([1, 1, 0, 1, 0, 0], bool))
    assert f["accuracy"] == pytest.approx(4 / 6) and f["precision"] == pytest.approx(2 / 3)
    assert f["recall"] == pytest.approx(2 / 3) and f["f1"] == pytest.approx(2 / 3)
    assert f["yes_ratio"] == pytest.approx(0.5) and f["n"] == 6
    none = yes_no_figures(np.zeros(3, bool), np.zeros(3, bool))  # no positives at all: 0/0 is not a number
    assert none["precision"] is None and none["recall"] is None and none["f1"] is None and none["accuracy"] == 1.0


def test_mme_acc_and_acc_plus_by_hand() -> None:
    from vlaudit.metrics.vca.benchmark_figures import mme_figures

    # three images, two questions each: both right, one right, both right → acc 5/6, acc+ 2/3
    f = mme_figures(np.array([1, 1, 1, 0, 1, 1], bool), ["a", "a", "b", "b", "c", "c"])
    assert f["acc"] == pytest.approx(5 / 6) and f["acc_plus"] == pytest.approx(2 / 3) and f["n_pairs"] == 3
    assert f["score"] == pytest.approx(100 * (5 / 6 + 2 / 3))


def test_mmstar_gain_and_leakage() -> None:
    from vlaudit.metrics.vca.benchmark_figures import multimodal_gain, multimodal_leakage

    assert multimodal_gain(0.62, 0.40) == pytest.approx(0.22)
    assert multimodal_leakage(0.40, 0.31) == pytest.approx(0.09)
    assert multimodal_leakage(0.30, 0.35) == 0.0  # the LLM alone does better: no leakage, never negative


def test_circular_eval_by_hand() -> None:
    from vlaudit.metrics.vca.benchmark_figures import circular_figures

    # item x: correct in both rotations, credited in one; item y: wrong in rotation 1
    f = circular_figures(["x", "x", "y", "y"], [0, 1, 0, 1], np.array([1, 1, 1, 0], bool),
                         np.array([1, 0, 1, 1], bool))
    assert f["circular_acc"] == 0.5 and f["credited_every_rotation"] == 0.0 and f["n_items"] == 2
    assert f["per_rotation"] == [{"rotation": 0, "n": 2, "acc": 1.0, "dcc": 1.0},
                                 {"rotation": 1, "n": 2, "acc": 0.5, "dcc": 0.0}]


def test_category_credit_by_hand() -> None:
    from vlaudit.metrics.vca.benchmark_figures import category_credit

    rows = category_credit(["p", "r", "p", "r"], np.array([1, 1, 0, 1], bool), np.array([1, 0, 1, 1], bool))
    assert rows == [{"category": "p", "n": 2, "dep": 1.0, "acc": 0.5, "dcc": 0.5, "cu": 0.0},
                    {"category": "r", "n": 2, "dep": 0.5, "acc": 1.0, "dcc": 0.5, "cu": 0.5}]


def test_vca_report_shows_pope_mme_and_category_figures(cli, tmp_path) -> None:
    """The same categorised yes/no margins as a POPE run and as an MME run (with image pairs): each gets its
    own benchmark's figures only (neither gets MMStar's MG), and the per-category credit, in vca.json,
    categories.csv and the 80-column console."""
    rows = []
    # m_o, m_t, m_b per item; gold; category; image pair
    spec = [(2.0, -1.0, -1.0, "yes", "random", "p1"), (-2.0, 1.0, 0.5, "no", "random", "p1"),
            (1.0, 1.5, 1.2, "no", "adversarial", "p2"), (-1.0, -1.5, -2.0, "no", "adversarial", "p2")]
    for dataset in ("pope", "mme"):
        for k, (m_o, m_t, m_b, gold, category, pair) in enumerate(spec):
            for context, m in (("original", m_o), ("text", m_t), ("blank", m_b)):
                rows.append({"model": "m", "dataset": dataset, "item_id": f"i{k}", "context": context,
                             "margin": m, "label": gold, "category": category, "image_pair": pair})
    path = tmp_path / "margins.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = cli("vca", "report", path, "--out", tmp_path / "rep", "--resamples", 50, "--no-plot")
    assert code == 0, err
    runs = {r["dataset"]: r["benchmark"] for r in json.loads((tmp_path / "rep" / "vca.json").read_text())["runs"]}
    bench = runs["pope"]
    # predictions yes, no, yes, no; gold yes, no, no, no → acc 3/4, precision 1/2, recall 1, yes ratio 1/2
    pope = {r["category"]: r for r in bench["pope"]}
    assert pope["all"]["accuracy"] == 0.75 and pope["all"]["precision"] == 0.5 and pope["all"]["recall"] == 1.0
    assert pope["adversarial"]["accuracy"] == 0.5 and pope["random"]["accuracy"] == 1.0
    assert "mme" not in bench and "mmstar" not in bench and "pope" not in runs["mme"]
    mme = runs["mme"]["mme"]
    assert mme["pooled"]["acc"] == 0.75 and mme["pooled"]["acc_plus"] == 0.5
    assert {r["category"]: r["acc_plus"] for r in mme["subtasks"]} == {"adversarial": 0.0, "random": 1.0}
    # text answers: no, yes, yes, no → correct on i3 only: Acc text 1/4, vlaudit's own gain 3/4 − 1/4
    assert bench["blind"]["mg"] == 0.5 == runs["mme"]["blind"]["mg"]
    # Dep: i0 (G = 2 − 1 > 0), i1 (r_o 2, r_t −1, r_b −0.5: G > 0); i2 G = 1 − 1.5 < 0; i3 G = 1 − 2 < 0
    credit = {r["category"]: r for r in bench["categories"]}
    assert credit["random"]["dcc"] == 1.0 and credit["adversarial"]["dcc"] == 0.0
    assert (tmp_path / "rep" / "categories.csv").is_file()
    assert "POPE figures (%) — m · pope ·" in out and "Credit per category" in out and "MME subtasks — m · mme ·" in out
    assert "POPE figures (%) — m · mme" not in out and "MME subtasks — m · pope" not in out
    assert "Multimodal gain" not in out and "MMStar" not in out
    # a path wider than the terminal stays whole on a line of its own (under xdist tmp_path is long)
    assert max(len(line) for line in out.splitlines() if str(tmp_path) not in line) <= 80


def test_html_report_shows_the_per_category_credit_table(tmp_path) -> None:
    """``report.html`` shows the per-category credit and the benchmark tables the console prints (MMStar MG/ML
    and axes, POPE), each only on its benchmark's run."""
    from vlaudit.files import write_table
    from vlaudit.report.html import write_report

    rows = []
    for k in range(6):
        category = "adversarial" if k % 2 else "popular"
        for context, m in (("original", 2.0 if k % 2 else -1.0), ("text", 0.5), ("blank", 0.2)):
            rows.append({"model": "m", "dataset": "pope", "item_id": f"i{k}", "context": context, "margin": m,
                         "label": "yes", "category": category})
        for context, logp in (("original", [-0.1, -2.0]), ("text", [-2.0, -0.1]), ("blank", [-2.0, -0.1])):
            rows.append({"model": "m", "dataset": "mmstar", "item_id": f"s{k}", "context": context,
                         "interface": "letter", "label": "A", "logp_options": logp, "category": "math",
                         "l2_category": "geometry"})
    write_table(tmp_path / "run" / "margins.parquet", rows)
    text = write_report(tmp_path).read_text(encoding="utf-8")
    assert "Credit per category" in text and "adversarial" in text and "popular" in text
    assert "Multimodal gain and leakage (%, MMStar)" in text and "ML needs the base LLM" in text
    assert "POPE figures (%) — m · pope · yesno" in text
    assert "MMStar accuracy per capability and l2 axis (%) — m · mmstar · letter" in text
    assert "POPE figures (%) — m · mmstar" not in text and "geometry" in text


def test_a_text_only_llm_run_gives_mmstar_leakage(cli, tmp_path) -> None:
    """The LVLM is right on 3 of 4 items, 2 of 4 blind; its base LLM (text-only rows, named with --base-llm)
    on 1 of 4: MG = 0.75 − 0.5, ML = max(0, 0.5 − 0.25). Without --base-llm ML is missing, with the reason."""
    rows = []
    gold = ["A", "B", "C", "A"]
    original = [[-0.1, -2, -2], [-2, -0.1, -2], [-2, -2, -0.1], [-2, -0.1, -2]]
    text = [[-0.1, -2, -2], [-2, -0.1, -2], [-0.1, -2, -2], [-2, -0.1, -2]]
    llm = [[-0.1, -2, -2], [-0.1, -2, -2], [-0.1, -2, -2], [-2, -0.1, -2]]
    for k in range(4):
        head = {"dataset": "mmstar", "item_id": f"i{k}", "interface": "letter", "label": gold[k]}
        for context, values in (("original", original[k]), ("text", text[k]), ("blank", text[k])):
            rows.append(head | {"model": "lvlm", "context": context, "logp_options": values})
        rows.append(head | {"model": "llm", "context": "text", "logp_options": llm[k]})
    # another LLM, right on every item, that is not the base LLM named: it must not be used
    rows += [{"dataset": "mmstar", "item_id": f"i{k}", "interface": "letter", "label": gold[k], "model": "a-llm",
              "context": "text", "logp_options": original[k]} for k in range(4)]
    path = tmp_path / "margins.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = cli("vca", "report", path, "--out", tmp_path / "rep", "--resamples", 50, "--no-plot",
                         "--base-llm", "lvlm=llm")
    assert code == 0, err
    report = json.loads((tmp_path / "rep" / "vca.json").read_text())
    assert [r["model"] for r in report["runs"]] == ["lvlm"]  # the blind LLM is a baseline, not audited
    gain = report["runs"][0]["benchmark"]["mmstar"]
    assert gain["acc_image"] == 0.75 and gain["acc_text"] == 0.5 and gain["mg"] == 0.25
    assert gain["llm"] == "llm" and gain["acc_llm"] == 0.25 and gain["ml"] == 0.25
    assert "Multimodal gain and leakage" in out
    code, out, err = cli("vca", "report", path, "--out", tmp_path / "rep2", "--resamples", 50, "--no-plot")
    assert code == 0, err
    gain = json.loads((tmp_path / "rep2" / "vca.json").read_text())["runs"][0]["benchmark"]["mmstar"]
    assert "ml" not in gain and "--base-llm" in gain["ml_reason"] and "a-llm, llm" in gain["ml_reason"]
    assert "ML — for lvlm · mmstar · letter: ML needs the base LLM's text-only run" in " ".join(out.split())


def test_the_base_llm_is_scored_on_the_lvlms_items_and_a_wrong_name_is_refused(cli, one_error_line,
                                                                              tmp_path) -> None:
    """S_t is the base LLM's accuracy on the LVLM's own items: items only the LLM scored do not count, and an
    LLM that lacks some of the LVLM's items gives no ML (the reason names one)."""
    rows = []
    for k in range(6):
        head = {"dataset": "mmstar", "item_id": f"i{k}", "interface": "letter", "label": "A"}
        if k < 4:
            for context in ("original", "text", "blank"):
                rows.append(head | {"model": "lvlm", "context": context, "logp_options": [-0.1, -2.0]})
        # the LLM is right on i0, i1 and on the two items the LVLM never saw
        rows.append(head | {"model": "llm", "context": "text",
                            "logp_options": [-0.1, -2.0] if k in (0, 1, 4, 5) else [-2.0, -0.1]})
    path = tmp_path / "margins.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = cli("vca", "report", path, "--out", tmp_path / "rep", "--resamples", 20, "--no-plot",
                         "--base-llm", "llm")
    assert code == 0, err
    gain = json.loads((tmp_path / "rep" / "vca.json").read_text())["runs"][0]["benchmark"]["mmstar"]
    assert gain["acc_llm"] == 0.5 and gain["ml"] == 0.5  # 2 of the LVLM's 4 items, not 4 of 6
    line = one_error_line(*cli("vca", "report", path, "--out", tmp_path / "rep3", "--resamples", 20,
                               "--no-plot", "--base-llm", "lvlm=gpt"))
    assert "base LLM 'gpt' is no text-only run in the margins (text-only runs: llm)" in line
    short = [r for r in rows if not (r["model"] == "llm" and r["item_id"] == "i3")]
    path.write_text("".join(json.dumps(r) + "\n" for r in short), encoding="utf-8")
    code, out, err = cli("vca", "report", path, "--out", tmp_path / "rep4", "--resamples", 20, "--no-plot",
                         "--base-llm", "llm")
    assert code == 0, err
    gain = json.loads((tmp_path / "rep4" / "vca.json").read_text())["runs"][0]["benchmark"]["mmstar"]
    assert "ml" not in gain and gain["ml_reason"] == "llm scored 3 of the LVLM's 4 items (e.g. i3)"
