"""2×2 benchmarks as exact cycles: Winoground, NaturalBench and generic blocks → cycles → scores →
CycleAcc beside the benchmark's own metrics, on hand-computed scores and through the CLI with a tiny encoder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from two_by_two_samples import WINOGROUND_ROWS, naturalbench_files, winoground_files
from typer.testing import CliRunner

from vlaudit.api.cycles import build_cycles, evaluate_cycles
from vlaudit.errors import InputError
from vlaudit.metrics.two_by_two import naturalbench_outcomes, winoground_outcomes
from vlaudit.sources.cycle_tables import read_cycles
from vlaudit.sources.two_by_two import generic_blocks, naturalbench_blocks, read_two_by_two, winoground_blocks

# ------------------------------------------------------------------------------------------------ fixtures

def _scores(cycles, table: list[tuple[float, float, float, float]]) -> dict[tuple[str, str], float]:
    """[s11, s22, s12, s21] per cycle, in file order, as the scores mapping."""
    scores = {}
    for cycle, (s11, s22, s12, s21) in zip(cycles, table, strict=True):
        scores.update({(cycle.image_1, cycle.caption_1): s11, (cycle.image_2, cycle.caption_2): s22,
                       (cycle.image_1, cycle.caption_2): s12, (cycle.image_2, cycle.caption_1): s21})
    return scores


# ------------------------------------------------------------------------------------------------ build


def test_winoground_build_writes_one_cycle_per_example(tmp_path: Path) -> None:
    examples, images = winoground_files(tmp_path)
    summary = build_cycles("winoground", out=tmp_path / "cycles.jsonl", examples=examples, images=images)
    assert summary.counts == {"winoground-object": {"test": 1}, "winoground-relation": {"test": 2}}
    cycles = read_cycles(tmp_path / "cycles.jsonl")
    assert [c.cycle_id for c in cycles] == ["winoground-object/test/0", "winoground-relation/test/1",
                                            "winoground-relation/test/2"]
    first = cycles[0]
    assert (first.image_1, first.image_2, first.split) == ("ex_0_img_0.png", "ex_0_img_1.png", "test")
    assert first.extra["text_1"] == WINOGROUND_ROWS[0]["caption_0"]
    assert first.extra["tags"]["tag"] == "Adjective-Age" and first.extra["benchmark_metrics"] == "winoground"


def test_naturalbench_build_orients_blocks_and_skips_multiple_choice(tmp_path: Path) -> None:
    examples, images = naturalbench_files(tmp_path)
    summary = build_cycles("naturalbench", out=tmp_path / "cycles.jsonl", examples=examples, images=images)
    assert summary.counts == {"naturalbench-docci": {"test": 3}}
    assert summary.extra["skipped"] == {"multiple-choice samples (only yes/no samples are 2×2 blocks; NaturalBench "
                                  "figures here are the yes/no subset's)": 1}
    cycles = read_cycles(tmp_path / "cycles.jsonl")
    # the mirrored sample (answers No, Yes, Yes, No) pairs Image_0 with Question_1
    assert cycles[2].extra["text_1"] == "Is the thing 2 blue?" and cycles[2].image_1 == "nb_2_0.png"
    assert cycles[0].extra["text_1"] == "Is the thing 0 red?"


def test_naturalbench_parquet_with_image_structs(tmp_path: Path) -> None:
    """A Parquet export whose image columns are ``datasets`` Image structs (``{bytes, path}``) is read by the
    same reader: the ``path`` names the file under --images, taken as it is."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    examples, images = naturalbench_files(tmp_path)
    rows = [json.loads(line) for line in examples.read_text().splitlines()]
    for row in rows:
        row["Image_0"], row["Image_1"] = ({"bytes": None, "path": row[k]} for k in ("Image_0", "Image_1"))
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "nb.parquet")
    parsed = read_two_by_two("naturalbench", tmp_path / "nb.parquet")
    assert [b.image_1 for b in parsed.blocks] == ["nb_0_0.png", "nb_1_0.png", "nb_2_0.png"]
    build_cycles("naturalbench", out=tmp_path / "c.jsonl", examples=tmp_path / "nb.parquet", images=images)
    wino = winoground_blocks([(1, {**WINOGROUND_ROWS[0], "image_0": {"path": "x/a.png"}})], source="hf")
    assert (wino.blocks[0].image_1, wino.blocks[0].image_2) == ("x/a.png", "ex_0_img_1.png")


