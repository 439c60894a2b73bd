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


TRICKY_PHRASES = [
    # (caption, expected COCO categories): compound nouns, words with a second sense, plurals
    ("a hot dog with mustard", ["hot dog"]),
    ("two hot dogs on a plate", ["hot dog"]),
    ("a dog eating a hot dog", ["dog", "hot dog"]),
    ("a teddy bear on a bed", ["teddy bear", "bed"]),
    ("a brown bear in the woods", ["bear"]),
    ("a bag of gummy bears", []),
    ("a man talking on his cell phone", ["person", "cell phone"]),
    ("a phone booth on the corner", []),
    ("a man riding a motor cycle", ["person", "motorcycle"]),
    ("two motor cycles parked on the street", ["motorcycle"]),
    ("a woman riding a bicycle", ["person", "bicycle"]),
    ("a pitcher of beer on the table", ["dining table"]),
    ("a glass pitcher full of water", []),
    ("the pitcher throws the ball to the batter", ["person", "sports ball"]),
    ("the batter swings at the pitch", ["person"]),
    ("a bowl of cake batter", ["bowl"]),
    ("a computer mouse next to a keyboard", ["mouse", "keyboard"]),
    ("a laptop with a wireless mouse", ["laptop", "mouse"]),
    ("a cat chasing a mouse in the grass", ["cat"]),
    ("a small mouse eating seeds", []),
    ("two mice beside a keyboard on the desk", ["mouse", "keyboard"]),
    ("a baby elephant walking with its mother", ["elephant"]),
    ("a woman holding a baby", ["person"]),
    ("a baby giraffe next to an adult giraffe", ["giraffe"]),
    ("a lake that is man made", []),
    ("a snow man in a yard", []),
    ("a dvd player under the tv", ["tv"]),
    ("a pit bull laying on the couch", ["dog", "couch"]),
    ("a bull dog on a leash", ["dog"]),
    ("a bull standing in a field", ["cow"]),
    ("people riding jet skis", ["person"]),
    ("a jet flying overhead", ["airplane"]),
    ("ski poles stuck in the snow", []),
    ("a pair of skis", ["skis"]),
    ("a skateboarder doing a trick", ["person"]),
    ("a surfer riding a wave", ["person"]),
    ("a man holding a surf board", ["person", "surfboard"]),
    ("a rubber duck in the bathtub", []),
    ("a duck swimming in a pond", ["bird"]),
    ("carrot cake with cream cheese frosting", ["cake"]),
    ("a cup cake with sprinkles", ["cake"]),
    ("a cup of coffee", ["cup"]),
    ("a dirty toilet bowl", ["toilet"]),
    ("a wine glass", ["wine glass"]),
    ("the train cars on the tracks", ["train"]),
    ("a fire truck parked outside", ["truck"]),
    ("a zebra crossing in the city", []),
    ("players wearing baseball gloves", ["person", "baseball glove"]),
    ("a skier wearing gloves", ["person"]),
    ("a man swinging a baseball bat", ["person", "baseball bat"]),
    ("bats flying at dusk", []),
    ("a parking meter on the sidewalk", ["parking meter"]),
    ("a car parked next to a meter", ["car", "parking meter"]),
    ("an apple laptop on a desk", ["laptop"]),
    ("an apple on the desk", ["apple"]),
    ("a stop sign at a bus stop", ["stop sign"]),
    ("a football player running", ["person"]),
    ("oranges and bananas in a basket", ["orange", "banana"]),
    ("an orange cat", ["cat"]),
    ("knives and forks", ["knife", "fork"]),
    ("two buses", ["bus"]),
    ("benches in the park", ["bench"]),
    ("a truck bed full of hay", ["truck"]),
    ("a flower bed", []),
    ("the umpire and the catcher", ["person"]),
    ("a cell phone and a remote control", ["cell phone", "remote"]),
    ("a woman using a hair dryer", ["person", "hair drier"]),
]


def test_the_tricky_table_is_large_enough() -> None:
    assert len(TRICKY_PHRASES) >= 40


@pytest.mark.parametrize(("caption", "expected"), TRICKY_PHRASES)
def test_tricky_phrases(caption: str, expected: list[str]) -> None:
    """Both matching paths (one caption; a batch, as the builder uses) give exactly the expected categories."""
    matcher = MentionMatcher(NAMES)
    assert sorted(matcher.names(caption)) == sorted(expected)
    batch = matcher.matrix(["a dog", caption, "a pitcher of water"])
    assert sorted(NAMES[i] for i in batch[1].nonzero()[0]) == sorted(expected)
    assert [NAMES[i] for i in batch[0].nonzero()[0]] == ["dog"] and not batch[2].any()


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
