"""Real benchmarks → the ITEMS table (:mod:`vlaudit.sources.items`): VSR, GSR-COCO, VSR inverse pairs, What's Up.

The question text is fixed for every builder (VCA §9: the question and answer interface stay fixed):

    QUESTION_TEMPLATE = 'Is the following statement true for this image? "{statement}"'

where ``statement`` is ``"The {subject} is {relation phrase} the {object}."`` — for VSR the caption itself,
which already has that form. The yes/no (or true/false) verbalizers are added by the scoring backend.

* **VSR** (VCA §4): one item per row; label from ``label``; no groups (VSR has no paired false statements).
* **GSR-COCO** (VCA §11 "GSR-COCO Pairing"): each COCO-Spatial two-object row is one same-image group: the
  true caption (option 0) → ``statement = true``/label yes, its paired alternative (option 1) → ``false``/no.
  No rebalancing, no model-based filtering; a row with an unparsable caption is excluded and reported.
* **VSR inverse pairs** (VCA §18 "Surface-Form Robustness"): each positive VSR item in left/right,
  above/below, front/behind — in any of VSR's phrasings (:data:`vlaudit.relations.VSR_STRICT_RELATIONS`) —
  with structured subject and object → a group of the original query (true) and the inverse relation on the
  same image and object pair (false). Candidates without structured entities are excluded before scoring and
  counted by reason; the summary counts candidates, groups and exclusions per relation.
* **What's Up Controlled-A/B**: one group per image, option 0 true, the other options false.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.relations import VSR_STRICT_RELATIONS, relation_family, relation_phrase
from vlaudit.sources.items import BenchmarkItem, image_clusters
from vlaudit.sources.vsr import VsrRow, duplicate_rows
from vlaudit.sources.whatsup import ControlledRow, TwoObjRow, parse_spatial_caption, repeated_entries

QUESTION_TEMPLATE = 'Is the following statement true for this image? "{statement}"'
ENTITY_POLICIES = ("structured", "fields", "any")


def question_for(statement: str) -> str:
    """The fixed question wrapped around a statement."""
    return QUESTION_TEMPLATE.format(statement=statement)


def statement_text(subject: str, phrase: str, obj: str) -> str:
    """``"The {subject} is {phrase} the {object}."``"""
    return f"The {subject} is {phrase} the {obj}."


@dataclass
class BuildResult:
    """Items kept, candidates excluded (``{"record", "reason"}``), and counts for the summary."""

    items: list[BenchmarkItem]
    excluded: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    notes: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self, **extra: Any) -> dict[str, Any]:
        """JSON summary: counts, exclusion reasons (counted and listed), notes and one-line warnings."""
        reasons = Counter(entry["reason"] for entry in self.excluded)
        return {**extra, "n_items": len(self.items), **self.counts, "n_excluded": len(self.excluded),
                "excluded_by_reason": dict(reasons), "excluded": self.excluded, "notes": self.notes,
                "warnings": self.warnings}


def coco_image_id(image: str) -> int | None:
    """COCO image id from a file name such as ``000000017697.jpg`` (VSR images are COCO 2017 images)."""
    match = re.match(r"^(?:.*/)?(\d+)\.jpe?g$", image.strip(), re.IGNORECASE)
    return int(match.group(1)) if match else None


def split_from_stem(stem: str) -> tuple[str, str]:
    """``random_test`` → (``vsr-random``, ``test``); anything else → (``vsr``, stem)."""
    for kind in ("random", "zeroshot"):
        if stem.startswith(kind + "_"):
            return f"vsr-{kind}", stem[len(kind) + 1:]
    return "vsr", stem


def duplicate_warnings(rows: Sequence[VsrRow], *, shown: int = 3) -> list[str]:
    """One line naming the VSR rows that repeat an earlier row's image and caption (none when there are none)."""
    repeats = duplicate_rows(list(rows))
    if not repeats:
        return []
    named = ", ".join(f"line {line} repeats line {first}" for line, first in repeats[:shown])
    more = f" and {len(repeats) - shown} more" if len(repeats) > shown else ""
    return [f"{len(repeats)} duplicate row(s) (same image and caption), each counted as an item: {named}{more}"]


