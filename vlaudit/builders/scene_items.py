"""Procedural scenes → the ITEMS table: same-image true/false spatial groups with boxes (VCA §13 input).

For each scene (a GQA-format scene graph written by :mod:`vlaudit.builders.scenes`), one spatial relation
between two differently named objects is chosen with a seeded generator; its statement is the true member
of a group and the inverse relation on the same object pair is the false member:

    true:  "The cat is to the right of the chair."   label yes, statement true
    false: "The cat is to the left of the chair."    label no,  statement false

Both carry the subject and object boxes, so the erasure contexts (rele, irre) apply, and the question is the
fixed template of :data:`vlaudit.builders.benchmark_items.QUESTION_TEMPLATE`. Scenes are the offline
stand-in for GSR-COCO in the demo; on procedural scenes the relation is exact by construction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.builders.benchmark_items import question_for, statement_text
from vlaudit.relations import INVERSE_RELATIONS, PLANAR_RELATIONS, relation_phrase
from vlaudit.sources.items import BenchmarkItem

# scene-graph relation name -> canonical relation
_CANONICAL = {relation_phrase(r): r for r in PLANAR_RELATIONS}


def scene_relation_items(
    scene_graphs: dict, *, seed: int = 0, dataset: str = "scenes", split: str = "test",
    image_dir_prefix: str = "images", max_groups: int | None = None,
) -> list[BenchmarkItem]:
    """One true/false group per scene that has a spatial relation between two differently named objects."""
    rng = np.random.default_rng(seed)
    items: list[BenchmarkItem] = []
    for image_id in sorted(scene_graphs, key=lambda k: (len(k), k)):
        graph = scene_graphs[image_id]
        objects = graph.get("objects") or {}
        candidates = []
        for subject_id in sorted(objects):
            subject = objects[subject_id]
            for relation in subject.get("relations", []):
                canonical = _CANONICAL.get(relation.get("name"))
                target = objects.get(str(relation.get("object")))
                if canonical and target is not None and target["name"] != subject["name"]:
                    candidates.append((subject, canonical, target))
        if not candidates:
            continue
        subject, relation, target = candidates[int(rng.integers(len(candidates)))]
        boxes = {
            "subject": [float(subject[k]) for k in ("x", "y", "w", "h")],
            "object": [float(target[k]) for k in ("x", "y", "w", "h")],
        }
        image = f"{image_dir_prefix}/{int(image_id):012d}.jpg" if str(image_id).isdigit() else f"{image_dir_prefix}/{image_id}.jpg"
        group_id = f"{dataset}-{image_id}"
        for truth, rel in (("true", relation), ("false", INVERSE_RELATIONS[relation])):
            statement = statement_text(subject["name"], relation_phrase(rel), target["name"])
            items.append(BenchmarkItem(
                item_id=f"{group_id}-{truth}", image=image, question=question_for(statement),
                label="yes" if truth == "true" else "no", dataset=dataset, split=split, group_id=group_id,
                statement=truth, relation=rel, subject=subject["name"], object=target["name"], boxes=boxes,
            ))
        if max_groups is not None and len(items) >= 2 * max_groups:
            break
    return items


__all__: Sequence[str] = ("scene_relation_items",)
