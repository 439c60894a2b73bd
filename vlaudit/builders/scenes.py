"""Procedural scenes in the official COCO and GQA formats, so every cycle builder runs on them unchanged.

Each scene is a small image (160×120 by default) with 2–4 *main* objects on a plain or textured pale
background. A category is a COCO category drawn as a fixed shape (dog = star, chair = square, …); its colour
is a random attribute. Main objects are placed so that every pair is unambiguous under the cycle paper's
default geometric rules (§4, §D.2; issue rules in ``vlaudit.builders.cycles.rules``):

* centres differ by ≥ 2·0.05·W horizontally and ≥ 2·0.05·H vertically, so left/right *and* above/below hold
  with twice the validity margin for every main pair (and their opposites are invalid);
* boxes never overlap (segmentations are the visible shapes) and lie inside the image;
* sizes come from three levels whose box areas differ by ≥ 4× (side ratio ≈ 2.07), so larger_than holds
  with ratio 2 between levels — also on polygon areas, since every shape fills ≥ 50% of its box — and a
  same-level pair is never "larger" by rule.

Optional realism that the conservative rules must survive: a tiny ineligible instance (box area < 1% of the
image) with probability ``p_small``, and an ``iscrowd = 1`` group with RLE segmentation with probability
``p_crowd``. Both may make a statement unverifiable, never wrong.

Outputs in ``out_dir``: ``images/<id:012d>.jpg``, ``instances.json`` and ``captions.json`` (COCO: info,
licenses, images, annotations, categories with the 80 official ids and names; 5 captions per image),
``scene_graphs.json`` (GQA: {imageId: {width, height, objects: {objId: {name, x, y, w, h, attributes,
relations: [{name, object}]}}}}). ``images/`` is staged and swapped in whole (a rerun replaces it; a killed
run leaves the old set). Same seed → byte-identical files; each image uses its own
``default_rng([seed, index])`` so a scene does not depend on how many were rendered.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from vlaudit.builders.scene_render import (
    BACKGROUND_CLASH,
    BACKGROUND_COLORS,
    OBJECT_COLORS,
    TEXTURES,
    Color,
    ImageDirWriter,
    background,
    draw_polygons,
    encode,
    polygon_area,
    shape_polygon,
)
from vlaudit.files import atomic_write
from vlaudit.geometry import box_centre

# The 80 official COCO categories: (id, name, supercategory), ids with COCO's gaps.
_COCO = {
    "person": "1 person", "vehicle": "2 bicycle|3 car|4 motorcycle|5 airplane|6 bus|7 train|8 truck|9 boat",
    "outdoor": "10 traffic light|11 fire hydrant|13 stop sign|14 parking meter|15 bench",
    "animal": "16 bird|17 cat|18 dog|19 horse|20 sheep|21 cow|22 elephant|23 bear|24 zebra|25 giraffe",
    "accessory": "27 backpack|28 umbrella|31 handbag|32 tie|33 suitcase",
    "sports": "34 frisbee|35 skis|36 snowboard|37 sports ball|38 kite|39 baseball bat|40 baseball glove|"
              "41 skateboard|42 surfboard|43 tennis racket",
    "kitchen": "44 bottle|46 wine glass|47 cup|48 fork|49 knife|50 spoon|51 bowl",
    "food": "52 banana|53 apple|54 sandwich|55 orange|56 broccoli|57 carrot|58 hot dog|59 pizza|60 donut|61 cake",
    "furniture": "62 chair|63 couch|64 potted plant|65 bed|67 dining table|70 toilet",
    "electronic": "72 tv|73 laptop|74 mouse|75 remote|76 keyboard|77 cell phone",
    "appliance": "78 microwave|79 oven|80 toaster|81 sink|82 refrigerator",
    "indoor": "84 book|85 clock|86 vase|87 scissors|88 teddy bear|89 hair drier|90 toothbrush",
}
COCO_CATEGORIES: tuple[tuple[int, str, str], ...] = tuple(sorted(
    (int(entry.split(" ", 1)[0]), entry.split(" ", 1)[1], sup) for sup, entries in _COCO.items()
    for entry in entries.split("|")))

# COCO category → shape. "orange" is not an object colour here: it is also a COCO category name.
DEFAULT_OBJECTS: dict[str, str] = {
    "dog": "star", "cat": "triangle", "chair": "square", "cup": "hexagon",
    "car": "diamond", "bus": "cross", "bottle": "pentagon", "clock": "circle",
}
SCENE_COLORS = tuple(c for c in OBJECT_COLORS if c != "orange")
SIZE_LEVELS = (14, 29, 60)
SIZE_WORDS = ("small", None, "large")
SMALL_SIDE = 8
CROWD_SIDE = 6
CENTRE_GAP = 0.10  # twice the 0.05 validity margin


@dataclass(frozen=True)
class SceneObject:
    """One annotated instance: COCO category name, colour, integer box [x, y, w, h], kind main/small/crowd."""

    category: str
    color: str
    box: tuple[int, int, int, int]
    kind: str = "main"
    size_level: int = 1
    parts: tuple[tuple[int, int, int, int], ...] = ()  # member boxes of a crowd group


@dataclass(frozen=True)
class Scene:
    image_id: int
    width: int
    height: int
    background: str
    texture: str
    objects: tuple[SceneObject, ...]

    @property
    def file_name(self) -> str:
        return f"{self.image_id:012d}.jpg"


def _place(rng: np.random.Generator, side: int, placed: list[tuple[int, int, int, int]], width: int,
           height: int, *, gaps: bool, n_try: int = 96) -> tuple[int, int, int, int] | None:
    """A random box of ``side`` inside the image, 2 px clear of ``placed``; with ``gaps`` also centre gaps."""
    xs = rng.integers(1, width - side, size=n_try)
    ys = rng.integers(1, height - side, size=n_try)
    ok = np.ones(n_try, dtype=bool)
    for px, py, pw, ph in placed:
        apart = (xs + side + 2 <= px) | (px + pw + 2 <= xs) | (ys + side + 2 <= py) | (py + ph + 2 <= ys)
        ok &= apart
        if gaps:
            cx, cy = px + pw / 2.0, py + ph / 2.0
            ok &= np.abs(xs + side / 2.0 - cx) >= CENTRE_GAP * width
            ok &= np.abs(ys + side / 2.0 - cy) >= CENTRE_GAP * height
    hits = np.flatnonzero(ok)
    if hits.size == 0:
        return None
    i = int(hits[0])
    return int(xs[i]), int(ys[i]), side, side


def sample_scene(image_id: int, seed: int, index: int, *, width: int = 160, height: int = 120,
                 categories: tuple[str, ...] = tuple(DEFAULT_OBJECTS), min_objects: int = 2,
                 max_objects: int = 4, p_small: float = 0.1, p_crowd: float = 0.05) -> Scene:
    """Draw one scene's layout from ``default_rng([seed, index])`` (no pixels yet)."""
    rng = np.random.default_rng([seed, index])
    bg = list(BACKGROUND_COLORS)[int(rng.integers(len(BACKGROUND_COLORS)))]
    texture = TEXTURES[int(rng.integers(len(TEXTURES)))]
    colors = [c for c in SCENE_COLORS if c != BACKGROUND_CLASH.get(bg)]
    for _ in range(100):
        n = int(rng.integers(min_objects, max_objects + 1))
        cats = rng.choice(len(categories), size=n, replace=False)
        cols = rng.choice(len(colors), size=n, replace=False)
        levels = rng.choice(3, size=n, p=[0.35, 0.4, 0.25])
        if (levels == 2).sum() > 1:  # one large object at most, so the others still fit with gaps
            levels[np.flatnonzero(levels == 2)[1:]] = 1
        order = np.argsort(-levels, kind="stable")
        boxes: list[tuple[int, int, int, int]] = []
        objects: list[SceneObject] = []
        for j in order:
            box = _place(rng, SIZE_LEVELS[levels[j]], boxes, width, height, gaps=True)
            if box is None:
                break
            boxes.append(box)
            objects.append(SceneObject(categories[cats[j]], colors[cols[j]], box, "main", int(levels[j])))
        if len(objects) == n:
            break
    else:  # pragma: no cover - the image is large enough for max_objects in practice
        raise RuntimeError(f"cannot place {min_objects} objects in a {width}x{height} image")
    if rng.random() < p_small:
        box = _place(rng, SMALL_SIDE, boxes, width, height, gaps=False)
        if box is not None:
            cat = objects[int(rng.integers(len(objects)))].category  # a present category, to interfere
            boxes.append(box)
            objects.append(SceneObject(cat, colors[int(rng.integers(len(colors)))], box, "small", 0))
    if rng.random() < p_crowd:
        region = _place(rng, 3 * CROWD_SIDE + 4, boxes, width, height, gaps=False)
        if region is not None:
            x, y = region[0], region[1]
            parts = ((x, y, CROWD_SIDE, CROWD_SIDE), (x + CROWD_SIDE + 2, y + 5, CROWD_SIDE, CROWD_SIDE),
                     (x + 2 * CROWD_SIDE + 4, y + 1, CROWD_SIDE, CROWD_SIDE))
            x1 = max(p[0] + p[2] for p in parts)
            y1 = max(p[1] + p[3] for p in parts)
            cat = categories[int(rng.integers(len(categories)))]
            objects.append(SceneObject(cat, colors[int(rng.integers(len(colors)))], (x, y, x1 - x, y1 - y),
                                       "crowd", 0, parts))
    return Scene(image_id, width, height, bg, texture, tuple(objects))