def vsr_items(rows: Sequence[VsrRow], *, dataset: str, split: str, image_prefix: str = "",
              meta_categories: Mapping[str, str] | None = None) -> BuildResult:
    """One ITEMS row per VSR row (nothing is excluded; entity issues are kept as notes)."""
    items = []
    notes = []
    for row in rows:
        # every row carries the same extra keys: Parquet/CSV writers take their columns from the first row
        extra: dict[str, Any] = {"image_id": coco_image_id(row.image), "caption": row.caption,
                                 "entity_source": row.entity_source,
                                 "image_link": row.image_link, "source_line": row.line,
                                 "reference_frame": row.reference_frame}
        if meta_categories is not None:
            extra["meta_category"] = meta_categories.get(row.relation, "Unknown")
        if row.entity_issue:
            notes.append({"record": f"line {row.line}", "note": row.entity_issue})
        items.append(BenchmarkItem(
            item_id=f"{dataset}-{split}-{row.line:05d}", image=image_prefix + row.image,
            question=question_for(row.caption), label=row.label, dataset=dataset, split=split,
            relation=row.relation, subject=row.subject, object=row.object, extra=extra,
        ))
    counts = {
        "labels": dict(Counter(item.label for item in items)),
        "n_relations": len({row.relation for row in rows}),
        "entity_source": dict(Counter(str(row.entity_source) for row in rows)),
    }
    if meta_categories is not None:
        counts["meta_category"] = dict(Counter(item.extra["meta_category"] for item in items))
    return BuildResult(items=image_clusters(items), counts=counts, notes=notes, warnings=duplicate_warnings(rows))


def select_relations(rows: Sequence[VsrRow], relations: Sequence[str], *, source: str | None = None) -> list[VsrRow]:
    """The rows whose relation is one of ``relations`` (VSR's own names); a name the split lacks is an error."""
    wanted = [r.strip() for r in relations if r.strip()]
    present = {row.relation for row in rows}
    missing = [r for r in wanted if r not in present]
    if missing or not wanted:
        asked = (f"relation(s) not in this split: {', '.join(repr(r) for r in missing)}" if missing
                 else "--relations names no relation")
        # the valid values are the split's own names: the user's way out is in the same line
        raise InputError(f"{asked}; --relations takes a comma-separated list of this split's relations: "
                         f"{', '.join(sorted(present)) or '(none)'}", path=source, field="relation")
    return [row for row in rows if row.relation in set(wanted)]


