"""The spatial-relation vocabulary shared by the item builders (benchmark items, scenes, factorial, edits).

Relations are named canonically (``"left of"``, ``"above"``, ``"in front of"``, ...).

* :data:`PLANAR_RELATIONS` — the four image-plane relations: left of, right of, above, below.
* :data:`INVERSE_RELATIONS` — VCA §18's six strict relations and their inverses:
  left of ↔ right of, above ↔ below, in front of ↔ behind.
* :func:`relation_phrase` — how a canonical relation is written in a statement: ``"left of"`` →
  ``"to the left of"``, ``"right of"`` → ``"to the right of"``, every other relation as its name (:data:`PHRASES`).

The caption parser's wider vocabulary of phrasings is :data:`vlaudit.sources.whatsup.RELATION_PHRASES`; the cycle
rules' relations (with larger/smaller than) are :data:`vlaudit.builders.cycles.rules.RELATIONS`.
"""

from __future__ import annotations

PLANAR_RELATIONS = ("left of", "right of", "above", "below")
INVERSE_RELATIONS: dict[str, str] = {
    "left of": "right of", "right of": "left of", "above": "below", "below": "above",
    "in front of": "behind", "behind": "in front of",
}
#: the relations not written as their own name
PHRASES: dict[str, str] = {"left of": "to the left of", "right of": "to the right of"}


def relation_phrase(relation: str) -> str:
    """The phrase ``relation`` is written with in a statement (see the module docstring)."""
    return PHRASES.get(relation, relation)
