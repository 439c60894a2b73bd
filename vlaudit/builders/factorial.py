"""The controlled 3×3 evidence-source factorial (VCA §10): DIR/items.jsonl + DIR/images/.

Each *stem* fixes a queried relation r ∈ {left of, right of, above, below}, two object identities
(a coloured shape as subject, another as object, distinct in colour and shape), their sizes and a layout
centre — all drawn from ``default_rng([seed, relation, stem])``. The visual source and the textual source
each take one of three states (+ supports r, − supports its opposite, ∅ supplies no relation):

* visual  + / −: the subject is placed on the r side / the opposite side of the object along r's axis;
  ∅: the two objects are *aligned* on that axis (equal centre coordinate) and separated along the other
  axis — the object-preserving, relation-neutral control (same two objects, same sizes, same gap);
* textual +: the evidence note states r; −: it states the opposite; ∅: it names only the two objects.

The complete text is note + query, e.g. "Note: the red circle is to the left of the blue square. Is the red
circle to the left of the blue square?". Across the three visual states of a (stem, text state) the text is
bit-identical; across the three text states of a (stem, visual state) the image file is the same file.
50 stems × 4 relations = 200 groups, × 9 cells = 1,800 items.

**Why 3,000 probes per model.** Every item is scored in three contexts (original, text-only, blank). The
text-only and blank probes depend only on the text (and the canvas size, 512×512 everywhere), so the three
visual states of a (stem, text state) share them: 9 original + 3 texts × 2 controls = 15 unique probes per
stem, 200 × 15 = 3,000 (instead of 1,800 × 3 = 5,400). The scoring runner scores identical (prompt, image)
probes once, and the column ``text_control_id`` names the shared control of each item.

**items.jsonl** (ITEMS schema of :mod:`vlaudit.sources.items`): ``item_id`` = ``<stem_id>-V<v>-T<t>`` with
v, t ∈ {p, m, n} (+, −, ∅); ``image`` = ``images/<stem_id>_V<v>.png`` (relative to DIR); ``question`` = the
complete text; ``label`` = :func:`cell_label`, the answer the cell's relation sources support (VCA §10,
Table 8): the visual source's where it states a relation (yes for V+, no for V−, whatever the text says),
else the textual source's (the nested text-source cells: yes for (V∅, T+), no for (V∅, T−)), and no for
(V∅, T∅), where nothing supports r; ``label_source`` names which source gave it; ``dataset`` = factorial; ``relation``/``subject``/``object``;
``boxes`` {subject, object} in pixels. Extra columns: ``stem_id``, ``visual_state``, ``text_state``
(``pos``/``neg``/``none`` for +/−/∅), ``queried_relation``, ``cell`` (e.g. ``V+T-``), ``agreement`` (both
sources + or both −: the 400 agreement decisions), ``evidence_note``, ``query``, ``text_control_id``.
``group_id`` stays null: a stem is not a same-image true/false group (§13). ``cluster`` = ``stem_id``
(``cluster_unit`` stem): a stem's nine items share objects, layout and texts, so the stem is the resampling
unit of every interval and test (VCA §19 resamples stem ids).

Automated checks (:func:`check_factorial`) run before items.jsonl is written and fail the build.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from vlaudit.builders.scene_render import (
    OBJECT_COLORS,
    SHAPES,
    ImageDirWriter,
    draw_polygons,
    encode,
    shape_polygon,
)
from vlaudit.errors import VlauditError
from vlaudit.files import write_manifest
from vlaudit.geometry import box_centre, centre_relation_holds
from vlaudit.hashing import sha256_bytes
from vlaudit.relations import INVERSE_RELATIONS, PLANAR_RELATIONS, relation_phrase
from vlaudit.results.manifest import RunManifest
from vlaudit.results.run_records import FactorialDatasetRecord
from vlaudit.settings import FACTORIAL_SEED, FACTORIAL_STEMS
from vlaudit.sources.items import BenchmarkItem, write_items

RELATIONS = PLANAR_RELATIONS
FACTORIAL_COMMAND = "data factorial"
STATES = ("pos", "neg", "none")
SLUG = {"pos": "p", "neg": "m", "none": "n"}
SYMBOL = {"pos": "+", "neg": "-", "none": "0"}
COLORS = ("red", "green", "blue", "yellow", "orange", "purple", "pink", "brown", "black")
CANVAS = 512
BACKGROUND = (236, 236, 230)
MARGIN = 0.05  # the same centre margin as the cycle rules: relation holds iff the gap exceeds 0.05·extent


class FactorialCheckError(VlauditError):
    """A factorial build violated one of its invariants (the message lists every violation)."""


@dataclass(frozen=True)
class Stem:
    """One factorial group: queried relation, object identities and a layout shared by all nine cells."""

    stem_id: str
    relation: str
    subject: tuple[str, str]  # (colour, shape)
    object: tuple[str, str]
    sides: tuple[int, int]
    centre: tuple[int, int]
    gap: int
    neutral_sign: int  # which side of the orthogonal axis the subject takes in the aligned image

    @property
    def subject_name(self) -> str:
        return " ".join(self.subject)

    @property
    def object_name(self) -> str:
        return " ".join(self.object)


def make_stems(seed: int = FACTORIAL_SEED, n_per_relation: int = FACTORIAL_STEMS) -> list[Stem]:
    """Deterministic stems: ``n_per_relation`` per relation; aligned-image sides alternate (balanced per axis)."""
    stems = []
    used: set[tuple[int, ...]] = set()
    for r_index, relation in enumerate(RELATIONS):
        slug = relation.split()[0]
        for k in range(n_per_relation):
            rng = np.random.default_rng([seed, r_index, k])
            while True:  # identities unique across stems, so no two stems share a text (or its controls)
                shapes = rng.choice(len(SHAPES), size=2, replace=False)
                colors = rng.choice(len(COLORS), size=2, replace=False)
                key = (*shapes.tolist(), *colors.tolist())
                if key not in used:
                    used.add(key)
                    break
            sides = (int(rng.integers(70, 111)), int(rng.integers(70, 111)))
            gap = int(rng.integers(170, 261))
            lo, hi = gap // 2 + 70, CANVAS - gap // 2 - 70
            centre = (int(rng.integers(lo, hi + 1)), int(rng.integers(lo, hi + 1)))
            stems.append(Stem(f"fx-{slug}-{k:03d}", relation, (COLORS[colors[0]], SHAPES[shapes[0]]),
                              (COLORS[colors[1]], SHAPES[shapes[1]]), sides, centre, gap,
                              1 if (k + r_index) % 2 == 0 else -1))
    return stems


def _horizontal(relation: str) -> bool:
    return relation in ("left of", "right of")


def stem_boxes(stem: Stem, visual_state: str) -> dict[str, list[float]]:
    """Subject and object boxes [x, y, w, h] of a stem's image in one visual state."""
    cx, cy = stem.centre
    half = stem.gap / 2.0
    # +1 when the queried relation puts the subject at the smaller coordinate (left of, above)
    toward = 1.0 if stem.relation in ("left of", "above") else -1.0
    if visual_state == "none":
        offset = (stem.neutral_sign * half, 0.0)  # along the orthogonal axis
    else:
        sign = toward if visual_state == "pos" else -toward
        offset = (0.0, sign * half)  # (orthogonal, queried axis): subject at centre − offset on the axis
    ortho, axis = offset
    if _horizontal(stem.relation):
        subj_c, obj_c = (cx - axis, cy - ortho), (cx + axis, cy + ortho)
    else:
        subj_c, obj_c = (cx - ortho, cy - axis), (cx + ortho, cy + axis)

    def box(c: tuple[float, float], side: int) -> list[float]:
        # exact (possibly half-pixel) corners, so the aligned images have exactly equal centres
        return [c[0] - side / 2.0, c[1] - side / 2.0, float(side), float(side)]

    return {"subject": box(subj_c, stem.sides[0]), "object": box(obj_c, stem.sides[1])}


