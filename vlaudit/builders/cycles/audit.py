"""``vlaudit cycles audit``: Table-5 audits of a built cycles file (cycle paper §A.5, §D.4).

Per family and split: cycles, images, captions, TV distance between the matched and swapped image,
caption and caption-length marginals (exactly 0 for complete blocks), the maximum |signed degree|
(Theorem 1: 0 iff additive scores cancel) and **validity violations re-checked from the annotations**:
each block's two matched pairs must be valid and both swaps invalid under the family predicate. The
re-check is deliberately a separate code path from the builders: COCO relations are re-judged by explicit
loops over instance pairs (``rules.statement_verdict``), COCO mentions are re-read from the caption text,
GQA facts are re-judged by loops over the raw scene-graph objects (:mod:`.gqa_audit`), reasons included.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.builders.cycles.build_steps import sidecar_paths
from vlaudit.builders.cycles.gqa_audit import block_violation
from vlaudit.builders.cycles.jsonl import caption_verdict
from vlaudit.builders.cycles.rules import GeometryRules, statement_verdict
from vlaudit.builders.cycles.synonyms import MentionMatcher
from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.metrics.audits import audit_cycles
from vlaudit.metrics.cycles import split_of
from vlaudit.records import Cycle
from vlaudit.sources.coco import read_coco_instances
from vlaudit.sources.cycle_tables import read_cycles
from vlaudit.sources.gqa import read_gqa_scene_graphs
from vlaudit.sources.pairs_jsonl import read_pairs_jsonl


class _CocoImages:
    """Instances of the referenced COCO images: name → [(box, eligible)], plus the image size."""

    def __init__(self, instances: Any, wanted: set[str], rules: GeometryRules) -> None:
        self.matcher = MentionMatcher(instances.category_names)
        self.images: dict[str, tuple[float, float, dict[str, list]]] = {}
        position = {i: k for k, i in enumerate(instances.image_ids) if i in wanted}
        order = np.argsort(instances.ann_image, kind="stable")
        starts = np.searchsorted(instances.ann_image[order], np.arange(len(instances.image_ids) + 1))
        names = instances.category_names
        for image_id, k in position.items():
            W, H = float(instances.width[k]), float(instances.height[k])
            by_name: dict[str, list] = defaultdict(list)
            for a in order[starts[k]:starts[k + 1]].tolist():
                box = instances.bbox[a].tolist()
                eligible = (not instances.iscrowd[a]) and box[2] * box[3] >= rules.min_area * W * H
                by_name[names[instances.ann_cat[a]]].append((box, eligible))
            self.images[image_id] = (W, H, dict(by_name))


def _coco_pair_ok(db: _CocoImages, family: str, image: str, text: str, relation: dict | None, want: str,
                  rules: GeometryRules) -> bool:
    W, H, objects = db.images[image]
    if family.startswith("coco-object"):
        mentioned = db.matcher.names(text)
        if want == "valid":
            return bool(mentioned) and all(m in objects for m in mentioned)
        return any(m not in objects for m in mentioned)
    if relation is None:
        return False
    a, b = objects.get(relation["subject"], []), objects.get(relation["object"], [])
    verdict = statement_verdict(a, b, relation["relation"], W, H, rules)
    if want == "invalid" and family != "coco-box-relation":
        # strict families: the swap must be a false relation between objects that are both there
        return verdict == "invalid" and any(e for _, e in a) and any(e for _, e in b)
    return verdict == want


def _load_annotations(paths: Sequence[str | Path], wanted: set[str], rules: GeometryRules) -> dict[str, Any]:
    """Detect each file's format (COCO instances, GQA scene graphs, pairs JSONL) and index what is needed."""
    out: dict[str, Any] = {"coco": [], "gqa": {}, "pairs": {}}
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise InputError("file not found", path=path)
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            images, _ = read_pairs_jsonl(path)
            out["pairs"].update(images)
            continue
        with path.open("rb") as handle:
            head = handle.read(4096)
        if any(key in head for key in (b'"info"', b'"images"', b'"annotations"', b'"categories"', b'"licenses"')):
            out["coco"].append(_CocoImages(read_coco_instances(path), wanted, rules))
        else:
            graphs = read_gqa_scene_graphs(path)
            out["gqa"].update({i: g for i, g in graphs.images.items() if i in wanted})
    return out


