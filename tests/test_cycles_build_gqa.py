"""GQA cycle construction (cycle paper §D.3): scene-graph parsing, fact predicates, blocks and audits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlaudit.builders.cycles import audit_cycles_file, build_gqa_cycles
from vlaudit.builders.cycles.gqa import GQA_EXTRA_FAMILIES, GQA_FAMILIES, GQA_PAPER_FAMILIES
from vlaudit.builders.cycles.gqa_rules import GraphFacts, noun_key
from vlaudit.errors import InputError
from vlaudit.sources.gqa import read_gqa_scene_graphs


def graph(objects: dict[str, dict]) -> dict:
    return {"width": 500, "height": 400, "objects": {
        oid: {"name": o["name"], "x": 10, "y": 10, "w": 50, "h": 50, "attributes": o.get("attributes", []),
              "relations": o.get("relations", [])} for oid, o in objects.items()}}


def small_graphs() -> dict:
    return {
        "1": graph({"a": {"name": "car", "attributes": ["red"], "relations": [{"name": "next to", "object": "b"}]},
                    "b": {"name": "bus", "attributes": ["blue"]}}),
        "2": graph({"c": {"name": "car", "attributes": ["blue"], "relations": [{"name": "next to", "object": "d"}]},
                    "d": {"name": "bus", "attributes": ["red"]}}),
        "3": graph({"e": {"name": "man", "relations": [{"name": "holding", "object": "f"}]},
                    "f": {"name": "umbrella", "attributes": ["black"]}}),
        "4": graph({"g": {"name": "dog", "attributes": ["brown"], "relations": [{"name": "on", "object": "h"}]},
                    "h": {"name": "grass", "attributes": ["green"]}}),
    }


def write(tmp: Path, data: dict, name: str = "sg.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(data))
    return path


def test_relations_as_list_or_dict_parse_the_same(tmp_path: Path) -> None:
    data = small_graphs()
    as_dict = json.loads(json.dumps(data))
    for g in as_dict.values():
        for o in g["objects"].values():
            o["relations"] = {f"r{k}": r for k, r in enumerate(o["relations"])}
    a = read_gqa_scene_graphs(write(tmp_path, data, "list.json"))
    b = read_gqa_scene_graphs(write(tmp_path, as_dict, "dict.json"))
    assert a.images == b.images
    assert a.images["1"].objects["a"].relations == (("next to", "b"),)


def test_fact_verdicts_are_conservative() -> None:
    graphs = parse_scene_graphs_from(small_graphs())
    red_car = GraphFacts(graphs["1"])
    blue_car = GraphFacts(graphs["2"])
    assert red_car.attribute_verdict("car", "red") == "valid"
    assert blue_car.attribute_verdict("car", "red") == "attribute-mismatch"  # every car has another colour
    assert blue_car.attribute_verdict("car", "wooden") == "unverifiable"  # outside the exclusive groups
    assert red_car.attribute_verdict("zebra", "red") == "noun-absent"     # no zebra at all
    man = GraphFacts(graphs["3"])
    assert man.relation_verdict("woman", "holding", "umbrella") == "valid"  # person words are folded
    assert man.relation_verdict("man", "riding", "umbrella") == "unverifiable"  # an unlisted edge proves nothing
    assert man.relation_verdict("man", "holding", "kite") == "noun-absent"
    assert red_car.binding_verdict("red", "car", "next to", "blue", "bus") == "valid"
    assert blue_car.binding_verdict("red", "car", "next to", "blue", "bus") == "attribute-mismatch"
    assert noun_key("Rocks") == noun_key("rock") and noun_key("women") == "person"


def parse_scene_graphs_from(data: dict):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return read_gqa_scene_graphs(write(Path(tmp), data)).images


def test_binding_block_from_small_graphs(tmp_path: Path) -> None:
    path = write(tmp_path, small_graphs())
    out = tmp_path / "g.jsonl"
    summary = build_gqa_cycles(path, out, families=["gqa-binding"], splits="test", min_cycles=1)
    assert summary["counts"] == {"gqa-binding": {"test": 1}}
    row = json.loads(out.read_text())
    assert {row["image_1"], row["image_2"]} == {"1", "2"}
    assert {row["text_1"], row["text_2"]} == {"the red car next to the blue bus", "the blue car next to the red bus"}
    audit = audit_cycles_file(out, [path])
    assert audit["validity_violations"] == 0 and audit["max_abs_signed_degree"] == 0


def test_binding_blocks_are_attribute_binding_swaps(tmp_path: Path) -> None:
    """§D.3: keep the objects and the relation, exchange which object carries which attribute."""
    data = small_graphs()
    # Same nouns and relation but not a swap of 1 or 2: "red car next to green bus" and "green car next to
    # blue bus". Each is invalid on images 1 and 2 by attribute mismatch, so pairing by noun pair alone (the old
    # rule) could emit (1, 3) or (2, 5) blocks; as binding swaps only (1, 2) qualifies — and 3 with 5 do not
    # swap either ({red, green} vs {green, blue}).
    data["3"] = graph({"e": {"name": "car", "attributes": ["red"], "relations": [{"name": "next to", "object": "f"}]},
                       "f": {"name": "bus", "attributes": ["green"]}})
    data["5"] = graph({"i": {"name": "car", "attributes": ["green"], "relations": [{"name": "next to", "object": "j"}]},
                       "j": {"name": "bus", "attributes": ["blue"]}})
    path = write(tmp_path, data)
    out = tmp_path / "g.jsonl"
    for seed in range(4):
        summary = build_gqa_cycles(path, out, families=["gqa-binding"], splits="test", min_cycles=1, seed=seed)
        assert summary["counts"] == {"gqa-binding": {"test": 1}}
        (row,) = _rows(out)
        assert {row["image_1"], row["image_2"]} == {"1", "2"}
        assert audit_cycles_file(out, [path])["validity_violations"] == 0
    # the audit re-checks the swap: a (1, 3) block filed as binding is a violation although both swaps fail
    first, third = (GraphFacts(parse_scene_graphs_from(data)[k]) for k in ("1", "3"))
    fact_1 = {"subject_attribute": "red", "subject": "car", "relation": "next to", "object_attribute": "blue",
              "object": "bus"}
    fact_3 = {**fact_1, "object_attribute": "green"}
    assert third.binding_verdict("red", "car", "next to", "blue", "bus") == "attribute-mismatch"
    assert first.binding_verdict("red", "car", "next to", "green", "bus") == "attribute-mismatch"
    bad = {**row, "image_1": "1", "image_2": "3", "fact_1": fact_1, "fact_2": fact_3,
           "text_1": "the red car next to the blue bus", "text_2": "the red car next to the green bus",
           "swap_12_reason": None, "swap_21_reason": None}
    (tmp_path / "bad.jsonl").write_text(json.dumps(bad) + "\n")
    audit = audit_cycles_file(tmp_path / "bad.jsonl", [path])
    assert audit["validity_violations"] == 1
    assert "not a binding swap" in audit["rows"][0]["violation_examples"][0]["reason"]


def test_binding_swap_predicates() -> None:
    from vlaudit.builders.cycles.gqa_audit import binding_swap_violation
    from vlaudit.builders.cycles.gqa_rules import is_binding_swap

    def fact(a1: str, n1: str, rel: str, a2: str, n2: str) -> dict[str, str]:
        return {"subject_attribute": a1, "subject": n1, "relation": rel, "object_attribute": a2, "object": n2}

    red_cup = fact("red", "cup", "to the left of", "blue", "plate")
    cases = [(fact("blue", "cup", "to the left of", "red", "plate"), True),
             (fact("grey", "cup", "to the left of", "red", "plate"), False),  # grey ≠ blue
             (fact("blue", "cups", "to the left of", "red", "plate"), True),  # plural noun, same key
             (fact("blue", "cup", "to the right of", "red", "plate"), False),  # relation changed
             (fact("blue", "plate", "to the left of", "red", "cup"), False),  # objects exchanged, not attributes
             (fact("red", "cup", "to the left of", "blue", "plate"), False),  # the same fact
             (fact("blue", "cup", "to the left of", "green", "plate"), False)]  # a different attribute pair
    for other, expected in cases:
        assert is_binding_swap(red_cup, other) is expected, other
        assert (binding_swap_violation(red_cup, other) is None) is expected, other
    assert not is_binding_swap(fact("red", "cup", "on", "blue", "cup"), fact("blue", "cup", "on", "red", "cup"))


def test_shared_gqa_sample(shared_data: Path, tmp_path: Path) -> None:
    path = shared_data / "gqa" / "train_sceneGraphs_sample.json"
    graphs = read_gqa_scene_graphs(path)
    assert len(graphs.images) == 14 and sum(len(g.objects) for g in graphs.images.values()) == 239
    out = tmp_path / "g.jsonl"
    summary = build_gqa_cycles(path, out, min_cycles=1, extra_families=True)
    assert summary["splits"] == {"train": 0.6, "val": 0.1, "test": 0.3}
    # two validation images: a family with no validation cycle is withdrawn whole (train and test included)
    assert summary["unavailable"] and all(min(c.values()) == 0 for c in summary["unavailable"].values())
    assert all(min(c.values()) >= 1 for c in summary["counts"].values())
    written = {json.loads(line)["family"] for line in out.read_text().splitlines()}
    assert written == set(summary["counts"]) and not written & set(summary["unavailable"])
    summary = build_gqa_cycles(path, out, min_cycles=1, splits="train=0.5,test=0.5", extra_families=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # the real sample states no exclusive relation pair that is false for a present noun pair, so its
    # relation blocks are cross-noun (object presence) blocks, reported as such
    assert {r["family"] for r in rows} == {"gqa-attribute", "gqa-attribute-cross-noun", "gqa-relation-cross-noun"}
    split_of: dict[str, str] = {}
    for row in rows:
        for image in (row["image_1"], row["image_2"]):
            assert split_of.setdefault(image, row["split"]) == row["split"]
    audit = audit_cycles_file(out, [path])
    assert audit["validity_violations"] == 0 and audit["max_abs_signed_degree"] == 0
    assert all(r["tv_image"] == 0 and r["tv_caption"] == 0 for r in audit["rows"])
    first = out.read_bytes()
    build_gqa_cycles(path, out, min_cycles=1, splits="train=0.5,test=0.5", extra_families=True)
    assert out.read_bytes() == first
    # the paper's default minimum makes every family of a 14-image pool unavailable
    summary = build_gqa_cycles(path, out)
    assert summary["cycles_written"] == 0 and set(summary["unavailable"]) == set(GQA_PAPER_FAMILIES)
    # binding swaps are rare on real graphs (the paper: 18–19 validation cycles per seed): none here at all,
    # and the family is reported unavailable with its counts rather than as a number
    summary = build_gqa_cycles(path, out, min_cycles=1, splits="train=0.5,test=0.5", families=["gqa-binding"])
    assert summary["unavailable"] == {"gqa-binding": {"train": 0, "test": 0}} and summary["cycles_written"] == 0


@pytest.mark.parametrize(("mutate", "field"), [
    (lambda d: d["1"].pop("width"), "width"),
    (lambda d: d["1"]["objects"]["a"].__setitem__("x", "10"), "x"),
    (lambda d: d["1"]["objects"]["a"].pop("name"), "name"),
    (lambda d: d["1"]["objects"]["a"].__setitem__("relations", "next to b"), "relations"),
    (lambda d: d["1"]["objects"]["a"].__setitem__("attributes", [1]), "attributes"),
    (lambda d: d["1"].__setitem__("objects", []), "objects"),
    # once silently accepted, now errors: a dangling relation target and a negative box size
    (lambda d: d["1"]["objects"]["a"]["relations"].append({"name": "near", "object": "zzz"}), "relations"),
    (lambda d: d["1"]["objects"]["a"].__setitem__("w", -3), "w"),
    (lambda d: d["1"]["objects"]["a"].__setitem__("h", -0.5), "h"),
])
def test_bad_scene_graphs(tmp_path: Path, mutate, field: str) -> None:
    data = small_graphs()
    mutate(data)
    path = write(tmp_path, data)
    with pytest.raises(InputError) as info:
        read_gqa_scene_graphs(path)
    assert info.value.field == field and info.value.path == str(path) and "image 1" in str(info.value.record)


def test_cli_fails_loudly_when_no_family_reaches_min_cycles(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vlaudit.cli import app

    path = write(tmp_path, small_graphs())
    result = CliRunner().invoke(app, ["cycles", "build", "gqa", "--scene-graphs", str(path), "--out",
                                      str(tmp_path / "gqa.jsonl"), "--min-cycles", "1000"])
    # exit 2 (nothing to do) through the entry point; no cycles file a later command would take for a result
    assert "no family reached --min-cycles 1000" in str(result.exception)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gqa.failed.json", path.name]


def test_finalize_withdraws_a_family_short_in_any_split() -> None:
    """§D.5: a family with 120/19/60 cycles is unavailable whole — not kept for train and test."""
    from vlaudit.builders.cycles.build_steps import BuildResult, finalize

    def blocks(family: str, split: str, n: int) -> list[dict]:
        return [{"image_1": f"{family}{split}{2 * k}", "caption_1": f"c{2 * k}", "image_2": f"{family}{split}{2 * k + 1}",
                 "caption_2": f"c{2 * k + 1}", "text_1": "a", "text_2": "b"} for k in range(n)]

    result = BuildResult()
    splits = [("train", 0.6), ("val", 0.1), ("test", 0.3)]
    for split, n_binding in zip(("train", "val", "test"), (120, 19, 60), strict=True):
        result.blocks[("gqa-binding", split)] = blocks("b", split, n_binding)
        result.blocks[("gqa-attribute", split)] = blocks("a", split, 30)
    rows, table = finalize(result, families=["gqa-attribute", "gqa-binding"], splits=splits, seed=0,
                           min_cycles=30, max_cycles_per_family=None, file_names={})
    assert {r["family"] for r in rows} == {"gqa-attribute"} and len(rows) == 90
    assert table["unavailable"] == {"gqa-binding": {"train": 120, "val": 19, "test": 60}}
    assert table["counts"] == {"gqa-attribute": {"train": 30, "val": 30, "test": 30}}


def test_cli_table6_lists_the_withdrawn_family_with_its_counts(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vlaudit.cli import app

    data = small_graphs()
    # two more red/blue cars: 2 attribute blocks, while binding (red car next to blue bus) still has only 1
    data.update({"5": graph({"a": {"name": "car", "attributes": ["red"]}}),
                 "6": graph({"c": {"name": "car", "attributes": ["blue"]}})})
    path = write(tmp_path, data)
    out = tmp_path / "gqa.jsonl"
    result = CliRunner().invoke(app, ["cycles", "build", "gqa", "--scene-graphs", str(path), "--out", str(out),
                                      "--families", "gqa-binding,gqa-attribute", "--splits", "test",
                                      "--min-cycles", "2"])
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "gqa.meta.json").read_text())
    assert meta["unavailable"] == {"gqa-binding": {"test": 1}} and meta["counts"] == {"gqa-attribute": {"test": 2}}
    for family, counts in meta["unavailable"].items():
        assert f"unavailable: {family}" in result.output and f"test {counts['test']}" in result.output
        assert family not in {json.loads(line)["family"] for line in out.read_text().splitlines()}
    assert "(unavailable)" in result.output


def presence_graphs() -> dict:
    """Same-noun pairs that are true attribute / relation contrasts, plus facts that only differ in nouns."""
    return {
        "1": graph({"a": {"name": "car", "attributes": ["red"], "relations": [{"name": "to the left of", "object": "b"}]},
                    "b": {"name": "bus", "relations": [{"name": "to the right of", "object": "a"}]}}),
        "2": graph({"c": {"name": "car", "attributes": ["blue"], "relations": [{"name": "to the right of", "object": "d"}]},
                    "d": {"name": "bus"}}),
        "3": graph({"e": {"name": "cat", "attributes": ["black"], "relations": [{"name": "on", "object": "f"}]},
                    "f": {"name": "sofa"}}),
        "4": graph({"g": {"name": "dog", "attributes": ["yellow"], "relations": [{"name": "holding", "object": "h"}]},
                    "h": {"name": "frisbee"}}),
    }


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_gqa_families_measure_what_they_are_named_for(tmp_path: Path) -> None:
    path = write(tmp_path, presence_graphs())
    out = tmp_path / "g.jsonl"
    summary = build_gqa_cycles(path, out, splits="test", min_cycles=1,
                               families=["gqa-attribute", "gqa-relation-object", "gqa-attribute-cross-noun",
                                         "gqa-relation-cross-noun"])
    rows = {r["family"]: r for r in _rows(out)}
    # "the red car" / "the blue car": both swaps are attribute mismatches of a present car
    assert {rows["gqa-attribute"]["text_1"], rows["gqa-attribute"]["text_2"]} == {"the red car", "the blue car"}
    assert summary["swap_reasons"]["gqa-attribute"] == {"attribute-mismatch": 2}
    # left of / right of between a car and a bus that are both there: the relation is false
    relation = rows["gqa-relation-object"]
    assert {relation["text_1"], relation["text_2"]} == {"the car to the left of the bus",
                                                        "the car to the right of the bus"}
    assert (relation["swap_12_reason"], relation["swap_21_reason"]) == ("relation-false", "relation-false")
    # "the black cat" / "the yellow dog" is an object-presence block: its own family, never gqa-attribute
    cross = rows["gqa-attribute-cross-noun"]
    assert {cross["text_1"], cross["text_2"]} == {"the black cat", "the yellow dog"}
    assert summary["swap_reasons"]["gqa-attribute-cross-noun"] == {"noun-absent": 2}
    assert summary["counts"]["gqa-attribute"] == {"test": 1} and summary["counts"]["gqa-relation-object"] == {"test": 1}
    # cross-noun families take any reason ("the bus to the right of the car" / "the car to the right of the bus"
    # fails by a false relation); their rows still name different nouns
    assert "noun-absent" in summary["swap_reasons"]["gqa-relation-cross-noun"]
    audit = audit_cycles_file(out, [path])
    assert audit["validity_violations"] == 0


def test_cli_prints_the_swap_reasons(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vlaudit.cli import app

    path = write(tmp_path, presence_graphs())
    result = CliRunner().invoke(app, ["cycles", "build", "gqa", "--scene-graphs", str(path), "--out",
                                      str(tmp_path / "g.jsonl"), "--splits", "test", "--min-cycles", "1",
                                      "--extra-families"])
    assert result.exit_code == 0, result.output
    assert "Why the swaps are invalid" in result.output and "attribute-mismatch" in result.output
    assert "gqa-attribute-cross-noun (not in the paper)" in result.output and "noun-absent" in result.output


def test_families_the_paper_does_not_have_are_built_only_on_request(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vlaudit.cli import app

    path = write(tmp_path, presence_graphs())
    out = tmp_path / "g.jsonl"
    summary = build_gqa_cycles(path, out, splits="test", min_cycles=1)
    assert summary["families"] == list(GQA_PAPER_FAMILIES) and summary["not_in_paper"] == []
    assert not {r["family"] for r in _rows(out)} & set(GQA_EXTRA_FAMILIES)
    summary = build_gqa_cycles(path, out, splits="test", min_cycles=1, extra_families=True)
    assert summary["not_in_paper"] == list(GQA_EXTRA_FAMILIES)
    assert {r["family"] for r in _rows(out)} & set(GQA_EXTRA_FAMILIES)
    result = CliRunner().invoke(app, ["cycles", "build", "gqa", "--scene-graphs", str(path), "--out", str(out),
                                      "--splits", "test", "--min-cycles", "1"])
    assert result.exit_code == 0 and "cross-noun" not in result.output
    result = CliRunner().invoke(app, ["cycles", "build", "gqa", "--scene-graphs", str(path), "--out", str(out),
                                      "--splits", "test", "--min-cycles", "1", "--extra-families"])
    printed = [line for line in result.output.splitlines() if "cross-noun" in line]
    assert printed and all("(not in the paper)" in line for line in printed)


def test_gqa_audit_is_independent_of_the_builder_predicates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import vlaudit.builders.cycles.gqa_rules as rules

    path = write(tmp_path, presence_graphs())
    out = tmp_path / "g.jsonl"
    build_gqa_cycles(path, out, splits="test", min_cycles=1, extra_families=True)
    rows = _rows(out)

    def refuse(*args, **kwargs):
        raise AssertionError("the audit used the builder's predicate")

    monkeypatch.setattr(rules, "fact_status", refuse)
    monkeypatch.setattr(rules.GraphFacts, "__init__", refuse)
    assert audit_cycles_file(out, [path])["validity_violations"] == 0
    # a cross-noun block filed under the attribute family (what the old fallback did) is a violation
    bad = [{**r, "family": "gqa-attribute"} for r in rows if r["family"] == "gqa-attribute-cross-noun"]
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bad))
    audit = audit_cycles_file(tmp_path / "bad.jsonl", [path])
    assert audit["validity_violations"] == 1
    assert "different nouns" in audit["rows"][0]["violation_examples"][0]["reason"]
    # a recorded reason that the annotations do not support is a violation
    lying = [{**r, "swap_12_reason": "attribute-mismatch"} for r in rows if r["family"] == "gqa-relation-object"]
    (tmp_path / "lying.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lying))
    audit = audit_cycles_file(tmp_path / "lying.jsonl", [path])
    assert "swap_12_reason records 'attribute-mismatch'" in audit["rows"][0]["violation_examples"][0]["reason"]
    # a swap that is actually valid is caught by the re-derivation
    relation = next(r for r in rows if r["family"] == "gqa-relation-object")
    relation = {**relation, "fact_2": relation["fact_1"], "swap_12_reason": None}
    (tmp_path / "valid_swap.jsonl").write_text(json.dumps(relation) + "\n")
    audit = audit_cycles_file(tmp_path / "valid_swap.jsonl", [path])
    assert audit["validity_violations"] == 1


def test_independent_gqa_statuses_agree_with_the_builder_on_the_sample(shared_data: Path) -> None:
    """Both code paths give the same status for every stated fact of every family on every real image."""
    from vlaudit.builders.cycles.gqa_audit import status
    from vlaudit.builders.cycles.gqa_rules import candidate_facts, fact_status

    graphs = read_gqa_scene_graphs(shared_data / "gqa" / "train_sceneGraphs_sample.json").images
    checked = 0
    for family in GQA_FAMILIES:
        facts = [f for g in graphs.values() for f in candidate_facts(g, family)]
        for image in graphs.values():
            built = GraphFacts(image)
            for fact in facts[:60]:
                assert status(image, family, fact) == fact_status(built, family, fact), (family, fact)
                checked += 1
    assert checked > 1000


def test_attribute_cycles_compare_the_same_noun(tmp_path: Path) -> None:
    """§D.3: an attribute cycle changes the attribute of one object kind — "the white woman" / "the black man"
    is no attribute contrast (person folding is for object presence only)."""
    data = {"1": graph({"a": {"name": "woman", "attributes": ["white"]}}),
            "2": graph({"b": {"name": "man", "attributes": ["black"]}})}
    path = write(tmp_path, data)
    out = tmp_path / "g.jsonl"
    summary = build_gqa_cycles(path, out, families=["gqa-attribute"], splits="test", min_cycles=1)
    assert summary["cycles_written"] == 0 and summary["unavailable"] == {"gqa-attribute": {"test": 0}}
    man = GraphFacts(parse_scene_graphs_from(data)["2"])
    assert man.attribute_verdict("woman", "white", exact=True) == "unverifiable"  # no woman to mismatch
    assert man.attribute_verdict("woman", "white") == "attribute-mismatch"  # folded: what object presence sees
    # a black woman is the same noun: the block is built, and the audit re-derives it
    data["3"] = graph({"c": {"name": "woman", "attributes": ["black"]}})
    path = write(tmp_path, data)
    summary = build_gqa_cycles(path, out, families=["gqa-attribute"], splits="test", min_cycles=1)
    (row,) = _rows(out)
    assert {row["image_1"], row["image_2"]} == {"1", "3"}
    assert {row["text_1"], row["text_2"]} == {"the white woman", "the black woman"}
    assert audit_cycles_file(out, [path])["validity_violations"] == 0
    # a woman/man block filed as an attribute cycle is a violation in the audit
    man_row = {**row, "image_2": "2", "fact_2": {"object": "man", "attribute": "black"}, "text_2": "the black man"}
    (tmp_path / "bad.jsonl").write_text(json.dumps(man_row) + "\n")
    assert audit_cycles_file(tmp_path / "bad.jsonl", [path])["validity_violations"] == 1