_COUNT = {2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six"}
_TEXTURE_WORD = {"plain": "plain", "striped": "striped", "checkered": "checkered", "speckled": "speckled"}


def _a(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def _region(scene: Scene, obj: SceneObject) -> str:
    cx, cy = box_centre(obj.box)
    col = ("left", "", "right")[min(2, int(3 * cx / scene.width))]
    row = ("top", "", "bottom")[min(2, int(3 * cy / scene.height))]
    if col and row:
        return f"in the {row} {col} corner"
    if col:
        return f"on the {col} side"
    return f"at the {row}" if row else "in the center"


def scene_captions(scene: Scene, rng: np.random.Generator) -> list[str]:
    """Five human-like captions naming the main objects and relations that hold with a double margin."""
    mains = [o for o in scene.objects if o.kind == "main"]
    pairs = [(a, b) for a in mains for b in mains if a is not b]
    order = rng.permutation(len(pairs))
    a, b = pairs[order[0]]
    c, d = pairs[order[1 % len(order)]]
    horiz = "to the left of" if box_centre(a.box)[0] < box_centre(b.box)[0] else "to the right of"
    vert = "above" if box_centre(c.box)[1] < box_centre(d.box)[1] else "below"
    names = [o.category for o in mains]
    listed = ", ".join(_a(n) for n in names[:-1]) + f" and {_a(names[-1])}"
    bg = f"{_TEXTURE_WORD[scene.texture]} {scene.background}"
    out = [
        f"{_a(f'{a.color} {a.category}').capitalize()} {horiz} {_a(f'{b.color} {b.category}')}.",
        f"{_COUNT[len(mains)]} objects on a {bg} background: {listed}.",
        f"{_a(c.category).capitalize()} sitting {vert} {_a(d.category)}.",
    ]
    sized = [(p, q) for p, q in pairs if p.size_level > q.size_level]
    if sized:
        p, q = sized[int(rng.integers(len(sized)))]
        out.append(f"The {p.color} {p.category} is much larger than the {q.category}.")
    else:
        rev = "to the right of" if horiz == "to the left of" else "to the left of"
        out.append(f"The {b.category} is {rev} the {a.color} {a.category}.")
    e = mains[int(rng.integers(len(mains)))]
    out.append(f"There is {_a(f'{e.color} {e.category}')} {_region(scene, e)} of the picture.")
    return out


def _rle(mask: np.ndarray) -> dict[str, Any]:
    """COCO uncompressed RLE (column-major run lengths, starting with a run of zeros)."""
    flat = np.asarray(mask, dtype=bool).ravel(order="F")
    change = np.flatnonzero(np.diff(flat.astype(np.int8))) + 1
    bounds = np.concatenate([[0], change, [flat.size]])
    counts = np.diff(bounds).tolist()
    if flat.size and flat[0]:
        counts = [0, *counts]
    return {"counts": counts, "size": [int(mask.shape[0]), int(mask.shape[1])]}


def render_scene(scene: Scene, shapes: dict[str, str], seed: int, index: int):
    """Pixels of ``scene`` (PIL image) and, per object, its COCO segmentation, area and bbox."""
    rng = np.random.default_rng([seed, index, 1])
    canvas = background(scene.width, scene.height, BACKGROUND_COLORS[scene.background], scene.texture, rng)
    polygons: list[tuple[np.ndarray, Color]] = []
    # per object: its segmentation (an RLE for a crowd, else one polygon), area and bbox
    segs: list[tuple[dict[str, Any] | list[list[float]], float, list[float]]] = []
    for obj in scene.objects:
        members = obj.parts if obj.kind == "crowd" else (obj.box,)
        pts = [shape_polygon(shapes[obj.category], b) for b in members]
        polygons.extend((p, OBJECT_COLORS[obj.color]) for p in pts)
        if obj.kind == "crowd":
            mask = Image.new("L", (scene.width, scene.height), 0)
            draw = ImageDraw.Draw(mask)
            for p in pts:
                draw.polygon([(float(a), float(b)) for a, b in p], fill=1)
            m = np.asarray(mask, dtype=bool)
            rows, cols = np.nonzero(m)  # an RLE's box is its mask's box (as pycocotools' toBbox)
            box = [float(cols.min()), float(rows.min()), float(cols.max() - cols.min() + 1),
                   float(rows.max() - rows.min() + 1)]
            segs.append((_rle(m), float(m.sum()), box))
        else:
            p = np.round(pts[0], 2)  # the area is that of the polygon as written
            segs.append(([[float(v) for v in p.ravel()]], round(polygon_area(p), 2),
                         [float(v) for v in obj.box]))
    return draw_polygons(canvas, polygons), segs


def _gqa_relations(objs: list[tuple[str, SceneObject]], width: int, height: int, margin: float) -> dict:
    out: dict[str, list[dict[str, str]]] = {oid: [] for oid, _ in objs}
    for oid_a, a in objs:
        ax, ay = box_centre(a.box)
        for oid_b, b in objs:
            if oid_a == oid_b:
                continue
            bx, by = box_centre(b.box)
            if ax + margin * width < bx:
                out[oid_a].append({"name": "to the left of", "object": oid_b})
            elif bx + margin * width < ax:
                out[oid_a].append({"name": "to the right of", "object": oid_b})
            if ay + margin * height < by:
                out[oid_a].append({"name": "above", "object": oid_b})
            elif by + margin * height < ay:
                out[oid_a].append({"name": "below", "object": oid_b})
    return out


def _dump(path: Path, obj: Any) -> None:
    with atomic_write(path) as handle:
        handle.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
        handle.write("\n")


def render_scenes(out_dir: str | Path, n_images: int, seed: int = 0, *, width: int = 160, height: int = 120,
                  objects: dict[str, str] | None = None, min_objects: int = 2, max_objects: int = 4,
                  p_small: float = 0.1, p_crowd: float = 0.05, jpeg_quality: int = 90,
                  margin: float = 0.05, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Render ``n_images`` scenes into ``out_dir`` (see the module docstring); returns a summary dict.

    ``progress(k)`` is called after every ``k`` rendered images (for progress bars).
    """
    if n_images < 1:
        raise ValueError("n_images must be at least 1")
    if not 2 <= min_objects <= max_objects:
        raise ValueError("need 2 <= min_objects <= max_objects")
    shapes = dict(DEFAULT_OBJECTS if objects is None else objects)
    cat_ids = {name: cid for cid, name, _ in COCO_CATEGORIES}
    unknown = sorted(set(shapes) - set(cat_ids))
    if unknown or max_objects > len(shapes):
        raise ValueError(f"objects must be ≥ max_objects COCO category names (unknown: {unknown})")
    out = Path(out_dir)
    image_dir = out / "images"
    writer = ImageDirWriter(image_dir)
    start = time.perf_counter()
    images, annotations, captions, graphs = [], [], [], {}
    kinds: Counter = Counter()
    ann_id, cap_id = 1, 1
    for index in range(n_images):
        scene = sample_scene(index + 1, seed, index, width=width, height=height, categories=tuple(shapes),
                             min_objects=min_objects, max_objects=max_objects, p_small=p_small, p_crowd=p_crowd)
        pixels, segs = render_scene(scene, shapes, seed, index)
        writer.write(scene.file_name, encode(pixels, "JPEG", quality=jpeg_quality))
        images.append({"license": 1, "file_name": scene.file_name, "coco_url": "", "height": height,
                       "width": width, "date_captured": "2026-01-01 00:00:00", "flickr_url": "",
                       "id": scene.image_id})
        gqa_objs = []
        for obj, (seg, area, bbox) in zip(scene.objects, segs, strict=True):
            kinds[obj.kind] += 1
            annotations.append({"segmentation": seg, "area": area, "iscrowd": int(obj.kind == "crowd"),
                                "image_id": scene.image_id, "bbox": bbox,
                                "category_id": cat_ids[obj.category], "id": ann_id})
            if obj.kind != "crowd":
                gqa_objs.append((str(ann_id), obj))
            ann_id += 1
        for text in scene_captions(scene, np.random.default_rng([seed, index, 2])):
            captions.append({"image_id": scene.image_id, "id": cap_id, "caption": text})
            cap_id += 1
        if progress is not None and (index + 1) % 50 == 0:
            progress(50)
        rels = _gqa_relations(gqa_objs, width, height, margin)
        graphs[str(scene.image_id)] = {"width": width, "height": height, "objects": {
            oid: {"name": o.category, "x": o.box[0], "y": o.box[1], "w": o.box[2], "h": o.box[3],
                  "attributes": [o.color] + ([SIZE_WORDS[o.size_level]] if o.kind == "main"
                                             and SIZE_WORDS[o.size_level] else []),
                  "relations": rels[oid]} for oid, o in gqa_objs}}
    if progress is not None and n_images % 50:
        progress(n_images % 50)
    writer.commit()  # images first: the annotation files below never name a missing image
    render_s = time.perf_counter() - start
    info = {"description": f"vlaudit procedural scenes (seed {seed})", "url": "", "version": "1.0",
            "year": 2026, "contributor": "vlaudit", "date_created": "2026/01/01"}
    licenses = [{"url": "", "id": 1, "name": "generated by vlaudit (no restrictions)"}]
    categories = [{"supercategory": sup, "id": cid, "name": name} for cid, name, sup in COCO_CATEGORIES]
    _dump(out / "instances.json", {"info": info, "licenses": licenses, "images": images,
                                   "annotations": annotations, "categories": categories})
    _dump(out / "captions.json", {"info": info, "licenses": licenses, "images": images,
                                  "annotations": captions})
    _dump(out / "scene_graphs.json", graphs)
    total_s = time.perf_counter() - start
    return {"out": str(out), "images": n_images, "instances": len(annotations), "captions": len(captions),
            "main_objects": kinds["main"], "small_objects": kinds["small"], "crowd_groups": kinds["crowd"],
            "categories": sorted(shapes), "seed": seed, "width": width, "height": height,
            "render_seconds": round(render_s, 3), "total_seconds": round(total_s, 3),
            "images_per_second": round(n_images / total_s, 1) if total_s > 0 else None,
            "files": {"instances": str(out / "instances.json"), "captions": str(out / "captions.json"),
                      "scene_graphs": str(out / "scene_graphs.json"), "images": str(image_dir)}}
