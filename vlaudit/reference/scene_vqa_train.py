"""Training the scene-VQA reference models (:mod:`vlaudit.reference.scene_vqa_reader`) on ``data scenes`` output.

Training data, deterministic from the seed (training scenes use seed :data:`TRAIN_SCENE_SEED` + seed, the
factorial-style images :data:`TRAIN_FACTORIAL_SEED` + seed — never the demo's evaluation seeds 0 and 20260724):

* procedural scenes rendered by :func:`vlaudit.builders.scenes.render_scenes` (JPEG, read back as the runner
  reads them), with their object masks (boxes → feature cells) and statements of four forms — presence
  ("There is a dog."), colour ("The dog is red."), left/right and above/below ("The dog is to the left of the
  cat.") — wrapped in the fixed question template;
* factorial-style images (:mod:`vlaudit.builders.factorial` stems, 512×512) with an evidence note and a query.

``grounded`` statements: every form true and false equally often and the factorial note independent of the
image, so the text carries no prior. ``prior`` statements: spatial truth follows
:func:`~vlaudit.reference.scene_vqa.category_prior` with probability :data:`PRIOR_FOLLOW` (and the factorial note
agrees with the image with that probability), so the text predicts the answer most of the time.

* :func:`train_perception` — the grounded reader's CNN, trained on the object masks (per-cell shape and colour).
* :func:`count_prior` — the prior model: answer counts per statement key on the prior statements.
* :func:`train_reference` — ``vlaudit models train-reference NAME`` (the shipped files come from seed 0).

Measured here before this design (2 shared CPU cores): an end-to-end yes/no network (conv encoder with
coordinate channels, statement encoder, bilinear query/key fusion, auxiliary mask and grounding losses) stayed
at answer loss ≈ 0.69 for 500–600 steps (~10 CPU minutes); the perception CNN alone learns in about a minute.
"""

from __future__ import annotations

import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image

from vlaudit.analysis.cycles.synthetic import torch_threads
from vlaudit.builders.benchmark_items import question_for, statement_text
from vlaudit.builders.factorial import (
    CANVAS,
    STATES,
    evidence_note,
    make_stems,
    query,
    render_stem_image,
    stem_boxes,
)
from vlaudit.builders.scene_render import OBJECT_COLORS, SHAPES
from vlaudit.builders.scenes import DEFAULT_OBJECTS, SCENE_COLORS, render_scenes
from vlaudit.errors import InputError
from vlaudit.files import read_json, write_json
from vlaudit.reference.scene_vqa import (
    IMAGE_SIZE,
    WEIGHTS_DIR,
    category_prior,
    pixels_to_tensor,
    save_model,
)
from vlaudit.reference.scene_vqa_reader import build_perception, statement_key
from vlaudit.relations import INVERSE_RELATIONS, relation_phrase

TRAIN_SCENE_SEED = 7100
TRAIN_FACTORIAL_SEED = 7200
PRIOR_FOLLOW = 0.85
BLANK_FRACTION = 0.1  # images shown as the blank gray canvas (every cell background)
MAIN_MIN_SIDE = 14  # smallest main-object side (scenes.SIZE_LEVELS[0]); small distractors are 8 px

ARCHITECTURES: dict[str, dict[str, Any]] = {"grounded": {"encoder": "cnn", "channels": [16, 32, 48]}}


def _aux_vocab() -> tuple[list[str], list[str]]:
    return list(SHAPES), list(OBJECT_COLORS)


Painted = list[tuple[tuple[float, ...], int, int]]  # (normalised box x0 y0 x1 y1, shape id, colour id)


