"""Object-swap edits (VCA §14, §15, §17): fixed-geometry feasibility, Telea-inpaint removal, feathered paste.

For a positive relation group (its true statement "S is r O" with subject and object boxes, r ∈ left of /
right of / above / below), the swap moves each object's patch so that its centre lands on the other object's
centre (each patch keeps its size), which reverses r. Feasibility is decided from boxes alone, before any model
is scored (§17), with the fixed rule:

* both new boxes lie inside the image;
* the post-swap centre gap along the relation's axis, signed in the *reversed* direction, is ≥ ``min_gap`` of
  the image extent on that axis (0.05) — a source pair whose boxes contradict its relation therefore fails;
* IoU of the two new boxes ≤ ``max_iou`` (0.20).

Rendering: both source patches (padded by 4 px) are removed by Telea inpainting (radius 3, ``cv2.inpaint``),
then each unpadded source patch is pasted at its new position with a 3-px linear feather; the larger patch is
pasted first so a smaller object is never hidden behind a larger one. Pixels outside the padded source boxes
and the destination boxes are never changed.

Each edit yields six probes (§15): source-image q_r / q_r⁻¹ (yes/no), edited-image q_r / q_r⁻¹ (no/yes) and
edited-image subject / object presence (yes/yes).
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlaudit.builders.benchmark_items import question_for, statement_text
from vlaudit.errors import InputError
from vlaudit.files import atomic_write
from vlaudit.geometry import box_centre, box_iou, pixel_rect
from vlaudit.relations import INVERSE_RELATIONS, PLANAR_RELATIONS, relation_phrase
from vlaudit.results.vca.outputs import EditRule
from vlaudit.settings import (
    EDIT_FEATHER_PX,
    EDIT_INPAINT_RADIUS,
    EDIT_MAX_IOU,
    EDIT_MIN_GAP,
    EDIT_PAD_PX,
    EDIT_SEED,
)
from vlaudit.sources.items import BenchmarkItem

SWAPPABLE = PLANAR_RELATIONS
Box = tuple[float, float, float, float]  # x, y, w, h (COCO xywh, pixels)


@dataclass(frozen=True)
class EditParams(EditRule):
    """The fixed edit rule (VCA §17) with vlaudit's defaults; values are set before any model is scored. It is
    the :class:`~vlaudit.results.vca.outputs.EditRule` a build summary records (the same fields)."""

    min_gap: float = EDIT_MIN_GAP
    max_iou: float = EDIT_MAX_IOU
    pad: int = EDIT_PAD_PX
    radius: int = EDIT_INPAINT_RADIUS
    feather: int = EDIT_FEATHER_PX


def swap_boxes(subject: Box, obj: Box) -> tuple[Box, Box]:
    """New (subject, object) boxes: each keeps its size and takes the other's centre."""
    (scx, scy), (ocx, ocy) = box_centre(subject), box_centre(obj)
    sw, sh, ow, oh = subject[2], subject[3], obj[2], obj[3]
    return (ocx - sw / 2, ocy - sh / 2, sw, sh), (scx - ow / 2, scy - oh / 2, ow, oh)


def _slack(box: Box, width: int, height: int) -> float:
    """Smallest distance from the box to the image border, as a fraction of the extent (negative = outside)."""
    x, y, w, h = box
    return min(x / width, y / height, (width - x - w) / width, (height - y - h) / height)


def check_geometry(relation: str, subject: Box, obj: Box, width: int, height: int,
                   params: EditParams = EditParams()) -> dict[str, Any]:
    """Feasibility of one swap plus the §17 audit characteristics (fractions of the image extent/area)."""
    if relation not in SWAPPABLE:
        raise InputError(f"relation '{relation}' cannot be flipped by a swap (expected one of {SWAPPABLE})",
                         field="relation")
    new_s, new_o = swap_boxes(subject, obj)
    horizontal = relation in ("left of", "right of")
    axis, extent = (0, width) if horizontal else (1, height)
    centre = [box_centre(b)[axis] for b in (new_s, new_o)]
    # After the swap "S left of O" must read "S right of O": sign so that a correct flip is positive.
    sign = {"left of": 1, "right of": -1, "above": 1, "below": -1}[relation]
    gap = sign * (centre[0] - centre[1]) / extent
    iou = box_iou(new_s, new_o)
    slack = min(_slack(new_s, width, height), _slack(new_o, width, height))
    failures = []  # (kind, detail); the first kind is the one counted in the summary
    if slack < 0:
        failures.append(("out of bounds", f"new box outside the image by {-slack:.3f} of the extent"))
    if gap < params.min_gap:
        failures.append(("centre gap too small", f"centre gap {gap:.3f} < {params.min_gap}"))
    if iou > params.max_iou:
        failures.append(("new boxes overlap", f"new-box IoU {iou:.3f} > {params.max_iou}"))
    return {
        "feasible": not failures, "failure": failures[0][0] if failures else None,
        "reason": "; ".join(detail for _, detail in failures) or None, "gap": gap, "abs_gap": abs(gap),
        "iou": iou, "slack": slack, "horizontal": horizontal,
        "larger_area": max(subject[2] * subject[3], obj[2] * obj[3]) / (width * height),
        "new_subject": list(new_s), "new_object": list(new_o),
    }