def cell_label(visual_state: str, text_state: str) -> str:
    """The answer a factorial cell's relation sources support (VCA §10, Table 8 nested source-only cells).

    The visual source decides where it states a relation (V+ yes, V− no); with the relation-neutral aligned
    image (V∅) the textual source decides (T+ yes, T− no); with neither (V∅, T∅) nothing supports the
    queried relation: no. One definition for the builder's labels and ``nested_validation``.
    """
    if visual_state not in STATES or text_state not in STATES:
        raise ValueError(f"unknown factorial state ({visual_state!r}, {text_state!r}); expected {STATES}")
    source = visual_state if visual_state != "none" else text_state
    return "yes" if source == "pos" else "no"


def label_source(visual_state: str, text_state: str) -> str:
    """Which source gives :func:`cell_label`: image, text, or none."""
    return "image" if visual_state != "none" else "text" if text_state != "none" else "none"


#: Table 8's nested source-only cells: the image alone states a relation, or the text alone does
IMAGE_SOURCE_CELLS = (("pos", "none"), ("neg", "none"))
TEXT_SOURCE_CELLS = (("none", "pos"), ("none", "neg"))


def evidence_note(stem: Stem, text_state: str) -> str:
    subj, obj = stem.subject_name, stem.object_name
    if text_state == "none":
        return f"Note: the scene shows the {subj} and the {obj}."
    relation = stem.relation if text_state == "pos" else INVERSE_RELATIONS[stem.relation]
    return f"Note: the {subj} is {relation_phrase(relation)} the {obj}."


