"""Training of ``ref:scene-clip-spatial`` / ``ref:scene-clip-bag`` (``vlaudit models train-reference NAME``).

Data: ``vlaudit data scenes`` output rendered from :data:`TRAIN_SCENE_SEED` (1000). The demo evaluates on the
scenes of seeds 0, 1, 2 (``--seed S``: S, S+1, S+2); each scene is drawn from ``default_rng([seed, index])``,
so evaluation scenes are independent of the training ones. Every training image comes with texts that are true
of it, read from its own annotation files:

* its five human-like captions (``captions.json``);
* COCO-style relation statements ("a dog to the left of a chair", all six relations of the cycle rules) that
  are *valid* under :func:`~vlaudit.builders.cycles.rules.statement_verdict` on ``instances.json``;
* GQA-style facts ("the red cat", "the dog above the cup", "the red dog to the left of the blue cup") that
  the scene graph states (:func:`~vlaudit.builders.cycles.gqa_rules.candidate_facts`).

Objective, per batch of images: symmetric InfoNCE (CLIP) over (image, one sampled true text) pairs, where a
batch text that is also true of another image is masked out of that image's negatives; plus a *contrast-pair*
term softplus(−(s(u, t) − s(u, f))) with t a valid relation statement of image u and f the same statement with
subject and object exchanged (a strict cycle's swap) or with the inverse relation (a same-pair cycle's swap),
kept only when the rules call f invalid in u. Both models get exactly the same data, objective, seed and
budget; only the architecture differs (:mod:`vlaudit.reference.scene_clip`). For the bag model an exchanged
statement embeds exactly like the true one, so part of that term is irreducible: it is the point.

Deterministic from ``seed`` on CPU: the initialisation draws from torch's generator inside ``fork_rng`` (the
caller's global state is restored), everything else from explicit numpy generators; one torch thread.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from safetensors.torch import save
from torch.nn import functional as F

from vlaudit.analysis.cycles.synthetic import torch_threads
from vlaudit.builders.cycles.gqa import GQA_FAMILIES
from vlaudit.builders.cycles.gqa_rules import candidate_facts, fact_text
from vlaudit.builders.cycles.rules import (
    RELATION_TEXT,
    RELATIONS,
    GeometryRules,
    caption_text,
    inverse,
    statement_verdict,
)
from vlaudit.builders.scenes import render_scenes
from vlaudit.errors import InputError
from vlaudit.reference.scene_clip import PAD, UNK, SceneClip, Vocabulary, region_features, save_model, words
from vlaudit.sources.gqa import read_gqa_scene_graphs

TRAIN_SCENE_SEED = 1000
VERSION = 1
Log = Callable[[str], None]


@dataclass(frozen=True)
class TrainSettings:
    """Sizes and optimisation of one training run (``short()`` is the seconds-long retrain of the tests)."""

    seed: int = 0
    scene_seed: int = TRAIN_SCENE_SEED
    n_scenes: int = 2000
    epochs: int = 30
    batch_size: int = 64
    lr: float = 3e-3
    weight_decay: float = 1e-4
    dim: int = 128
    width: int = 64
    region_width: int = 128
    code: int = 64

    @classmethod
    def short(cls) -> TrainSettings:
        return cls(n_scenes=192, epochs=3, batch_size=64)


@dataclass
class TrainingData:
    """Region features (n, MAX_REGIONS, REGION_DIM), every text's ids, per image its true texts and contrast pairs."""

    regions: np.ndarray
    texts: list[str]
    ids: np.ndarray
    positives: list[list[list[int]]]  # image → text kind → text indices
    pairs: list[list[tuple[int, int]]]  # image → (valid statement, the same exchanged or inverted: invalid)
    vocab: list[str]

    def __post_init__(self) -> None:
        self.true_sets = [frozenset(t for kind in p for t in kind) for p in self.positives]


