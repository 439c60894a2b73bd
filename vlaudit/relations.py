"""The spatial-relation vocabulary shared by the item builders (benchmark items, scenes, factorial, edits).

Relations are named canonically (``"left of"``, ``"above"``, ``"in front of"``, ...).

* :data:`PLANAR_RELATIONS` — the four image-plane relations: left of, right of, above, below.
* :data:`INVERSE_RELATIONS` — VCA §18's six strict relations and their inverses:
  left of ↔ right of, above ↔ below, in front of ↔ behind.
* :func:`relation_phrase` — how a canonical relation is written in a statement: ``"left of"`` →
  ``"to the left of"``, ``"right of"`` → ``"to the right of"``, every other relation as its name (:data:`PHRASES`).
* :data:`VSR_STRICT_RELATIONS` — every phrasing VSR uses for the six strict directions (VCA §18 inverse pairs),
  with its canonical direction and the inverse phrasing in the same register; :func:`relation_family` names
  the axis of any of them. :data:`VSR_NOT_STRICT` says why VSR's other Projective/Adjacency relations (its
  ``rel_meta_category_dict.txt``) are not candidates.

The caption parser's wider vocabulary of phrasings is :data:`vlaudit.sources.whatsup.RELATION_PHRASES`; the cycle
rules' relations (with larger/smaller than) are :data:`vlaudit.builders.cycles.rules.RELATIONS`.
"""

from __future__ import annotations

PLANAR_RELATIONS = ("left of", "right of", "above", "below")
INVERSE_RELATIONS: dict[str, str] = {
    "left of": "right of", "right of": "left of", "above": "below", "below": "above",
    "in front of": "behind", "behind": "in front of",
}
FAMILIES: dict[str, str] = {
    "left of": "left/right", "right of": "left/right", "above": "above/below", "below": "above/below",
    "in front of": "front/behind", "behind": "front/behind",
}

#: VSR phrasing → (canonical direction, inverse phrasing). VSR (random and zero-shot splits) writes the six
#: directions with these 12 relations (meta-categories Projective, and Adjacency for the two "side" forms).
#: The inverse keeps the register: over ↔ under, on top of ↔ beneath, at the left side of ↔ at the right side
#: of. On VSR random_test this mapping gives 539 positive candidates = the paper's 504 groups + 35 exclusions
#: (VCA §18); adding "at the back of"/"ahead of" would give 556.
VSR_STRICT_RELATIONS: dict[str, tuple[str, str]] = {
    "left of": ("left of", "right of"), "right of": ("right of", "left of"),
    "at the left side of": ("left of", "at the right side of"),
    "at the right side of": ("right of", "at the left side of"),
    "above": ("above", "below"), "over": ("above", "under"), "on top of": ("above", "beneath"),
    "below": ("below", "above"), "under": ("below", "over"), "beneath": ("below", "on top of"),
    "in front of": ("in front of", "behind"), "behind": ("behind", "in front of"),
}
#: VSR's other Projective/Adjacency relations and why none is a strict-family candidate
VSR_NOT_STRICT: dict[str, str] = {
    **dict.fromkeys(("beside", "at the side of", "adjacent to", "alongside", "next to", "against",
                     "attached to", "at the edge of", "in the middle of"), "states no direction on an axis"),
    **dict.fromkeys(("at the back of", "ahead of"),
                    "names the object's own back/front (intrinsic frame), not the viewer's depth order"),
}

#: the relations not written as their own name
PHRASES: dict[str, str] = {"left of": "to the left of", "right of": "to the right of"}


def relation_phrase(relation: str) -> str:
    """The phrase ``relation`` is written with in a statement (see the module docstring)."""
    return PHRASES.get(relation, relation)


def relation_family(relation: str | None) -> str:
    """left/right, above/below, front/behind (a canonical relation or any VSR phrasing of one), else other."""
    canonical = VSR_STRICT_RELATIONS.get(relation or "", (relation, ""))[0]
    return FAMILIES.get(canonical or "", "other")
