"""Procedural scenes: official COCO / GQA shapes, determinism, boxes, relations consistent with geometry."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.builders.scene_render import SHAPES, UNIT_SHAPES, polygon_area
from vlaudit.builders.scenes import (
    CENTRE_GAP,
    COCO_CATEGORIES,
    DEFAULT_OBJECTS,
    SIZE_LEVELS,
    render_scenes,
    sample_scene,
)

N = 40


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scenes")
    render_scenes(out, N, seed=7, p_small=0.3, p_crowd=0.3)  # high rates so the small/crowd paths are covered
    return out


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# ---- a small JSON-schema checker for the two formats (types, required keys, nesting) --------------------

NUM = (int, float)
COCO_IMAGE = {"license": int, "file_name": str, "coco_url": str, "height": int, "width": int,
              "date_captured": str, "flickr_url": str, "id": int}
COCO_ANN = {"segmentation": (list, dict), "area": NUM, "iscrowd": int, "image_id": int, "bbox": list,
            "category_id": int, "id": int}
COCO_CAPTION = {"image_id": int, "id": int, "caption": str}
COCO_CATEGORY = {"supercategory": str, "id": int, "name": str}
INFO = {"description": str, "url": str, "version": str, "year": int, "contributor": str, "date_created": str}
GQA_OBJECT = {"name": str, "x": int, "y": int, "w": int, "h": int, "attributes": list, "relations": list}


def check_record(record: object, schema: dict, where: str) -> None:
    assert isinstance(record, dict), f"{where}: not an object"
    assert set(record) == set(schema), f"{where}: keys {sorted(record)} != {sorted(schema)}"
    for key, kind in schema.items():
        assert isinstance(record[key], kind) and not isinstance(record[key], bool), f"{where}.{key}: {kind}"


def test_coco_instances_schema(scenes: Path) -> None:
    data = _load(scenes / "instances.json")
    assert list(data) == ["info", "licenses", "images", "annotations", "categories"]
    check_record(data["info"], INFO, "info")
    for i, image in enumerate(data["images"]):
        check_record(image, COCO_IMAGE, f"images[{i}]")
        assert (scenes / "images" / image["file_name"]).is_file()
    image_ids = {im["id"]: im for im in data["images"]}
    assert len(image_ids) == N
    for i, cat in enumerate(data["categories"]):
        check_record(cat, COCO_CATEGORY, f"categories[{i}]")
    cats = {c["id"]: c["name"] for c in data["categories"]}
    assert len(cats) == 80 and cats[1] == "person" and cats[90] == "toothbrush" and 12 not in cats
    ann_ids = set()
    for i, ann in enumerate(data["annotations"]):
        check_record(ann, COCO_ANN, f"annotations[{i}]")
        assert ann["id"] not in ann_ids
        ann_ids.add(ann["id"])
        assert ann["image_id"] in image_ids and ann["category_id"] in cats and ann["iscrowd"] in (0, 1)
        assert len(ann["bbox"]) == 4 and all(isinstance(v, float) for v in ann["bbox"]) and ann["area"] > 0
        if ann["iscrowd"]:
            seg = ann["segmentation"]
            assert set(seg) == {"counts", "size"} and all(isinstance(c, int) for c in seg["counts"])
        else:
            assert all(len(poly) >= 6 and len(poly) % 2 == 0 for poly in ann["segmentation"])


def test_coco_captions_schema_five_per_image(scenes: Path) -> None:
    data = _load(scenes / "captions.json")
    assert list(data) == ["info", "licenses", "images", "annotations"]
    per_image: dict[int, int] = {}
    ids = set()
    for i, cap in enumerate(data["annotations"]):
        check_record(cap, COCO_CAPTION, f"annotations[{i}]")
        assert cap["id"] not in ids and cap["caption"].strip()
        ids.add(cap["id"])
        per_image[cap["image_id"]] = per_image.get(cap["image_id"], 0) + 1
    assert set(per_image) == {im["id"] for im in data["images"]} and set(per_image.values()) == {5}


def test_gqa_schema(scenes: Path) -> None:
    graphs = _load(scenes / "scene_graphs.json")
    assert len(graphs) == N
    for image_id, graph in graphs.items():
        assert set(graph) == {"width", "height", "objects"} and image_id.isdigit()
        for oid, obj in graph["objects"].items():
            check_record(obj, GQA_OBJECT, f"{image_id}/{oid}")
            assert all(isinstance(a, str) for a in obj["attributes"])
            for rel in obj["relations"]:
                assert set(rel) == {"name", "object"} and rel["object"] in graph["objects"]


def test_categories_match_official_coco(shared_data: Path) -> None:
    real = _load(shared_data / "coco_val2017_sample/annotations/instances_val2017_subset20.json")
    assert [(c["id"], c["name"], c["supercategory"]) for c in real["categories"]] == list(COCO_CATEGORIES)


def test_same_seed_identical_bytes(tmp_path: Path) -> None:
    def digest(out: Path) -> dict[str, bytes]:
        return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}

    render_scenes(tmp_path / "a", 12, seed=3)
    render_scenes(tmp_path / "b", 12, seed=3)
    render_scenes(tmp_path / "c", 12, seed=4)
    a, b, c = digest(tmp_path / "a"), digest(tmp_path / "b"), digest(tmp_path / "c")
    assert a == b and len(a) == 15
    assert a["instances.json"] != c["instances.json"]
    render_scenes(tmp_path / "a", 12, seed=3)  # re-rendering into the same folder is idempotent
    assert digest(tmp_path / "a") == a
    steps: list[int] = []  # a progress callback sees every image once and changes nothing
    render_scenes(tmp_path / "a", 12, seed=3, progress=steps.append)
    assert sum(steps) == 12 and digest(tmp_path / "a") == a


def test_boxes_inside_and_tight(scenes: Path) -> None:
    data = _load(scenes / "instances.json")
    sizes = {im["id"]: (im["width"], im["height"]) for im in data["images"]}
    for ann in data["annotations"]:
        x, y, w, h = ann["bbox"]
        width, height = sizes[ann["image_id"]]
        assert x >= 0 and y >= 0 and w > 0 and h > 0 and x + w <= width and y + h <= height
        if ann["iscrowd"]:
            counts, (mh, mw) = ann["segmentation"]["counts"], ann["segmentation"]["size"]
            flat = np.repeat(np.arange(len(counts)) % 2, counts).astype(bool)
            mask = flat.reshape((mw, mh)).T  # column-major RLE
            assert (mh, mw) == (height, width) and mask.sum() == ann["area"]
            rows, cols = np.nonzero(mask)
            assert rows.min() >= y and cols.min() >= x and rows.max() < y + h and cols.max() < x + w
        else:
            poly = np.asarray(ann["segmentation"][0]).reshape(-1, 2)
            assert np.allclose(poly.min(axis=0), [x, y], atol=0.01)
            assert np.allclose(poly.max(axis=0), [x + w, y + h], atol=0.01)
            assert ann["area"] == pytest.approx(polygon_area(poly), abs=0.05)


def test_gqa_relations_follow_the_rule(scenes: Path) -> None:
    graphs = _load(scenes / "scene_graphs.json")
    for graph in graphs.values():
        W, H = graph["width"], graph["height"]
        objs = graph["objects"]
        centre = {k: (o["x"] + o["w"] / 2, o["y"] + o["h"] / 2) for k, o in objs.items()}
        for a, obj in objs.items():
            stated = {(r["name"], r["object"]) for r in obj["relations"]}
            for b in objs:
                if a == b:
                    continue
                (ax, ay), (bx, by) = centre[a], centre[b]
                expected = {("to the left of", b)} if ax + 0.05 * W < bx else set()
                expected |= {("to the right of", b)} if bx + 0.05 * W < ax else set()
                expected |= {("above", b)} if ay + 0.05 * H < by else set()
                expected |= {("below", b)} if by + 0.05 * H < ay else set()
                assert {s for s in stated if s[1] == b} == expected


def test_captions_state_relations_that_hold(scenes: Path) -> None:
    inst = _load(scenes / "instances.json")
    caps = _load(scenes / "captions.json")
    graphs = _load(scenes / "scene_graphs.json")
    names = {c["id"]: c["name"] for c in inst["categories"]}
    width, height = inst["images"][0]["width"], inst["images"][0]["height"]
    mains: dict[int, dict[str, dict]] = {}
    for ann in inst["annotations"]:
        x, y, w, h = ann["bbox"]
        if ann["iscrowd"] == 0 and w * h >= 0.01 * width * height:
            attrs = graphs[str(ann["image_id"])]["objects"][str(ann["id"])]["attributes"]
            mains.setdefault(ann["image_id"], {})[names[ann["category_id"]]] = {
                "c": (x + w / 2, y + h / 2), "area": w * h, "color": attrs[0]}
    relations = ("to the left of", "to the right of", "above", "below", "larger than")
    checked = 0
    for cap in caps["annotations"]:
        text = cap["caption"].rstrip(".").lower()
        rel = next((r for r in relations if f" {r} " in text), None)
        if rel is None:
            continue
        objs = mains[cap["image_id"]]
        left, right = text.split(f" {rel} ")
        subj = [w for w in left.split() if w in objs][-1]
        obj = [w for w in right.split() if w in objs][0]
        a, b = objs[subj], objs[obj]
        holds = {"to the left of": a["c"][0] + 0.05 * width < b["c"][0],
                 "to the right of": b["c"][0] + 0.05 * width < a["c"][0],
                 "above": a["c"][1] + 0.05 * height < b["c"][1], "below": b["c"][1] + 0.05 * height < a["c"][1],
                 "larger than": a["area"] >= 2 * b["area"]}[rel]
        assert holds, cap
        checked += 1
    assert checked >= 3 * N


def test_captions_mention_only_present_categories(scenes: Path) -> None:
    synonyms = pytest.importorskip("vlaudit.builders.cycles.synonyms")
    inst = _load(scenes / "instances.json")
    names = [c["name"] for c in inst["categories"]]
    by_id = {c["id"]: c["name"] for c in inst["categories"]}
    present: dict[int, set[str]] = {}
    for ann in inst["annotations"]:
        present.setdefault(ann["image_id"], set()).add(by_id[ann["category_id"]])
    matcher = synonyms.MentionMatcher(names)
    for cap in _load(scenes / "captions.json")["annotations"]:
        mentioned = {names[i] for i in matcher(cap["caption"])}
        assert mentioned and mentioned <= present[cap["image_id"]], cap


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), index=st.integers(0, 10_000))
def test_main_pairs_are_unambiguous(seed: int, index: int) -> None:
    """Every main pair: centre gaps ≥ 2× the margin on both axes, disjoint boxes, sizes ≥ 2× apart or equal."""
    scene = sample_scene(1, seed, index)
    mains = [o for o in scene.objects if o.kind == "main"]
    assert 2 <= len(mains) <= 4 and len({o.category for o in mains}) == len(mains)
    for i, a in enumerate(mains):
        for b in mains[i + 1:]:
            (ax, ay, aw, ah), (bx, by, bw, bh) = a.box, b.box
            assert abs((ax + aw / 2) - (bx + bw / 2)) >= CENTRE_GAP * scene.width
            assert abs((ay + ah / 2) - (by + bh / 2)) >= CENTRE_GAP * scene.height
            assert ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay
            big, small = max(aw * ah, bw * bh), min(aw * ah, bw * bh)
            assert big == small or big >= 4 * small
    for obj in scene.objects:
        x, y, w, h = obj.box
        assert 0 <= x and 0 <= y and x + w <= scene.width and y + h <= scene.height


def test_size_levels_survive_polygon_areas() -> None:
    """Adjacent levels stay ≥ 2× apart even on polygon areas (every shape fills ≥ 50% of its box)."""
    fills = [polygon_area(UNIT_SHAPES[s]) / 4.0 for s in SHAPES]  # polygon area / box area ([-1, 1]² is 4)
    assert min(fills) >= 0.5 - 1e-9
    for small, big in zip(SIZE_LEVELS, SIZE_LEVELS[1:], strict=False):
        assert big * big * min(fills) >= 2 * small * small * max(fills)
    assert SIZE_LEVELS[0] ** 2 >= 0.01 * 160 * 120  # the smallest main object stays eligible
    assert set(DEFAULT_OBJECTS.values()) <= set(SHAPES)


def test_cycle_builders_run_unchanged(tmp_path: Path) -> None:
    """The COCO and GQA cycle builders accept the files as they are and find every family."""
    coco = pytest.importorskip("vlaudit.builders.cycles.coco")
    gqa = pytest.importorskip("vlaudit.builders.cycles.gqa")
    render_scenes(tmp_path / "s", 120, seed=0)
    summary = coco.build_coco_cycles(tmp_path / "s/instances.json", tmp_path / "s/captions.json",
                                     tmp_path / "coco.jsonl", splits="test=1.0", min_cycles=1)
    assert summary["warnings"] == {} and not summary["unavailable"]
    # text neighbours are one word apart: 16 blocks here, 29 under the old all-pairs rule
    assert all(counts["test"] >= (10 if family == "coco-object-text-neighbor" else 20)
               for family, counts in summary["counts"].items())
    summary = gqa.build_gqa_cycles(tmp_path / "s/scene_graphs.json", tmp_path / "gqa.jsonl", splits="test=1.0",
                                   min_cycles=1)
    assert summary["warnings"] == {} and all(counts["test"] >= 20 for counts in summary["counts"].values())