# ------------------------------------------------------------------------------------------------ known answers

# [s11, s22, s12, s21] per example. A: everything right. B: Δ = 0.1 > 0 but text and image both fail (the
# converse of "group ⇒ Δ > 0" fails). C: all four scores equal — every comparison a tie, Δ = 0 (credit ½).
WINOGROUND_SCORES = [(0.9, 0.8, 0.1, 0.2), (0.5, 0.3, 0.6, 0.1), (0.4, 0.4, 0.4, 0.4)]


def test_winoground_metrics_by_hand(tmp_path: Path) -> None:
    examples, images = winoground_files(tmp_path)
    build_cycles("winoground", out=tmp_path / "cycles.jsonl", examples=examples, images=images)
    cycles = read_cycles(tmp_path / "cycles.jsonl")
    result = evaluate_cycles(cycles, _scores(cycles, WINOGROUND_SCORES), min_cycles=1, n_resamples=2000)
    tags = result.to_dict()["benchmarks"]["winoground"]["splits"]["test"]
    every = tags["all"]
    assert every["n"] == 3
    assert every["cycle_acc"] == pytest.approx(2.5 / 3) and every["cycle_acc_ties"] == 1
    for metric in ("text", "image", "group"):
        assert every[metric] == pytest.approx(1 / 3) and every[f"{metric}_ties"] == 1
        # values {1, 0, 0}: a resample of three zeros (p = 8/27) and of three ones (1/27) both exceed 2.5 %
        assert every[f"{metric}_ci"] == [0.0, 1.0]
    assert every["cycle_acc_ci"] == [0.5, 1.0]  # credits {1, 1, ½}: all-½ resamples have p = 1/27 > 2.5 %
    obj, rel = tags["winoground-object"], tags["winoground-relation"]
    assert (obj["n"], obj["cycle_acc"], obj["group"], obj["group_ci"]) == (1, 1.0, 1.0, [1.0, 1.0])
    assert (rel["n"], rel["cycle_acc"], rel["text"], rel["image"], rel["group"]) == (2, 0.75, 0.0, 0.0, 0.0)
    assert rel["group_ci"] == [0.0, 0.0] and rel["text_ties"] == 1
    # the minimum-cycle rule withholds CycleAcc (not the benchmark's own metrics) of a small tag
    small = evaluate_cycles(cycles, _scores(cycles, WINOGROUND_SCORES), min_cycles=2, n_resamples=200)
    cell = small.to_dict()["benchmarks"]["winoground"]["splits"]["test"]["winoground-object"]
    assert cell["cycle_acc"] is None and cell["group"] == 1.0
    rows = {(r["tag"], r["metric"]): r for r in result.benchmarks.rows}
    assert rows[("all", "group")]["value"] == pytest.approx(1 / 3) and rows[("all", "CycleAcc")]["value_lo"] == 0.5


def test_cli_eval_prints_the_hand_computed_figures(tmp_path: Path) -> None:
    """The same three examples through `cycles build` and `cycles eval` on a scores CSV: the printed table and
    eval.json carry the hand-computed figures and intervals."""
    from vlaudit.cli import app
    from vlaudit.files import write_table

    examples, images = winoground_files(tmp_path)
    cycles_path, scores_path, out = tmp_path / "c.jsonl", tmp_path / "s.csv", tmp_path / "e.json"
    runner = CliRunner()
    result = runner.invoke(app, ["cycles", "build", "winoground", "--examples", str(examples), "--images",
                                 str(images), "--out", str(cycles_path)])
    assert result.exit_code == 0, result.output
    scores = _scores(read_cycles(cycles_path), WINOGROUND_SCORES)
    write_table(scores_path, [{"image_id": u, "caption_id": v, "score": x} for (u, v), x in scores.items()])
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(cycles_path), "--scores", str(scores_path),
                                 "--out", str(out), "--resamples", "2000", "--min-cycles", "2", "--no-plot"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    lines = [" ".join(line.replace("│", " ").split()) for line in result.output.splitlines()]
    # tag, metric, n, clusters (each block its own), value, interval, ties
    assert "all CycleAcc 3 3 0.8333 [0.500, 1.000] 1" in lines
    assert "group 3 3 0.3333 [0.000, 1.000] 1" in lines
    assert "winoground-object CycleAcc 1 1 — — 0" in lines  # withheld under --min-cycles 2
    assert "winoground-relation CycleAcc 2 2 0.7500 [0.500, 1.000] 1" in lines
    assert "text 2 2 0.0000 — 1" in lines  # a zero-width interval is an artefact: printed —
    assert any(line.startswith("winoground — split test") and "unit: cycle" in line for line in lines)
    saved = json.loads(out.read_text())["benchmarks"]["winoground"]["splits"]["test"]
    assert saved["all"]["text"] == pytest.approx(1 / 3) and saved["winoground-object"]["cycle_acc"] is None


