"""Object-swap edits: geometry, inpainting locality, build, blinded export/import round trip, analysis."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from typer.testing import CliRunner

from vlaudit.analysis.vca.edits import edit_outcomes, feasibility_audit
from vlaudit.builders.annotation import FIELDS, TASK_COLUMNS, export_batches, import_annotations
from vlaudit.builders.edits import (
    EditParams,
    box_iou,
    build_edits,
    check_geometry,
    feather_alpha,
    pixel_rect,
    render_swap,
    swap_boxes,
)
from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.sources.items import BenchmarkItem, read_items, write_items


def test_swap_geometry_on_hand_made_boxes():
    # 200x100 image; subject (20x20) left of object (30x30)
    subject, obj = (10.0, 40.0, 20.0, 20.0), (150.0, 35.0, 30.0, 30.0)
    new_s, new_o = swap_boxes(subject, obj)
    assert new_s == (155.0, 40.0, 20.0, 20.0) and new_o == (5.0, 35.0, 30.0, 30.0)
    ok = check_geometry("left of", subject, obj, 200, 100)
    assert ok["feasible"] and ok["gap"] == pytest.approx(145 / 200) and ok["iou"] == 0.0
    assert ok["slack"] == pytest.approx(0.025)  # new object box starts at x = 5 → 5/200
    assert ok["larger_area"] == pytest.approx(900 / 20000)
    # the same boxes labelled "right of" contradict the relation: the post-swap gap is negative
    wrong = check_geometry("right of", subject, obj, 200, 100)
    assert not wrong["feasible"] and wrong["failure"] == "centre gap too small"
    # a large object next to the border cannot take the small subject's place
    out = check_geometry("left of", (0.0, 40.0, 20.0, 20.0), (100.0, 0.0, 90.0, 100.0), 200, 100)
    assert not out["feasible"] and out["failure"] == "out of bounds"
    # centres 8 px apart on a 200-px axis: gap 0.04 < 0.05
    close = check_geometry("left of", (90.0, 10.0, 6.0, 6.0), (98.0, 60.0, 6.0, 6.0), 200, 100)
    assert close["failure"] == "centre gap too small"
    assert check_geometry("left of", (90.0, 10.0, 6.0, 6.0), (98.0, 60.0, 6.0, 6.0), 200, 100,
                          EditParams(min_gap=0.03))["feasible"]
    # vertical pair overlapping after the swap: IoU of the new boxes 0.6 > 0.2
    overlap = check_geometry("above", (50.0, 20.0, 40.0, 40.0), (50.0, 30.0, 40.0, 40.0), 200, 100,
                             EditParams(min_gap=0.0))
    assert overlap["failure"] == "new boxes overlap" and overlap["iou"] == pytest.approx(1200 / 2000)
    with pytest.raises(InputError):
        check_geometry("in front of", subject, obj, 200, 100)


box_st = st.tuples(st.floats(0, 100), st.floats(0, 100), st.floats(1, 50), st.floats(1, 50))


@settings(max_examples=60, deadline=None)
@given(box_st, box_st)
def test_swap_is_an_involution_and_iou_bounded(a, b):
    back = swap_boxes(*swap_boxes(a, b))
    assert np.allclose(back, (a, b))
    assert 0.0 <= box_iou(a, b) <= 1.0 + 1e-12
    assert box_iou(a, b) == pytest.approx(box_iou(b, a))


def test_feather_alpha_ramps_over_three_pixels():
    alpha = feather_alpha(10, 12, 3)
    assert alpha[0, 5] == pytest.approx(0.25) and alpha[1, 5] == pytest.approx(0.5)
    assert alpha[2, 5] == pytest.approx(0.75) and alpha[3:7, 3:9].min() == 1.0


def test_inpainting_leaves_pixels_outside_the_padded_boxes_untouched():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, size=(90, 160, 3), dtype=np.uint8)
    subject, obj = (20.3, 30.0, 18.0, 14.5), (110.0, 40.2, 24.0, 20.0)
    params = EditParams()
    edited = render_swap(image, subject, obj, params)
    changed = np.zeros(image.shape[:2], dtype=bool)
    for box in (subject, obj):
        x0, y0, x1, y1 = pixel_rect(box, 160, 90, pad=params.pad)
        changed[y0:y1, x0:x1] = True
    for box in swap_boxes(subject, obj):
        x0, y0, x1, y1 = pixel_rect(box, 160, 90)
        changed[y0:y1, x0:x1] = True
    assert np.array_equal(edited[~changed], image[~changed])
    assert not np.array_equal(edited, image)
    # the pasted subject's interior (beyond the 3-px feather) is the source patch, pixel for pixel
    sx0, sy0, sx1, sy1 = pixel_rect(subject, 160, 90)
    patch = image[sy0:sy1, sx0:sx1]
    ph, pw = patch.shape[:2]
    cx, cy = obj[0] + obj[2] / 2, obj[1] + obj[3] / 2
    x0, y0 = round(cx - pw / 2), round(cy - ph / 2)
    assert np.array_equal(edited[y0 + 3:y0 + ph - 3, x0 + 3:x0 + pw - 3], patch[3:-3, 3:-3])


def _scene(path: Path, width: int, height: int, boxes: list[tuple[float, float, float, float]]) -> None:
    image = np.full((height, width, 3), 200, dtype=np.uint8)
    for k, (x, y, w, h) in enumerate(boxes):
        image[int(y):int(y + h), int(x):int(x + w)] = (40 * (k + 1), 0, 255 - 40 * k)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(image).save(path)


def _source_items(root: Path) -> list[BenchmarkItem]:
    """Four GSR-style groups on synthetic 200x100 scenes: two feasible, one out of bounds, one unswappable."""
    specs = [
        ("g0", "left of", (10.0, 40.0, 20.0, 20.0), (150.0, 35.0, 30.0, 30.0)),
        ("g1", "above", (90.0, 5.0, 20.0, 20.0), (60.0, 60.0, 30.0, 30.0)),
        ("g2", "left of", (0.0, 40.0, 20.0, 20.0), (100.0, 0.0, 90.0, 100.0)),
        ("g3", "in front of", (10.0, 40.0, 20.0, 20.0), (150.0, 35.0, 30.0, 30.0)),
    ]
    items = []
    for group, relation, s, o in specs:
        _scene(root / f"{group}.png", 200, 100, [s, o])
        for truth in ("true", "false"):
            items.append(BenchmarkItem(
                item_id=f"{group}-{truth[0]}", image=f"{group}.png", question="q", label="yes" if truth == "true"
                else "no", group_id=group, statement=truth, relation=relation, subject="cup", object="apple",
                boxes={"subject": list(s), "object": list(o)}))
    return items


def test_build_edits_six_probes_and_counts(tmp_path):
    images = tmp_path / "src"
    items = _source_items(images)
    result = build_edits(items, images, tmp_path / "out", seed=3)
    assert result["n_edits"] == 2 and len(result["items"]) == 12
    assert result["excluded"] == {"out of bounds": 1, "relation not swappable": 1}
    ranks = [c["source_group_id"] for c in result["candidates"]]
    assert sorted(ranks) == ["g0", "g1", "g2", "g3"]
    again = build_edits(items, images, tmp_path / "again", seed=3)
    assert [c["source_group_id"] for c in again["candidates"]] == ranks  # seeded shuffle
    probes = {i.extra["probe"]: i for i in result["items"] if i.extra["edit_id"] == "edit-0001"}
    assert [probes[p].label for p in ("src-r", "src-inv", "edit-r", "edit-inv", "edit-subj", "edit-obj")] == [
        "yes", "no", "no", "yes", "yes", "yes"]
    assert probes["src-r"].question == probes["edit-r"].question
    assert probes["edit-inv"].statement == "true" and probes["edit-r"].statement == "false"
    assert probes["edit-subj"].question.endswith('"There is a cup in the image."')
    assert probes["edit-obj"].question.endswith('"There is an apple in the image."')
    for item in result["items"]:
        assert (tmp_path / "out" / "images" / str(item.image)).exists()
    write_items(tmp_path / "items.jsonl", result["items"])
    assert len(read_items(tmp_path / "items.jsonl")) == 12


def _fill(batch: Path, key_rows: list[dict], answers: dict[str, str], repeat_answers: dict[str, str]) -> None:
    """Write an annotator's answers: ``answers[edit]`` is a 4-letter y/n/? string; repeats may differ."""
    rows = list(csv.DictReader((batch / "tasks.csv").open(encoding="utf-8")))
    edit_of = {r["task"]: (r["edit_id"], r["repeat"] == "1") for r in key_rows}
    letters = {"y": "yes", "n": "no", "?": "unsure"}
    for row in rows:
        edit, is_repeat = edit_of[row["task"]]
        code = repeat_answers.get(edit, answers[edit]) if is_repeat else answers[edit]
        for name, letter in zip(FIELDS, code, strict=True):
            row[name] = letters[letter]
    with (batch / "tasks.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(TASK_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)


def _export(tmp_path: Path) -> tuple[Path, dict]:
    images = tmp_path / "imgs"
    edits = []
    for k in range(3):
        _scene(images / f"source/00000000{k}.png", 40, 30, [(2, 2, 5, 5)])
        _scene(images / f"edited/edit-000{k}.png", 40, 30, [(30, 2, 5, 5)])
        edits.append({"edit_id": f"edit-000{k}", "source_image": f"source/00000000{k}.png",
                      "edited_image": f"edited/edit-000{k}.png", "original_statement": "The cup is left of the box.",
                      "edited_statement": "The cup is right of the box.", "subject": "cup", "object": "box",
                      "margin": 1.234, "source_item_id": "gsr-coco-0007-t"})
    out = tmp_path / "export"
    summary = export_batches(edits, images, out, ["a1", "a2", "a3"], repeat_fraction=0.10, seed=11)
    return out, summary


def test_export_is_blinded(tmp_path):
    out, summary = _export(tmp_path)
    assert summary["n_repeat_per_annotator"] == 1 and summary["tasks_per_annotator"] == 4
    for annotator in ("a1", "a2", "a3"):
        batch = out / "batches" / annotator
        text = (batch / "tasks.csv").read_text(encoding="utf-8")
        header = text.splitlines()[0].split(",")
        assert tuple(header) == TASK_COLUMNS
        for secret in ("edit-000", "gsr-coco", "00000000", "margin", "1.234", "pred", "source"):
            assert secret not in text
        names = sorted(p.name for p in (batch / "images").iterdir())
        assert len(names) == 8 and all(n.startswith("T00") for n in names)
    orders = [[r["edit_id"] for r in csv.DictReader((out / "key.csv").open()) if r["annotator"] == a]
              for a in ("a1", "a2", "a3")]
    assert all(sorted(set(o)) == ["edit-0000", "edit-0001", "edit-0002"] and len(o) == 4 for o in orders)
    again, _ = _export(tmp_path / "again")
    assert (again / "key.csv").read_text() == (out / "key.csv").read_text()  # seeded


def test_import_consensus_and_agreement_hand_computed(tmp_path):
    out, _ = _export(tmp_path)
    key_rows = list(csv.DictReader((out / "key.csv").open(encoding="utf-8")))
    per = {a: [r for r in key_rows if r["annotator"] == a] for a in ("a1", "a2", "a3")}
    # edit-0000 accepted; edit-0001 rejected (field 2: y,n,n); edit-0002 no majority (field 3: y,?,n)
    answers = {
        "a1": {"edit-0000": "yyyy", "edit-0001": "yyyy", "edit-0002": "yyyy"},
        "a2": {"edit-0000": "yyyy", "edit-0001": "ynyy", "edit-0002": "yy?y"},
        "a3": {"edit-0000": "yyyy", "edit-0001": "ynyy", "edit-0002": "yyny"},
    }
    repeated = {a: next(r["edit_id"] for r in per[a] if r["repeat"] == "1") for a in per}
    flipped = {"y": "n", "n": "y", "?": "y"}
    a2_first = answers["a2"][repeated["a2"]]
    for annotator in per:
        repeat_answers = {}
        if annotator == "a2":  # one of four fields answered differently on the repeat
            repeat_answers[repeated["a2"]] = flipped[a2_first[0]] + a2_first[1:]
        _fill(out / "batches" / annotator, per[annotator], answers[annotator], repeat_answers)
    result = import_annotations(out / "key.csv", {a: out / "batches" / a / "tasks.csv" for a in per})
    decisions = {r["edit_id"]: r["decision"] for r in result["rows"]}
    assert decisions == {"edit-0000": "accepted", "edit-0001": "rejected", "edit-0002": "no-majority"}
    assert result["counts"] == {"accepted": 1, "rejected": 1, "no-majority": 1}
    row = next(r for r in result["rows"] if r["edit_id"] == "edit-0002")
    assert row["both_objects_visible"] == "none" and row["both_objects_visible_votes"] == "yes/unsure/no"
    assert result["pairwise"]["a1~a2"]["agreement"] == pytest.approx(10 / 12)
    assert result["pairwise"]["a1~a3"]["agreement"] == pytest.approx(10 / 12)
    assert result["pairwise"]["a2~a3"]["agreement"] == pytest.approx(11 / 12)
    assert result["pairwise_range"] == pytest.approx([10 / 12, 11 / 12])
    assert result["repeat"]["a1"]["agreement"] == 1.0 and result["repeat"]["a2"]["agreement"] == 0.75
    assert result["repeat_pooled"] == pytest.approx(11 / 12)
    # a bad answer names the file, the line and the field
    batch = out / "batches" / "a1" / "tasks.csv"
    batch.write_text(batch.read_text().replace("yes", "maybe", 1))
    with pytest.raises(InputError, match=r"tasks.csv.*line 2.*original_relation_valid"):
        import_annotations(out / "key.csv", {"a1": batch})


def _report_rows(models: list[str], probe_preds: dict[str, dict[str, str]]) -> list[dict]:
    rows = []
    for model in models:
        for item_id, pred in probe_preds[model].items():
            rows.append({"model": model, "dataset": "edits", "interface": "yesno", "item_id": item_id, "pred": pred})
    return rows


def test_edit_outcomes_by_stratum():
    probes = []
    for edit in ("e1", "e2"):
        for probe in ("src-r", "src-inv", "edit-r", "edit-inv", "edit-subj", "edit-obj"):
            probes.append({"item_id": f"{edit}-{probe}", "edit_id": edit, "probe": probe,
                           "source_item_id": f"{edit}-t", "source_group_id": f"{edit}-g"})
    flip = {"src-r": "yes", "src-inv": "no", "edit-r": "no", "edit-inv": "yes", "edit-subj": "yes", "edit-obj": "yes"}
    no_vis = {**flip, "edit-obj": "no"}
    preds = {"m1": {**{f"e1-{p}": v for p, v in flip.items()}, **{f"e2-{p}": v for p, v in no_vis.items()}},
             "m2": {**{f"e1-{p}": v for p, v in flip.items()}, **{f"e2-{p}": v for p, v in flip.items()}}}
    source_items = [{"model": m, "interface": "yesno", "item_id": f"{e}-t", "cu": cu, "dcc": 1 - cu}
                    for m in ("m1", "m2") for e, cu in (("e1", 0), ("e2", 1))]
    source_groups = [{"model": m, "interface": "yesno", "group_id": f"{e}-g", "rel_o": True, "pair_d": pd,
                      "joint": pd} for m in ("m1", "m2") for e, pd in (("e1", True), ("e2", False))]
    result = edit_outcomes(probes, ["e1", "e2"], _report_rows(["m1", "m2"], preds), source_items, source_groups,
                           n_resamples=200, seed=0)
    m1, m2, macro = result.table
    assert (m1["rel"], m1["flip_vis"], m1["joint"], m1["cu"], m1["dcc"]) == (100.0, 50.0, 100.0, 0.0, 100.0)
    # Δ_PairD = Joint − Rel_o (§15): m1's Joint stratum (e1, 100) against its Rel_o (e1, e2: 50)
    assert m1["delta_pair_d"] == 50.0 and m2["flip_vis"] == 100.0 and m2["delta_pair_d"] == 0.0
    assert macro["flip_vis"] == 75.0 and macro["n"] == 4
    assert result.pooled_cu.n == 2 and result.pooled_cu.rate == 50.0
    with pytest.raises(InputError, match="no prediction"):
        edit_outcomes(probes, ["e1", "e2"], _report_rows(["m1"], {"m1": {"e1-src-r": "yes"}}), source_items,
                      source_groups)


def test_feasibility_audit_difference():
    rows = [{"feasible": True, "horizontal": True, "larger_area": 0.1, "abs_gap": 0.4, "slack": 0.05,
             "source_item_id": "a"},
            {"feasible": False, "horizontal": False, "larger_area": 0.3, "abs_gap": 0.5, "slack": -0.1,
             "source_item_id": "b"},
            {"feasible": False, "failure": "no boxes", "slack": None}]
    audit = feasibility_audit(rows, source_dcc={"m": {"a": 1.0, "b": 0.0}}, n_resamples=100)
    by = {a.characteristic: a for a in audit}
    assert by["Horizontal relation"].difference == 100.0
    assert by["Destination slack"].feasible == pytest.approx(5.0)
    assert by["m source D-CC"].difference == 100.0 and by["Larger-box area"].n_excluded == 1


def _write_two_obj(path: Path) -> Path:
    """What's Up two-object rows on the real COCO sample images (boxes come from the real instances)."""
    rows = [
        [453302, "A photo of a toaster to the left of a sink", "A photo of a toaster to the right of a sink"],
        [255165, "A photo of a laptop to the left of a mouse", "A photo of a laptop to the right of a mouse"],
        [516916, "A photo of a mouse to the right of a keyboard", "A photo of a mouse to the left of a keyboard"],
        [181303, "A photo of a kite above a person", "A photo of a kite below a person"],
        [217285, "A photo of a baseball bat above a baseball glove",
         "A photo of a baseball bat below a baseball glove"],
        [370208, "A photo of a person to the left of a bicycle", "A photo of a person to the right of a bicycle"],
        [18575, "A photo of a wine glass above a sandwich", "A photo of a wine glass below a sandwich"],
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_cli_build_export_import_on_real_coco(shared_data, tmp_path):
    coco = shared_data / "coco_val2017_sample"
    runner = CliRunner()
    items = tmp_path / "gsr.jsonl"
    result = runner.invoke(app, ["data", "gsr-coco", str(_write_two_obj(tmp_path / "coco_qa_two_obj.json")), "--out", str(items),
                                 "--instances", str(coco / "annotations" / "instances_val2017_subset20.json")])
    assert result.exit_code == 0, result.output
    build = tmp_path / "build"
    result = runner.invoke(app, ["data", "edits", "build", str(items), "--images", str(coco), "--out", str(build),
                                 "--resamples", "200"])
    assert result.exit_code == 0, result.output
    summary = json.loads((build / "summary.json").read_text())
    assert (summary["n_candidates"], summary["n_feasible"], summary["n_infeasible"]) == (7, 4, 3)
    assert summary["excluded_by_reason"] == {"out of bounds": 3}
    assert "Feasibility-selection audit" in result.output
    result = runner.invoke(app, ["data", "edits", "export", str(build), "--out", str(tmp_path / "exp")])
    assert result.exit_code == 0, result.output
    key_rows = list(csv.DictReader((tmp_path / "exp" / "key.csv").open()))
    for annotator in ("a1", "a2", "a3"):
        _fill(tmp_path / "exp" / "batches" / annotator, [r for r in key_rows if r["annotator"] == annotator],
              {f"edit-000{k}": "yyyy" for k in range(1, 5)}, {})
    result = runner.invoke(app, ["data", "edits", "import", str(tmp_path / "exp"), "--out", str(tmp_path / "imp"),
                                 "--items", str(build / "items.jsonl")])
    assert result.exit_code == 0, result.output
    imported = json.loads((tmp_path / "imp" / "summary.json").read_text())
    assert imported["counts"]["accepted"] == 4 and imported["n_accepted_probes"] == 24
    assert imported["repeat_pooled"] == 1.0
    # analyze: source report rows and edit-probe predictions in the `vlaudit vca report` CSV layout
    from vlaudit.files import write_table

    gsr = read_items(items)
    report = tmp_path / "report"
    source_rows = [{"model": "m1", "dataset": "gsr-coco", "interface": "yesno", "item_id": i.item_id,
                    "group_id": i.group_id, "label": i.label, "pred": i.label, "correct": True, "g_img": 0.5,
                    "dep": k % 2 == 0, "dcc": k % 2 == 0, "cu": k % 2 == 1, "wrong_dep": False}
                   for k, i in enumerate(gsr)]
    probes = read_items(build / "items.jsonl")
    edit_rows = [{"model": "m1", "dataset": "edits", "interface": "yesno", "item_id": p.item_id, "group_id": None,
                  "label": p.label, "pred": p.label, "correct": True, "g_img": 0.1, "dep": True, "dcc": True,
                  "cu": False, "wrong_dep": False} for p in probes]
    write_table(report / "items.csv", source_rows + edit_rows)
    write_table(report / "groups.csv", [{"model": "m1", "dataset": "gsr-coco", "interface": "yesno",
                                         "group_id": g, "rel_o": True, "pair_credit": True, "pair_d": True,
                                         "joint": True, "g_int": 1.0} for g in sorted({i.group_id for i in gsr})])
    result = runner.invoke(app, ["data", "edits", "analyze", str(build), "--consensus",
                                 str(tmp_path / "imp" / "consensus.csv"), "--report", str(report), "--out",
                                 str(tmp_path / "analysis"), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    analysis = json.loads((tmp_path / "analysis" / "summary.json").read_text())
    m1 = analysis["table"][0]
    assert (m1["n"], m1["flip_vis"], m1["strict"], m1["n_joint"], m1["joint"]) == (4, 100.0, 100.0, 4, 100.0)
    assert m1["n_cu"] + m1["n_dcc"] == 4
    assert any(a["characteristic"] == "m1 source D-CC" for a in analysis["feasibility_audit"])
    # a model with empty Rel_o and Joint strata: every rate and interval over them reads "— (empty stratum)"
    # beside n = 0, and the JSON holds that reason where the number would stand
    write_table(report / "groups.csv", [{"model": "m1", "dataset": "gsr-coco", "interface": "yesno",
                                         "group_id": g, "rel_o": False, "pair_credit": False, "pair_d": False,
                                         "joint": False, "g_int": -1.0} for g in sorted({i.group_id for i in gsr})])
    result = runner.invoke(app, ["data", "edits", "analyze", str(build), "--consensus",
                                 str(tmp_path / "imp" / "consensus.csv"), "--report", str(report), "--out",
                                 str(tmp_path / "empty"), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert "nan" not in result.output.lower() and "— (empty stratum)" in result.output
    assert "pooled C-U flip+visibility: n=0 rate=— CI=—" in result.output
    m1 = json.loads((tmp_path / "empty" / "summary.json").read_text())["table"][0]
    empty = {"missing": "empty stratum"}
    assert (m1["n_rel_o"], m1["rel_o"], m1["n_joint"], m1["joint"], m1["delta_pair_d"]) == (0, empty, 0, empty, empty)


def test_build_with_a_missing_or_corrupt_image_writes_nothing(tmp_path):
    images = tmp_path / "src"
    items = _source_items(images)
    (images / "g1.png").unlink()
    with pytest.raises(InputError, match=r"g1.png.*g1-t.*'image'.*not found"):
        build_edits(items, images, tmp_path / "out", seed=3)
    (images / "g1.png").write_bytes(b"not a png")
    with pytest.raises(InputError, match=r"g1.png.*g1-t.*'image'.*unreadable"):
        build_edits(items, images, tmp_path / "out", seed=3)
    assert not (tmp_path / "out").exists()


def test_analysis_and_import_reject_mismatched_inputs(tmp_path):
    probes = [{"item_id": f"e1-{p}", "edit_id": "e1", "probe": p, "source_item_id": "e1-t", "source_group_id": "g"}
              for p in ("src-r", "src-inv", "edit-r", "edit-inv", "edit-subj", "edit-obj")]
    preds = _report_rows(["m1"], {"m1": {p["item_id"]: "yes" for p in probes}})
    other_model = [{"model": "m2", "interface": "yesno", "item_id": "e1-t", "cu": 1, "dcc": 0}]
    with pytest.raises(InputError, match=r"report/items.csv.*record e1.*'item_id'.*model 'm1' has no row"):
        edit_outcomes(probes, ["e1"], preds, other_model, [], n_resamples=10, source_path="report/items.csv")
    out, _ = _export(tmp_path)
    batch = out / "batches" / "a1" / "tasks.csv"
    lines = batch.read_text(encoding="utf-8").splitlines()
    batch.write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"tasks.csv.*line 6.*'task'.*answered twice"):
        import_annotations(out / "key.csv", {"a1": batch})


# VCA §15 component audit (108 accepted edits per model): R/J n, Rel., +Vis., Rel_o, Joint, Δ_PairD as printed,
# with the success counts that reproduce them (e.g. Qwen Rel_o 68/95 = 71.58, Joint 62/79 = 78.48).
PAPER_EDITS = {  # model: (n_rel_o, n_joint, rel successes, +vis successes, +vis in Rel_o, +vis in Joint)
    "Qwen": (95, 79, 91, 73, 68, 62),
    "InternVL": (25, 15, 28, 28, 9, 5),
    "LLaVA": (80, 30, 68, 62, 56, 25),
    "Ministral": (58, 46, 49, 45, 29, 26),
}
# Rel. successes within Joint: the only integers (with +vis in Joint ≤ r ≤ +vis in Joint + relation-only
# successes) whose macro rounds to the paper's 69.47% (§15: "54.63% overall and 69.47% within Joint (+14.84)")
PAPER_REL_IN_JOINT = {"Qwen": 74, "InternVL": 5, "LLaVA": 27, "Ministral": 28}
PAPER_ROWS = {  # model: (R/J n, Rel., +Vis., Rel_o, Joint, Δ_PairD)
    "Qwen": ((95, 79), 84.26, 67.59, 71.58, 78.48, +6.90),
    "InternVL": ((25, 15), 25.93, 25.93, 36.00, 33.33, -2.67),
    "LLaVA": ((80, 30), 62.96, 57.41, 70.00, 83.33, +13.33),
    "Ministral": ((58, 46), 45.37, 41.67, 50.00, 56.52, +6.52),
    "Macro": ((258, 170), 54.63, 48.15, 56.89, 62.92, +6.02),
}
PROBES = ("src-r", "src-inv", "edit-r", "edit-inv", "edit-subj", "edit-obj")


def paper_edit_inputs(n_edits: int = 108) -> tuple[list, list, list, list, list]:
    """Probes, accepted ids, predictions, source items and source groups whose outcomes give the §15 table.

    Per model, edits 0..R−1 are Rel_o (the first J of them Joint); +Vis. successes are placed J-first, then in
    Rel_o ∖ Joint, then outside Rel_o; relation-only successes without visibility fill the remaining records.
    25 C-U records per model carry 25 successes in all (the pooled 25.00% of 100 records in §15).
    """
    edits = [f"e{k:03d}" for k in range(n_edits)]
    probes = [{"item_id": f"{e}-{p}", "edit_id": e, "probe": p, "source_item_id": f"{e}-t",
               "source_group_id": f"{e}-g"} for e in edits for p in PROBES]
    flip = {"src-r": "yes", "src-inv": "no", "edit-r": "no", "edit-inv": "yes", "edit-subj": "yes",
            "edit-obj": "yes"}
    preds, items, groups = [], [], []
    for m, (n_rel_o, n_joint, n_rel, n_vis, vis_rel_o, vis_joint) in PAPER_EDITS.items():
        vis = set(range(vis_joint)) | set(range(n_joint, n_joint + vis_rel_o - vis_joint))
        vis |= set(range(n_rel_o, n_rel_o + n_vis - vis_rel_o))
        rest = [k for k in range(n_edits) if k not in vis]
        in_joint = PAPER_REL_IN_JOINT[m] - vis_joint  # relation-only successes placed inside Joint first
        rest = [k for k in rest if k < n_joint][:in_joint] + [k for k in rest if k >= n_joint]
        rel_only = set(rest[:n_rel - n_vis])
        failures = [k for k in range(n_edits) if k not in vis]
        cu = set(sorted(vis)[:6 + (m == "Ministral")]) | set(failures[:19 - (m == "Ministral")])
        for k, e in enumerate(edits):
            answers = flip if k in vis else {**flip, "edit-obj": "no"} if k in rel_only else {**flip, "edit-r": "yes"}
            preds += [{"model": m, "dataset": "edits", "interface": "yesno", "item_id": f"{e}-{p}", "pred": v}
                      for p, v in answers.items()]
            items.append({"model": m, "interface": "yesno", "item_id": f"{e}-t", "cu": int(k in cu),
                          "dcc": int(k not in cu)})
            groups.append({"model": m, "interface": "yesno", "group_id": f"{e}-g", "rel_o": k < n_rel_o,
                           "pair_d": k < n_joint, "joint": k < n_joint})
    return probes, edits, preds, items, groups


def test_edit_outcomes_reproduce_the_paper_table():
    """Every printed value of the §15 table, Δ_PairD = Joint − Rel_o included (the old Rel_o∧PairD −
    Rel_o∧¬PairD contrast gives +40.98 for Qwen), and Joint − overall (macro +14.77, §15 text)."""
    result = edit_outcomes(*paper_edit_inputs(), n_resamples=200, seed=1)
    rows = {row["model"]: row for row in result.table}
    for model, ((n_rel_o, n_joint), rel, vis, rel_o, joint, delta) in PAPER_ROWS.items():
        row = rows[model]
        assert (row["n_rel_o"], row["n_joint"], row["n"]) == (n_rel_o, n_joint, 108 * (4 if model == "Macro" else 1))
        got = [round(row[k], 2) for k in ("rel", "flip_vis", "rel_o", "joint", "delta_pair_d")]
        assert got == pytest.approx([rel, vis, rel_o, joint, delta], abs=1e-9), model
    assert round(rows["Qwen"]["joint_minus_overall"], 2) == 10.89
    assert round(rows["Macro"]["joint_minus_overall"], 2) == 14.77
    assert (result.pooled_cu.n, result.pooled_cu.rate) == (100, 25.0)
    # relation-only success within Joint: Qwen 74/79 = 93.67; macro 69.47 and +14.84 over 54.63 (§15)
    assert round(rows["Qwen"]["rel_joint"], 2) == 93.67
    assert round(rows["Macro"]["rel_joint"], 2) == 69.47
    assert round(rows["Macro"]["rel_joint_minus_overall"], 2) == 14.84
    macro = rows["Macro"]
    assert macro["rel_joint_lo"] < macro["rel_joint"] < macro["rel_joint_hi"]
    assert macro["rel_joint_minus_overall_lo"] > 0  # the paper's interval [+8.24, +22.24] excludes zero too


def test_edit_cluster_bootstrap_resamples_every_edit_with_all_model_records():
    """Reference loop over one shared plan: every accepted edit id is a cluster, each drawn edit brings all
    four model records; the pooled C-U interval, Joint − overall and Δ_PairD all come from those resamples."""
    from vlaudit.stats.bootstrap import ClusterBootstrap, percentile_interval

    result = edit_outcomes(*paper_edit_inputs(), n_resamples=300, seed=7)
    records = result.records
    plan = ClusterBootstrap.draw(len(records), clusters=[r["edit_id"] for r in records], n_resamples=300, seed=7)
    assert plan.n_clusters == 108
    cu, delta, gain, macro, rel_gain = [], [], [], [], []
    for b in range(300):
        drawn = [records[i] for i in plan.record_indices(b)]

        def rate(rs):
            return 100.0 * np.mean([r["flip_vis"] for r in rs]) if rs else np.nan

        cu.append(rate([r for r in drawn if r["cu"] == 1]))
        per_model = []
        for model in sorted(PAPER_EDITS):
            mine = [r for r in drawn if r["model"] == model]
            joint = rate([r for r in mine if r["joint"] == 1])
            per_model.append((joint - rate(mine), joint - rate([r for r in mine if r["rel_o"] == 1])))
        gain.append(per_model[sorted(PAPER_EDITS).index("InternVL")][0])
        qwen = [r for r in drawn if r["model"] == "Qwen"]
        rel_gain.append(100.0 * np.mean([r["rel"] for r in qwen if r["joint"] == 1])
                        - 100.0 * np.mean([r["rel"] for r in qwen]))
        delta.append(per_model[sorted(PAPER_EDITS).index("InternVL")][1])
        macro.append(np.mean([d for _, d in per_model]))
    rows = {row["model"]: row for row in result.table}
    assert result.pooled_cu.ci == pytest.approx(tuple(percentile_interval(np.array(cu))))
    intern = rows["InternVL"]
    assert [intern["delta_pair_d_lo"], intern["delta_pair_d_hi"]] == pytest.approx(
        list(percentile_interval(np.array(delta))))
    assert [intern["joint_minus_overall_lo"], intern["joint_minus_overall_hi"]] == pytest.approx(
        list(percentile_interval(np.array(gain))))
    assert [rows["Macro"]["delta_pair_d_lo"], rows["Macro"]["delta_pair_d_hi"]] == pytest.approx(
        list(percentile_interval(np.array(macro))))
    assert rows["Macro"]["delta_pair_d_lo"] < rows["Macro"]["delta_pair_d"] < rows["Macro"]["delta_pair_d_hi"]
    assert [rows["Qwen"]["rel_joint_minus_overall_lo"], rows["Qwen"]["rel_joint_minus_overall_hi"]] == pytest.approx(
        list(percentile_interval(np.array(rel_gain))))