def _article(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def _centre(o: dict[str, Any]) -> tuple[float, float]:
    return o["x"] + o["w"] / 2.0, o["y"] + o["h"] / 2.0


def _norm_box(o: dict[str, Any], width: float, height: float) -> tuple[float, float, float, float]:
    return o["x"] / width, o["y"] / height, (o["x"] + o["w"]) / width, (o["y"] + o["h"]) / height


Statement = tuple[str, bool, Any, Any]  # question, label, subject box, object box (normalised; None if absent)


def scene_statements(graph: dict[str, Any], crowd: set[str], rng: np.random.Generator, n: int, *,
                     categories: tuple[str, ...], colors: tuple[str, ...],
                     prior_follow: float | None) -> list[Statement]:
    """``n`` (question, label, subject box, object box) about one GQA scene graph, forms and labels balanced.

    ``prior_follow`` (prior model): spatial pairs are drawn from the prior-following ones with this
    probability; None (grounded): uniformly, so the text of every form predicts nothing.
    """
    objects = list(graph["objects"].values())
    width, height = float(graph["width"]), float(graph["height"])
    mains = [o for o in objects if o["w"] >= MAIN_MIN_SIDE]
    names = [o["name"] for o in mains]
    unique = [o for o in mains if names.count(o["name"]) == 1]
    present = {o["name"] for o in objects}
    absent = [c for c in categories if c not in present and c not in crowd]
    pairs = []
    for a in unique:
        for b in unique:
            if a is b or a["name"] == b["name"]:
                continue
            (ax, ay), (bx, by) = _centre(a), _centre(b)
            for relation in ("left of" if ax < bx else "right of", "above" if ay < by else "below"):
                follows = category_prior(a["name"], b["name"], relation)
                pairs.append((a, relation, b, bool(follows)))
    out: list[Statement] = []
    for _ in range(n):
        form = int(rng.integers(4))
        label = bool(rng.integers(2))
        if form == 0 and absent and mains:
            main = mains[int(rng.integers(len(mains)))]
            cat = main["name"] if label else absent[int(rng.integers(len(absent)))]
            box = _norm_box(main, width, height) if label else None
            out.append((question_for(f"There is {_article(cat)}."), label, box, None))
        elif form == 1 and unique:
            o = unique[int(rng.integers(len(unique)))]
            own = o["attributes"][0]
            others = [c for c in colors if c != own]
            scene_cols = [u["attributes"][0] for u in unique if u["attributes"][0] != own]
            wrong = (scene_cols[int(rng.integers(len(scene_cols)))] if scene_cols and rng.random() < 0.5
                     else others[int(rng.integers(len(others)))])
            out.append((question_for(f"The {o['name']} is {own if label else wrong}."), label,
                        _norm_box(o, width, height), None))
        elif pairs:
            axis = ("left of", "right of") if form == 2 else ("above", "below")
            pool = [p for p in pairs if p[1] in axis] or pairs
            if prior_follow is not None:
                # the drawn status (follows the prior or not) is honoured, on the other axis if need be; a
                # scene without such a pair gives no spatial statement this time
                want = rng.random() < prior_follow
                pool = [p for p in pool if p[3] == want] or [p for p in pairs if p[3] == want]
                if not pool:
                    continue
            a, relation, b, _ = pool[int(rng.integers(len(pool)))]
            stated = relation if label else INVERSE_RELATIONS[relation]
            out.append((question_for(statement_text(a["name"], relation_phrase(stated), b["name"])), label,
                        _norm_box(a, width, height), _norm_box(b, width, height)))
    return out


def _load_scenes(n: int, seed: int, rng: np.random.Generator, per_image: int,
                 prior_follow: float | None) -> tuple[np.ndarray, list[list[Statement]], list[Painted]]:
    with tempfile.TemporaryDirectory(prefix="vlaudit-vqa-train-") as tmp:
        render_scenes(tmp, n, seed=seed)
        graphs = read_json(Path(tmp) / "scene_graphs.json")
        instances = read_json(Path(tmp) / "instances.json")
        names = {c["id"]: c["name"] for c in instances["categories"]}
        crowd: dict[str, set[str]] = {}
        for ann in instances["annotations"]:
            if ann["iscrowd"]:
                crowd.setdefault(str(ann["image_id"]), set()).add(names[ann["category_id"]])
        pixels: list[np.ndarray] = []
        statements: list[list[Statement]] = []
        painted: list[Painted] = []
        shapes, colours = _aux_vocab()
        for image in instances["images"]:
            with Image.open(Path(tmp) / "images" / image["file_name"]) as handle:
                pixels.append(_resized(handle))
            graph = graphs[str(image["id"])]
            painted.append([(_norm_box(o, graph["width"], graph["height"]),
                             1 + shapes.index(DEFAULT_OBJECTS[o["name"]]), 1 + colours.index(o["attributes"][0]))
                            for o in graph["objects"].values()])
            statements.append(scene_statements(graphs[str(image["id"])], crowd.get(str(image["id"]), set()), rng,
                                               per_image, categories=tuple(DEFAULT_OBJECTS), colors=SCENE_COLORS,
                                               prior_follow=prior_follow))
    return np.stack(pixels), statements, painted


def _resized(image: Any) -> np.ndarray:
    return np.asarray(image.convert("RGB").resize(IMAGE_SIZE, resample=2), dtype=np.uint8)


def _load_factorial(n_per_relation: int, seed: int, rng: np.random.Generator,
                    prior_follow: float | None) -> tuple[np.ndarray, list[list[Statement]], list[Painted]]:
    """One image per (stem, visual state); statements: note + query with the note drawn per model kind."""
    pixels: list[np.ndarray] = []
    statements: list[list[Statement]] = []
    painted: list[Painted] = []
    shapes, colours = _aux_vocab()
    for stem in make_stems(seed, n_per_relation):
        for v in STATES:
            with Image.open(io.BytesIO(render_stem_image(stem, v))) as handle:
                pixels.append(_resized(handle))
            label = v == "pos"
            if prior_follow is None:
                notes = list(STATES)  # the note is independent of the image
            elif v == "none":
                notes = ["none"]
            else:
                # the note agrees with the image with probability prior_follow
                agree = rng.random() < prior_follow
                notes = [v if agree else ("neg" if v == "pos" else "pos"), "none"]
            boxes = stem_boxes(stem, v)
            s_box, o_box = (tuple(float(c) / CANVAS for c in (b[0], b[1], b[0] + b[2], b[1] + b[3]))
                            for b in (boxes["subject"], boxes["object"]))
            statements.append([(f"{evidence_note(stem, t)} {query(stem)}", label, s_box, o_box) for t in notes])
            painted.append([(box, 1 + shapes.index(who[1]), 1 + colours.index(who[0]))
                            for box, who in ((s_box, stem.subject), (o_box, stem.object))])
    return np.stack(pixels), statements, painted


def build_training_set(kind: str, *, seed: int = 0, n_scenes: int = 2400, per_image: int = 12,
                       factorial_per_relation: int = 60) -> dict[str, Any]:
    """Images (uint8, 60×80) and their statements for ``kind`` (grounded or prior)."""
    rng = np.random.default_rng([seed, 11])
    follow = PRIOR_FOLLOW if kind == "prior" else None
    scene_px, scene_st, scene_pt = _load_scenes(n_scenes, TRAIN_SCENE_SEED + seed, rng, per_image, follow)
    fact_px, fact_st, fact_pt = _load_factorial(factorial_per_relation, TRAIN_FACTORIAL_SEED + seed, rng, follow)
    return {"pixels": np.concatenate([scene_px, fact_px]), "statements": scene_st + fact_st,
            "painted": scene_pt + fact_pt, "n_scene_images": len(scene_st)}


def dense_targets(painted: list[Painted], h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, h, w) shape and colour class per feature cell (0 = background; a cell whose centre is inside an
    object's box takes that object's classes)."""
    shape = np.zeros((len(painted), h, w), dtype=np.int64)
    colour = np.zeros_like(shape)
    ys = (np.arange(h) + 0.5) / h
    xs = (np.arange(w) + 0.5) / w
    for n, objects in enumerate(painted):
        for (x0, y0, x1, y1), s_id, c_id in objects:
            inside = ((ys >= y0) & (ys <= y1))[:, None] & ((xs >= x0) & (xs <= x1))[None, :]
            shape[n][inside] = s_id
            colour[n][inside] = c_id
    return shape, colour


def train_perception(*, seed: int = 0, steps: int = 600, batch_images: int = 24, lr: float = 3e-3,
                     data: dict[str, Any] | None = None, log: Callable[[str], None] = print,
                     log_every: int = 50) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    """Train the grounded reader's CNN on the object masks (per-cell shape and colour; blank → background).

    Returns (net, config, curve rows {step, loss, shape_acc, colour_acc} on the object cells of the batch)."""
    data = data or build_training_set("grounded", seed=seed)
    torch.manual_seed(seed)
    rng = np.random.default_rng([seed, 12])
    shapes, colours = _aux_vocab()
    config = {"kind": "grounded-reader", **ARCHITECTURES["grounded"], "aux_classes": [1 + len(shapes),
              1 + len(colours)], "aux_labels": [shapes, colours], "image_size": list(IMAGE_SIZE),
              "train": {"seed": seed, "steps": steps, "batch_images": batch_images, "lr": lr,
                        "n_images": int(len(data["pixels"])), "blank_fraction": BLANK_FRACTION}}
    net = build_perception(config)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, 4.0 * (1.0 - s / max(steps, 1))))
    pixels = data["pixels"]
    with torch.no_grad():
        grid = net["trunk"](pixels_to_tensor(pixels[:1])).shape[2:]
    shape_map, colour_map = (torch.from_numpy(a) for a in dense_targets(data["painted"], int(grid[0]), int(grid[1])))
    curve: list[dict[str, Any]] = []
    window: list[tuple[float, float, float]] = []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        chosen = rng.choice(len(pixels), size=batch_images, replace=False)
        blank = rng.random(batch_images) < BLANK_FRACTION
        rows = pixels[chosen].copy()
        rows[blank] = 128  # the blank context's gray canvas has no object anywhere
        mask = torch.from_numpy(blank)[:, None, None]
        t_shape = torch.where(mask, 0, shape_map[torch.from_numpy(chosen)])
        t_colour = torch.where(mask, 0, colour_map[torch.from_numpy(chosen)])
        f = net["trunk"](pixels_to_tensor(rows))
        s_logits, c_logits = net["shape"](f), net["colour"](f)
        loss = (torch.nn.functional.cross_entropy(s_logits, t_shape)
                + torch.nn.functional.cross_entropy(c_logits, t_colour))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        objects = t_shape > 0
        window.append((float(loss.detach()),
                       float((s_logits.detach().argmax(1) == t_shape)[objects].float().mean()),
                       float((c_logits.detach().argmax(1) == t_colour)[objects].float().mean())))
        if step % log_every == 0 or step == steps:
            row = {"step": step, "loss": float(np.mean([w[0] for w in window])),
                   "shape_acc": float(np.mean([w[1] for w in window])),
                   "colour_acc": float(np.mean([w[2] for w in window])),
                   "seconds": round(time.perf_counter() - start, 1)}
            curve.append(row)
            window = []
            log(f"perception step {step}/{steps}: loss {row['loss']:.4f} shape acc {row['shape_acc']:.3f} "
                f"colour acc {row['colour_acc']:.3f} ({row['seconds']} s)")
    net.eval()
    return net, config, curve


def count_prior(data: dict[str, Any]) -> dict[str, list[int]]:
    """{statement key: [n_yes, n_no]} over every training statement (keys: :func:`statement_key`)."""
    counts: dict[str, list[int]] = {}
    for group in data["statements"]:
        for text, label, *_ in group:
            key = statement_key(text)
            if key is not None:
                entry = counts.setdefault("|".join(key), [0, 0])
                entry[0 if label else 1] += 1
    return dict(sorted(counts.items()))


SHORT_STEPS = 60  # ``vlaudit models train-reference NAME --short``: seconds, enough to see the loss go down


def train_reference(name: str, out_dir: str | Path | None = None, *, seed: int = 0, steps: int | None = None,
                    log: Callable[[str], None] = print, short: bool = False) -> dict[str, Any]:
    """Rebuild ``scene-vqa-grounded`` (perception CNN) or ``scene-vqa-prior`` (answer counts) into ``out_dir``
    (default: the package's ``reference/weights``); returns {name, files, curve}. Shipped: seed 0, defaults;
    ``short``: a brief retrain (:data:`SHORT_STEPS`) for smoke tests."""
    if short and steps is None:
        steps = SHORT_STEPS
    folder = WEIGHTS_DIR if out_dir is None else Path(out_dir)
    if name == "scene-vqa-grounded":
        with torch_threads(1):
            net, config, curve = train_perception(seed=seed, steps=steps or 1500, log=log)
        config["train"]["curve"] = curve
        files = save_model(net, config, name, folder)
        return {"name": name, "files": [str(f) for f in files], "curve": curve}
    if name == "scene-vqa-prior":
        data = build_training_set("prior", seed=seed)
        counts = count_prior(data)
        n = sum(sum(v) for v in counts.values())
        log(f"prior: counted {n} training statements under {len(counts)} keys")
        path = write_json(folder / f"{name}.json", {
            "kind": "count-prior", "counts": counts,
            "train": {"seed": seed, "prior_follow": PRIOR_FOLLOW, "n_statements": n,
                      "n_images": int(len(data["statements"]))}})
        return {"name": name, "files": [str(path)], "curve": [{"step": 1, "statements": n, "keys": len(counts)}]}
    raise InputError(f"unknown trainable scene-VQA model {name!r}; available: scene-vqa-grounded, "
                     "scene-vqa-prior", field="name")
