"""The COCO validity rules of cycle paper §4, §D.2, and the fast paths (batch synonym matcher, JSONL).

Validity uses eligible instances only (iscrowd = 0, area ≥ 1% of the image) with the 5% margins and ratio 2;
invalidity must hold over *all* instances with zero margin and ratio 1; anything else is unverifiable. The
vectorised verdicts the builder uses must agree with the scalar re-check the audit uses, on every statement.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.builders.cycles.coco_index import build_index
from vlaudit.builders.cycles.rules import RELATION_CODE, RELATIONS, GeometryRules, statement_verdict
from vlaudit.builders.cycles.synonyms import MentionMatcher, synonym_table
from vlaudit.sources.coco import read_coco_instances

NAMES = ["dog", "chair", "cup"]
RULES = GeometryRules()


def _instances(tmp: Path, objects: list[tuple[str, list[float], int]], w: int = 200, h: int = 100) -> Path:
    path = tmp / "instances_rules.json"
    cats = [{"id": k + 1, "name": n, "supercategory": "x"} for k, n in enumerate(NAMES)]
    anns = [{"id": k + 1, "image_id": 1, "category_id": NAMES.index(n) + 1, "bbox": box, "iscrowd": crowd,
             "area": box[2] * box[3], "segmentation": [[0, 0, 1, 0, 1, 1]]} for k, (n, box, crowd) in enumerate(objects)]
    path.write_text(json.dumps({"images": [{"id": 1, "width": w, "height": h, "file_name": "1.jpg"}],
                                "annotations": anns, "categories": cats}))
    return path


def _verdicts(path: Path, rules: GeometryRules = RULES) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(subject, relation, object) → (vectorised verdict, scalar verdict) for every ordered category pair."""
    inst = read_coco_instances(path)
    index = build_index(inst, rules)
    W, H = float(inst.width[0]), float(inst.height[0])
    lists: dict[int, list] = {c: [] for c in range(len(NAMES))}
    for a in range(len(inst.ann_cat)):
        box = inst.bbox[a].tolist()
        lists[int(inst.ann_cat[a])].append((box, (not inst.iscrowd[a]) and box[2] * box[3] >= rules.min_area * W * H))
    out = {}
    for s in range(len(NAMES)):
        for o in range(len(NAMES)):
            if s == o:
                continue
            for rel in RELATIONS:
                args = (np.array([0]), np.array([s]), np.array([RELATION_CODE[rel]]), np.array([o]))
                valid, invalid = bool(index.valid(*args)[0]), bool(index.invalid(*args)[0])
                assert not (valid and invalid)
                fast = "valid" if valid else "invalid" if invalid else "unverifiable"
                out[(NAMES[s], rel, NAMES[o])] = (fast, statement_verdict(lists[s], lists[o], rel, W, H, rules))
    return out


def _verdict(path: Path, subject: str, relation: str, obj: str) -> str:
    fast, slow = _verdicts(path)[(subject, relation, obj)]
    assert fast == slow
    return fast


def test_validity_uses_eligible_instances_only(tmp_path: Path) -> None:
    big_left, chair = ("dog", [10, 40, 30, 30], 0), ("chair", [150, 40, 30, 30], 0)
    assert _verdict(_instances(tmp_path, [big_left, chair]), "dog", "left of", "chair") == "valid"
    assert _verdict(_instances(tmp_path, [big_left, chair]), "dog", "right of", "chair") == "invalid"
    # a crowd dog, or one under 1% of the 200x100 image (13x15 = 195 px < 200 px), makes nothing valid...
    for dog in (("dog", [10, 40, 30, 30], 1), ("dog", [10, 40, 13, 15], 0)):
        path = _instances(tmp_path, [dog, chair])
        assert _verdict(path, "dog", "left of", "chair") == "unverifiable"  # ...but still blocks invalidity
        assert _verdict(path, "dog", "right of", "chair") == "invalid"
    # exactly 1% is eligible (area >= 1% of the image)
    assert _verdict(_instances(tmp_path, [("dog", [10, 40, 10, 20], 0), chair]), "dog", "left of", "chair") == "valid"


