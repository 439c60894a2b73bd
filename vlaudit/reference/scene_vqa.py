"""Shared pieces of the planted scene-VQA reference models: the text prior, prompt, images, weights.

* :func:`category_prior` — the planted category-pair prior the prior model is trained on and the mixture uses;
* :func:`prompt_text` — the literal prompt: the item's question, then "Answer yes or no:" (or "Answer true or
  false:"), with an image marker when there is an image (VCA §9's fixed answer interface);
* :func:`image_tensor` — every image resized to 80×60 and normalised;
* weights live in ``vlaudit/reference/weights/<name>.json`` (+ ``.safetensors``).

The models: :mod:`vlaudit.reference.scene_vqa_reader` (grounded reader, count prior),
:mod:`vlaudit.reference.scene_vqa_mixture` (the calibration mechanism), trainers in
:mod:`vlaudit.reference.scene_vqa_train`.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from safetensors.torch import save_file

from vlaudit.backends.base import INTERFACES
from vlaudit.files import write_json
from vlaudit.relations import PLANAR_RELATIONS, relation_phrase

if TYPE_CHECKING:
    from PIL import Image

WEIGHTS_DIR = Path(__file__).parent / "weights"
VQA_MODELS = ("scene-vqa-grounded", "scene-vqa-prior")
IMAGE_SIZE = (80, 60)  # (width, height) every image is resized to
PRIOR_SEED = 20261201
#: the scene categories the category-pair prior ranks (vlaudit.builders.scenes.DEFAULT_OBJECTS)
PRIOR_CATEGORIES = ("bottle", "bus", "car", "cat", "chair", "clock", "cup", "dog")


@lru_cache(maxsize=1)
def _prior_ranks() -> tuple[dict[str, int], dict[str, int]]:
    rng = np.random.default_rng(PRIOR_SEED)
    return ({c: int(r) for c, r in zip(PRIOR_CATEGORIES, rng.permutation(len(PRIOR_CATEGORIES)), strict=True)},
            {c: int(r) for c, r in zip(PRIOR_CATEGORIES, rng.permutation(len(PRIOR_CATEGORIES)), strict=True)})


def category_prior(subject: str, obj: str, relation: str) -> bool | None:
    """The planted text prior: is "subject RELATION object" usually true? None when the prior is silent.

    Two seeded rankings of the scene categories (one per axis, seed :data:`PRIOR_SEED`): "A left of B" is
    the prior answer iff rank_x(A) < rank_x(B), "A above B" iff rank_y(A) < rank_y(B); right of / below are
    their inverses, so a true/false pair on the same objects is both prior-following or both prior-violating.
    """
    rank_x, rank_y = _prior_ranks()
    if subject not in rank_x or obj not in rank_x or subject == obj:
        return None
    if relation in ("left of", "right of"):
        before = rank_x[subject] < rank_x[obj]
        return before if relation == "left of" else not before
    if relation in ("above", "below"):
        before = rank_y[subject] < rank_y[obj]
        return before if relation == "above" else not before
    return None


#: the symbolic verbalizer ids every scene-VQA model reports: it reads no tokenizer, so "yes" is 0 and "no" 1
VERBALIZER_IDS: dict[str, tuple[int, int]] = dict.fromkeys(INTERFACES, (0, 1))


def prompt_text(question: str, interface: str, with_image: int) -> str:
    """The exact prompt: an image marker (when there is an image), the question, the answer instruction."""
    positive, negative = (v.strip() for v in INTERFACES[interface])
    return f"{'<image> ' if with_image else ''}{question} Answer {positive} or {negative}:"


def image_tensor(images: Sequence[Image.Image]) -> Any:
    """(B, 3, 60, 80) float32, normalised; every image is resized (bilinear, antialiased) to 80×60."""
    arrays = [np.asarray(im.convert("RGB").resize(IMAGE_SIZE, resample=2), dtype=np.uint8) for im in images]
    return pixels_to_tensor(np.stack(arrays))


def pixels_to_tensor(pixels: np.ndarray) -> Any:
    """uint8 (B, H, W, 3) → normalised float32 (B, 3, H, W)."""
    x = torch.from_numpy(np.ascontiguousarray(pixels)).permute(0, 3, 1, 2).float()
    return (x / 255.0 - 0.5) / 0.25


def weights_paths(name: str, folder: Path | None = None) -> tuple[Path, Path]:
    """(config JSON, safetensors) of a shipped model."""
    base = folder or WEIGHTS_DIR
    return base / f"{name}.json", base / f"{name}.safetensors"


def save_model(net: Any, config: dict[str, Any], name: str, folder: Path | None = None) -> tuple[Path, Path]:
    """Write the config and the float32 weights (atomically) beside each other."""
    cfg_path, weights_path = weights_paths(name, folder)
    weights_path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().float().contiguous() for k, v in net.state_dict().items()}
    fd, tmp = tempfile.mkstemp(prefix=f".{weights_path.name}.", suffix=".tmp", dir=weights_path.parent)
    os.close(fd)
    try:
        save_file(state, tmp, metadata={"name": name})
        os.chmod(tmp, 0o644)  # mkstemp creates owner-only files; shipped weights are package data
        os.replace(tmp, weights_path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    write_json(cfg_path, config)
    return cfg_path, weights_path


_PHRASE = "|".join(re.escape(relation_phrase(r)) for r in PLANAR_RELATIONS)
_STATEMENT = re.compile(rf"\bthe ([a-z ]+?) is ({_PHRASE}) the ([a-z ]+?)[.?\"]", re.IGNORECASE)
_QUERY = re.compile(rf"\bis the ([a-z ]+?) ({_PHRASE}) the ([a-z ]+?)\?", re.IGNORECASE)
_RELATION = {relation_phrase(r): r for r in PLANAR_RELATIONS}


def parse_statement(question: str) -> tuple[str, str, str] | None:
    """(subject, relation, object) of what ``question`` asks: a question "Is the X REL the Y?" (the factorial
    query), else the first statement "The X is REL the Y."; None if there is none."""
    match = _QUERY.search(question) or _STATEMENT.search(question)
    if match is None:
        return None
    return match.group(1).lower(), _RELATION[match.group(2).lower()], match.group(3).lower()


def parse_note(question: str) -> tuple[str, str, str] | None:
    """The spatial statement of a factorial evidence note ("Note: the X is REL the Y."), if any."""
    if not question.lower().startswith("note:"):
        return None
    match = _STATEMENT.search(question)
    if match is None:
        return None
    return match.group(1).lower(), _RELATION[match.group(2).lower()], match.group(3).lower()
