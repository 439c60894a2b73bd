"""The fixed-200 VSR wording diagnostics (VCA §18 "Additional fixed-200 VSR wording diagnostics") → ITEMS.

"We separately use the same 200 VSR examples, stratified over above, below, left, and right, for diagnostics
not covered by the full test: three relation wordings and a neutral Qwen system instruction. Paraphrase rows
pool 600 query instances; agreement averages the two synonyms against the canonical wording."

* **Strata**: a VSR row belongs to a direction when its relation is one of that direction's VSR phrasings in
  :data:`DIRECTION_RELATIONS` (``above``; ``below``; ``left of`` / ``at the left side of``; ``right of`` /
  ``at the right side of``). ``per_direction`` rows (default 50, so 200 in all) are drawn from each stratum
  without replacement by one generator seeded with ``seed``, over the rows in file order; rows without
  entities are not drawn (counted). Both labels are kept as they fall (no rebalancing).
* **Wordings**: the canonical wording is the row's own relation phrase (its VSR caption, re-stated in the
  fixed question); the two synonyms are the other two phrases of :data:`WORDINGS` for its direction. The
  paper names neither the synonyms nor the draw; both are vlaudit's (and recorded in the summary).
* **Items**: three per drawn row, ``…-w0`` (canonical), ``…-w1``, ``…-w2``, same image, entities and label,
  with ``extra`` ``{"wording": "canonical" | "synonym", "phrase", "direction", "source_id"}``. The System row
  of the paper scores the canonical items again with ``vca score --system qwen-neutral``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from vlaudit.builders.benchmark_items import BuildResult, coco_image_id, question_for, statement_text
from vlaudit.errors import InputError
from vlaudit.settings import WORDING_ITEMS_PER_DIRECTION, WORDING_SEED
from vlaudit.sources.items import BenchmarkItem
from vlaudit.sources.vsr import VsrRow

DIRECTIONS = ("above", "below", "left", "right")
DIRECTION_RELATIONS = {"above": ("above",), "below": ("below",), "left": ("left of", "at the left side of"),
                       "right": ("right of", "at the right side of")}
WORDINGS = {"above": ("above", "over", "higher than"), "below": ("below", "under", "lower than"),
            "left": ("left of", "at the left side of", "to the left of"),
            "right": ("right of", "at the right side of", "to the right of")}


def wording_phrases(relation: str, direction: str) -> tuple[str, str, str]:
    """(canonical, synonym, synonym): the row's own phrase first, then the direction's other two."""
    others = tuple(p for p in WORDINGS[direction] if p != relation)
    if len(others) != 2:
        raise ValueError(f"relation {relation!r} is not one of the {direction} wordings {WORDINGS[direction]}")
    return relation, others[0], others[1]


def direction_of(relation: str) -> str | None:
    """The stratum of a VSR relation (None outside the four directions)."""
    for direction, names in DIRECTION_RELATIONS.items():
        if relation in names:
            return direction
    return None


def wording_items(rows: Sequence[VsrRow], *, dataset: str, split: str, image_prefix: str = "",
                  per_direction: int = WORDING_ITEMS_PER_DIRECTION, seed: int = WORDING_SEED) -> BuildResult:
    """The stratified draw and its three wordings per row (see the module docstring)."""
    if per_direction < 1:
        raise InputError(f"per_direction must be at least 1, got {per_direction}", field="per_direction")
    strata: dict[str, list[VsrRow]] = {d: [] for d in DIRECTIONS}
    excluded: list[dict[str, Any]] = []
    for row in rows:
        direction = direction_of(row.relation)
        if direction is None:
            continue
        if row.subject is None or row.object is None:
            excluded.append({"record": f"line {row.line}", "relation": row.relation,
                             "reason": f"no entities ({row.entity_issue})"})
            continue
        strata[direction].append(row)
    short = {d: len(found) for d, found in strata.items() if len(found) < per_direction}
    if short:
        named = ", ".join(f"{d}: {n}" for d, n in short.items())
        raise InputError(f"too few rows to draw {per_direction} per direction ({named})", field="relation")
    rng = np.random.default_rng(seed)
    items: list[BenchmarkItem] = []
    drawn: Counter[str] = Counter()
    labels: Counter[str] = Counter()
    for direction in DIRECTIONS:
        pool = strata[direction]
        for k in sorted(rng.choice(len(pool), size=per_direction, replace=False).tolist()):
            row = pool[k]
            source_id = f"{dataset}-wording-{split}-{row.line:05d}"
            for w, phrase in enumerate(wording_phrases(row.relation, direction)):
                items.append(BenchmarkItem(
                    item_id=f"{source_id}-w{w}", image=image_prefix + row.image,
                    question=question_for(statement_text(str(row.subject), phrase, str(row.object))),
                    label=row.label, dataset=dataset, split=split, relation=row.relation, subject=row.subject,
                    object=row.object, extra={"wording": "canonical" if w == 0 else "synonym", "phrase": phrase,
                                              "direction": direction, "source_id": source_id,
                                              "image_id": coco_image_id(row.image), "source_line": row.line}))
            drawn[direction] += 1
            labels[row.label] += 1
    counts = {"n_sources": sum(drawn.values()), "by_direction": dict(drawn), "labels": dict(labels),
              "wordings": {d: list(WORDINGS[d]) for d in DIRECTIONS}, "per_direction": per_direction,
              "seed": seed}
    return BuildResult(items=items, excluded=excluded, counts=counts)