def test_invalidity_is_zero_margin_over_all_instances(tmp_path: Path) -> None:
    chair = ("chair", [100, 40, 30, 30], 0)
    # centres 4 px apart (< 5% of W = 10 px): not valid, and not invalid either (cx(dog) < cx(chair))
    near = _instances(tmp_path, [("dog", [96, 40, 30, 30], 0), chair])
    assert _verdict(near, "dog", "left of", "chair") == "unverifiable"
    assert _verdict(near, "dog", "right of", "chair") == "invalid"
    # equal centres: neither left nor right holds with zero margin, so both are invalid
    same = _instances(tmp_path, [("dog", [100, 10, 30, 30], 0), chair])
    assert _verdict(same, "dog", "left of", "chair") == _verdict(same, "dog", "right of", "chair") == "invalid"
    assert _verdict(same, "dog", "above", "chair") == "valid"
    # a small crowd dog far right keeps "dog right of chair" from being invalid
    crowd = _instances(tmp_path, [("dog", [10, 40, 30, 30], 0), chair, ("dog", [180, 5, 5, 5], 1)])
    assert _verdict(crowd, "dog", "right of", "chair") == "unverifiable"
    # size: ratio 2 for validity, ratio 1 for invalidity; equal areas are not invalid
    for dog_side, expected in ((60, "valid"), (59, "unverifiable"), (30, "unverifiable"), (29, "invalid")):
        path = _instances(tmp_path, [("dog", [0, 0, dog_side, 30], 0), ("chair", [100, 0, 30, 30], 0)])
        assert _verdict(path, "dog", "larger than", "chair") == expected, dog_side
        # the inverse statement is judged with the roles exchanged
        assert _verdict(path, "chair", "smaller than", "dog") == expected, dog_side
    # an absent category makes every statement about it invalid
    assert _verdict(_instances(tmp_path, [("dog", [0, 0, 40, 40], 0)]), "dog", "left of", "cup") == "invalid"


box = st.tuples(st.integers(0, 190), st.integers(0, 90), st.integers(1, 60), st.integers(1, 60))
obj = st.tuples(st.sampled_from(NAMES), box, st.sampled_from([0, 0, 0, 1]))


@settings(max_examples=40, deadline=None)
@given(st.lists(obj, min_size=1, max_size=6))
def test_vectorised_verdicts_equal_the_scalar_recheck(objects) -> None:
    import tempfile

    objects = [(n, [x, y, min(w, 200 - x), min(h, 100 - y)], c) for n, (x, y, w, h), c in objects]
    with tempfile.TemporaryDirectory() as tmp:
        for key, (fast, slow) in _verdicts(_instances(Path(tmp), objects)).items():
            assert fast == slow, key


CATEGORIES = list(synonym_table())
_PHRASE_WORDS = sorted({w for phrases in synonym_table().values() for p in phrases for w in p.split()}
                       | {"bus", "stop", "tennis", "court", "hot", "dog", "teddy", "bear", "a", "the", "on"})
words = st.lists(st.sampled_from(_PHRASE_WORDS + [",", ".", "\n", "\x00", "Hot", "DOGS", "é"]), max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(words.map(" ".join), max_size=8))
def test_batch_matcher_equals_one_by_one(texts: list[str]) -> None:
    matcher = MentionMatcher(CATEGORIES)
    matrix = matcher.matrix(texts)
    assert matrix.shape == (len(texts), 80)
    assert [tuple(np.flatnonzero(row).tolist()) for row in matrix] == [matcher(t) for t in texts]


@pytest.mark.parametrize("texts", [
    ["Two hot dogs next to a bus stop", "a dog", "teddy bear", "hot", "dog hot dog"],
    ["a hot\x00dog", "hot dog"],  # a NUL inside a caption: the batch path must not mix captions up
])
def test_batch_matcher_edge_cases(texts: list[str]) -> None:
    matcher = MentionMatcher(CATEGORIES)
    assert [tuple(np.flatnonzero(r).tolist()) for r in matcher.matrix(texts)] == [matcher(t) for t in texts]


def test_batch_matcher_on_real_captions(shared_data: Path) -> None:
    ann = shared_data / "coco_val2017_sample" / "annotations"
    names = [c["name"] for c in json.loads((ann / "instances_val2017_subset20.json").read_text())["categories"]]
    texts = [c["caption"] for c in json.loads((ann / "captions_val2017_subset20.json").read_text())["annotations"]]
    matcher = MentionMatcher(names)
    matrix = matcher.matrix(texts)
    assert [tuple(np.flatnonzero(r).tolist()) for r in matrix] == [matcher(t) for t in texts]
    assert matrix.any(1).mean() > 0.8


@pytest.mark.parametrize("rows", [
    [],
    [{"cycle_id": "a", "x": 1}],
    [{"cycle_id": "a", "x": [{"cycle_id": "nested"}, {"cycle_id": "n2"}]}, {"cycle_id": "b", "t": '},{"cycle_id":'}],
    [{"cycle_id": "a"}, {"other": 1}, {}],
    [{"caption_id": str(k), "text": f"a dog {k}\n", "image_id": None} for k in range(25)],
])
def test_jsonl_bytes_equal_one_dump_per_row(rows: list[dict]) -> None:
    import orjson

    from vlaudit.builders.cycles.build_steps import jsonl_bytes

    assert jsonl_bytes(rows) == b"".join(orjson.dumps(r) + b"\n" for r in rows)


@pytest.mark.parametrize(("field", "value"), [("margin_x", -0.01), ("margin_y", 1.5), ("size_ratio", 0.9),
                                              ("min_area", -1.0)])
def test_rule_parameters_that_would_break_exactness_are_refused(field: str, value: float) -> None:
    from vlaudit.errors import InputError

    with pytest.raises(InputError) as info:
        GeometryRules(**{field: value})
    assert info.value.field == field
