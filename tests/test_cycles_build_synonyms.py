"""The shipped COCO synonym table (cycle paper §4): coverage of all 80 categories and real captions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from coco_names import COCO_NAMES

from vlaudit.builders.cycles.synonyms import MentionMatcher, synonym_table

NAMES = list(COCO_NAMES)


def test_table_covers_all_80_categories_with_plurals() -> None:
    table = synonym_table()
    assert len(NAMES) == 80 and set(NAMES) == set(table)
    for name, phrases in table.items():
        assert phrases and all(p == p.lower() for p in phrases), name
    matcher = MentionMatcher(NAMES)
    for name in NAMES:
        if name in ("orange", "skis", "scissors", "sheep", "broccoli"):
            continue  # mass nouns / plural-only names, and 'orange' (a colour) is only counted as 'oranges'
        assert matcher.names(f"there are some {table[name][1]} here") == [name], name


@pytest.mark.parametrize(("caption", "expected"), [
    ("A man riding a motorcycle through the rain.", ["person", "motorcycle"]),
    ("Two women eating hot dogs next to a bus stop.", ["person", "hot dog"]),
    ("A teddy bear sitting on a sofa.", ["couch", "teddy bear"]),
    ("a couple of pizzas are on a table", ["pizza", "dining table"]),
    ("The ten speed bike is attached to the pole.", ["bicycle"]),
    ("An orange cat sleeping on a laptop", ["cat", "laptop"]),
    ("Some ball players on a tennis court", []),
    ("A TV, a fridge and a cellphone", ["tv", "cell phone", "refrigerator"]),
])
def test_mentions_on_caption_text(caption: str, expected: list[str]) -> None:
    matcher = MentionMatcher(NAMES)
    assert sorted(matcher.names(caption)) == sorted(expected)


def test_real_captions_of_the_sample(shared_data: Path) -> None:
    ann = shared_data / "coco_val2017_sample" / "annotations"
    instances = json.loads((ann / "instances_val2017_subset20.json").read_text())
    captions = json.loads((ann / "captions_val2017_subset20.json").read_text())["annotations"]
    names = [c["name"] for c in instances["categories"]]
    cat_name = {c["id"]: c["name"] for c in instances["categories"]}
    present: dict[int, set[str]] = {}
    for a in instances["annotations"]:
        present.setdefault(a["image_id"], set()).add(cat_name[a["category_id"]])
    matcher = MentionMatcher(names)
    mentioned = [set(matcher.names(c["caption"])) for c in captions]
    agree = sum(m <= present[c["image_id"]] for m, c in zip(mentioned, captions, strict=True) if m)
    # nearly every mention is backed by an annotation (the rest are annotation gaps, e.g. an unlabelled cake)
    assert sum(bool(m) for m in mentioned) >= 85 and agree / sum(bool(m) for m in mentioned) >= 0.9
    by_text = {c["caption"]: m for c, m in zip(captions, mentioned, strict=True)}
    assert by_text["A kitchen that has a tile floor, a refrigerator, a microwave, and a toaster."] == {
        "refrigerator", "microwave", "toaster"}
    assert by_text["Several suit cases lined in rows with luggage tags on them."] == {"suitcase"}