# Log-odds scores (Yes iff > 0). A: all four right. B: Yes on (u1, v1) only right among the Yes cells, the
# swap (u2, v1) answered Yes. C: s11 exactly 0 — answered No (a tie at the threshold).
NATURALBENCH_SCORES = [(2.0, 1.0, -1.0, -3.0), (1.0, -0.5, -2.0, 0.5), (0.0, 3.0, -1.0, -1.0)]


def test_naturalbench_metrics_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    examples, images = naturalbench_files(tmp_path)
    build_cycles("naturalbench", out=tmp_path / "cycles.jsonl", examples=examples, images=images)
    cycles = read_cycles(tmp_path / "cycles.jsonl")
    result = evaluate_cycles(cycles, _scores(cycles, NATURALBENCH_SCORES), min_cycles=1, n_resamples=2000)
    entry = result.to_dict()["benchmarks"]["naturalbench"]
    assert entry["threshold"] == 0.0 and list(entry["splits"]["test"]) == ["naturalbench-docci"]
    cell = entry["splits"]["test"]["naturalbench-docci"]
    # per sample: Acc 1, ½, ¾; Q-Acc 1, 0, ½; I-Acc 1, ½, ½; G-Acc 1, 0, 0; Δ = 7, 2, 5 (all > 0)
    assert cell["acc"] == pytest.approx(0.75) and cell["q_acc"] == pytest.approx(0.5)
    assert cell["i_acc"] == pytest.approx(2 / 3) and cell["g_acc"] == pytest.approx(1 / 3)
    assert cell["cycle_acc"] == 1.0 and cell["cycle_acc_ci"] == [1.0, 1.0] and cell["cycle_acc_ties"] == 0
    assert cell["g_acc_ties"] == 1 and cell["g_acc_ci"] == [0.0, 1.0]
    shifted = evaluate_cycles(cycles, _scores(cycles, NATURALBENCH_SCORES), min_cycles=1, n_resamples=50,
                              yes_threshold=-0.1)
    assert shifted.to_dict()["benchmarks"]["naturalbench"]["splits"]["test"]["naturalbench-docci"]["acc"] == 2.5 / 3  # C is now right, B still half
    # the printed table says whose figures these are: the yes/no samples' (multiple-choice ones are skipped)
    from vlaudit.commands._render import show
    from vlaudit.report.console import benchmark_tables_view

    show(benchmark_tables_view(result.evaluation.benchmark_entries))
    assert "yes/no samples only" in " ".join(capsys.readouterr().out.split())


def test_official_naturalbench_scorer_agrees() -> None:
    """The official ``get_scores`` convention: answers (q0_i0, q0_i1, q1_i0, q1_i1) with truth (1, 0, 0, 1);
    our blocks hold [s11, s22, s12, s21] = [q0_i0, q1_i1, q1_i0, q0_i1]."""
    scores = np.array(NATURALBENCH_SCORES)
    answers = [[int(s[0] > 0), int(s[3] > 0), int(s[2] > 0), int(s[1] > 0)] for s in scores]
    assert answers == [[1, 0, 0, 1], [1, 1, 0, 0], [0, 0, 0, 1]]
    q = [int(a[0] == 1 and a[1] == 0) + int(a[3] == 1 and a[2] == 0) for a in answers]
    i = [int(a[0] == 1 and a[2] == 0) + int(a[3] == 1 and a[1] == 0) for a in answers]
    binary = [int(a[0] == 1) + int(a[1] == 0) + int(a[2] == 0) + int(a[3] == 1) for a in answers]
    outcomes = naturalbench_outcomes(scores)
    assert outcomes["q_acc"].tolist() == [v / 2 for v in q] and outcomes["i_acc"].tolist() == [v / 2 for v in i]
    assert outcomes["acc"].tolist() == [v / 4 for v in binary]
    assert outcomes["g_acc"].tolist() == [float(a == 2 and b == 2) for a, b in zip(q, i, strict=True)]