def _violation(cycle: Cycle, annotations: dict[str, Any], rules: GeometryRules) -> str | None:
    """Why the block fails the family predicate, or None when both matched pairs are valid and both swaps invalid."""
    extra = cycle.extra
    family = cycle.family
    if family.startswith("gqa-"):
        return block_violation(cycle, annotations["gqa"])
    sides = (("1", cycle.image_1), ("2", cycle.image_2))
    checks = [(k, img, "valid") for k, img in sides] + [("2", cycle.image_1, "invalid"), ("1", cycle.image_2, "invalid")]
    for k, image, want in checks:
        if family.startswith("coco-"):
            db = next((d for d in annotations["coco"] if image in d.images), None)
            if db is None:
                return f"image {image} not in the annotations"
            ok = _coco_pair_ok(db, family, image, str(extra.get(f"text_{k}", "")), extra.get(f"relation_{k}"),
                               want, rules)
        elif family.startswith("pairs-"):
            pair_image = annotations["pairs"].get(image)
            if pair_image is None:
                return f"image {image} not in the annotations"
            caption = {"mentions": extra.get(f"categories_{k}", []), "triples": extra.get(f"triples_{k}", [])}
            ok = caption_verdict(family, pair_image, caption, rules) == want
        else:
            return f"unknown family '{family}'"
        if not ok:
            return f"caption_{k} is not {want} for image {image}"
    return None


def rules_from_meta(cycles_path: str | Path) -> GeometryRules:
    """The rule values written beside a cycles file by the builder (defaults when there is no metadata)."""
    meta_path = sidecar_paths(cycles_path)[1]
    if not meta_path.exists():
        return GeometryRules()
    rules = read_json(meta_path).get("rules", {})
    return GeometryRules(**{f.name: float(rules[f.name]) for f in fields(GeometryRules) if f.name in rules})


def audit_cycles_file(cycles_path: str | Path, annotations: Sequence[str | Path],
                      rules: GeometryRules | None = None) -> dict[str, Any]:
    """Table 5 per family and split (split "unsplit" for cycles without one, as in ``cycles eval``); validity
    re-checked from ``annotations``."""
    cycles = read_cycles(cycles_path)
    rules = rules or rules_from_meta(cycles_path)
    wanted = {u for c in cycles for u in (c.image_1, c.image_2)}
    db = _load_annotations(annotations, wanted, rules)
    groups: dict[tuple[str, str], list[Cycle]] = defaultdict(list)
    for cycle in cycles:
        groups[(cycle.family, split_of(cycle))].append(cycle)
    table = []
    total_violations = 0
    for (family, split), members in sorted(groups.items()):
        texts = {}
        for c in members:
            texts[c.caption_1] = str(c.extra.get("text_1", ""))
            texts[c.caption_2] = str(c.extra.get("text_2", ""))
        problems = []
        for c in members:
            reason = _violation(c, db, rules)
            if reason is not None:
                problems.append({"cycle_id": c.cycle_id, "reason": reason})
        total_violations += len(problems)
        table.append({"family": family, "split": split, **audit_cycles(members, texts),
                      "validity_violations": len(problems), "violation_examples": problems[:5]})
    return {"cycles": str(cycles_path), "annotations": [str(p) for p in annotations], "rules": rules.as_dict(),
            "rows": table, "validity_violations": total_violations,
            "max_abs_signed_degree": max((r["max_abs_signed_degree"] for r in table), default=0)}