def feather_alpha(h: int, w: int, feather: int) -> np.ndarray:
    """Alpha that rises linearly over ``feather`` pixels from each patch edge (1 inside)."""
    if feather <= 0:
        return np.ones((h, w), dtype=np.float64)
    ys = np.minimum(np.arange(h), np.arange(h)[::-1])
    xs = np.minimum(np.arange(w), np.arange(w)[::-1])
    distance = np.minimum.outer(ys, xs)
    return np.minimum(1.0, (distance + 1) / (feather + 1)).astype(np.float64)


def render_swap(image: np.ndarray, subject: Box, obj: Box, params: EditParams = EditParams()) -> np.ndarray:
    """The edited image (uint8 HxWx3): inpaint both padded source patches, paste each at the other's centre."""
    import cv2  # OpenCV is heavy; only inpainting needs it

    height, width = image.shape[:2]
    new_boxes = swap_boxes(subject, obj)
    mask = np.zeros((height, width), dtype=np.uint8)
    patches = []
    for source, new in zip((subject, obj), new_boxes, strict=True):
        x0, y0, x1, y1 = pixel_rect(source, width, height)
        patches.append((image[y0:y1, x0:x1].copy(), new))
        px0, py0, px1, py1 = pixel_rect(source, width, height, pad=params.pad)
        mask[py0:py1, px0:px1] = 255
    edited = cv2.inpaint(np.ascontiguousarray(image), mask, params.radius, cv2.INPAINT_TELEA)
    for patch, new in sorted(patches, key=lambda p: -p[0].shape[0] * p[0].shape[1]):
        ph, pw = patch.shape[:2]
        cx, cy = new[0] + new[2] / 2, new[1] + new[3] / 2
        # Keep the patch's pixel size; shift by rounding only, then clamp inside (feasible boxes are in bounds).
        x0 = min(max(0, round(cx - pw / 2)), width - pw)
        y0 = min(max(0, round(cy - ph / 2)), height - ph)
        alpha = feather_alpha(ph, pw, params.feather)[..., None]
        region = edited[y0:y0 + ph, x0:x0 + pw].astype(np.float64)
        edited[y0:y0 + ph, x0:x0 + pw] = np.clip(np.rint(alpha * patch + (1 - alpha) * region), 0, 255).astype(
            np.uint8)
    return edited


def copy_atomic(source: Path, target: Path) -> None:
    """Copy a file through a temporary file and a rename (a killed run leaves no half-copied image)."""
    with source.open("rb") as src, atomic_write(target, "wb") as dst:
        shutil.copyfileobj(src, dst)


def _box(item: BenchmarkItem, role: str) -> Box | None:
    boxes = item.boxes or {}
    value = boxes.get(role)
    if value is None or len(value) != 4:
        return None
    x, y, w, h = (float(v) for v in value)
    return x, y, w, h