scores_4 = st.lists(st.floats(-5, 5, allow_nan=False), min_size=4, max_size=4)


@given(st.lists(scores_4, min_size=1, max_size=8), st.lists(st.floats(-3, 3), min_size=4, max_size=4))
def test_group_implies_positive_contrast_and_a_prior_leaves_the_contrast(rows, prior) -> None:
    """group ⇒ Δ > 0 (and G-Acc ⇒ Δ > 0); an additive prior a(u) + b(v) leaves Δ exactly as it was."""
    scores = np.array(rows, dtype=np.float64)
    delta = (scores[:, 0] + scores[:, 1]) - (scores[:, 2] + scores[:, 3])
    assert np.all(delta[winoground_outcomes(scores)["group"] == 1] > 0)
    assert np.all(delta[naturalbench_outcomes(scores)["g_acc"] == 1] > 0)
    a1, a2, b1, b2 = prior
    shifted = scores + np.array([a1 + b1, a2 + b2, a1 + b2, a2 + b1])
    new_delta = (shifted[:, 0] + shifted[:, 1]) - (shifted[:, 2] + shifted[:, 3])
    assert np.allclose(new_delta, delta, atol=1e-9)


def test_a_marginal_prior_buys_group_score_that_cycleacc_cancels() -> None:
    """The docs example: a caption prior b(v1) − b(v2) = 0.2 turns a text failure into a group success."""
    pairing = np.array([[0.2, 0.5, 0.3, 0.0]])  # s11 − s12 = −0.1, s22 − s21 = +0.5: text fails, Δ = 0.4
    with_prior = pairing + np.array([0.2, 0.0, 0.0, 0.2])  # +0.2 on every pair with caption v1
    assert winoground_outcomes(pairing)["group"][0] == 0 and winoground_outcomes(with_prior)["group"][0] == 1
    for s in (pairing, with_prior):
        assert (s[0, 0] + s[0, 1]) - (s[0, 2] + s[0, 3]) == pytest.approx(0.4)


# ------------------------------------------------------------------------------------------------ CLI chain


@pytest.mark.parametrize("benchmark", ["winoground", "naturalbench"])
def test_cli_build_zero_shot_eval(benchmark: str, tmp_path: Path, no_network: None) -> None:
    pytest.importorskip("torch")
    from vlaudit.cli import app

    examples, images = (winoground_files if benchmark == "winoground" else naturalbench_files)(tmp_path)
    runner = CliRunner()
    cycles, feats, scores, out = (tmp_path / n for n in ("cycles.jsonl", "feats", "scores.csv", "eval.json"))

    def ok(*args: str) -> str:
        result = runner.invoke(app, list(args))
        assert result.exit_code == 0, result.output + repr(result.exception)
        return result.output

    ok("cycles", "build", benchmark, "--examples", str(examples), "--images", str(images), "--out", str(cycles))
    ok("features", "--model", "ref:tiny-open-clip", "--cycles", str(cycles), "--images", str(images),
       "--out", str(feats), "--batch-size", "4", "--device", "cpu")
    ok("cycles", "zero-shot", "--features", str(feats), "--cycles", str(cycles), "--out", str(scores))
    printed = ok("cycles", "eval", "--cycles", str(cycles), "--scores", str(scores), "--out", str(out),
                 "--resamples", "200", "--min-cycles", "1", "--no-plot")
    names = ("text", "image", "group") if benchmark == "winoground" else ("Q-Acc", "I-Acc", "G-Acc")
    assert "CycleAcc" in printed and all(name in printed for name in names) and "95% CI" in printed
    # a path wider than the terminal stays whole on a line of its own (under xdist tmp_path is long)
    assert all(len(line) <= 80 for line in printed.splitlines() if str(tmp_path) not in line)
    data = json.loads(out.read_text())
    entry = data["benchmarks"][benchmark]["splits"]["test"]
    cell = entry["all"] if "all" in entry else next(iter(entry.values()))
    key = "group" if benchmark == "winoground" else "g_acc"
    assert cell["n"] == 3 and len(cell[f"{key}_ci"]) == 2 and 0 <= cell[key] <= 1


