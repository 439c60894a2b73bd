"""Predicates of the GQA cycle families over one scene graph (cycle paper §4, §D.3).

Scene graphs list what annotators saw, not everything that is true, so a fact is only called *invalid*
when the graph rules it out:

* a noun is absent when no object has the same noun key (lower case, crude singular, and person words
  such as man / woman / boy / people folded into "person", so "the man" is never judged absent from an
  image that has a "woman");
* "the red car" is invalid when there is no car, or every car carries a different attribute of the same
  exclusive group (colours; large/small; open/closed; ...) and none carries "red"; the attribute family judges
  (and pairs) the exact noun, without person folding (:data:`SAME_NOUN_FAMILIES`), so "the white woman" is
  never contrasted with "the black man";
* "the man holding the umbrella" is invalid when the man or the umbrella is absent (an unlisted edge
  proves nothing); "the car to the left of the bus" is also invalid when both are present and every
  car–bus pair is stated in the opposite relation ("to the right of"; or the bus "to the left of" the car) —
  only the exclusive spatial pairs of ``OPPOSITE_RELATIONS`` can be false with both nouns present;
* "the red car next to the blue bus" is invalid when "the red car" or "the blue bus" is invalid.

The binding family (§D.3: "whether an attribute remains bound to the correct object when multiple objects are
present") pairs only *attribute-binding swaps* (:func:`is_binding_swap`): the same two nouns in the same
relation, with the two attributes exchanged between the objects — "the red cup to the left of the blue
plate" / "the blue cup to the left of the red plate". Both objects are present in both images, and each
caption is false on the other image because there the attributes are bound to the other objects.

A fact is *valid* when the graph states it (an object with the attribute; an edge with that name between
objects with those nouns and attributes). Anything else is unverifiable and never used in a block.

Every invalid verdict carries its reason (:data:`REASONS`): ``noun-absent``, ``attribute-mismatch`` (the noun
is there, with another attribute of the group) or ``relation-false`` (both nouns there, the relation false),
so that a family can keep only the blocks whose swaps fail by its own predicate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from vlaudit.sources.gqa import GqaImage

PERSON_WORDS = frozenset(
    "person people man men woman women boy boys girl girls child children kid kids guy guys lady ladies "
    "player players skier skiers surfer surfers skateboarder skateboarders snowboarder snowboarders baby "
    "babies toddler adult adults gentleman crowd spectator spectators batter catcher umpire pitcher rider "
    "riders tourist tourists pedestrian pedestrians passenger passengers worker workers".split())

ATTRIBUTE_GROUPS: dict[str, tuple[str, ...]] = {
    "colour": ("white", "black", "red", "blue", "green", "yellow", "brown", "gray", "orange", "pink", "purple",
               "silver", "gold", "tan", "beige", "maroon", "navy"),
    "size": ("large", "small"),
    "open": ("open", "closed"),
    "fullness": ("empty", "full"),
    "wetness": ("wet", "dry"),
    "power": ("on", "off"),
}
ATTRIBUTE_SYNONYMS = {"grey": "gray", "big": "large", "little": "small", "tiny": "small", "huge": "large",
                      "golden": "gold", "navy blue": "navy"}
_GROUP_OF = {attr: group for group, attrs in ATTRIBUTE_GROUPS.items() for attr in attrs}
# mutually exclusive spatial relations: one stated between two objects makes the other false for them
OPPOSITE_RELATIONS = {"to the left of": "to the right of", "to the right of": "to the left of", "above": "below",
                      "below": "above", "in front of": "behind", "behind": "in front of"}
NOUN_ABSENT, ATTRIBUTE_MISMATCH, RELATION_FALSE = "noun-absent", "attribute-mismatch", "relation-false"
REASONS = (ATTRIBUTE_MISMATCH, RELATION_FALSE, NOUN_ABSENT)


def noun_key(name: str, *, fold_people: bool = True) -> str:
    """Comparison key of an object name: last word, crude singular, person words folded into "person" (unless
    ``fold_people`` is False: then "woman" and "man" stay different nouns)."""
    words = name.lower().split()
    if not words:
        return ""
    word = words[-1]
    if fold_people and (word in PERSON_WORDS or name.lower() in PERSON_WORDS):
        return "person"
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("ches", "shes", "sses", "xes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        word = word[:-1]
    return " ".join([*words[:-1], word])


def exact_noun_key(name: str) -> str:
    """The noun key without person folding: what an attribute cycle compares (§D.3, "an object-level attribute")."""
    return noun_key(name, fold_people=False)


# Families whose two facts name the *same* noun exactly: "the white woman" / "the black man" is no attribute
# contrast of one object, so the attribute family compares unfolded nouns; person folding stays for object
# presence (a "man" is never judged absent from an image with a "woman").
SAME_NOUN_FAMILIES = frozenset({"gqa-attribute"})


def family_noun_key(family: str) -> Callable[[str], str]:
    """The noun key a family pairs and judges its attribute facts by (:data:`SAME_NOUN_FAMILIES`: unfolded)."""
    return exact_noun_key if family in SAME_NOUN_FAMILIES else noun_key


def attribute_key(attribute: str) -> str:
    return ATTRIBUTE_SYNONYMS.get(attribute, attribute)


def attribute_group(attribute: str) -> str | None:
    """The exclusive group of an attribute, or None for attributes outside the shipped groups."""
    return _GROUP_OF.get(attribute_key(attribute))


class GraphFacts:
    """Noun keys, attribute sets and edges of one scene graph, for fast verdicts.

    Verdicts are ``"valid"``, ``"unverifiable"`` or the reason the fact is invalid (one of :data:`REASONS`).
    """

    def __init__(self, image: GqaImage) -> None:
        self.image = image
        self.attrs_by_noun: dict[str, list[frozenset[str]]] = {}
        self.attrs_by_exact_noun: dict[str, list[frozenset[str]]] = {}
        self.edges: set[tuple[str, str, str]] = set()
        self.attributed_edges: set[tuple[str, str, str, str, str]] = set()
        keys = {oid: noun_key(o.name) for oid, o in image.objects.items()}
        self.objects_by_noun: dict[str, list[str]] = {}
        for oid, key in keys.items():
            self.objects_by_noun.setdefault(key, []).append(oid)
        attrs = {oid: frozenset(attribute_key(a) for a in o.attributes) for oid, o in image.objects.items()}
        for oid, obj in image.objects.items():
            self.attrs_by_noun.setdefault(keys[oid], []).append(attrs[oid])
            self.attrs_by_exact_noun.setdefault(exact_noun_key(obj.name), []).append(attrs[oid])
        # (a, b) → relations stated from a to b, plus those implied by the mirror of an exclusive pair
        self.pair_relations: dict[tuple[str, str], set[str]] = {}
        for oid, obj in image.objects.items():
            for rel, target in obj.relations:
                self.edges.add((keys[oid], rel, keys[target]))
                self.pair_relations.setdefault((oid, target), set()).add(rel)
                if rel in OPPOSITE_RELATIONS:
                    self.pair_relations.setdefault((target, oid), set()).add(OPPOSITE_RELATIONS[rel])
                for a1 in attrs[oid]:
                    for a2 in attrs[target]:
                        self.attributed_edges.add((a1, keys[oid], rel, a2, keys[target]))

    def attribute_verdict(self, noun: str, attribute: str, *, exact: bool = False) -> str:
        """``exact``: judge only the objects of exactly this noun (no person folding); an image whose only
        match is a folded one ("man" for "the woman") is then unverifiable, not a mismatch."""
        attribute = attribute_key(attribute)
        objects = self.attrs_by_noun.get(noun_key(noun))
        if not objects:
            return NOUN_ABSENT
        if exact:
            objects = self.attrs_by_exact_noun.get(exact_noun_key(noun))
            if not objects:
                return "unverifiable"
        if any(attribute in attrs for attrs in objects):
            return "valid"
        group = attribute_group(attribute)
        if group is not None and all(any(_GROUP_OF.get(a) == group for a in attrs) for attrs in objects):
            return ATTRIBUTE_MISMATCH
        return "unverifiable"

    def relation_verdict(self, subject: str, relation: str, obj: str) -> str:
        s, o = noun_key(subject), noun_key(obj)
        if (s, relation, o) in self.edges:
            return "valid"
        if s not in self.attrs_by_noun or o not in self.attrs_by_noun:
            return NOUN_ABSENT
        opposite = OPPOSITE_RELATIONS.get(relation)
        if opposite is not None and s != o:
            if all(opposite in self.pair_relations.get((a, b), ())
                   for a in self.objects_by_noun[s] for b in self.objects_by_noun[o]):
                return RELATION_FALSE
        return "unverifiable"

    def binding_verdict(self, attr_1: str, subject: str, relation: str, attr_2: str, obj: str) -> str:
        key = (attribute_key(attr_1), noun_key(subject), relation, attribute_key(attr_2), noun_key(obj))
        if key in self.attributed_edges:
            return "valid"
        parts = (self.attribute_verdict(subject, attr_1), self.attribute_verdict(obj, attr_2))
        for reason in (NOUN_ABSENT, ATTRIBUTE_MISMATCH):
            if reason in parts:
                return reason
        return "unverifiable"


# the fact type behind each GQA family (the cross-noun families reuse the attribute and relation facts)
FACT_KIND = {"gqa-attribute": "attribute", "gqa-attribute-cross-noun": "attribute",
             "gqa-relation-object": "relation", "gqa-relation-cross-noun": "relation", "gqa-binding": "binding"}
# the reason a swap must fail by for a block to stay in its named family; cross-noun families take any reason
OWN_REASON = {"gqa-attribute": ATTRIBUTE_MISMATCH, "gqa-relation-object": RELATION_FALSE,
              "gqa-binding": ATTRIBUTE_MISMATCH}


def fact_status(facts: GraphFacts, family: str, fact: dict[str, str]) -> str:
    """``"valid"``, ``"unverifiable"`` or the reason (:data:`REASONS`) a fact row is invalid under one graph."""
    kind = FACT_KIND[family]
    if kind == "attribute":
        return facts.attribute_verdict(fact["object"], fact["attribute"], exact=family in SAME_NOUN_FAMILIES)
    if kind == "relation":
        return facts.relation_verdict(fact["subject"], fact["relation"], fact["object"])
    return facts.binding_verdict(fact["subject_attribute"], fact["subject"], fact["relation"],
                                 fact["object_attribute"], fact["object"])


def fact_nouns(family: str, fact: dict[str, str]) -> tuple[str, ...]:
    """The noun keys a fact names (a named family pairs facts with the same nouns only)."""
    if FACT_KIND[family] == "attribute":
        return (family_noun_key(family)(fact["object"]),)
    return (noun_key(fact["subject"]), noun_key(fact["object"]))


def fact_bucket(family: str, fact: dict[str, str]) -> tuple[str, ...]:
    """The pairing bucket of a fact: its nouns, and for the binding family also its relation and its
    unordered attribute pair, so that only :func:`is_binding_swap` partners share a bucket."""
    nouns = fact_nouns(family, fact)
    if FACT_KIND[family] != "binding":
        return nouns
    attributes = sorted((attribute_key(fact["subject_attribute"]), attribute_key(fact["object_attribute"])))
    return (*nouns, fact["relation"], *attributes)


def is_binding_swap(fact_1: dict[str, str], fact_2: dict[str, str]) -> bool:
    """True iff the two binding facts keep the nouns and the relation and exchange two different attributes
    between the objects: (a₁ N₁ r a₂ N₂) and (a₂ N₁ r a₁ N₂), a₁ ≠ a₂, N₁ ≠ N₂ (cycle paper §D.3)."""
    s1, s2 = attribute_key(fact_1["subject_attribute"]), attribute_key(fact_2["subject_attribute"])
    o1, o2 = attribute_key(fact_1["object_attribute"]), attribute_key(fact_2["object_attribute"])
    return (noun_key(fact_1["subject"]) == noun_key(fact_2["subject"])
            and noun_key(fact_1["object"]) == noun_key(fact_2["object"])
            and noun_key(fact_1["subject"]) != noun_key(fact_1["object"])
            and fact_1["relation"] == fact_2["relation"]
            and s1 == o2 and o1 == s2 and s1 != o1)


def candidate_facts(image: GqaImage, family: str) -> Iterable[dict[str, str]]:
    """Every fact of ``family`` the graph states (deduplicated by its comparison key)."""
    seen: set[tuple] = set()
    objects = image.objects
    kind = FACT_KIND[family]
    attribute_noun = family_noun_key(family)
    for obj in objects.values():
        if kind == "attribute":
            for attr in obj.attributes:
                key: tuple[str, ...] = (attribute_noun(obj.name), attribute_key(attr))
                if attribute_group(attr) is not None and key not in seen:
                    seen.add(key)
                    yield {"object": obj.name, "attribute": attr}
            continue
        for rel, target_id in obj.relations:
            target = objects[target_id]
            if kind == "relation":
                key = (noun_key(obj.name), rel, noun_key(target.name))
                if key[0] != key[2] and key not in seen:
                    seen.add(key)
                    yield {"subject": obj.name, "relation": rel, "object": target.name}
                continue
            for a1 in obj.attributes:
                for a2 in target.attributes:
                    key = (attribute_key(a1), noun_key(obj.name), rel, attribute_key(a2), noun_key(target.name))
                    if attribute_group(a1) and attribute_group(a2) and key not in seen:
                        seen.add(key)
                        yield {"subject_attribute": a1, "subject": obj.name, "relation": rel,
                               "object_attribute": a2, "object": target.name}


def fact_text(family: str, fact: dict[str, str]) -> str:
    """'the red car', 'the man holding the umbrella', 'the red car next to the blue bus'."""
    if FACT_KIND[family] == "attribute":
        return f"the {fact['attribute']} {fact['object']}"
    if FACT_KIND[family] == "relation":
        return f"the {fact['subject']} {fact['relation']} the {fact['object']}"
    return (f"the {fact['subject_attribute']} {fact['subject']} {fact['relation']} "
            f"the {fact['object_attribute']} {fact['object']}")