def query(stem: Stem) -> str:
    return f"Is the {stem.subject_name} {relation_phrase(stem.relation)} the {stem.object_name}?"


def render_stem_image(stem: Stem, visual_state: str) -> bytes:
    """PNG bytes of one stem image (plain canvas, the subject drawn first)."""
    boxes = stem_boxes(stem, visual_state)
    image = draw_polygons(BACKGROUND, [
        (shape_polygon(stem.subject[1], boxes["subject"]), OBJECT_COLORS[stem.subject[0]]),
        (shape_polygon(stem.object[1], boxes["object"]), OBJECT_COLORS[stem.object[0]]),
    ], size=(CANVAS, CANVAS))
    return encode(image, "PNG", compress_level=1)


def factorial_items(stems: Sequence[Stem], image_paths: dict[tuple[str, str], str]) -> list[BenchmarkItem]:
    """The nine items of every stem (see the module docstring for the columns)."""
    items = []
    for stem in stems:
        for v in STATES:
            boxes = stem_boxes(stem, v)
            for t in STATES:
                note = evidence_note(stem, t)
                items.append(BenchmarkItem(
                    item_id=f"{stem.stem_id}-V{SLUG[v]}-T{SLUG[t]}", image=image_paths[(stem.stem_id, v)],
                    question=f"{note} {query(stem)}", label=cell_label(v, t),
                    dataset="factorial", split="test", relation=stem.relation, subject=stem.subject_name,
                    object=stem.object_name, boxes=boxes, cluster=stem.stem_id, cluster_unit="stem",
                    extra={"stem_id": stem.stem_id, "visual_state": v, "text_state": t,
                           "label_source": label_source(v, t),
                           "queried_relation": stem.relation, "cell": f"V{SYMBOL[v]}T{SYMBOL[t]}",
                           "agreement": v == t and v != "none", "evidence_note": note, "query": query(stem),
                           "text_control_id": f"{stem.stem_id}-T{SLUG[t]}"}))
    return items


def _relation_holds(boxes: Mapping[str, list[float]], relation: str) -> bool:
    m = MARGIN * CANVAS
    return centre_relation_holds(boxes["subject"], boxes["object"], relation, m, m)


def _aligned(boxes: Mapping[str, list[float]], relation: str) -> bool:
    s, o = boxes["subject"], boxes["object"]
    axis = 0 if _horizontal(relation) else 1
    return abs(box_centre(s)[axis] - box_centre(o)[axis]) < 1e-9


@dataclass
class _Balance:
    """The direction-balance tallies over stems: stems per relation, subject sides per (axis, kind, side) in
    the signed (V+/V−) and the aligned (V∅) images, and the labels of the agreement decisions."""

    relations: Counter = field(default_factory=Counter)
    sides: Counter = field(default_factory=Counter)
    agreement_labels: Counter = field(default_factory=Counter)


def _stem_relation(stem_id: str, rows: Sequence[BenchmarkItem], problems: list[str]) -> str | None:
    """The stem's one queried relation, when its rows are the nine cells once each and name one known
    relation; else None, with the problem noted."""
    cells = Counter((r.extra.get("visual_state"), r.extra.get("text_state")) for r in rows)
    if set(cells) != {(v, t) for v in STATES for t in STATES} or any(n != 1 for n in cells.values()):
        problems.append(f"{stem_id}: cells {sorted(cells.items())} are not the nine cells once each")
        return None
    relations = {r.extra.get("queried_relation") for r in rows} | {r.relation for r in rows}
    if len(relations) != 1 or next(iter(relations)) not in RELATIONS:
        problems.append(f"{stem_id}: queried relation not unique/known: {sorted(map(str, relations))}")
        return None
    return cast(str, next(iter(relations)))  # the one member, checked to be in RELATIONS above


