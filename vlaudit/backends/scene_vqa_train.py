"""Training the scene-VQA reference models (:mod:`vlaudit.backends.scene_vqa`) on ``data scenes`` output.

Training data, all deterministic from the seed (training scenes use seeds :data:`TRAIN_SCENE_SEED` + seed,
the factorial-style images :data:`TRAIN_FACTORIAL_SEED` + seed — never the demo's evaluation seeds 0 and
20260724):

* procedural scenes rendered by :func:`vlaudit.builders.scenes.render_scenes` (JPEG, read back as the runner
  reads them), with statements of four forms — presence ("There is a dog."), colour ("The dog is red."),
  left/right and above/below ("The dog is to the left of the cat.") — wrapped in the fixed question template;
* factorial-style images (:mod:`vlaudit.builders.factorial` stems, 512×512) with an evidence note and a query.

``grounded``: every form true and false equally often, the factorial note independent of the image, so the
text carries no prior and the model must look. ``prior``: spatial statements are drawn so that their truth
follows :func:`~vlaudit.backends.scene_vqa.category_prior` with probability :data:`PRIOR_FOLLOW` (and the
factorial note agrees with the image with that probability), so the statement text predicts the answer most
of the time. Every statement is also shown without an image (text-only) and with the gray blank canvas,
with the same label, so that the model's no-image margins are what its text supports.
"""

from __future__ import annotations

import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.backends.scene_vqa import (
    IMAGE_SIZE,
    VERBALIZERS,
    build_net,
    category_prior,
    encode_tokens,
    pixels_to_tensor,
    prompt_text,
    save_model,
    words,
)
from vlaudit.builders.benchmark_items import question_for, statement_text
from vlaudit.relations import INVERSE_RELATIONS, relation_phrase

TRAIN_SCENE_SEED = 7100
TRAIN_FACTORIAL_SEED = 7200
PRIOR_FOLLOW = 0.85
CONTEXT_PROBS = (0.8, 0.1, 0.1)  # original, text-only, blank
MAIN_MIN_SIDE = 14  # smallest main-object side (scenes.SIZE_LEVELS[0]); small distractors are 8 px

ARCHITECTURES: dict[str, dict[str, Any]] = {
    "grounded": {"encoder": "cnn", "channels": [16, 32, 48], "coords": True},
    "prior": {"encoder": "patch", "patch": 5, "channels": [32, 48, 48], "coords": False},
}
DEFAULTS = {"embed": 32, "hidden": 64, "key": 32, "max_words": 40, "statement_heads": 4}
AUX_WEIGHT = 0.5


def _aux_vocab() -> tuple[list[str], list[str]]:
    from vlaudit.builders.scene_render import OBJECT_COLORS, SHAPES

    return list(SHAPES), list(OBJECT_COLORS)


Painted = list[tuple[tuple[float, float, float, float], int, int]]  # (normalised box, shape id, colour id)


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
                want = rng.random() < prior_follow
                pool = [p for p in pool if p[3] == want] or pool
            a, relation, b, _ = pool[int(rng.integers(len(pool)))]
            stated = relation if label else INVERSE_RELATIONS[relation]
            out.append((question_for(statement_text(a["name"], relation_phrase(stated), b["name"])), label,
                        _norm_box(a, width, height), _norm_box(b, width, height)))
    return out


def _load_scenes(n: int, seed: int, rng: np.random.Generator, per_image: int,
                 prior_follow: float | None) -> tuple[np.ndarray, list[list[Statement]]]:
    from PIL import Image

    from vlaudit.builders.scenes import DEFAULT_OBJECTS, SCENE_COLORS, render_scenes
    from vlaudit.tables import read_json

    with tempfile.TemporaryDirectory(prefix="vlaudit-vqa-train-") as tmp:
        render_scenes(tmp, n, seed=seed)
        graphs = read_json(Path(tmp) / "scene_graphs.json")
        instances = read_json(Path(tmp) / "instances.json")
        names = {c["id"]: c["name"] for c in instances["categories"]}
        crowd: dict[str, set[str]] = {}
        for ann in instances["annotations"]:
            if ann["iscrowd"]:
                crowd.setdefault(str(ann["image_id"]), set()).add(names[ann["category_id"]])
        pixels, statements, painted = [], [], []
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
                    prior_follow: float | None) -> tuple[np.ndarray, list[list[Statement]]]:
    """One image per (stem, visual state); statements: note + query with the note drawn per model kind."""
    from PIL import Image

    from vlaudit.builders.factorial import (
        CANVAS,
        STATES,
        evidence_note,
        make_stems,
        query,
        render_stem_image,
        stem_boxes,
    )

    pixels, statements, painted = [], [], []
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


