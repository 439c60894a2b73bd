"""Blind baselines and the blind-filtered subset (vlaudit giveaway): a planted text cue is recovered by the
cross-fitted caption classifier and removed by the filter; a model's metric on full vs filtered is paired; the
sources become suite items; the command writes JSON, CSV and the items JSONL at 80 columns."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from two_by_two_samples import WINOGROUND_ROWS

import vlaudit
from vlaudit.analysis.giveaway.audit import benchmark_giveaway
from vlaudit.analysis.giveaway.classifier import classifier_scores, fold_of_items
from vlaudit.errors import InputError
from vlaudit.metrics.giveaway.metric import DEFAULT_METRIC
from vlaudit.metrics.giveaway.table import PairTable
from vlaudit.records import Cycle, SuiteImage, SuiteItem
from vlaudit.results.giveaway import GiveawayResult
from vlaudit.sources.items_jsonl import is_items_jsonl, item_line, read_items_jsonl
from vlaudit.sources.suite_items import block_items, cycle_items, pair_items, whatsup_items
from vlaudit.sources.two_by_two import winoground_blocks

NOUNS = ["dog", "cat", "man", "woman", "car", "tree", "cup", "table", "horse", "bird", "chair", "boat"]
VERBS = ["near", "behind", "beside", "above", "facing", "under"]


def planted(n: int, seed: int = 0, *, marker: str = "indeed", share: float = 1.0) -> list[SuiteItem]:
    """n one-image items; a ``share`` of them have a negative ending in ``marker`` (the planted cue), the rest
    a negative with another relation word drawn from the same vocabulary (no cue)."""
    rng = np.random.default_rng(seed)
    items = []
    for k in range(n):
        a, b = rng.choice(NOUNS, 2, replace=False)
        verb, other = rng.choice(VERBS, 2, replace=False)
        positive = f"a {a} {verb} a {b}"
        negative = f"a {a} {other} a {b} {marker}" if k < share * n else f"a {a} {other} a {b}"
        items.append(SuiteItem("planted", str(k), "cue" if k < share * n else "clean", (SuiteImage(f"{k}.jpg"),),
                               (positive, negative), ((0, 0),), f"item {k}"))
    return items


def test_the_classifier_recovers_a_planted_marker_and_the_filter_removes_it() -> None:
    items = planted(80, share=0.5)
    result = benchmark_giveaway(items, file="planted", fmt="items", n_resamples=200, filtered_path="f.jsonl", seed=3)
    classifier = next(b for b in result.record.baselines if b.kind == "classifier")
    solved = {row["id"] for row in result.rows if row["solved_classifier"] == 1}
    cue = {it.item_id for it in items if it.subset == "cue"}
    assert len(solved & cue) >= 0.95 * len(cue)  # the marker is learnt from the other folds' items
    assert classifier.accuracy.n == 80 and classifier.solved == len(solved)
    kept = {it.item_id for it, k in zip(items, result.kept, strict=True) if k}
    assert not kept & cue and result.record.filtered is not None
    assert result.record.filtered.items == len(kept) and result.record.filtered.removed == 80 - len(kept)
    # the marker shows up as a one-side token, its rule solves exactly the marked items
    tokens = [(t.token, t.side) for t in result.record.lints.side_tokens]
    assert ("indeed", "negative") in tokens
    assert result.record.lints.side_token_rule.value == pytest.approx(0.5)


def test_negatives_systematically_longer_are_recovered() -> None:
    rng = np.random.default_rng(1)
    items = []
    for k in range(60):
        words = list(rng.choice(NOUNS, 4))
        items.append(SuiteItem("planted", str(k), "s", (SuiteImage(f"{k}.jpg"),),
                               (" ".join(words[:2]), " ".join(words[:2] + list(rng.choice(NOUNS, 3)))),
                               ((0, 0),), f"item {k}"))
    result = benchmark_giveaway(items, file="long", fmt="items", n_resamples=100, filtered_path="f.jsonl")
    classifier = next(b for b in result.record.baselines if b.kind == "classifier")
    assert classifier.accuracy.value >= 0.95 and result.record.lints.shorter_wins.value == 1.0
    assert result.record.filtered is not None and result.record.filtered.items <= 3


def test_no_item_scores_itself() -> None:
    """Cross-fitting: a cue seen in one item only cannot be learnt for that item (its fold holds it out)."""
    items = planted(40, share=0.0)
    unique = SuiteItem("planted", "u", "s", (SuiteImage("u.jpg"),), ("a dog near a cat", "a dog xyzzy a cat"),
                       ((0, 0),), "item u")
    table = PairTable.from_items([*items, unique])
    scores = classifier_scores(table, folds=5, seed=0)
    # "xyzzy" (or "plugh") appears only in the held-out item: its weight is 0 in the model that scores it
    base = classifier_scores(PairTable.from_items([*items, SuiteItem(
        "planted", "u", "s", (SuiteImage("u.jpg"),), ("a dog near a cat", "a dog plugh a cat"), ((0, 0),), "item u")]),
        folds=5, seed=0)
    assert scores[-1] == pytest.approx(base[-1])
    folds = fold_of_items(41, 5, 0)
    assert sorted(np.bincount(folds).tolist()) == [8, 8, 8, 8, 9]


def test_two_by_two_blocks_are_never_solved_blind() -> None:
    blocks = block_items(winoground_blocks(enumerate(WINOGROUND_ROWS, start=1), source="examples.jsonl").blocks)
    assert [it.positives for it in blocks] == [((0, 0), (1, 1))] * 3
    result = benchmark_giveaway(blocks * 4, file="wg", fmt="winoground", n_resamples=50, filtered_path="f.jsonl")
    assert all(b.accuracy.value == 0.0 for b in result.record.baselines)
    assert result.record.lints.bow_flagged == 0 and result.record.lints.bow_design == 24
    assert result.record.lints.unigram_tv == 0.0 and result.record.lints.duplicate_items == 9


def test_model_on_full_vs_filtered_is_paired() -> None:
    items = planted(40, share=0.5)
    table = PairTable.from_items(items)
    model = np.tile([1.0, 0.0], 40)  # solves every item
    model[1::4] = 2.0  # … but for every other item, where the negative wins
    result = benchmark_giveaway(items, file="p", fmt="items", n_resamples=200, filtered_path="f.jsonl",
                                model_scores=("model.csv", model))
    on = result.record.model
    assert on is not None
    solved = DEFAULT_METRIC.solved(table, model)
    assert on.full.value == pytest.approx(solved.mean())
    assert on.filtered.value == pytest.approx(solved[result.kept].mean())
    assert on.difference.value == pytest.approx(on.filtered.value - on.full.value)
    assert on.filtered.n == int(result.kept.sum())


def test_sources_as_items(tmp_path: Path) -> None:
    table = tmp_path / "pairs.jsonl"
    table.write_text("".join(json.dumps(r) + "\n" for r in [
        {"image_id": "u1", "caption": "a red cup", "label": 1}, {"image_id": "u1", "caption": "a blue cup", "label": 0},
        {"image_id": "u1", "caption": "a green cup", "label": 0}, {"image_id": "u2", "caption": "a box", "label": 1}]))
    fmt, items = pair_items(table)
    assert fmt == "table" and [(it.item_id, it.texts, it.positives) for it in items] == [
        ("u1", ("a red cup", "a blue cup", "a green cup"), ((0, 0),)), ("u2", ("a box",), ((0, 0),))]
    cycles = cycle_items([Cycle("c1", "fam", "u1", "v1", "u2", "v2", extra={"text_1": "a cup", "text_2": "a box"})])
    assert cycles[0].texts == ("a cup", "a box") and cycles[0].extra["caption_keys"] == ("v1", "v2")
    spatial = tmp_path / "coco_qa_two_obj.json"
    spatial.write_text(json.dumps([[397133, "a dog to the left of a cat", "a dog to the right of a cat"]]))
    (it,) = whatsup_items(spatial, "whatsup-spatial")
    assert it.images[0].path == "val2017/000000397133.jpg" and it.positives == ((0, 0),)


def test_items_jsonl_round_trip(tmp_path: Path) -> None:
    original = [SuiteItem("x", "7", "sub", (SuiteImage("a.jpg"), SuiteImage("b.jpg", (1.0, 2.0, 3.0, 4.0))),
                          ("t0", "t1"), ((0, 0), (1, 1)), "r")]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(item_line(it)) + "\n" for it in original))
    assert json.loads(path.read_text()) == {"id": "7", "subset": "sub", "images": [
        "a.jpg", {"path": "b.jpg", "crop": [1.0, 2.0, 3.0, 4.0]}], "texts": ["t0", "t1"], "positives": [[0, 0], [1, 1]]}
    assert is_items_jsonl(path) and not is_items_jsonl(tmp_path / "none.jsonl")
    (back,) = read_items_jsonl(path)
    assert (back.item_id, back.images, back.texts, back.positives) == ("7", original[0].images, ("t0", "t1"),
                                                                       ((0, 0), (1, 1)))
    path.write_text(json.dumps({"id": 1, "subset": "s", "images": ["a.jpg"], "texts": ["t"], "positives": [[1, 0]]}))
    with pytest.raises(InputError, match="positives"):
        read_items_jsonl(path)


def _sugarcrepe(path: Path, n: int = 30) -> None:
    items = planted(n, share=0.5)
    path.write_text(json.dumps({str(k): {"filename": f"{k}.jpg", "caption": it.texts[0],
                                         "negative_caption": it.texts[1]} for k, it in enumerate(items)}))


def test_the_command_writes_json_csv_and_the_filtered_subset(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    bench = tmp_path / "swap_obj.json"
    _sugarcrepe(bench)
    scores = tmp_path / "scores.csv"
    data = json.loads(bench.read_text())
    scores.write_text("image_id,caption_id,score\n" + "".join(
        f'{e["filename"]},"{e["caption"]}",1.0\n{e["filename"]},"{e["negative_caption"]}",0.0\n'
        for e in data.values()))
    out = tmp_path / "out"
    code, stdout, err = cli("giveaway", bench, "--out", out, "--scores", scores, "--resamples", "100")
    assert code == 0, stdout + err
    assert "swap_obj.json: what it gives away" in stdout and "caption classifier" in stdout
    assert max(len(line) for line in stdout.splitlines() if str(tmp_path) not in line) <= 80, stdout
    result = GiveawayResult.from_dict(json.loads((out / "giveaway.json").read_text()))
    (bench_record,) = result.benchmarks
    assert bench_record.items == 30 and bench_record.format == "sugarcrepe"
    assert bench_record.model is not None and bench_record.model.full.value == 1.0
    rows = list(csv.DictReader((out / "giveaway.csv").open()))
    assert rows[0]["items"] == "30" and float(rows[0]["model_full"]) == 1.0
    kept = read_items_jsonl(out / "swap_obj.filtered.jsonl")
    assert bench_record.filtered is not None and len(kept) == bench_record.filtered.items
    per_item = list(csv.DictReader((out / "swap_obj.items.csv").open()))
    assert len(per_item) == 30 and {"id", "solved_classifier", "flags", "kept"} <= set(per_item[0])
    # the filtered file reads back through the command (format items)
    code, stdout, err = cli("giveaway", out / "swap_obj.filtered.jsonl", "--format", "items", "--out",
                            tmp_path / "again", "--resamples", "50", "--no-classifier")
    assert code == 0, stdout + err
    assert "no filtered subset" in " ".join(stdout.split())


def test_the_api_is_the_facade_twin(tmp_path: Path) -> None:
    bench = tmp_path / "add_att.json"
    _sugarcrepe(bench, 20)
    result = vlaudit.benchmark_giveaway([bench], out=tmp_path / "o", resamples=50)
    assert isinstance(result, GiveawayResult) and result.benchmarks[0].items == 20
    with pytest.raises(InputError, match="unknown format"):
        vlaudit.benchmark_giveaway([bench], out=tmp_path / "o", fmt="nope")


def test_a_registered_suite_is_scored_under_its_own_metric(tmp_path: Path, monkeypatch) -> None:
    """A suite entry's reader, per-item outcomes and official aggregation are what the giveaway uses: an
    ARO VG-Relation-like order ``[false, true]`` with a first-argmax tie rule puts the order-blind ceiling at 0
    on swapped items and the official figure (here: the mean over subsets) beside each accuracy."""
    from vlaudit.analysis.suites.registry import SUITES
    from vlaudit.analysis.suites.suite import Suite
    from vlaudit.metrics.suites import Outcomes, first_argmax
    from vlaudit.records import SuiteRead
    from vlaudit.results.suites import OfficialFigure

    def read(path: Path) -> SuiteRead:
        rows = json.loads(path.read_text())
        items = [SuiteItem("fake", str(k), row["relation"], (SuiteImage(row["image"]),),
                           (row["false"], row["true"]), ((0, 1),), f"row {k}") for k, row in enumerate(rows)]
        return SuiteRead("fake", str(path), items, {"read": len(items), "kept": len(items)})

    def outcomes(items, scores) -> Outcomes:
        return Outcomes(("correct",), np.array([[float(first_argmax(m[0]) == 1)] for m in scores.pairs]))

    def aggregate(items, out: Outcomes) -> list[OfficialFigure]:
        by: dict[str, list[float]] = {}
        for it, v in zip(items, out.column("correct"), strict=True):
            by.setdefault(it.subset, []).append(float(v))
        means = {k: float(np.mean(v)) for k, v in by.items()}
        return [OfficialFigure("macro_accuracy", "macro accuracy", float(np.mean(list(means.values()))),
                               len(items), "mean over relations", "first argmax", "test", means, len(means))]

    monkeypatch.setitem(SUITES, "fake", Suite("fake", "Fake", "JSON rows", read, outcomes, aggregate,
                                              "macro accuracy", "first argmax", "test"))
    rows = [{"image": f"{k}.jpg", "relation": "on" if k % 2 else "under",
             "true": f"the horse{k} is on the man", "false": f"the man is on the horse{k}"} for k in range(6)]
    rows += [{"image": "x.jpg", "relation": "on", "true": "a red cup", "false": "a blue cup"}]
    path = tmp_path / "fake.json"
    path.write_text(json.dumps(rows))
    result = vlaudit.benchmark_giveaway([path], out=tmp_path / "o", fmt="fake", resamples=50)
    bench = result.benchmarks[0]
    assert bench.metric == "fake" and bench.tie_rule == "first argmax"
    ceiling = bench.baselines[0]
    assert ceiling.accuracy.value == pytest.approx(1 / 7) and ceiling.official == pytest.approx((0 + 1 / 4) / 2)


def test_the_html_report_shows_the_flagged_items(tmp_path: Path) -> None:
    """``vlaudit report`` finds giveaway.json: the table and the flagged items (caption, negative, why)."""
    items = [SuiteItem("t", str(k), "s", (SuiteImage(f"{k}.jpg"),), (f"a dog<{k}> near a cat", f"a cat near a dog<{k}>"),
                       ((0, 0),), f"item {k}") for k in range(6)]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(item_line(it)) + "\n" for it in items))
    vlaudit.benchmark_giveaway([path], out=tmp_path / "run", resamples=50)  # auto: the items layout
    html = vlaudit.write_report(tmp_path / "run").read_text()
    assert 'id="giveaway"' in html and "6 flagged item(s)" in html
    assert "a cat near a dog&lt;3&gt;" in html and "never a positive" in html
    assert "could not be rendered" not in html


def test_the_vca_text_only_context_is_the_blind_reading(cli, tmp_path: Path) -> None:
    """A yes/no run's ``text`` context (no image): items whose text-only margin has the gold sign are solved
    blind; a zero margin counts wrong; a run without a text context is left out with a warning."""
    rows = []
    for k in range(8):
        label = "yes" if k % 2 == 0 else "no"
        sign = 1.0 if label == "yes" else -1.0
        rows.append({"model": "m", "dataset": "mmstar", "item_id": f"q{k}", "context": "original",
                     "margin": 2.0 * sign if k < 6 else -sign, "label": label})
        text_margin = sign if k < 3 else (0.0 if k == 3 else -sign)  # q0–q2 solved blind, q3 ties
        rows.append({"model": "m", "dataset": "mmstar", "item_id": f"q{k}", "context": "text",
                     "margin": text_margin, "label": label})
    rows += [{"model": "other", "dataset": "mmstar", "item_id": "q0", "context": "original", "margin": 1.0,
              "label": "yes"}]
    margins = tmp_path / "margins.jsonl"
    margins.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, stdout, err = cli("giveaway", "--vca", margins, "--out", tmp_path / "out", "--resamples", "50")
    assert code == 0, stdout + err
    assert "VCA text-only context" in stdout and "3 / 8" in stdout and "no text context" in err
    result = GiveawayResult.from_dict(json.loads((tmp_path / "out" / "giveaway.json").read_text()))
    (reading,) = result.vca
    assert (reading.model, reading.items, reading.solved_blind) == ("m", 8, 3)
    assert reading.original.value == 0.75 and reading.text_only.value == 3 / 8
    assert reading.solved_ids == ["q0", "q1", "q2"] and result.benchmarks == []
    html = vlaudit.write_report(tmp_path / "out").read_text()
    assert "VCA text-only context" in html and "3 / 8" in html
