"""COCO cycle construction (cycle paper §4, §D.1–D.5): real-format fixtures, the shared sample, audits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from coco_files import LEFT, NAMES, RIGHT, coco_files, read_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vlaudit.builders.cycles import COCO_FAMILIES, audit_cycles_file, build_coco_cycles
from vlaudit.builders.cycles.build_steps import BASE_COLUMNS, sidecar_paths
from vlaudit.errors import InputError
from vlaudit.sources.coco import read_coco_captions, read_coco_instances


def assert_clean_audit(cycles: Path, annotations: list[Path]) -> dict:
    audit = audit_cycles_file(cycles, annotations)
    assert audit["validity_violations"] == 0, audit
    assert audit["max_abs_signed_degree"] == 0
    for row in audit["rows"]:
        assert row["tv_image"] == row["tv_caption"] == row["tv_caption_length"] == 0.0
    return audit




def test_strict_left_right_and_same_pair_blocks(tmp_path: Path) -> None:
    instances, _ = coco_files(tmp_path, [LEFT, RIGHT])
    out = tmp_path / "cycles.jsonl"
    summary = build_coco_cycles(instances, None, out, families=["coco-strict-left-right", "coco-same-pair-relation"],
                                splits="test", min_cycles=1)
    assert summary["counts"] == {"coco-strict-left-right": {"test": 1}, "coco-same-pair-relation": {"test": 1}}
    rows = {r["family"]: r for r in read_rows(out)}
    strict, same = rows["coco-strict-left-right"], rows["coco-same-pair-relation"]
    for row in rows.values():
        assert list(row)[: len(BASE_COLUMNS)] == list(BASE_COLUMNS)
        assert all(isinstance(row[k], str) for k in ("image_1", "image_2", "caption_1", "caption_2"))
        assert set(row["relation_1"]) == {"subject", "relation", "object"}
    # strict: roles swapped under the same relation word; same-pair: same roles, opposite words
    r1, r2 = strict["relation_1"], strict["relation_2"]
    assert r1["relation"] == r2["relation"] and (r1["subject"], r1["object"]) == (r2["object"], r2["subject"])
    s1, s2 = same["relation_1"], same["relation_2"]
    assert (s1["subject"], s1["object"]) == (s2["subject"], s2["object"]) and s1["relation"] != s2["relation"]
    assert strict["text_1"] in {"a dog to the left of a chair", "a chair to the right of a dog",
                                "a dog to the right of a chair", "a chair to the left of a dog"}
    captions = read_rows(sidecar_paths(out)[0])
    assert {c["caption_id"] for c in captions} >= {strict["caption_1"], strict["caption_2"]}
    meta = json.loads(sidecar_paths(out)[1].read_text())
    assert meta["rules"]["margin_x"] == 0.05 and meta["rules"]["size_ratio"] == 2.0
    assert_clean_audit(out, [instances])


def test_margin_makes_near_ties_unverifiable(tmp_path: Path) -> None:
    # centres 3 px apart in a 100 px image: under the 5% margin neither image has a valid left/right statement
    near = {"objects": [("dog", [40, 40, 20, 20]), ("chair", [43, 40, 20, 20])]}
    instances, _ = coco_files(tmp_path, [near, RIGHT])
    summary = build_coco_cycles(instances, None, tmp_path / "c.jsonl", families=["coco-strict-left-right"],
                                splits="test", min_cycles=1)
    assert summary["unavailable"]["coco-strict-left-right"]["test"] == 0
    # a crowd or tiny dog on the other side makes the swap unverifiable (invalidity uses all instances)
    crowd = {"objects": [*LEFT["objects"], ("dog", [80, 10, 15, 15], 1)]}
    instances, _ = coco_files(tmp_path, [crowd, RIGHT])
    summary = build_coco_cycles(instances, None, tmp_path / "c.jsonl", families=["coco-strict-left-right"],
                                splits="test", min_cycles=1)
    assert summary["unavailable"]["coco-strict-left-right"]["test"] == 0
    # a larger margin is honoured and recorded
    instances, _ = coco_files(tmp_path, [LEFT, RIGHT])
    from vlaudit.builders.cycles import GeometryRules

    summary = build_coco_cycles(instances, None, tmp_path / "c.jsonl", families=["coco-strict-left-right"],
                                splits="test", min_cycles=1, rules=GeometryRules(margin_x=0.7))
    assert summary["unavailable"]["coco-strict-left-right"]["test"] == 0 and summary["rules"]["margin_x"] == 0.7


def test_object_families_on_captions(tmp_path: Path) -> None:
    images = [{"objects": [("dog", [0, 0, 50, 50]), ("person", [50, 50, 40, 40])]},
              {"objects": [("cat", [0, 0, 50, 50]), ("person", [50, 50, 40, 40])]},
              {"objects": [("car", [0, 0, 50, 50])]}]
    captions = {0: ["A man walking his dog."], 1: ["A woman holding a kitten."], 2: ["A red car parked."]}
    instances, caps = coco_files(tmp_path, images, captions)
    out = tmp_path / "c.jsonl"
    summary = build_coco_cycles(instances, caps, out, families=["coco-object-coarse", "coco-object-matched"],
                                splits="test", min_cycles=1)
    rows = read_rows(out)
    matched = [r for r in rows if r["family"] == "coco-object-matched"]
    assert summary["counts"]["coco-object-matched"]["test"] == 1
    assert {tuple(matched[0]["categories_1"]), tuple(matched[0]["categories_2"])} == {("person", "dog"),
                                                                                      ("person", "cat")}
    assert all(r["caption_1"].isdigit() for r in rows)
    assert_clean_audit(out, [instances])


def test_shared_sample_all_families(shared_data: Path, tmp_path: Path) -> None:
    ann = shared_data / "coco_val2017_sample" / "annotations"
    instances, captions = ann / "instances_val2017_subset20.json", ann / "captions_val2017_subset20.json"
    out = tmp_path / "cycles.jsonl"
    summary = build_coco_cycles(instances, captions, out, splits="test", min_cycles=1)
    assert summary["images_in_pool"] == 20 and summary["cycles_written"] > 10
    rows = read_rows(out)
    assert {r["family"] for r in rows} <= set(COCO_FAMILIES)
    assert all(r["file_name_1"].endswith(".jpg") and (shared_data / "coco_val2017_sample" / "val2017" /
               r["file_name_1"]).exists() for r in rows)
    audit = assert_clean_audit(out, [instances])
    assert sum(r["cycles"] for r in audit["rows"]) == len(rows)


def test_same_seed_is_byte_identical_and_splits_are_image_disjoint(shared_data: Path, tmp_path: Path) -> None:
    ann = shared_data / "coco_val2017_sample" / "annotations"
    args = (ann / "instances_val2017_subset20.json", ann / "captions_val2017_subset20.json")
    out = tmp_path / "c.jsonl"
    outputs = []
    for _ in range(2):
        build_coco_cycles(*args, out, splits="train=0.5,val=0.5", min_cycles=1, seed=3)
        outputs.append([p.read_bytes() for p in (out, *sidecar_paths(out))])
    assert outputs[0] == outputs[1]
    rows = read_rows(out)
    split_of: dict[str, str] = {}
    for row in rows:
        for image in (row["image_1"], row["image_2"]):
            assert split_of.setdefault(image, row["split"]) == row["split"]
    assert {r["split"] for r in rows} == {"train", "val"}
    build_coco_cycles(*args, out, splits="train=0.5,val=0.5", min_cycles=1, seed=4)
    assert out.read_bytes() != outputs[0][0]


def test_min_cycles_marks_unavailable(tmp_path: Path) -> None:
    instances, _ = coco_files(tmp_path, [LEFT, RIGHT])
    out = tmp_path / "c.jsonl"
    summary = build_coco_cycles(instances, None, out, families=["coco-strict-left-right"], splits="test",
                                min_cycles=30)
    assert summary["unavailable"] == {"coco-strict-left-right": {"test": 1}} and summary["min_cycles"] == 30
    # no empty cycles file that a later command would take for a result: only the failure report
    assert summary["counts"] == {} and not out.exists() and summary["paths"] == {"failed": str(tmp_path / "c.failed.json")}


@pytest.mark.parametrize(("mutate", "field", "fragment"), [
    (lambda d: d["annotations"][1].pop("bbox"), "bbox", "missing required field"),
    (lambda d: d["annotations"][1].__setitem__("bbox", "1,2,3,4"), "bbox", "expected a list of 4 numbers"),
    (lambda d: d["annotations"][1].__setitem__("category_id", 999), "category_id", "unknown category id 999"),
    (lambda d: d["annotations"][1].__setitem__("bbox", [90, 10, 30, 10]), "bbox", "outside"),
    (lambda d: d["annotations"][1].__setitem__("id", d["annotations"][0]["id"]), "id", "duplicate annotation id"),
    (lambda d: d["images"][1].__setitem__("id", d["images"][0]["id"]), "id", "duplicate image id"),
    (lambda d: d["images"][0].__setitem__("width", "100"), "width", "expected a number"),
    (lambda d: d["annotations"][1].__setitem__("image_id", 7), "image_id", "not in 'images'"),
])
def test_bad_instances_name_file_record_field(tmp_path: Path, mutate, field: str, fragment: str) -> None:
    instances, _ = coco_files(tmp_path, [LEFT, RIGHT])
    data = json.loads(instances.read_text())
    mutate(data)
    instances.write_text(json.dumps(data))
    with pytest.raises(InputError) as info:
        read_coco_instances(instances)
    assert info.value.field == field and info.value.path == str(instances) and info.value.record is not None
    assert fragment in str(info.value)


def test_bad_captions_and_recoverable_warnings(tmp_path: Path) -> None:
    overflow = {"objects": [("dog", [5, 40, 20, 20]), ("chair", [70, 40, 30.6, 20])]}  # 0.6 px past the border
    instances, captions = coco_files(tmp_path, [overflow, RIGHT], {0: ["A dog.", "   "], 1: ["A chair."]})
    data = json.loads(instances.read_text())
    data["annotations"][0].pop("iscrowd")
    instances.write_text(json.dumps(data))
    parsed = read_coco_instances(instances)
    assert parsed.warnings == {"boxes clipped to the image border": 1, "missing iscrowd read as 0": 1}
    assert parsed.bbox[1].tolist() == [70.0, 40.0, 30.0, 20.0]
    assert read_coco_captions(captions, parsed).warnings == {"empty captions dropped": 1}
    caps = json.loads(captions.read_text())
    caps["annotations"][1]["image_id"] = 4242
    captions.write_text(json.dumps(caps))
    with pytest.raises(InputError, match="image id 4242 is not in the instances file") as info:
        read_coco_captions(captions, parsed)
    assert info.value.field == "image_id" and "annotations[1]" in str(info.value.record)
    with pytest.raises(InputError, match="unknown COCO families"):
        build_coco_cycles(instances, None, tmp_path / "c.jsonl", families=["coco-nope"])
    with pytest.raises(InputError, match="captions"):
        build_coco_cycles(instances, None, tmp_path / "c.jsonl", families=["coco-object-coarse"])


box = st.tuples(st.integers(0, 80), st.integers(0, 80), st.integers(1, 40), st.integers(1, 40))
obj = st.tuples(st.sampled_from(NAMES), box, st.sampled_from([0, 0, 0, 1]))
image = st.lists(obj, min_size=1, max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(image, min_size=2, max_size=10), st.integers(0, 3))
def test_every_emitted_block_rechecks_valid_with_zero_degree(tmp_path: Path, images, seed: int) -> None:
    specs = [{"objects": [(n, [x, y, min(w, 100 - x), min(h, 100 - y)], c) for n, (x, y, w, h), c in objs]}
             for objs in images]
    words = {"person": "man", "dog": "dogs", "chair": "chair", "cup": "mug", "car": "cars", "cat": "kitten"}
    captions = {k: [" and ".join(words[o[0]] for o in spec["objects"][:2]),
                    "a photo of a " + words[spec["objects"][-1][0]]] for k, spec in enumerate(specs)}
    instances, caps = coco_files(tmp_path, specs, captions)
    out = tmp_path / "prop.jsonl"
    summary = build_coco_cycles(instances, caps, out, splits="a=0.5,b=0.5", min_cycles=0, seed=seed)
    if summary["cycles_written"]:  # none: no file is written (and tmp_path holds an earlier example's)
        assert_clean_audit(out, [instances])


def test_audit_catches_a_tampered_block(tmp_path: Path) -> None:
    instances, _ = coco_files(tmp_path, [LEFT, RIGHT])
    out = tmp_path / "c.jsonl"
    build_coco_cycles(instances, None, out, families=["coco-same-pair-relation"], splits="test", min_cycles=1)
    row = read_rows(out)[0]
    row["relation_2"] = dict(row["relation_1"])  # now both captions say the same: the swaps are valid
    row["caption_2"] = "tampered"
    out.write_text(json.dumps(row) + "\n")
    audit = audit_cycles_file(out, [instances])
    assert audit["validity_violations"] == 1
    assert "not valid" in audit["rows"][0]["violation_examples"][0]["reason"] or "not invalid" in \
        audit["rows"][0]["violation_examples"][0]["reason"]


def test_segmentation_values_of_any_shape_parse(tmp_path: Path) -> None:
    # masks are skipped before parsing when they have an official shape; odd ones are parsed as they are,
    # and a skip that would break the JSON falls back to parsing the file unchanged
    images = [{"objects": [("dog", [5, 5, 10, 10]), ("cat", [20, 20, 10, 10]), ("cup", [40, 40, 10, 10]),
                           ("car", [60, 60, 10, 10]), ("chair", [70, 5, 10, 10])]}]
    instances, _ = coco_files(tmp_path, images)
    data = json.loads(instances.read_text())
    data["annotations"][0]["segmentation"] = {"counts": [1, 2, 3], "size": [100, 100]}
    data["annotations"][1]["segmentation"] = {"counts": "a}b]c", "size": [100, 100]}
    data["annotations"][2]["segmentation"] = "weird"
    data["annotations"][3]["segmentation"] = [['"]]"']]
    instances.write_text(json.dumps(data))
    parsed = read_coco_instances(instances)
    assert [parsed.category_names[c] for c in parsed.ann_cat] == ["dog", "cat", "cup", "car", "chair"]
    assert parsed.bbox[:, 0].tolist() == [5, 20, 40, 60, 70]