def vocabulary(statements: list[list[Statement]]) -> list[str]:
    """<pad>, <unk>, then every word of the prompts (both interfaces, image marker), sorted."""
    found = {w for group in statements for text, *_ in group for w in words(text)}
    found |= {w for interface in ("yesno", "truefalse") for w in words(prompt_text("", interface, True))}
    found |= set(VERBALIZERS)
    return ["<pad>", "<unk>", *sorted(found)]


def grounding_loss(attention: list[Any], boxes: list[tuple[Any, Any]], grid: Any) -> Any:
    """Mean −log(attention mass on the named object's box) over statements that name a visible object.

    An auxiliary loss on where the subject/object queries look (the boxes are known for training scenes);
    it only speeds up learning to find the named objects — the answer itself is learned from the labels."""
    import torch

    h, w = int(grid[0]), int(grid[1])
    ys = (torch.arange(h, dtype=torch.float32) + 0.5) / h
    xs = (torch.arange(w, dtype=torch.float32) + 0.5) / w
    terms = []
    for which, attn in enumerate(attention):
        flat = attn.reshape(-1, h * w)
        rows, masks = [], []
        for n, pair in enumerate(boxes):
            box = pair[which]
            if box is None:
                continue
            x0, y0, x1, y1 = box
            pad_x, pad_y = 0.5 / w, 0.5 / h  # a small object still covers at least one cell centre
            inside = (((ys >= y0 - pad_y) & (ys <= y1 + pad_y))[:, None]
                      & ((xs >= x0 - pad_x) & (xs <= x1 + pad_x))[None, :])
            rows.append(n)
            masks.append(inside.reshape(-1))
        if rows:
            mass = (flat[torch.tensor(rows)] * torch.stack(masks).float()).sum(dim=1)
            terms.append(-torch.log(mass.clamp_min(1e-6)).mean())
    return torch.stack(terms).mean() if terms else torch.zeros(())


