"""GQA predicates re-derived for ``cycles audit``, independently of the builder (cycle paper §A.5, §D.4).

The builder judges facts through :class:`~vlaudit.builders.cycles.gqa_rules.GraphFacts` (precomputed noun
keys, edge sets and mirrored pair relations). The audit must not trust that code, so each verdict here is a
plain loop over the raw scene-graph objects of the image; only the vocabulary is shared (``noun_key``,
``attribute_key``, the exclusive attribute groups and relation pairs, the family → fact-kind and
family → reason tables), i.e. the definitions, not the logic that applies them. Same rules as the module
docstring of ``gqa_rules``:

* attribute "the red car": valid iff some car has red; invalid by ``noun-absent`` when no car,
  ``attribute-mismatch`` when every car has another attribute of red's exclusive group; the attribute family
  compares the exact noun (no person folding: "the woman" is judged on women only);
* relation "the car to the left of the bus": valid iff a car → bus edge of that name exists; invalid by
  ``noun-absent`` when no car or no bus, ``relation-false`` when every (car, bus) pair is stated in the
  opposite relation (car "to the right of" bus, or bus "to the left of" car);
* binding "the red car next to the blue bus": valid iff a red car → blue bus edge exists; invalid when "the
  red car" or "the blue bus" is (``noun-absent`` before ``attribute-mismatch``); and a binding block must be
  an attribute-binding swap (§D.3): the same subject noun, relation and object noun in both facts, the two
  (different) attributes exchanged between the objects — re-checked here field by field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlaudit.builders.cycles.gqa_rules import (
    ATTRIBUTE_MISMATCH,
    FACT_KIND,
    NOUN_ABSENT,
    OPPOSITE_RELATIONS,
    OWN_REASON,
    REASONS,
    RELATION_FALSE,
    SAME_NOUN_FAMILIES,
    attribute_group,
    attribute_key,
    exact_noun_key,
    noun_key,
)
from vlaudit.records import Cycle
from vlaudit.sources.gqa import GqaImage, GqaObject


def _named(image: GqaImage, noun: str) -> list[GqaObject]:
    key = noun_key(noun)
    return [obj for obj in image.objects.values() if noun_key(obj.name) == key]


def _has(obj: GqaObject, attribute: str) -> bool:
    return any(attribute_key(a) == attribute_key(attribute) for a in obj.attributes)


def _edge(a: GqaObject, relation: str, b: GqaObject) -> bool:
    return any(name == relation and target == b.object_id for name, target in a.relations)


def attribute_status(image: GqaImage, noun: str, attribute: str, exact: bool = False) -> str:
    objects = _named(image, noun)
    if not objects:
        return NOUN_ABSENT
    if exact:  # the same noun exactly (no person folding); a folded match alone proves nothing
        objects = [obj for obj in objects if exact_noun_key(obj.name) == exact_noun_key(noun)]
        if not objects:
            return "unverifiable"
    if any(_has(obj, attribute) for obj in objects):
        return "valid"
    group = attribute_group(attribute)
    if group is not None and all(any(attribute_group(a) == group for a in obj.attributes) for obj in objects):
        return ATTRIBUTE_MISMATCH
    return "unverifiable"


def relation_status(image: GqaImage, subject: str, relation: str, obj: str) -> str:
    subjects, objects = _named(image, subject), _named(image, obj)
    if any(_edge(a, relation, b) for a in subjects for b in objects):
        return "valid"
    if not subjects or not objects:
        return NOUN_ABSENT
    opposite = OPPOSITE_RELATIONS.get(relation)
    if opposite is not None and noun_key(subject) != noun_key(obj) and all(
            _edge(a, opposite, b) or _edge(b, relation, a) for a in subjects for b in objects):
        return RELATION_FALSE
    return "unverifiable"


def binding_status(image: GqaImage, fact: Mapping[str, str]) -> str:
    for a in _named(image, fact["subject"]):
        for b in _named(image, fact["object"]):
            if _has(a, fact["subject_attribute"]) and _has(b, fact["object_attribute"]) and _edge(
                    a, fact["relation"], b):
                return "valid"
    parts = (attribute_status(image, fact["subject"], fact["subject_attribute"]),
             attribute_status(image, fact["object"], fact["object_attribute"]))
    return next((reason for reason in (NOUN_ABSENT, ATTRIBUTE_MISMATCH) if reason in parts), "unverifiable")


def status(image: GqaImage, family: str, fact: Mapping[str, str]) -> str:
    """``"valid"``, ``"unverifiable"`` or the reason (``REASONS``) a fact is invalid for ``image``."""
    kind = FACT_KIND[family]
    if kind == "attribute":
        return attribute_status(image, fact["object"], fact["attribute"], family in SAME_NOUN_FAMILIES)
    if kind == "relation":
        return relation_status(image, fact["subject"], fact["relation"], fact["object"])
    return binding_status(image, fact)


def _nouns(family: str, fact: Mapping[str, str]) -> tuple[str, ...]:
    if FACT_KIND[family] == "attribute":
        key = exact_noun_key if family in SAME_NOUN_FAMILIES else noun_key
        return (key(fact["object"]),)
    return (noun_key(fact["subject"]), noun_key(fact["object"]))


def binding_swap_violation(fact_1: Mapping[str, str], fact_2: Mapping[str, str]) -> str | None:
    """Why two binding facts are not an attribute-binding swap (a₁ N₁ r a₂ N₂ / a₂ N₁ r a₁ N₂), or None."""
    if noun_key(fact_1["subject"]) != noun_key(fact_2["subject"]) or noun_key(fact_1["object"]) != noun_key(
            fact_2["object"]):
        return "not a binding swap: the two facts name different objects"
    if noun_key(fact_1["subject"]) == noun_key(fact_1["object"]):
        return "not a binding swap: subject and object are the same noun"
    if fact_1["relation"] != fact_2["relation"]:
        return (f"not a binding swap: the relation changes ({fact_1['relation']!r} / "
                f"{fact_2['relation']!r})")
    first = (attribute_key(fact_1["subject_attribute"]), attribute_key(fact_1["object_attribute"]))
    second = (attribute_key(fact_2["subject_attribute"]), attribute_key(fact_2["object_attribute"]))
    if first[0] == first[1] or second != first[::-1]:
        return f"not a binding swap: attributes {first} / {second} are not exchanged between the objects"
    return None


def block_violation(cycle: Cycle, images: Mapping[str, GqaImage]) -> str | None:
    """Why a GQA block fails its family, or None: both matched facts valid, both swaps invalid by the
    family's own reason (any reason for a cross-noun family) and equal to the reason the block records,
    the two facts naming the same nouns (named families) or different nouns (cross-noun families), and a
    binding block an attribute-binding swap (:func:`binding_swap_violation`)."""
    if cycle.family not in FACT_KIND:
        return f"unknown family '{cycle.family}'"
    extra: Mapping[str, Any] = cycle.extra
    facts: dict[str, Mapping[str, str]] = {}
    for k in ("1", "2"):
        fact = extra.get(f"fact_{k}")
        if not isinstance(fact, Mapping):
            return "the block has no fact_1/fact_2"
        facts[k] = fact
    for image in (cycle.image_1, cycle.image_2):
        if image not in images:
            return f"image {image} not in the annotations"
    try:
        cross = cycle.family.endswith("-cross-noun")
        if (_nouns(cycle.family, facts["1"]) != _nouns(cycle.family, facts["2"])) != cross:
            return "the two facts name different nouns" if not cross else "the two facts name the same nouns"
        if FACT_KIND[cycle.family] == "binding":
            swap = binding_swap_violation(facts["1"], facts["2"])
            if swap is not None:
                return swap
        for k, image in (("1", cycle.image_1), ("2", cycle.image_2)):
            if status(images[image], cycle.family, facts[k]) != "valid":
                return f"caption_{k} is not valid for image {image}"
        for swap, caption, image in (("12", "2", cycle.image_1), ("21", "1", cycle.image_2)):
            found = status(images[image], cycle.family, facts[caption])
            if found not in REASONS:
                return f"caption_{caption} is not invalid for image {image} ({found})"
            wanted = OWN_REASON.get(cycle.family)
            if wanted is not None and found != wanted:
                return f"caption_{caption} is invalid for image {image} by {found}, not by {wanted}"
            recorded = extra.get(f"swap_{swap}_reason")
            if recorded is not None and recorded != found:
                return f"swap_{swap}_reason records {recorded!r}; re-derived: {found!r}"
    except KeyError as exc:
        return f"fact field {exc} missing"
    return None