def _check_texts_and_images(stem_id: str, cell: Mapping[tuple[str, str], BenchmarkItem],
                            image_hashes: Mapping[str, str] | None, problems: list[str]) -> None:
    """The complete text bit-identical across visual states and distinct across text states; one image file
    per visual state shared by its text states, three distinct images (by content hash when given)."""
    for t in STATES:
        texts = {cell[(v, t)].question for v in STATES}
        if len(texts) != 1:
            problems.append(f"{stem_id}: text of T{SYMBOL[t]} differs across visual states")
    if len({cell[("pos", t)].question for t in STATES}) != 3:
        problems.append(f"{stem_id}: the three text states are not distinct")
    images = {}
    for v in STATES:
        paths = {cell[(v, t)].image for t in STATES}
        if len(paths) != 1 or None in paths:
            problems.append(f"{stem_id}: V{SYMBOL[v]} does not reuse one image file across text states")
        images[v] = next(iter(paths))
    keys = [image_hashes.get(p, p) if image_hashes and p is not None else p for p in images.values()]
    if len(set(keys)) != 3:
        problems.append(f"{stem_id}: the three visual states do not have three distinct images")


def _check_geometry(stem_id: str, cell: Mapping[tuple[str, str], BenchmarkItem], relation: str,
                    problems: list[str], sides: Counter) -> None:
    """Each visual state's boxes match it (V+ the relation, V− its inverse, V∅ aligned); the subject's side
    of each image is tallied in ``sides`` for the direction balance."""
    for v in STATES:
        boxes = cell[(v, "none")].boxes or {}
        if {"subject", "object"} - set(boxes):
            problems.append(f"{stem_id}: V{SYMBOL[v]} lacks subject/object boxes")
            continue
        ok = {"pos": _relation_holds(boxes, relation), "neg": _relation_holds(boxes, INVERSE_RELATIONS[relation]),
              "none": _aligned(boxes, relation)}[v]
        if not ok:
            problems.append(f"{stem_id}: V{SYMBOL[v]} geometry does not match its state")
        axis = "h" if _horizontal(relation) else "v"
        if v == "none":
            other = "above" if axis == "h" else "left of"
            sides[(axis, "neutral", _relation_holds(boxes, other))] += 1
        else:
            sides[(axis, "signed", _relation_holds(boxes, "left of" if axis == "h" else "above"))] += 1


def _check_notes(stem_id: str, cell: Mapping[tuple[str, str], BenchmarkItem], relation: str,
                 problems: list[str]) -> None:
    """T+ and T− notes state the relation and its inverse and open the question; the T∅ note states none."""
    for t, phrase in (("pos", relation_phrase(relation)), ("neg", relation_phrase(INVERSE_RELATIONS[relation]))):
        note = str(cell[("pos", t)].extra.get("evidence_note", ""))
        if phrase not in note or not cell[("pos", t)].question.startswith(note):
            problems.append(f"{stem_id}: T{SYMBOL[t]} note does not state {phrase!r}")
    note = str(cell[("pos", "none")].extra.get("evidence_note", ""))
    if any(relation_phrase(r) in note for r in RELATIONS):
        problems.append(f"{stem_id}: T0 note states a relation")


def _check_stem(stem_id: str, rows: Sequence[BenchmarkItem], image_hashes: Mapping[str, str] | None,
                problems: list[str], balance: _Balance) -> None:
    """Every per-stem invariant of :func:`check_factorial`, tallying the stem into ``balance``."""
    relation = _stem_relation(stem_id, rows, problems)
    if relation is None:
        return
    balance.relations[relation] += 1
    cell = {(r.extra["visual_state"], r.extra["text_state"]): r for r in rows}
    _check_texts_and_images(stem_id, cell, image_hashes, problems)
    _check_geometry(stem_id, cell, relation, problems, balance.sides)
    _check_notes(stem_id, cell, relation, problems)
    for v in ("pos", "neg"):
        balance.agreement_labels[cell[(v, v)].label] += 1


def _check_balance(balance: _Balance, problems: list[str]) -> None:
    """Equal stems per relation, subject sides balanced on each axis (signed and aligned images), yes = no
    among the agreement decisions."""
    counts, sides = balance.relations, balance.sides
    if len(set(counts.values())) > 1 or set(counts) != set(RELATIONS):
        problems.append(f"direction balance: stems per relation {dict(counts)}")
    for axis in ("h", "v"):
        for kind in ("signed", "neutral"):
            if sides[(axis, kind, True)] != sides[(axis, kind, False)]:
                problems.append(f"direction balance: {axis}-axis {kind} subject sides "
                                f"{sides[(axis, kind, True)]} vs {sides[(axis, kind, False)]}")
    if balance.agreement_labels["yes"] != balance.agreement_labels["no"]:
        problems.append(f"direction balance: agreement labels {dict(balance.agreement_labels)}")