def _coco_statements(instances: dict[str, Any]) -> dict[int, tuple[list[str], list[tuple[str, str]]]]:
    """Per image id: its valid relation statements, and contrast pairs (valid statement, a false one there).

    The false one says the same with subject and object exchanged (a strict cycle's swap) or with the inverse
    relation (a same-pair cycle's swap); both are invalid exactly when the valid statement holds with the
    margin, and each pair is written in the COCO ("a dog …") and in the GQA ("the dog …") style.
    """
    def gqa(subject: str, relation: str, obj: str) -> str:
        return f"the {subject} {RELATION_TEXT[relation]} the {obj}"

    rules = GeometryRules()
    names = {c["id"]: c["name"] for c in instances["categories"]}
    size = {im["id"]: (im["width"], im["height"]) for im in instances["images"]}
    boxes: dict[int, dict[str, list[tuple[list[float], bool]]]] = {im["id"]: {} for im in instances["images"]}
    for ann in instances["annotations"]:
        w, h = size[ann["image_id"]]
        _, _, bw, bh = ann["bbox"]
        eligible = not ann["iscrowd"] and bw * bh >= rules.min_area * w * h
        boxes[ann["image_id"]].setdefault(names[ann["category_id"]], []).append((ann["bbox"], eligible))
    out = {}
    for image_id, by_category in boxes.items():
        w, h = size[image_id]
        valid: list[str] = []
        pairs: list[tuple[str, str]] = []
        cats = sorted(by_category)
        for a in cats:
            for b in cats:
                if a == b:
                    continue
                for relation in RELATIONS:
                    if statement_verdict(by_category[a], by_category[b], relation, w, h, rules) != "valid":
                        continue
                    valid.append(caption_text(a, relation, b))
                    if statement_verdict(by_category[b], by_category[a], relation, w, h, rules) != "invalid":
                        continue
                    for form in (caption_text, gqa):
                        pairs.append((form(a, relation, b), form(b, relation, a)))
                        pairs.append((form(a, relation, b), form(a, inverse(relation), b)))
        out[image_id] = (valid, pairs)
    return out


def _gqa_facts(graphs_path: Path) -> dict[str, list[list[str]]]:
    """Per image id: the stated facts of each GQA family, as cycle captions are written."""
    graphs = read_gqa_scene_graphs(graphs_path)
    return {image_id: [[fact_text(f, fact) for fact in candidate_facts(image, f)] for f in GQA_FAMILIES]
            for image_id, image in graphs.images.items()}


def build_training_data(scenes_dir: Path, *, log: Log = print) -> TrainingData:
    """Read a ``data scenes`` folder into :class:`TrainingData` (vocabulary = every word of every text)."""
    instances = json.loads((scenes_dir / "instances.json").read_text(encoding="utf-8"))
    captions = json.loads((scenes_dir / "captions.json").read_text(encoding="utf-8"))
    human: dict[int, list[str]] = {}
    for ann in captions["annotations"]:
        human.setdefault(ann["image_id"], []).append(ann["caption"])
    statements = _coco_statements(instances)
    facts = _gqa_facts(scenes_dir / "scene_graphs.json")
    texts: dict[str, int] = {}

    def index(items: list[str]) -> list[int]:
        return [texts.setdefault(t, len(texts)) for t in items]

    regions, positives, pairs = [], [], []
    for image in instances["images"]:
        with Image.open(scenes_dir / "images" / image["file_name"]) as handle:
            regions.append(region_features(handle))
        image_id = image["id"]
        valid, contrasts = statements[image_id]
        kinds = [human.get(image_id, []), valid, *facts.get(str(image_id), [[], [], []])]
        positives.append([index(k) for k in kinds])
        pairs.append([(texts.setdefault(t, len(texts)), texts.setdefault(f, len(texts))) for t, f in contrasts])
    all_texts = list(texts)
    vocab = [PAD, UNK, *sorted({w for t in all_texts for w in words(t)})]
    log(f"training data: {len(regions)} images, {len(all_texts)} distinct texts, vocabulary {len(vocab)} words")
    return TrainingData(np.stack(regions), all_texts, Vocabulary(vocab).encode(all_texts), positives, pairs, vocab)


def _batch_texts(data: TrainingData, images: np.ndarray, rng: np.random.Generator
                 ) -> tuple[list[int], list[int], list[int], np.ndarray]:
    """Per image: one true text (its kind uniform among those it has) and one contrast pair (true, false).

    Images with no contrast pair repeat their true text in both pair slots and are left out of the pair term.
    """
    pos, pair_true, pair_false, has_pair = [], [], [], []
    for i in images.tolist():
        kinds = [k for k in data.positives[i] if k]
        kind = kinds[int(rng.integers(len(kinds)))]
        pos.append(kind[int(rng.integers(len(kind)))])
        pool = data.pairs[i]
        t, f = pool[int(rng.integers(len(pool)))] if pool else (pos[-1], pos[-1])
        pair_true.append(t)
        pair_false.append(f)
        has_pair.append(bool(pool))
    return pos, pair_true, pair_false, np.asarray(has_pair)


def _also_true(data: TrainingData, batch: np.ndarray, texts: list[int]) -> np.ndarray:
    """(b, len(texts)) bool: text j is true of image i, for j other than i's own sampled text."""
    mask = np.zeros((len(batch), len(texts)), dtype=bool)
    for row, i in enumerate(batch.tolist()):
        true = data.true_sets[i]
        for col, t in enumerate(texts):
            mask[row, col] = col != row and t in true
    return mask