def vsr_inverse_items(rows: Sequence[VsrRow], *, dataset: str, split: str, image_prefix: str = "",
                      entities: str = "structured") -> BuildResult:
    """Original/inverse same-image groups from positive VSR rows in the six strict families (VCA §18).

    Candidates: positive rows whose relation is one of VSR's phrasings of the six directions
    (:data:`vlaudit.relations.VSR_STRICT_RELATIONS`, e.g. "at the left side of", "under", "on top of"); the
    inverse query states the inverse phrasing on the same image and object pair. Entity policies:
    ``"structured"`` (default) takes the row's own ``subj``/``obj`` fields where it has them and the caption
    template's slots where it has none (random splits: VSR generated each caption from that template);
    ``"fields"`` accepts only rows with their own fields; ``"any"`` also keeps fields repaired from the
    caption. A candidate without entities under the policy is excluded with its reason, before scoring.
    """
    if entities not in ENTITY_POLICIES:
        raise InputError(f"unknown entity policy '{entities}' (expected one of {ENTITY_POLICIES})",
                         field="entities")
    items: list[BenchmarkItem] = []
    excluded: list[dict[str, Any]] = []
    candidates: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    families: Counter[str] = Counter()
    for row in rows:
        if row.label != "yes" or row.relation not in VSR_STRICT_RELATIONS:
            continue
        candidates[row.relation] += 1
        reason = _entity_exclusion(row, entities)
        if reason is not None:
            excluded.append({"record": f"line {row.line}", "relation": row.relation, "reason": reason})
            continue
        subject, obj = str(row.subject), str(row.object)
        inverse = VSR_STRICT_RELATIONS[row.relation][1]
        group = f"{dataset}-inv-{split}-{row.line:05d}"
        common: dict[str, Any] = {"dataset": dataset, "split": split, "group_id": group, "subject": subject, "object": obj,
                                  "image": image_prefix + row.image}
        base_extra = {"image_id": coco_image_id(row.image), "source_line": row.line,
                      "entity_source": row.entity_source, "family": relation_family(row.relation)}
        items.append(BenchmarkItem(item_id=f"{group}-o", question=question_for(
            statement_text(subject, row.relation, obj)), label="yes", statement="true", relation=row.relation,
            extra={**base_extra, "query": "original"}, **common))
        items.append(BenchmarkItem(item_id=f"{group}-i", question=question_for(
            statement_text(subject, inverse, obj)), label="no", statement="false", relation=inverse,
            extra={**base_extra, "query": "inverse"}, **common))
        kept[row.relation] += 1
        families[relation_family(row.relation)] += 1
    counts = {"n_candidates": sum(candidates.values()), "n_groups": len(items) // 2,
              "groups_by_family": dict(families),
              "by_relation": [{"relation": r, "family": relation_family(r), "inverse": VSR_STRICT_RELATIONS[r][1],
                               "candidates": n, "groups": kept[r]} for r, n in candidates.most_common()]}
    return BuildResult(items=image_clusters(items), excluded=excluded, counts=counts, warnings=duplicate_warnings(rows))


def _entity_exclusion(row: VsrRow, entities: str) -> str | None:
    """Why a candidate has no entities under the policy (None: it has them)."""
    if row.entity_source is None:
        return f"no structured entities ({row.entity_issue})"
    if row.entity_source == "fields-repaired" and entities != "any":
        return "truncated structured entity"
    if entities == "fields" and row.entity_source == "caption":
        return "no structured subj/obj fields (the default takes them from the caption template)"
    return None


def gsr_coco_items(rows: Sequence[TwoObjRow], *, split: str, dataset: str = "gsr-coco",
                   image_prefix: str = "") -> BuildResult:
    """Same-image true/false groups from COCO-Spatial two-object rows (VCA §11); unparsable rows excluded."""
    items: list[BenchmarkItem] = []
    excluded: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    by_relation: Counter[str] = Counter()
    for row in rows:
        record = f"entry {row.index} (image {row.image_id})"
        parsed_true, why_true = parse_spatial_caption(row.true_caption)
        parsed_false, why_false = parse_spatial_caption(row.false_caption)
        if parsed_true is None or parsed_false is None:
            which = "true" if parsed_true is None else "false"
            caption = row.true_caption if parsed_true is None else row.false_caption
            excluded.append({"record": record, "reason": f"unparsable {which} caption: {why_true or why_false}",
                             "caption": caption})
            continue
        if parsed_true.relation == parsed_false.relation:
            excluded.append({"record": record, "reason": "true and false captions state the same relation",
                             "caption": row.false_caption})
            continue
        if (parsed_true.subject, parsed_true.object) != (parsed_false.subject, parsed_false.object):
            notes.append({"record": record, "note": "true and false captions name different objects"})
        group = f"{dataset}-{row.index:04d}"
        for option_id, (parsed, caption, truth) in enumerate(
                ((parsed_true, row.true_caption, True), (parsed_false, row.false_caption, False))):
            items.append(BenchmarkItem(
                item_id=f"{group}-{'t' if truth else 'f'}", image=image_prefix + row.image,
                question=question_for(statement_text(parsed.subject, parsed.phrase, parsed.object)),
                label="yes" if truth else "no", dataset=dataset, split=split, group_id=group,
                statement="true" if truth else "false", relation=parsed.relation, subject=parsed.subject,
                object=parsed.object,
                extra={"image_id": row.image_id, "option_id": option_id, "caption": caption,
                       "family": relation_family(parsed_true.relation)},
            ))
        by_relation[parsed_true.relation] += 1
    families: Counter[str] = Counter()
    for relation, n in by_relation.items():
        families[relation_family(relation)] += n
    counts = {"n_rows": len(rows), "n_groups": len(items) // 2, "n_statements": len(items),
              "groups_by_true_relation": dict(by_relation), "groups_by_family": dict(families)}
    return BuildResult(items=image_clusters(items), excluded=excluded, counts=counts, notes=notes, warnings=repeated_entries(rows))


