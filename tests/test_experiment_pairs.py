"""``cycles audit-pairs`` (other benchmarks' negatives vs exact cycles) and the text-neighbor cycle family."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vlaudit.builders.cycles.text_neighbor import TEXT_NEIGHBOR_FAMILY
from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.metrics.pair_audit import LabelledPair, audit_pairs
from vlaudit.sources.labelled_pairs import read_labelled_pairs


def P(image: str, caption: str, label: int) -> LabelledPair:
    return LabelledPair(image, caption, label, caption)


def test_an_exact_cycle_is_balanced_and_complete() -> None:
    result = audit_pairs([P("A", "a dog", 1), P("B", "a red cat", 1), P("A", "a red cat", 0), P("B", "a dog", 0)])
    assert result["tv_image"] == result["tv_caption"] == result["tv_caption_length"] == 0
    assert result["max_abs_signed_degree"] == 0 and result["degree_imbalance"] == 0
    assert result["positives_in_cycles"] == 2 and result["negatives_in_cycles"] == 2


def test_rewritten_negatives_leak_the_caption_marginal() -> None:
    # SugarCrepe-style: each image has its true caption and a rewritten one never seen as a positive
    pairs = [P("A", "a dog on grass", 1), P("A", "a cat on grass", 0), P("B", "two cars", 1),
             P("B", "two red cars parked", 0)]
    result = audit_pairs(pairs)
    assert result["tv_image"] == 0 and result["tv_caption"] == 1.0
    assert result["tv_caption_length"] == pytest.approx(0.5)  # lengths {4, 2} vs {4, 4}
    assert result["degree_imbalance"] == pytest.approx(0.5)  # images balanced, every caption one-sided
    assert result["degree_imbalance_image"] == 0 and result["degree_imbalance_caption"] == 1.0
    assert result["positives_in_cycles"] == result["negatives_in_cycles"] == 0
    incomplete = audit_pairs([P("A", "a", 1), P("B", "b", 1), P("A", "b", 0)])  # one swap missing
    assert incomplete["positives_in_cycles"] == 0 and incomplete["max_abs_signed_degree"] == 0.5
    # the dropped ±1 weighting is refused with the reason
    with pytest.raises(InputError, match="only restated the positive:negative ratio"):
        audit_pairs([P("A", "a", 1), P("B", "b", 1), P("A", "b", 0)], "count")


def test_degree_imbalance_weights_the_scored_comparison() -> None:
    # One image with 1 positive and 3 negatives, a second with 1 positive and 3 negatives (What's Up style).
    # mean weighting (+1/2 per positive, −1/6 per negative): deg(A) = 1/2 − 3/6 = 0, so the image side is
    # balanced; captions: p1, p2 positive only (+1/2 each), n1..n3 negative only (−2/6 each, twice) →
    # Σ|deg| = 1/2 + 1/2 + 3 · 2/6 = 2 over mass 2 → caption imbalance 1.
    pairs = [P("A", "p1", 1), P("A", "n1", 0), P("A", "n2", 0), P("A", "n3", 0),
             P("B", "p2", 1), P("B", "n1", 0), P("B", "n2", 0), P("B", "n3", 0)]
    mean = audit_pairs(pairs)
    assert mean["weighting"] == "mean"
    assert mean["degree_imbalance_image"] == 0 and mean["images_imbalanced"] == 0
    assert mean["degree_imbalance_caption"] == 1.0 and mean["degree_imbalance"] == 0.5
    # ±1 weights would give deg(A) = 1 − 3 = −2, deg(B) = −2 → Σ|deg| = 4 over 8 entries = 0.5: the class
    # ratio |2 − 6| / 8, nothing of the images (the image TV is 0). That weighting was dropped.
    assert mean["tv_image"] == 0 and abs(2 - 6) / 8 == 0.5
    # A caption used once on each side of a 1:3 table: mean weighting leaves 1/2 − 1/6 = 1/3 unbalanced.
    shared = audit_pairs([P("A", "x", 1), P("B", "y", 1), P("A", "y", 0), P("A", "z", 0), P("A", "w", 0),
                          P("B", "x", 0), P("B", "z", 0), P("B", "w", 0)])
    assert shared["degree_imbalance_image"] == 0
    # x, y: +1/2 − 1/6 = 1/3 each; z, w: −2/6 each → Σ = 4/3 over mass 2 = 2/3
    assert shared["degree_imbalance_caption"] == pytest.approx(2 / 3)


def test_sugarcrepe_and_whatsup_samples(shared_data: Path, tmp_path: Path, cli, one_error_line) -> None:
    files = sorted((shared_data / "sugarcrepe").glob("*.json"))
    controlled = shared_data / "whatsup" / "controlled_images_dataset.json"
    result = CliRunner().invoke(app, ["cycles", "audit-pairs", *map(str, files), str(controlled), "--out",
                                      str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = {r["file"]: r for r in json.loads((tmp_path / "audit_pairs.json").read_text())["rows"]}
    # Every SugarCrepe negative is a new sentence for the same image: caption TV = 1, image TV = 0, no cycles.
    length_tv = {"add_att": 0.236, "add_obj": 0.564, "replace_att": 0.037, "replace_obj": 0.042,
                 "replace_rel": 0.069, "swap_att": 0.027, "swap_obj": 0.033}
    for name, tv in length_tv.items():
        row = rows[f"{name}.json"]
        assert row["format"] == "sugarcrepe"
        assert row["tv_image"] == 0 and row["tv_caption"] == 1.0
        assert row["tv_caption_length"] == pytest.approx(tv, abs=5e-4)
        assert row["positives_in_cycles"] == row["negatives_in_cycles"] == 0
    # What's Up Controlled: each true caption is another image's false option, so almost every entry completes
    # into an exact cycle, and the caption marginal is nearly balanced — but 1 positive vs 3 negatives per image.
    row = rows["controlled_images_dataset.json"]
    assert (row["format"], row["positives"], row["negatives"]) == ("whatsup-controlled", 412, 1236)
    assert row["tv_image"] == 0 and row["tv_caption"] < 0.01 and row["tv_caption_length"] == 0
    assert row["positives_in_cycles"] == 412 and row["negatives_in_cycles"] >= 1230
    # Mean-difference weighting: 1/412 − 3/1236 = 0 for every image, so additive image scores cancel in the
    # pooled positive − negative comparison; ±1 weights only restate the 1:3 ratio (0.5).
    assert row["weighting"] == "mean" and row["degree_imbalance_image"] == 0 and row["images_imbalanced"] == 0
    assert row["degree_imbalance_caption"] == pytest.approx(row["tv_caption"])
    assert row["degree_imbalance_caption"] < 0.01
    assert (tmp_path / "audit_pairs.csv").exists()
    assert json.loads((tmp_path / "audit_pairs.json").read_text())["weighting"] == "mean"
    # ±1 weights read 0.500 on the image side here (the 1:3 ratio at TV 0): the option is refused, saying so
    line = one_error_line(*cli("cycles", "audit-pairs", controlled, "--weighting", "count", "--out",
                               tmp_path / "count"))
    assert "only restated the positive:negative ratio" in line and "equals the TV by identity" in line
    assert not (tmp_path / "count" / "audit_pairs.json").exists()


def test_exact_cycle_output_audits_to_zero(tmp_path: Path) -> None:
    from vlaudit.builders.cycles.coco import build_coco_cycles
    from vlaudit.builders.scenes import render_scenes

    render_scenes(tmp_path / "scenes", 80, seed=1)
    build_coco_cycles(tmp_path / "scenes" / "instances.json", tmp_path / "scenes" / "captions.json",
                      tmp_path / "cycles.jsonl", seed=1, splits="test", min_cycles=2)
    result = CliRunner().invoke(app, ["cycles", "audit-pairs", str(tmp_path / "cycles.jsonl"), "--out",
                                      str(tmp_path / "audit")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (row,) = json.loads((tmp_path / "audit" / "audit_pairs.json").read_text())["rows"]
    assert row["format"] == "cycles" and row["positives"] > 50
    assert row["tv_image"] == row["tv_caption"] == row["tv_caption_length"] == 0
    assert row["max_abs_signed_degree"] == 0 and row["degree_imbalance"] == 0
    assert row["positives_in_cycles"] == row["distinct_positives"]
    assert row["negatives_in_cycles"] == row["distinct_negatives"]


def test_pair_table_with_texts_and_boolean_labels(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text("image_id,caption,label\n1,a dog,true\n2,a cat,true\n1,a cat,false\n2,a dog,false\n")
    fmt, pairs = read_labelled_pairs(path)
    assert fmt == "table" and [p.label for p in pairs] == [1, 1, 0, 0] and pairs[0].image_id == "1"
    assert audit_pairs(pairs)["positives_in_cycles"] == 2
    path.write_text("image_id,caption,label\n1,a dog,maybe\n")
    from vlaudit.errors import InputError

    with pytest.raises(InputError, match="label"):
        read_labelled_pairs(path)


def test_text_neighbor_family_builds_valid_balanced_cycles(tmp_path: Path) -> None:
    from vlaudit.builders.cycles import audit_cycles_file
    from vlaudit.builders.cycles.coco import build_coco_cycles
    from vlaudit.builders.scenes import render_scenes
    from vlaudit.sources.cycle_tables import read_cycles

    render_scenes(tmp_path / "scenes", 150, seed=2)
    summary = build_coco_cycles(tmp_path / "scenes" / "instances.json", tmp_path / "scenes" / "captions.json",
                                tmp_path / "tn.jsonl", families=[TEXT_NEIGHBOR_FAMILY, "coco-object-coarse"], seed=2,
                                splits="test", min_cycles=2)
    assert summary["counts"][TEXT_NEIGHBOR_FAMILY]["test"] >= 5
    audit = audit_cycles_file(tmp_path / "tn.jsonl", [tmp_path / "scenes" / "instances.json"])
    assert audit["validity_violations"] == 0 and audit["max_abs_signed_degree"] == 0
    cycles = read_cycles(tmp_path / "tn.jsonl")

    def word_overlap(c) -> float:
        a, b = set(c.extra["text_1"].lower().split()), set(c.extra["text_2"].lower().split())
        return len(a & b) / len(a | b)

    neighbor = [word_overlap(c) for c in cycles if c.family == TEXT_NEIGHBOR_FAMILY]
    coarse = [word_overlap(c) for c in cycles if c.family == "coco-object-coarse"]
    assert np.mean(neighbor) > np.mean(coarse) + 0.1  # the swap changes little text


def test_whatsup_spatial_reader_and_unknown_format(tmp_path: Path) -> None:
    from vlaudit.errors import InputError

    path = tmp_path / "coco_qa_two_obj.json"
    path.write_text(json.dumps([[1, "A photo of a dog to the left of a cat", "A photo of a dog to the right of a cat"],
                                [2, "A photo of a dog to the right of a cat", "A photo of a dog to the left of a cat"]]))
    fmt, pairs = read_labelled_pairs(path)
    assert fmt == "whatsup-spatial" and len(pairs) == 4
    result = audit_pairs(pairs)  # the two rows complete one exact cycle
    assert result["tv_caption"] == 0 and result["positives_in_cycles"] == 2 and result["negatives_in_cycles"] == 2
    with pytest.raises(InputError, match="unknown format"):
        read_labelled_pairs(path, "nope")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"a": 1}))
    with pytest.raises(InputError, match="unknown JSON pair format"):
        read_labelled_pairs(other)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ABCD"), st.sampled_from("wxyz"), st.integers(0, 1)), min_size=2,
                max_size=24).filter(lambda rows: 0 < sum(r[2] for r in rows) < len(rows)))
def test_the_mean_weightings_imbalance_is_the_marginal_tv_by_identity(rows) -> None:
    """deg(u) = p(u) − q(u) and Σ|w| = 2, so Σ_u |deg(u)| / 2 = TV(p, q) on each side, whatever the table."""
    result = audit_pairs([P(image, caption, label) for image, caption, label in rows])
    assert result["degree_imbalance_image"] == pytest.approx(result["tv_image"], abs=1e-12)
    assert result["degree_imbalance_caption"] == pytest.approx(result["tv_caption"], abs=1e-12)
