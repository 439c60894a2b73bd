"""Every figure vlaudit prints under a benchmark's name against that benchmark's own scoring code, on small
files in the benchmark's published layout: ``vlaudit data items`` reads the release, the margins are written
by hand for the items it wrote (or scored by a planted model), ``vlaudit vca report`` prints the figures, and
the official code's logic — re-expressed below, each citing repository, commit and path — computes them from
the same file and the same answers. Ties are included: the model's answer is the letter with the highest
log-probability (the earliest on a tie) and "yes" where m = log p(yes) − log p(no) ≥ 0
(:func:`vlaudit.metrics.vca.choice.predicted_option`, :func:`vlaudit.metrics.vca.support.prediction_direction`),
and that answer is what the official code is given.

Where vlaudit deliberately differs (MME images with one of their two questions; MMStar's fixed divisor of
1,500) the test pins both numbers; docs/reference/benchmarks.md says why.
"""

from __future__ import annotations

import base64
import json
import string
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from benchmark_releases import BLUE, GREEN, IMAGE, RED, S, image, write_parquet

from vlaudit.builders.circular import circular_items
from vlaudit.metrics.vca.choice import predicted_option
from vlaudit.metrics.vca.support import prediction_direction
from vlaudit.sources.items import BenchmarkItem, read_items

pd = pytest.importorskip("pandas")

VLMEVALKIT = "open-compass/VLMEvalKit@e8e78f05f3080fe28154f2130321f17951c3be94"
B64 = [base64.b64encode(colour).decode() for colour in (RED, GREEN, BLUE)]


# --- the official code, re-expressed -------------------------------------------------------------------------

def can_infer(prediction: str, choices: dict[str, str]) -> str | bool:
    """VLMEvalKit ``vlmeval/utils/matching_util.py`` ``can_infer`` on a one-letter prediction (what a letter
    scorer answers): the letter when it is one of the row's choices, else False."""
    return prediction if prediction in choices else False


def vlmevalkit_circular(data: Any) -> dict[str, float]:
    """VLMEvalKit ``mcq_circular_eval`` (model=None, exact matching) then ``report_acc``
    ({VLMEVALKIT}, vlmeval/dataset/utils/multiple_choice.py). ``data``: the TSV as ``load`` reads it
    (``pd.read_csv(sep='\\t')``, vlmeval/smp/file.py) plus a ``prediction`` column.

    g_index = index % 1e6; only rows in the answer map; the main rows are those with index == g_index; a
    group is all rows of a main row's g_index (a group without a main row is never looked at); hit = 1 when
    every row's prefetched answer (``build_choices``: letter columns not NaN, ``can_infer``) is its GT."""
    data = data.copy()
    answer_map = dict(zip(data["index"], data["answer"], strict=True))
    data["g_index"] = [int(x % 1e6) for x in data["index"]]
    data = data[data["index"].isin(answer_map)]
    data["GT"] = [answer_map[idx] for idx in data["index"]]
    main = data[data["index"] == data["g_index"]].copy()
    hits = []
    for idx in main["index"]:
        sub = data[data["g_index"] == idx]
        predicted = []
        for _, item in sub.iterrows():
            choices = {ch: item[ch] for ch in string.ascii_uppercase if ch in item and not pd.isna(item[ch])}
            predicted.append(can_infer(item["prediction"], choices))
        hits.append(int(all(p and p == g for p, g in zip(predicted, sub["GT"], strict=True))))
    main["hit"] = hits
    res = {"Overall": float(np.mean(main["hit"]))}
    for ab in sorted(set(main["category"])):
        res[ab] = float(np.mean(main[main["category"] == ab]["hit"]))
    return res | {"_groups": len(main)}