def positive_groups(items: Sequence[BenchmarkItem]) -> list[BenchmarkItem]:
    """The true statement of each relation group (or each yes item when there are no groups), in file order."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.group_id or item.item_id
        is_true = item.statement == "true" if item.group_id else item.label == "yes"
        if is_true and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def presence_question(name: str) -> str:
    """The fixed object-presence question (same wrapper as every relation statement)."""
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return question_for(f"There is {article} {name} in the image.")


def edit_probes(edit_id: str, source: BenchmarkItem, source_image: str, edited_image: str,
                new_boxes: tuple[Box, Box]) -> list[BenchmarkItem]:
    """The six probes of one edit (§15), with source/edited same-image groups; the edit is their cluster
    (resampling unit): its six probes share the source image and its render."""
    s, o, r = str(source.subject), str(source.object), str(source.relation)
    inv = INVERSE_RELATIONS[r]
    q_r = question_for(statement_text(s, relation_phrase(r), o))
    q_inv = question_for(statement_text(s, relation_phrase(inv), o))
    src_boxes = source.boxes
    new = {"subject": list(new_boxes[0]), "object": list(new_boxes[1])}
    extra = {"edit_id": edit_id, "source_group_id": source.group_id or source.item_id,
             "source_item_id": source.item_id}
    spec = [
        ("src-r", source_image, q_r, "yes", f"{edit_id}-src", "true", r, src_boxes),
        ("src-inv", source_image, q_inv, "no", f"{edit_id}-src", "false", inv, src_boxes),
        ("edit-r", edited_image, q_r, "no", f"{edit_id}-edit", "false", r, new),
        ("edit-inv", edited_image, q_inv, "yes", f"{edit_id}-edit", "true", inv, new),
        ("edit-subj", edited_image, presence_question(s), "yes", None, None, None, new),
        ("edit-obj", edited_image, presence_question(o), "yes", None, None, None, new),
    ]
    return [BenchmarkItem(item_id=f"{edit_id}-{probe}", image=image, question=question, label=label,
                          group_id=group, statement=statement, relation=relation, boxes=boxes,
                          extra={**extra, "probe": probe}, dataset="edits", split="edits", subject=s, object=o,
                          cluster=edit_id, cluster_unit="edit")
            for probe, image, question, label, group, statement, relation, boxes in spec]


def build_edits(items: Sequence[BenchmarkItem], images_dir: str | Path, out_dir: str | Path, *,
                seed: int = EDIT_SEED, params: EditParams = EditParams(),
                limit: int | None = None) -> dict[str, Any]:
    """Shuffle positive groups (seeded), check geometry, render feasible swaps; returns items and candidates.

    Writes ``out_dir/images/source/<image>`` (copies) and ``out_dir/images/edited/<edit_id>.png``; ITEMS image
    paths are relative to ``out_dir/images``. With ``limit``, only the first ``limit`` feasible groups (in
    shuffled order) are rendered; later feasible groups stay marked feasible, without an ``edit_id``.
    """
    images_dir, out_dir = Path(images_dir), Path(out_dir)
    groups = positive_groups(items)
    order = np.random.default_rng(seed).permutation(len(groups))
    # Image sizes are read up front: a missing or unreadable image fails before anything is written.
    sizes: dict[str, tuple[int, int]] = {}
    for source in groups:
        if source.relation in SWAPPABLE and source.image and _box(source, "subject") and _box(source, "object"):
            path = images_dir / source.image
            if not path.exists():
                raise InputError("image not found", path=path, record=source.item_id, field="image")
            try:
                with Image.open(path) as img:
                    sizes[source.image] = img.size
            except (OSError, ValueError) as exc:
                raise InputError(f"unreadable image: {exc}", path=path, record=source.item_id,
                                 field="image") from exc
    candidates: list[dict[str, Any]] = []
    probes: list[BenchmarkItem] = []
    edits: list[dict[str, Any]] = []
    excluded: Counter[str] = Counter()
    n_edits = 0
    for rank, index in enumerate(order.tolist(), start=1):
        source = groups[index]
        row: dict[str, Any] = {"shuffle_rank": rank, "source_group_id": source.group_id or source.item_id,
                               "source_item_id": source.item_id, "image": source.image,
                               "relation": source.relation, "subject": source.subject, "object": source.object}
        subject_box, object_box = _box(source, "subject"), _box(source, "object")
        if source.relation not in SWAPPABLE:
            row.update(feasible=False, failure="relation not swappable",
                       reason=f"relation '{source.relation}' is not swappable")
        elif subject_box is None or object_box is None or not source.image:
            row.update(feasible=False, failure="no boxes", reason="no subject/object boxes")
        else:
            path = images_dir / source.image
            width, height = sizes[source.image]
            geometry = check_geometry(str(source.relation), subject_box, object_box, width, height, params)
            row.update({k: v for k, v in geometry.items() if k not in ("new_subject", "new_object")})
            row.update(width=width, height=height)
            if geometry["feasible"] and (limit is None or n_edits < limit):
                n_edits += 1
                edit_id = f"edit-{n_edits:04d}"
                row["edit_id"] = edit_id
                with Image.open(path) as img:
                    array = np.asarray(img.convert("RGB"))
                edited = render_swap(array, subject_box, object_box, params)
                edited_rel = f"edited/{edit_id}.png"
                source_rel = f"source/{source.image}"
                with atomic_write(out_dir / "images" / edited_rel, "wb") as handle:
                    Image.fromarray(edited).save(handle, format="PNG")
                copy_atomic(path, out_dir / "images" / source_rel)
                relation, inverse = str(source.relation), INVERSE_RELATIONS[str(source.relation)]
                edits.append({
                    "edit_id": edit_id, "source_image": source_rel, "edited_image": edited_rel,
                    "original_statement": statement_text(str(source.subject), relation_phrase(relation),
                                                         str(source.object)),
                    "edited_statement": statement_text(str(source.subject), relation_phrase(inverse),
                                                       str(source.object)),
                    "subject": source.subject, "object": source.object, "relation": relation,
                    "source_group_id": row["source_group_id"], "source_item_id": source.item_id,
                })
                probes.extend(edit_probes(edit_id, source, source_rel, edited_rel,
                                          (tuple(geometry["new_subject"]), tuple(geometry["new_object"]))))
        if not row.get("feasible"):
            excluded[str(row["failure"])] += 1
        candidates.append(row)
    columns: dict[str, None] = {}
    for row in candidates:
        columns.update(dict.fromkeys(row))
    # Every row gets every column so that column-typed writers (CSV, Parquet) keep them all.
    candidates = [{name: row.get(name) for name in columns} for row in candidates]
    return {"items": probes, "edits": edits, "candidates": candidates, "excluded": dict(excluded), "n_edits": n_edits}