def train_model(kind: str, *, seed: int = 0, steps: int = 1500, batch_images: int = 12, per_step: int = 16,
                lr: float = 3e-3, grounding_weight: float = 0.5, data: dict[str, Any] | None = None, log: Callable[[str], None] = print,
                log_every: int = 100) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    """Train a :class:`SceneVqaNet` of ``kind``; returns (net, config, curve rows {step, loss, acc})."""
    import torch

    data = data or build_training_set(kind, seed=seed)
    torch.manual_seed(seed)
    rng = np.random.default_rng([seed, 12])
    vocab = vocabulary(data["statements"])
    shapes, colours = _aux_vocab()
    config = {"kind": kind, **DEFAULTS, **ARCHITECTURES[kind], "vocab": vocab, "image_size": list(IMAGE_SIZE),
              "aux_classes": [1 + len(shapes), 1 + len(colours)], "aux_labels": [shapes, colours],
              "train": {"seed": seed, "steps": steps, "batch_images": batch_images, "per_step": per_step, "lr": lr,
                        "n_images": int(len(data["statements"])), "grounding_weight": grounding_weight, "prior_follow": PRIOR_FOLLOW if kind == "prior"
                        else None, "context_probs": list(CONTEXT_PROBS)}}
    index = {w: i for i, w in enumerate(vocab)}
    net = build_net(config)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(steps, 1), pct_start=0.1)
    pixels, statements = data["pixels"], data["statements"]
    with torch.no_grad():
        grid = net.image_features(pixels_to_tensor(pixels[:1])).shape[2:]
    shape_map, colour_map = (torch.from_numpy(a) for a in dense_targets(data["painted"], int(grid[0]), int(grid[1])))
    usable = np.array([k for k, s in enumerate(statements) if s])
    answer = {v: i for i, v in enumerate(VERBALIZERS)}
    curve: list[dict[str, Any]] = []
    window: list[tuple[float, float]] = []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        chosen = rng.choice(usable, size=batch_images, replace=False)
        # one context per image row: original, text-only (no image) or the blank gray canvas
        contexts = rng.choice(3, size=batch_images, p=CONTEXT_PROBS)
        rows = pixels[chosen].copy()
        rows[contexts == 2] = 128
        texts, targets, boxes = [], [], []
        for row, k in enumerate(chosen):
            group = statements[k]
            for j in rng.integers(len(group), size=per_step):
                text, label, s_box, o_box = group[int(j)]
                boxes.append((s_box, o_box) if contexts[row] == 0 else (None, None))
                interface = "yesno" if rng.random() < 0.5 else "truefalse"
                texts.append(prompt_text(text, interface, contexts[row] != 1))
                pair = ("yes", "no") if interface == "yesno" else ("true", "false")
                targets.append(answer[pair[0] if label else pair[1]])
        tokens = encode_tokens(texts, index).reshape(batch_images, per_step, -1)
        features = net.image_features(pixels_to_tensor(rows))
        attention: list[Any] = []
        logits = net(tokens, features, torch.tensor(contexts != 1), attention).reshape(-1, len(VERBALIZERS))
        target = torch.tensor(targets)
        answer_loss = torch.nn.functional.cross_entropy(logits, target)
        loss = answer_loss
        seen = torch.from_numpy(contexts != 1)
        if bool(seen.any()):
            picked = torch.from_numpy(chosen)[seen]
            blank = torch.from_numpy(contexts == 2)[seen]
            t_shape = torch.where(blank[:, None, None], 0, shape_map[picked])
            t_colour = torch.where(blank[:, None, None], 0, colour_map[picked])
            f = features[seen]
            loss = loss + AUX_WEIGHT * (torch.nn.functional.cross_entropy(net.shape_head(f), t_shape)
                                        + torch.nn.functional.cross_entropy(net.color_head(f), t_colour))
        if grounding_weight:
            loss = loss + grounding_weight * grounding_loss(attention, boxes, features.shape[2:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        window.append((float(answer_loss.detach()), float((logits.detach().argmax(1) == target).float().mean()),
                       float(loss.detach())))
        if step % log_every == 0 or step == steps:
            row = {"step": step, "loss": float(np.mean([w[0] for w in window])),
                   "total_loss": float(np.mean([w[2] for w in window])),
                   "acc": float(np.mean([w[1] for w in window])), "seconds": round(time.perf_counter() - start, 1)}
            curve.append(row)
            window = []
            log(f"{kind} step {step}/{steps}: answer loss {row['loss']:.4f} (total {row['total_loss']:.3f}) acc {row['acc']:.3f} ({row['seconds']} s)")
    net.eval()
    return net, config, curve


def train_reference(name: str, out_dir: str | Path | None = None, *, seed: int = 0, steps: int | None = None,
                    log: Callable[[str], None] = print) -> dict[str, Any]:
    """Rebuild ``scene-vqa-grounded`` or ``scene-vqa-prior`` and write its weights (default: the package's
    ``backends/weights``); returns {name, files, curve}. The shipped weights came from this call with seed 0."""
    import torch

    from vlaudit.errors import InputError
    from vlaudit.experiments.synthetic import torch_threads

    kinds = {"scene-vqa-grounded": "grounded", "scene-vqa-prior": "prior"}
    if name not in kinds:
        raise InputError(f"unknown trainable scene-VQA model {name!r}; available: {', '.join(kinds)}",
                         field="name")
    with torch_threads(1):
        torch.use_deterministic_algorithms(True)
        try:
            net, config, curve = train_model(kinds[name], seed=seed, steps=steps or 1500, log=log)
        finally:
            torch.use_deterministic_algorithms(False)
    config["train"]["curve"] = curve
    cfg_path, weights_path = save_model(net, config, name, None if out_dir is None else Path(out_dir))
    return {"name": name, "files": [str(cfg_path), str(weights_path)], "curve": curve}