def mme_rating(rows: list[dict[str, Any]]) -> dict[str, float]:
    """VLMEvalKit ``MME_rating`` ({VLMEVALKIT}, vlmeval/dataset/utils/yorn.py): per category, per
    ``image_path``, the scores; subtask = 100·mean(all) + 100·mean(val[0]·val[1]); perception / reasoning = the
    sum of their subtasks (here: of those present; the official code needs all 14)."""
    stats: dict[str, dict[str, list[bool]]] = defaultdict(dict)
    for row in rows:
        stats[row["category"]].setdefault(row["image_path"], []).append(row["score"])
    scores = {}
    for k, res in stats.items():
        normal = [v for val in res.values() for v in val]
        plus = [val[0] * val[1] for val in res.values()]
        scores[k] = float(np.mean(normal) * 100 + np.mean(plus) * 100)
    super_cates = {"perception": ["OCR", "artwork", "celebrity", "color", "count", "existence", "landmark",
                                  "position", "posters", "scene"],
                   "reasoning": ["code_reasoning", "commonsense_reasoning", "numerical_calculation",
                                 "text_translation"]}
    return {sc: sum(scores[c] for c in cates if c in scores) for sc, cates in super_cates.items()} | scores


def mme_calculation(lines: list[tuple[str, str]]) -> dict[str, float]:
    """MME's ``eval_tool/calculation.py`` (BradyFU/Awesome-Multimodal-Large-Language-Models, branch
    Evaluation, ``tools/eval_tool.zip``; the same file at zjunlp/Deco@a3ccc150b715373f3019fc07cb1836c1961d7e15,
    eval_tool/calculation.py): one subtask's result lines (gt, pred) in file order, cut into consecutive
    chunks of two ("one image corresponds to two questions"); acc over lines, acc+ over chunks."""
    chunks = [lines[i:i + 2] for i in range(0, len(lines), 2)]
    assert all(len(c) == 2 for c in chunks)
    acc = float(np.mean([gt == pred for gt, pred in lines]))
    acc_plus = sum(all(gt == pred for gt, pred in c) for c in chunks) / len(chunks)
    return {"acc": acc, "acc_plus": acc_plus, "score": 100 * acc + 100 * acc_plus}