def check_factorial(items: Sequence[BenchmarkItem], image_hashes: dict[str, str] | None = None) -> dict[str, Any]:
    """Verify the invariants; return the probe accounting, or raise :class:`FactorialCheckError`.

    Checks: all nine cells of every stem present exactly once; the complete text bit-identical across the
    three visual states and distinct across text states; one image file per (stem, visual state) shared by
    the three text states, distinct across visual states (by content hash when ``image_hashes`` maps image
    paths to hashes); geometry of every image matches its visual state; evidence notes match their text
    state; direction balance (equal stems per relation, subject sides balanced on each axis in the V+/V−
    images and in the aligned images, yes = no among agreement decisions); and exact reuse of the no-image
    controls (15 unique probes per stem).
    """
    problems: list[str] = []
    by_stem: dict[str, list[BenchmarkItem]] = defaultdict(list)
    for item in items:
        by_stem[str(item.extra.get("stem_id"))].append(item)
    if len({i.item_id for i in items}) != len(items):
        problems.append("duplicate item_id")
    balance = _Balance()
    for stem_id, rows in sorted(by_stem.items()):
        _check_stem(stem_id, rows, image_hashes, problems, balance)
    _check_balance(balance, problems)
    original = {(i.question, image_hashes.get(i.image, i.image) if image_hashes and i.image is not None else i.image)
                for i in items}
    texts = {i.question for i in items}
    controls = {str(i.extra.get("text_control_id")) for i in items}
    if len(controls) != len(texts) or len(texts) != 3 * len(by_stem):
        problems.append(f"no-image controls: {len(texts)} distinct texts and {len(controls)} control ids for "
                        f"{len(by_stem)} stems (expected 3 per stem, one id per text)")
    if problems:
        shown = "; ".join(problems[:10]) + (f"; … {len(problems) - 10} more" if len(problems) > 10 else "")
        raise FactorialCheckError(f"factorial build check failed ({len(problems)} problems): {shown}")
    return {"stems": len(by_stem), "items": len(items),
            "stems_per_relation": dict(sorted(balance.relations.items())),
            "probes": {"original": len(original), "text": len(texts), "blank": len(texts),
                       "total": len(original) + 2 * len(texts), "without_dedup": 3 * len(items)},
            "checks": ["nine cells", "bit-identical text across visual states", "one image per visual state",
                       "geometry matches visual state", "notes match text state", "direction balance",
                       "exact reuse of no-image controls"]}


def build_factorial(out_dir: str | Path, *, seed: int = FACTORIAL_SEED, n_per_relation: int = FACTORIAL_STEMS) -> dict[str, Any]:
    """Render the images, check the invariants, then write DIR/items.jsonl and DIR/manifest.json (a
    :class:`~vlaudit.results.manifest.RunManifest`: the arguments, and the design, accounting and image hashes
    at its top level, a :class:`~vlaudit.results.run_records.FactorialDatasetRecord`)."""
    start = time.perf_counter()
    out = Path(out_dir)
    stems = make_stems(seed, n_per_relation)
    paths: dict[tuple[str, str], str] = {}
    hashes: dict[str, str] = {}
    # Images are staged and swapped in only after the checks pass, so a failed build changes nothing.
    with ImageDirWriter(out / "images") as writer:
        for stem in stems:
            for v in STATES:
                name = f"{stem.stem_id}_V{SLUG[v]}.png"
                data = render_stem_image(stem, v)
                writer.write(name, data)
                paths[(stem.stem_id, v)] = f"images/{name}"
                hashes[f"images/{name}"] = sha256_bytes(data)
        items = factorial_items(stems, paths)
        accounting = check_factorial(items, hashes)
    write_items(out / "items.jsonl", items)
    record = FactorialDatasetRecord.of(
        seed=seed, n_per_relation=n_per_relation, canvas=[CANVAS, CANVAS], relations=RELATIONS,
        states={s: SYMBOL[s] for s in STATES}, stems=accounting["stems"], items=accounting["items"],
        stems_per_relation=accounting["stems_per_relation"], probes=accounting["probes"],
        checks=accounting["checks"], image_sha256=dict(sorted(hashes.items())))
    # not `out`: the same seed gives byte-identical files wherever they are written (`data factorial --seed`)
    arguments = {"seed": seed, "stems": n_per_relation}
    write_manifest(out, RunManifest(command=FACTORIAL_COMMAND, arguments=arguments, record=record))
    return {"out": str(out), "items_path": str(out / "items.jsonl"), **accounting,
            "seconds": round(time.perf_counter() - start, 3)}