def test_cli_naturalbench_with_a_tiny_mllm_asked_the_question(tmp_path: Path, no_network: None,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented NaturalBench route: `cycles score-mllm --query '{caption}'` asks the question itself
    with the interface's answer instruction (the run's manifest holds the prompt); `cycles eval` adds Q/I/G-Acc."""
    pytest.importorskip("transformers")
    from vlaudit.cli import app
    from vlaudit.settings import NATURALBENCH_QUERY

    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    examples, images = naturalbench_files(tmp_path)
    runner = CliRunner()
    cycles, scores, out = tmp_path / "nb.jsonl", tmp_path / "nb.csv", tmp_path / "nb-eval.json"
    for args in (["cycles", "build", "naturalbench", "--examples", str(examples), "--images", str(images),
                  "--out", str(cycles)],
                 ["cycles", "score-mllm", "--model", "ref:tiny-qwen2-vl", "--cycles", str(cycles), "--images",
                  str(images), "--out", str(scores), "--query", NATURALBENCH_QUERY, "--device", "cpu"],
                 ["cycles", "eval", "--cycles", str(cycles), "--scores", str(scores), "--out", str(out),
                  "--resamples", "100", "--min-cycles", "1", "--no-plot"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output + repr(result.exception)
    assert "Is the thing 0 red? Answer yes or no." in "".join(
        p.read_text() for p in (tmp_path / "nb.csv.run").rglob("*.json*"))
    cell = json.loads(out.read_text())["benchmarks"]["naturalbench"]["splits"]["test"]["naturalbench-docci"]
    assert cell["n"] == 3 and {"q_acc", "i_acc", "g_acc", "acc", "cycle_acc"} <= set(cell)


# ------------------------------------------------------------------------------------------------ hostile input

_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=True) |
                     st.text(max_size=6), lambda inner: st.lists(inner, max_size=2) |
                     st.dictionaries(st.text(max_size=3), inner, max_size=2), max_leaves=4)
_FIELDS = {"winoground": ("id", "caption_0", "caption_1", "image_0", "image_1", "tag", "collapsed_tag"),
           "naturalbench": ("Index", "Image_0", "Image_1", "Question_0", "Question_1", "Image_0_Question_0",
                            "Image_1_Question_0", "Image_0_Question_1", "Image_1_Question_1", "Question_Type",
                            "Source"),
           "blocks": ("id", "image_1", "image_2", "text_1", "text_2", "tag", "answers")}
_READERS = {"winoground": winoground_blocks, "naturalbench": naturalbench_blocks, "blocks": generic_blocks}
_GOOD = {"winoground": WINOGROUND_ROWS[0],
         "naturalbench": {"Index": 1, "Image_0": "a.png", "Image_1": "b.png", "Question_0": "Red?",
                          "Question_1": "Blue?", "Image_0_Question_0": "Yes", "Image_1_Question_0": "No",
                          "Image_0_Question_1": "No", "Image_1_Question_1": "Yes", "Question_Type": "yes_no"},
         "blocks": {"id": "x", "image_1": "a.png", "image_2": "b.png", "text_1": "a dog", "text_2": "a cat"}}


@pytest.mark.parametrize("benchmark", sorted(_READERS))
@given(data=st.data())
def test_readers_give_one_clean_error_on_hostile_rows(benchmark: str, data: st.DataObject) -> None:
    """A good row with fields replaced by arbitrary JSON values or dropped: blocks, or one InputError that
    names the source and line (and the field, where one is to blame) — never another exception."""
    row = dict(_GOOD[benchmark])
    for name in data.draw(st.lists(st.sampled_from(_FIELDS[benchmark]), max_size=3, unique=True)):
        if data.draw(st.booleans()):
            row.pop(name, None)
        else:
            row[name] = data.draw(_JSON)
    try:
        _READERS[benchmark]([(7, row)], source="bench.jsonl")
    except InputError as exc:
        message = str(exc)
        assert message.startswith("bench.jsonl, record line 7") and "\n" not in message


@pytest.mark.parametrize("benchmark", sorted(_READERS))
@given(blob=st.binary(max_size=60) | st.text(max_size=60).map(str.encode))
def test_reading_any_bytes_is_blocks_or_one_clean_error(benchmark: str, blob: bytes, tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "bench.jsonl"
    path.write_bytes(blob)
    try:
        read_two_by_two(benchmark, path)
    except InputError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)


HOSTILE = {
    "truncated": '{"id": 0, "caption_0": "a b", "caption_1": "b a", "image_0": "ex_0_img_0", "ima',
    "escape": json.dumps({**WINOGROUND_ROWS[0], "image_1": "../../etc/passwd"}),
    "same captions": json.dumps({**WINOGROUND_ROWS[0], "caption_1": WINOGROUND_ROWS[0]["caption_0"]}),
    "duplicate id": json.dumps(WINOGROUND_ROWS[0]) + "\n" + json.dumps({**WINOGROUND_ROWS[1], "id": 0}),
    "list caption": json.dumps({**WINOGROUND_ROWS[0], "caption_0": ["a"]}),
    "missing image": json.dumps({**WINOGROUND_ROWS[0], "image_0": "nope"}),
    "empty": "",
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_cli_build_on_hostile_files_is_one_red_line(case: str, tmp_path: Path, capsys, monkeypatch) -> None:
    import sys

    from vlaudit.cli import main

    _, images = winoground_files(tmp_path)
    (tmp_path / "bad.jsonl").write_text(HOSTILE[case] + "\n")
    out = tmp_path / "cycles.jsonl"
    monkeypatch.setattr(sys, "argv", ["vlaudit", "cycles", "build", "winoground", "--examples",
                                      str(tmp_path / "bad.jsonl"), "--images", str(images), "--out", str(out)])
    with pytest.raises(SystemExit) as exit_info:
        main()
    captured = capsys.readouterr()
    assert exit_info.value.code == 2 and "Traceback" not in captured.out + captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "bad.jsonl" in lines[0]
    assert not out.exists()


def test_winoground_from_a_saved_hf_dataset_gives_the_blocks_of_the_release(tmp_path: Path, monkeypatch) -> None:
    """The Hub's Winoground (``facebook/winoground``) stores image_0/image_1 as ``Image`` columns: saved with
    ``datasets`` and read back offline, it gives the release's blocks, images written once by content."""
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    examples, images = winoground_files(tmp_path / "release")
    rows = [{**row, "image_0": {"bytes": (images / f"{row['image_0']}.png").read_bytes(), "path": None},
             "image_1": {"bytes": (images / f"{row['image_1']}.png").read_bytes(), "path": None}}
            for row in WINOGROUND_ROWS]
    features = datasets.Features({**{k: datasets.Value("string") for k in WINOGROUND_ROWS[0]},
                                  "num_main_preds": datasets.Value("int64"),
                                  "image_0": datasets.Image(), "image_1": datasets.Image()})
    datasets.Dataset.from_list(rows, features=features).save_to_disk(str(tmp_path / "winoground"))
    out_images = tmp_path / "hf-images"
    out_images.mkdir()
    build_cycles("winoground", out=tmp_path / "release.jsonl", examples=examples, images=images)
    build_cycles("winoground", out=tmp_path / "hf.jsonl", examples=f"hf-dataset:{tmp_path / 'winoground'}",
                 images=out_images)
    release, hf = read_cycles(tmp_path / "release.jsonl"), read_cycles(tmp_path / "hf.jsonl")
    assert [(c.cycle_id, c.caption_1, c.caption_2) for c in hf] == [(c.cycle_id, c.caption_1, c.caption_2)
                                                                   for c in release]
    for old, new in zip(release, hf, strict=True):
        for a, b in ((old.image_1, new.image_1), (old.image_2, new.image_2)):
            assert b.endswith(".png") and not b.endswith(".png.png")
            assert (out_images / b).read_bytes() == (images / a).read_bytes()