def hallusion_rating(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """VLMEvalKit ``Hallusion_rating`` ({VLMEVALKIT}, vlmeval/dataset/utils/yorn.py): aAcc = mean score; fAcc
    groups by l2-category, set_id, figure_id; qAcc by l2-category, set_id, question_id (all correct); overall,
    per category and per l2-category."""

    def rate(sub: list[dict[str, Any]]) -> dict[str, float]:
        figures: dict[str, list[bool]] = defaultdict(list)
        questions: dict[str, list[bool]] = defaultdict(list)
        for line in sub:
            figures[f"{line['l2-category']}_{line['set_id']}_{line['figure_id']}"].append(line["score"])
            questions[f"{line['l2-category']}_{line['set_id']}_{line['question_id']}"].append(line["score"])
        return {"aacc": float(np.mean([line["score"] for line in sub]) * 100),
                "facc": float(np.mean([np.all(x) for x in figures.values()]) * 100),
                "qacc": float(np.mean([np.all(x) for x in questions.values()]) * 100)}

    out = {"Overall": rate(rows)}
    for key in ("category", "l2-category"):
        for c in sorted({r[key] for r in rows}):
            out[c] = rate([r for r in rows if r[key] == c])
    return out


def mmstar_eval(rows: list[dict[str, Any]]) -> dict[str, float]:
    """MMStar's ``MMStar_eval`` (MMStar-Benchmark/MMStar@79e6d1cbab00576162fc8c878a4ad584f98b4868,
    eval/vlmeval/evaluate/mmstar.py): per (category, l2_category) hits / count; a category = its hits / 250;
    the final score = all hits / 1500 (fixed, whatever was scored). A one-letter prediction is a hit when it
    is the answer (``answer == predict[0]``)."""
    hits: dict[tuple[str, str], int] = defaultdict(int)
    count: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        key = (row["category"], row["l2_category"])
        count[key] += 1
        hits[key] += int(row["answer"].lower().strip() == row["prediction"].lower().strip()[0])
    out = {f"{c}({l2})": hits[(c, l2)] / count[(c, l2)] for c, l2 in count}
    for c in {c for c, _ in count}:
        out[c] = sum(v for (cc, _), v in hits.items() if cc == c) / 250.0
    out["final score"] = sum(hits.values()) / 1500.0
    return out


# --- the pipeline: data items → margins → vca report ---------------------------------------------------------

def _items(cli, fmt: str, source: Path, tmp_path: Path) -> tuple[list[BenchmarkItem], str]:
    code, out, err = cli("data", "items", "--format", fmt, source, "--out", tmp_path / f"{fmt}.jsonl", "--images",
                         tmp_path / "images")
    assert code == 0, err
    return read_items(tmp_path / f"{fmt}.jsonl"), out


def _margin_row(item: BenchmarkItem, context: str, **value: Any) -> dict[str, Any]:
    """One margins row as ``vca score`` writes it for ``item`` (vlaudit/scoring/run/runner.py ``_item_fields``)."""
    return {"model": "m", "dataset": item.dataset, "item_id": item.item_id, "context": context,
            "interface": "letter" if item.options else "yesno", "label": item.label, "category": item.category,
            "image_pair": item.extra.get("image_pair"),
            "circular_id": item.extra.get("circular_id", item.extra.get("source_index")),
            "rotation": item.extra.get("rotation"), "l2_category": item.extra.get("l2_category")} | value


def _report(cli, rows: list[dict[str, Any]], tmp_path: Path, *args: Any) -> tuple[dict[str, Any], str]:
    path = tmp_path / "margins.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = cli("vca", "report", path, "--out", tmp_path / "report", "--resamples", 20, "--no-plot", *args)
    assert code == 0, err
    # a path wider than the terminal stays whole on a line of its own (under xdist tmp_path is long)
    wide = [ln for ln in out.splitlines() if len(ln) > 80 and str(tmp_path) not in ln]
    assert not wide, wide
    report = json.loads((tmp_path / "report" / "vca.json").read_text(encoding="utf-8"))
    return {r["model"]: r for r in report["runs"]}["m"], out


def _logp(k: int, letter: str | None) -> list[float]:
    """Log-probs over k options: ``letter`` well ahead, or a four-way tie (None)."""
    if letter is None:
        return [-1.0] * k
    return [-0.5 if string.ascii_uppercase[j] == letter else -3.0 for j in range(k)]


def _letter(logp: list[float]) -> str:
    return string.ascii_uppercase[int(predicted_option(np.array([logp]))[0])]


# --- MMBench CircularEval -------------------------------------------------------------------------------------

MMBENCH_HEADER = ["index", "question", "hint", "A", "B", "C", "D", "answer", "category", "l2-category", "image",
                  "split"]
CATEGORIES = ("attribute_recognition", "object_localization", "ocr")


def _mmbench_release(path: Path) -> dict[int, str]:
    """40 questions with their published copies (index + k·10⁶, options rotated by k, answer with them), as
    ``MMBench_DEV_EN.tsv`` holds them; question 1's image refers to a later row, every copy's to its
    question's row; question 40 has no copies; question 41 has copies but no row of its own. Returns the
    answer each row is given (index → letter, None for a four-way tie): questions 1–18 and 40 right in every
    copy (ties among them where the gold is A), the others wrong in one copy (a tie where the gold is not A)."""
    rows, answers = [], {}
    mains, copies = [], []
    for q in range(1, 42):
        k = (4, 4, 3, 2)[q % 4] if q != 40 else 3
        options = [f"q{q} option {j}" for j in range(k)]
        gold = q % k if q != 40 else 0
        for c in range(k if q != 40 else 1):
            index = q + c * 1_000_000
            shown = [options[(m + c) % k] for m in range(k)]
            letter = string.ascii_uppercase[(gold - c) % k]
            image_cell = ("2" if q == 1 else B64[q % 3] if c == 0 or (q, c) == (41, 1) else
                          str(1_000_041) if q == 41 else str(q))
            row = [str(index), f"Question {q}?", "", *shown, *[""] * (4 - k), letter,
                   CATEGORIES[q % 3], "finegrained_perception (instance-level)", image_cell, "dev"]
            if q == 41 and c == 0:
                continue  # the question's own row is missing
            (mains if c == 0 else copies).append(row)
            wrong = q > 18 and q != 40 and c == q % k
            tie = (q in (3, 25)) and (letter == "A") == (not wrong)
            answers[index] = None if tie else string.ascii_uppercase[(gold - c + 1) % k] if wrong else letter
    rows = mains + copies
    path.write_text("\n".join("\t".join(r) for r in [MMBENCH_HEADER, *rows]) + "\n", encoding="utf-8")
    return answers


@pytest.mark.slow
def test_mmbench_circular_eval_equals_vlmevalkit_on_the_published_copies(cli, tmp_path) -> None:
    """The published TSV with its copies, no ``--circular``: the reader groups copies by index mod 10⁶ and reads
    their rotation; CircularEval overall and per category equal VLMEvalKit's ``mcq_circular_eval`` +
    ``report_acc`` — 0.4750 = 19 of 40 questions (question 41, without its rotation-0 row, dropped by both)."""
    tsv = tmp_path / "MMBench_DEV_EN.tsv"
    answers = _mmbench_release(tsv)
    items, printed = _items(cli, "mmbench", tsv, tmp_path)
    assert "CircularEval: 40 questions with their published copies" in " ".join(printed.split())
    rows = []
    predicted = {}
    for item in items:
        index = int(item.extra["source_index"])
        logp = _logp(len(item.options or ()), answers[index])
        predicted[index] = _letter(logp)
        rows += [_margin_row(item, c, logp_options=logp) for c in ("original", "text", "blank")]
    run, out = _report(cli, rows, tmp_path)
    circular = run["benchmark"]["circular"]

    data = pd.read_csv(tsv, sep="\t")
    data["prediction"] = [predicted[i] for i in data["index"]]
    official = vlmevalkit_circular(data)
    assert official["Overall"] == 0.475 == circular["circular_acc"]
    assert (circular["n_items"], circular["n_dropped"]) == (official["_groups"], 1) == (40, 1)
    assert {r["category"]: r["circular_acc"] for r in circular["per_category"]} == {
        c: official[c] for c in CATEGORIES}
    assert {r["rotation"] for r in circular["per_rotation"]} == {0, 1, 2, 3}
    said = " ".join(out.split())
    assert "CircularEval (%) — m · mmbench · letter" in said and "47.5" in said
    assert "question(s) without their rotation-0 row are left out" in said
    # --circular keeps the published copies as they are: no question is rotated again
    assert [i.item_id for i in circular_items(items)] == [i.item_id for i in items]


@pytest.mark.slow
def test_mmbench_scored_by_a_planted_model_with_circular_ties_included(cli, tmp_path) -> None:
    """``vca score --circular`` on the published copies with a planted model that cannot read these items
    (every option's log-prob equal: a tie, answered A): each row scored once, and CircularEval equals
    VLMEvalKit's on the answer A everywhere (only question 40, without copies and answered A, is hit)."""
    tsv = tmp_path / "MMBench_DEV_EN.tsv"
    _mmbench_release(tsv)
    items, _ = _items(cli, "mmbench", tsv, tmp_path)
    code, out, err = cli("vca", "score", "--model", "ref:scene-mcq-mixture", "--benchmark", tmp_path / "mmbench.jsonl",
                         "--images", tmp_path / "images", "--out", tmp_path / "run", "--interface", "letter",
                         "--circular")
    assert code == 0, err
    code, out, err = cli("vca", "report", tmp_path / "run" / "margins.parquet", "--out", tmp_path / "report",
                         "--resamples", 20, "--no-plot")
    assert code == 0, err
    (run,) = json.loads((tmp_path / "report" / "vca.json").read_text())["runs"]
    data = pd.read_csv(tsv, sep="\t")
    data["prediction"] = "A"
    official = vlmevalkit_circular(data)
    assert run["n"] == len(items) == len(data)
    assert run["benchmark"]["circular"]["circular_acc"] == official["Overall"] == 1 / 40


def test_mmbench_reads_as_vlmevalkit_reads_an_empty_middle_option_and_none(cli, tmp_path) -> None:
    """An empty middle option (A, B, D) is kept, as VLMEvalKit's ``build_choices`` keeps it (lettered A, B, C
    here, the gold answer with it); an option 'None' — which pandas reads as missing — is kept as text, with a
    note; a row whose image refers to a later row reads that row's image."""
    rows = [["7", "Which?", "", "red", "green", "", "blue", "D", "ocr", "x", "8", "dev"],
            ["8", "Which is missing?", "", "all", "None", "", "", "B", "ocr", "x", B64[0], "dev"]]
    tsv = tmp_path / "MMBench_DEV_EN.tsv"
    tsv.write_text("\n".join("\t".join(r) for r in [MMBENCH_HEADER, *rows]) + "\n", encoding="utf-8")
    items, out = _items(cli, "mmbench", tsv, tmp_path)
    assert [(i.options, i.label) for i in items] == [(("red", "green", "blue"), "C"), (("all", "None"), "B")]
    assert items[0].image == items[1].image
    said = " ".join(out.split())
    assert "options A, B, D (an empty option between them) are lettered A, B, C here" in said
    assert "option B reads 'None'/'NA', which pandas (VLMEvalKit) reads as no option" in said
    official = pd.read_csv(tsv, sep="\t")
    assert pd.isna(official.loc[1, "B"])  # what VLMEvalKit's prompt would lack


# --- MMStar ---------------------------------------------------------------------------------------------------

MMSTAR_ROWS = [
    # question (options inside, both published layouts), answer, category, l2_category, answer given
    ("Which is red?\nOptions: A: apple, B: sky, C: grass, D: coal", "A", "coarse perception",
     "image scene and topic", "A"),
    ("What ratio is shown?\nOptions: A: the ratio B: 3, B: 1:2, C: 2:1, D: 3:1", "B", "coarse perception",
     "image scene and topic", "C"),
    ("Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, D, at the end.\n"
     "Question: What fraction of the shape is blue?\nChoices:\n(A) 3/11\n(B) 8/11\n(C) 6/11\n(D) 3/5", "B", "math",
     "geometry", "B"),
    ("Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, D, at the end.\n"
     "Question: Is the value of x larger?\nChoices:\n(A) Yes\n(B) No", "A", "math", "statistical reasoning", None),
    ("How many?\nOptions: A: 1, B: 2, C: 3, D: 4", "C", "math", "geometry", None),
]


def test_mmstar_both_option_layouts_axes_and_mg_ml_against_the_official_evaluator(cli, tmp_path) -> None:
    """Both layouts of MMStar's options read (an option holding "B: " does not split); per-l2-axis accuracy
    equals ``MMStar_eval``'s; its capability and final scores divide by the fixed 250 and 1,500, vlaudit's by
    the items scored — both pinned. MG = S_v − S_wv and ML = max(0, S_wv − S_t) (MMStar §4) with the base LLM
    named."""
    meta = __import__("pyarrow").struct([("source", S), ("split", S), ("image_path", S)])
    source = write_parquet(tmp_path / "mmstar.parquet", {
        "index": (__import__("pyarrow").int64(), list(range(len(MMSTAR_ROWS)))),
        "question": (S, [r[0] for r in MMSTAR_ROWS]), "image": (IMAGE, [image(RED)] * len(MMSTAR_ROWS)),
        "answer": (S, [r[1] for r in MMSTAR_ROWS]), "category": (S, [r[2] for r in MMSTAR_ROWS]),
        "l2_category": (S, [r[3] for r in MMSTAR_ROWS]),
        "meta_info": (meta, [{"source": "MathVista", "split": "val", "image_path": "x.jpg"}] * len(MMSTAR_ROWS))})
    items, _ = _items(cli, "mmstar", source, tmp_path)
    assert items[1].options == ("the ratio B: 3", "1:2", "2:1", "3:1")
    assert items[2].options == ("3/11", "8/11", "6/11", "3/5") and items[2].question.endswith("is blue?")
    rows, official_rows = [], []
    blind = ["A", "C", "A", "A", "A"]  # the answers without the image (text context)
    llm = ["A", "A", "A", "B", "A"]  # the base LLM's text-only answers
    for item, (_, answer, category, l2, given), b, t in zip(items, MMSTAR_ROWS, blind, llm, strict=True):
        k = len(item.options or ())
        logp = _logp(k, given)
        official_rows.append({"answer": answer, "prediction": _letter(logp), "category": category,
                              "l2_category": l2})
        rows += [_margin_row(item, "original", logp_options=logp),
                 _margin_row(item, "text", logp_options=_logp(k, b)),
                 _margin_row(item, "blank", logp_options=_logp(k, b)),
                 _margin_row(item, "text", logp_options=_logp(k, t)) | {"model": "llm"}]
    run, out = _report(cli, rows, tmp_path, "--base-llm", "llm")
    official = mmstar_eval(official_rows)
    axes = {(r["category"], r["l2_category"]): r for r in run["benchmark"]["mmstar_axes"]}
    for (category, l2), row in axes.items():
        if l2 is not None:
            assert row["acc"] == official[f"{category}({l2})"]
        else:  # the evaluator divides by 250 per capability; vlaudit by the capability's items scored
            assert row["acc"] * row["n"] == pytest.approx(official[category] * 250)
    gain = run["benchmark"]["mmstar"]
    # answers A(ok) C(wrong) B(ok) tie→A(ok) tie→A(wrong): S_v = 3/5; blind A C A A A: 2/5; LLM A A A B A: 1/5
    assert gain["acc_image"] == run["acc"] == 0.6 and official["final score"] == 3 / 1500
    assert (gain["acc_text"], gain["mg"], gain["acc_llm"], gain["ml"]) == pytest.approx((0.4, 0.2, 0.2, 0.2))
    said = " ".join(out.split())
    assert "MMStar accuracy per capability and l2 axis (%) — m · mmstar · letter" in said
    assert "MMStar's evaluator divides by a fixed 1500" in said


# --- MME ------------------------------------------------------------------------------------------------------

MME_HEADER = ["index", "category", "image", "question", "answer", "image_path"]


def test_mme_subtasks_and_totals_against_vlmevalkit_and_the_official_script(cli, tmp_path) -> None:
    """VLMEvalKit's ``MME.tsv`` layout with image cells that refer to earlier and to later rows: per-subtask
    acc, acc+ and score equal ``MME_rating`` and MME's ``calculation.py``; Perception and Cognition are sums of
    subtask scores. ``count`` has two images with one question each: vlaudit counts them in acc, not in acc+
    (MME_rating cannot score them; calculation.py pairs the wrong lines) — both numbers pinned."""
    spec = [  # index, category, image (base64 colour or a row index), answer, margin
        (1, "existence", "4", "Yes", 1.0), (2, "existence", "4", "No", 0.0),  # later row; m = 0 is "yes": wrong
        (3, "existence", 0, "Yes", 2.0), (4, "existence", 1, "No", -1.0),  # rows 3 and 4: their own images
        (5, "OCR", 2, "Yes", 1.0), (6, "OCR", "5", "No", -2.0),
        (7, "count", 0, "Yes", 1.0), (8, "count", 1, "No", 1.0), (9, "count", "8", "Yes", 1.0),
        (10, "count", 2, "No", -1.0),
        (11, "code_reasoning", "12", "Yes", -1.0), (12, "code_reasoning", 1, "No", -1.0)]
    image_path = {1: "e/1.png", 2: "e/1.png", 3: "e/3.png", 4: "e/3.png", 5: "o/5.png", 6: "o/5.png",
                  7: "c/7.png", 8: "c/8.png", 9: "c/8.png", 10: "c/10.png", 11: "r/11.png", 12: "r/11.png"}
    rows = [[str(i), cat, B64[cell] if isinstance(cell, int) else cell, f"Question {i}? Please answer yes or no.",
             answer, image_path[i]] for i, cat, cell, answer, _ in spec]
    tsv = tmp_path / "MME.tsv"
    tsv.write_text("\n".join("\t".join(r) for r in [MME_HEADER, *rows]) + "\n", encoding="utf-8")
    items, printed = _items(cli, "mme", tsv, tmp_path)
    assert "2 image(s) with other than two questions" in " ".join(printed.split())
    rows_m, scored = [], []
    for n, item in enumerate(items):
        m = spec[n][4]
        rows_m += [_margin_row(item, c, margin=m if c == "original" else -m) for c in ("original", "text", "blank")]
        said = "Yes" if prediction_direction(np.array([m]))[0] > 0 else "No"
        scored.append({"category": spec[n][1], "image_path": image_path[spec[n][0]], "gt": spec[n][3],
                       "pred": said, "score": said == spec[n][3]})
    assert len(items) == 12
    run, out = _report(cli, rows_m, tmp_path)
    mme = run["benchmark"]["mme"]
    subtasks = {r["category"]: r for r in mme["subtasks"]}
    complete = [r for r in scored if r["category"] != "count"]
    official = mme_rating(complete)
    for name in ("existence", "OCR", "code_reasoning"):
        assert subtasks[name]["score"] == pytest.approx(official[name])
        lines = [(r["gt"], r["pred"]) for r in scored if r["category"] == name]
        assert subtasks[name]["score"] == pytest.approx(mme_calculation(lines)["score"])
    # count: images c/7 (one question, right), c/8 (two, one wrong: m = 1 on a "No"), c/10 (one, right)
    count = subtasks["count"]
    assert (count["acc"], count["acc_plus"], count["n_pairs"]) == (0.75, 0.0, 1)
    paired_wrongly = mme_calculation([(r["gt"], r["pred"]) for r in scored if r["category"] == "count"])
    assert paired_wrongly == {"acc": 0.75, "acc_plus": 0.5, "score": 125.0}  # chunks (7, 8) and (9, 10)
    totals = {r["total"]: r for r in mme["totals"]}
    perception = official["perception"] + 100 * (0.75 + 0.0)
    assert totals["Perception"]["score"] == pytest.approx(perception) and totals["Perception"]["subtasks"] == 3
    assert totals["Cognition"]["score"] == pytest.approx(official["reasoning"]) and totals["Cognition"]["of"] == 4
    assert mme["pooled"]["category"] == "pooled (vlaudit)"
    said = " ".join(out.split())
    assert "MME totals (sums of subtask scores) — m · mme · yesno" in said and "Perception" in said
    assert "2 question(s) without their image's other question count in acc, not in acc+" in said


# --- HallusionBench -------------------------------------------------------------------------------------------

def test_hallusionbench_aacc_facc_qacc_equal_vlmevalkit(cli, tmp_path) -> None:
    """The authors' ``HallusionBench.json``: aAcc, fAcc and qAcc overall, per category and per subcategory
    equal VLMEvalKit's ``Hallusion_rating`` on the questions with an image (ties included: m = 0 is "yes")."""
    entries, margins = [], []
    spec = [  # category, subcategory, set, figure, question, gold, margin
        ("VD", "illusion", 0, 0, 0, "1", 1.0), ("VD", "illusion", 0, 0, 1, "0", -1.0),
        ("VD", "illusion", 0, 1, 0, "0", 0.0), ("VD", "illusion", 0, 1, 1, "1", 1.0),
        ("VD", "math", 1, 0, 0, "1", 0.0), ("VD", "math", 1, 1, 0, "0", -2.0),
        ("VS", "chart", 2, 1, 0, "1", -1.0), ("VS", "chart", 2, 2, 0, "0", -1.0)]
    for cat, sub, set_id, fig, q, gold, m in spec:
        entries.append({"category": cat, "subcategory": sub, "visual_input": "1" if fig == 0 else "2",
                        "set_id": str(set_id), "figure_id": str(fig), "sample_note": "", "question_id": str(q),
                        "question": f"Is it so ({set_id}, {fig}, {q})?", "gt_answer_details": "",
                        "gt_answer": gold, "filename": f"./{cat}/{sub}/{set_id}_{fig}.png"})
        margins.append(m)
    entries.append({"category": "VS", "subcategory": "chart", "visual_input": "0", "set_id": "2", "figure_id": "0",
                    "sample_note": "", "question_id": "0", "question": "Without a figure?", "gt_answer_details": "",
                    "gt_answer": "1", "filename": None})
    source = tmp_path / "HallusionBench.json"
    source.write_text(json.dumps(entries), encoding="utf-8")
    items, _ = _items(cli, "hallusionbench", source, tmp_path)
    rows, official_rows = [], []
    for item, entry, m in zip(items, entries, margins, strict=False):
        rows += [_margin_row(item, c, margin=m if c == "original" else 0.5) for c in ("original", "text", "blank")]
        said = "1" if prediction_direction(np.array([m]))[0] > 0 else "0"
        official_rows.append({"category": entry["category"], "l2-category": entry["subcategory"],
                              "set_id": entry["set_id"], "figure_id": entry["figure_id"],
                              "question_id": entry["question_id"], "score": said == entry["gt_answer"]})
    run, out = _report(cli, rows, tmp_path)
    official = hallusion_rating(official_rows)
    ours = {r["split"]: r for r in run["benchmark"]["hallusionbench"]}
    assert set(ours) == set(official)
    for split, figures in official.items():
        for key, value in figures.items():
            assert 100 * ours[split][key] == pytest.approx(value), (split, key)
    assert "pope" not in run["benchmark"] and "mmstar" not in run["benchmark"]
    said = " ".join(out.split())
    assert "HallusionBench (%) — m · hallusionbench · yesno" in said and "POPE" not in out and "MMStar" not in out


# --- MMMU items with several images ---------------------------------------------------------------------------

@pytest.mark.slow
def test_mmmu_items_with_several_images_are_left_out_of_scoring_with_a_warning(cli, tmp_path) -> None:
    """The reader keeps every MMMU image in order; a planted model reads one image per query, so with
    ``--skip-multi-image`` an item with several is left out with a warning naming it (scoring ``image_1`` alone
    would ask another question; without the flag the run is refused, ``tests/test_multi_image.py``)."""
    columns: dict[str, Any] = {
        "id": (S, ["validation_Art_Theory_1", "validation_Art_Theory_2"]),
        "question": (S, ["<image 1> and <image 2>: which is older?", "<image 1>: which colour?"]),
        "options": (S, ["['<image 1>', '<image 2>']", "['red', 'green']"]), "explanation": (S, ["", ""])}
    for k in range(1, 8):
        columns[f"image_{k}"] = (IMAGE, [image(RED) if k == 1 else image(BLUE) if k == 2 else None,
                                         image(GREEN) if k == 1 else None])
    columns |= {"img_type": (S, ["[]", "[]"]), "answer": (S, ["B", "A"]), "topic_difficulty": (S, ["Easy"] * 2),
                "question_type": (S, ["multiple-choice"] * 2), "subfield": (S, ["Art History"] * 2)}
    items, _ = _items(cli, "mmmu", write_parquet(tmp_path / "mmmu_validation.parquet", columns), tmp_path)
    assert [len(i.extra["images"]) for i in items] == [2, 1]
    code, out, err = cli("vca", "score", "--model", "ref:scene-mcq-mixture", "--benchmark", tmp_path / "mmmu.jsonl",
                         "--images", tmp_path / "images", "--out", tmp_path / "run", "--interface", "letter",
                         "--skip-multi-image")
    assert code == 0, err
    said = " ".join((out + err).split())
    assert "1 item(s) with several images left out (e.g. mmmu-validation_Art_Theory_1: 2 images)" in said
    scored = pd.read_parquet(tmp_path / "run" / "margins.parquet")
    assert set(scored["item_id"]) == {"mmmu-validation_Art_Theory_2"}