def controlled_items(rows: Sequence[ControlledRow], *, split: str, dataset: str = "whatsup-controlled",
                     image_prefix: str = "") -> BuildResult:
    """What's Up Controlled-A/B: one group per image, option 0 true and every other option false."""
    items: list[BenchmarkItem] = []
    excluded: list[dict[str, Any]] = []
    for row in rows:
        parsed = [parse_spatial_caption(option) for option in row.caption_options]
        bad = [(i, why) for i, (p, why) in enumerate(parsed) if p is None]
        if bad:
            excluded.append({"record": f"entry {row.index}", "reason": f"unparsable option {bad[0][0]}: {bad[0][1]}"})
            continue
        group = f"{dataset}-{row.index:04d}"
        for option_id, ((p, _), caption) in enumerate(zip(parsed, row.caption_options, strict=True)):
            assert p is not None
            truth = option_id == 0
            items.append(BenchmarkItem(
                item_id=f"{group}-{option_id}", image=image_prefix + row.image_path,
                question=question_for(statement_text(p.subject, relation_phrase(p.relation), p.object)),
                label="yes" if truth else "no", dataset=dataset, split=split, group_id=group,
                statement="true" if truth else "false", relation=p.relation, subject=p.subject, object=p.object,
                extra={"option_id": option_id, "caption": caption},
            ))
    counts = {"n_groups": len({i.group_id for i in items}), "n_statements": len(items),
              "groups_by_true_relation": dict(Counter(i.relation for i in items if i.statement == "true"))}
    return BuildResult(items=image_clusters(items), excluded=excluded, counts=counts, warnings=repeated_entries(rows))


def attach_coco_boxes(result: BuildResult, instances: str | Path) -> BuildResult:
    """Add ``boxes`` from COCO instances when each named category has exactly one instance in the image.

    The image is ``extra["image_id"]`` (GSR-COCO rows carry it; VSR items take it from the COCO file name).

    Names are matched to COCO category names exactly (case-insensitive). Zero or several instances leave the
    item without boxes, counted in ``counts["boxes"]`` with the reason in ``notes`` — never a guessed box.
    """
    path = Path(instances)
    data = read_json(path)
    try:
        categories = {str(c["name"]).lower(): int(c["id"]) for c in data["categories"]}
        per_image: dict[int, list[dict[str, Any]]] = {}
        for ann in data["annotations"]:
            per_image.setdefault(int(ann["image_id"]), []).append(ann)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"not a COCO instances file: {exc}", path=path) from exc
    outcome: Counter[str] = Counter()
    items = []
    for item in result.items:
        image_id = item.extra.get("image_id")
        anns = per_image.get(int(image_id), []) if image_id is not None else []
        boxes: dict[str, list[float]] = {}
        reason = None
        for role, name in (("subject", item.subject), ("object", item.object)):
            category = categories.get(str(name).lower())
            found = [a for a in anns if category is not None and int(a["category_id"]) == category]
            if len(found) != 1:
                reason = (f"{len(found)} instances of '{name}'" if category is not None
                          else f"'{name}' is not a COCO category")
                break
            boxes[role] = [float(v) for v in found[0]["bbox"]]
        if reason is None:
            items.append(replace(item, boxes=boxes))
            outcome["with boxes"] += 1
        else:
            items.append(item)
            outcome["without boxes"] += 1
            result.notes.append({"record": item.item_id, "note": f"no boxes: {reason}"})
    result.items = items
    result.counts["boxes"] = dict(outcome)
    return result