def train_model(kind: str, data: TrainingData, settings: TrainSettings, *, log: Log = print,
                progress: Callable[[int, int], None] | None = None) -> tuple[Any, list[dict[str, float]]]:
    """Train a :class:`~vlaudit.reference.scene_clip.SceneClip` of ``kind``; returns (model, per-epoch curve)."""
    config = {"kind": kind, "version": VERSION, "dim": settings.dim, "width": settings.width,
              "region_width": settings.region_width, "code": settings.code,
              "vocab": data.vocab}
    with torch.random.fork_rng(devices=[]):  # nn.Module initialisers read the global generator
        torch.manual_seed(settings.seed)
        model = SceneClip(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    rng = np.random.default_rng([settings.seed, 7])
    regions, ids = torch.from_numpy(data.regions), torch.from_numpy(data.ids)
    n = len(data.regions)
    steps_per_epoch = -(-n // settings.batch_size)
    total = settings.epochs * steps_per_epoch
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=settings.lr, total_steps=total,
                                                   pct_start=0.1)
    curve: list[dict[str, float]] = []
    step = 0
    for epoch in range(1, settings.epochs + 1):
        model.train()
        started, loss_sum, hard_sum, hard_count, count = time.perf_counter(), 0.0, 0.0, 0.0, 0
        order = rng.permutation(n)
        for start in range(0, n, settings.batch_size):
            batch = order[start:start + settings.batch_size]
            pos, pair_true, pair_false, has_pair = _batch_texts(data, batch, rng)
            image_emb = model.encode_image(regions[batch])
            text_emb = model.encode_text(ids[pos + pair_true + pair_false])
            scale = model.logit_scale.exp().clamp(max=100.0)
            raw = scale * image_emb @ text_emb.T  # (b, 3b): sampled true texts, pair true, pair false
            b = len(batch)
            target = torch.arange(b)
            # a batch text that is also true of another image is no negative for it (CLIP's false negatives)
            logits = raw.masked_fill(torch.from_numpy(_also_true(data, batch, pos + pair_true + pair_false)), -1e4)
            loss_i = F.cross_entropy(logits, target)
            loss_t = F.cross_entropy(logits[:, :b].T, target)
            # the cycle-like contrast: each image prefers its true statement to the exchanged/inverted one
            margin = raw[target, b + target] - raw[target, 2 * b + target]
            used = torch.from_numpy(has_pair).to(margin.dtype)
            loss_pair = (F.softplus(-margin) * used).sum() / used.sum().clamp(min=1.0)
            loss = 0.5 * (loss_i + loss_t) + loss_pair
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            step += 1
            with torch.no_grad():
                # how often the true statement beats its exchanged/inverted twin (0.5 = cannot tell)
                credit = (margin > 0).to(margin.dtype) + 0.5 * (margin == 0).to(margin.dtype)
                hard_sum += float((credit * used).sum())
                hard_count += float(used.sum())
            loss_sum += float(loss.detach()) * b
            count += b
            if progress is not None:
                progress(step, total)
        record = {"epoch": epoch, "loss": loss_sum / count, "pair_acc": hard_sum / max(hard_count, 1.0),
                  "seconds": round(time.perf_counter() - started, 2)}
        curve.append(record)
        log(f"{kind} epoch {epoch}/{settings.epochs}: loss {record['loss']:.4f}  "
            f"true-vs-twin {record['pair_acc']:.3f}  ({record['seconds']:.1f} s)")
    model.eval()
    return model, curve


def train_reference(name: str, out_dir: str | Path, *, log: Log = print, short: bool = False,
                    settings: TrainSettings | None = None,
                    progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Render the training scenes, train ``scene-clip-spatial`` or ``scene-clip-bag``, write its weights.

    Returns ``{"name", "curve", "files", "settings", "seconds"}``.
    """
    kinds = {"scene-clip-spatial": "spatial", "scene-clip-bag": "bag"}
    if name not in kinds:
        raise InputError(f"{name!r} is not a scene-clip model; expected one of {', '.join(kinds)}", field="name")
    settings = settings or (TrainSettings.short() if short else TrainSettings())
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="vlaudit-scene-clip-") as tmp, torch_threads(1):
        scenes = Path(tmp) / "scenes"
        render_scenes(scenes, settings.n_scenes, seed=settings.scene_seed)
        log(f"rendered {settings.n_scenes} training scenes (seed {settings.scene_seed})")
        data = build_training_data(scenes, log=log)
        model, curve = train_model(kinds[name], data, settings, log=log, progress=progress)
    seconds = round(time.perf_counter() - started, 1)
    digest = hashlib.sha256(save({k: v.contiguous() for k, v in model.state_dict().items()})).hexdigest()
    extra = {"name": name, "weights_sha256": digest, "train": {**asdict(settings), "seconds": seconds},
             "curve": curve, "command": f"vlaudit models train-reference {name}"}
    files = save_model(model, Path(out_dir), name, extra)
    log(f"wrote {', '.join(str(f) for f in files)} ({seconds:.0f} s)")
    return {"name": name, "curve": curve, "files": [str(f) for f in files], "settings": asdict(settings),
            "seconds": seconds}
