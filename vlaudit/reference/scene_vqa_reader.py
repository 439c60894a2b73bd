"""Trained parts with fixed reading logic: the grounded reader and the count-based prior.

End-to-end training of a small yes/no model (:mod:`vlaudit.reference.scene_vqa`) did not leave chance in the
CPU minutes available here, so the two planted roles are built from parts that *do* train quickly, each
documented as what it is:

* ``ref:scene-vqa-grounded`` — a **learned perception module with fixed reading logic**. A small CNN
  (:func:`build_perception`) is trained on the object masks of ``data scenes`` output and factorial-style
  images to label every cell of an 80×60 image with a shape and a colour (class 0: background). A statement is
  parsed (subject/object names → shape/colour classes; a COCO category is its scene shape), the named object
  is found as the cells where its classes are probable, and the margin is read off the pixels:
  relation  m = κ_r · (signed centre difference along the axis − 0.05) · min(presence_s, presence_o);
  presence  m = κ_p · (presence − ½); colour  m = κ_c · (P(named colour at the object) − ½);
  text only m = 0 (no image, no evidence). It must look: the text alone gives it nothing.
* ``ref:scene-vqa-prior`` — a **count-based text model**: trained by counting answers per statement key on
  prior-skewed statements (:mod:`vlaudit.reference.scene_vqa_train` with the prior data: spatial truth follows
  :func:`~vlaudit.reference.scene_vqa.category_prior` 85% of the time; the factorial note is usually right).
  m = log((n_yes + 1) / (n_no + 1)) of the statement's key, identical in every context: it never looks.

NLLs are those of a two-way softmax with margin m: NLL(yes) = log(1 + e^−m), NLL(no) = log(1 + e^m).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file
from torch import nn

from vlaudit.backends.base import INTERFACES, YesNoBackendBase, YesNoRequest, YesNoResult
from vlaudit.backends.dtypes import check_supported
from vlaudit.builders.scene_render import OBJECT_COLORS
from vlaudit.builders.scenes import DEFAULT_OBJECTS
from vlaudit.errors import InputError
from vlaudit.hashing import pixels_sha256, sha256_file, sha256_text
from vlaudit.reference.planted_noise import ScoresAlone
from vlaudit.reference.scene_vqa import (
    IMAGE_SIZE,
    VERBALIZER_IDS,
    VQA_MODELS,
    WEIGHTS_DIR,
    image_tensor,
    parse_note,
    parse_statement,
    prompt_text,
)
from vlaudit.relations import INVERSE_RELATIONS
from vlaudit.results.backend_description import BackendDescription

KAPPA_RELATION = 20.0
KAPPA_PRESENCE = 10.0
KAPPA_COLOUR = 10.0
RELATION_MARGIN = 0.05  # the relation rule of the scenes and the factorial: centres apart by > 0.05 of the extent
_PRESENCE = re.compile(r"\bthere is an? ([a-z ]+?)[.?\"]", re.IGNORECASE)
_COLOUR = re.compile(r"\bthe ([a-z ]+?) is ([a-z]+)[.?\"]", re.IGNORECASE)


def statement_key(question: str) -> tuple[str, ...] | None:
    """What a statement asks, as a hashable key (the count model's feature; the reader's parse).

    ("note", "agree"|"disagree"|"none", relation) for a factorial note + query; ("relation", s, r, o);
    ("presence", x); ("colour", x, c); None when nothing is recognised.
    """
    parsed = parse_statement(question)
    if question.lower().startswith("note:") and parsed is not None:
        note = parse_note(question)
        if note is None:
            return ("note", "none", parsed[1])
        same = note[1] == parsed[1] if note[0] == parsed[0] else note[1] == INVERSE_RELATIONS[parsed[1]]
        return ("note", "agree" if same else "disagree", parsed[1])
    if parsed is not None:
        return ("relation", *parsed)
    match = _PRESENCE.search(question)
    if match:
        return ("presence", match.group(1).lower())
    match = _COLOUR.search(question)
    if match and match.group(2).lower() in OBJECT_COLORS:
        return ("colour", match.group(1).lower(), match.group(2).lower())
    return None


def build_perception(config: dict[str, Any]) -> Any:
    """The reader's CNN: three 3×3 conv layers (two 2× poolings) and per-cell shape and colour heads."""
    ch = config["channels"]
    return nn.ModuleDict({
        "trunk": nn.Sequential(
            nn.Conv2d(3, ch[0], 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch[0], ch[1], 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch[1], ch[2], 3, padding=1), nn.ReLU()),
        "shape": nn.Conv2d(ch[2], config["aux_classes"][0], 1),
        "colour": nn.Conv2d(ch[2], config["aux_classes"][1], 1),
    })


def _nll(margin: float) -> tuple[float, float]:
    return float(np.logaddexp(0.0, -margin)), float(np.logaddexp(0.0, margin))


class _Base(ScoresAlone, YesNoBackendBase):
    spec: str
    verbalizer_ids = VERBALIZER_IDS

    def prompt(self, question: str, interface: str, with_image: int) -> str:
        return prompt_text(question, interface, with_image)

    def margins(self, requests: Sequence[YesNoRequest]) -> list[float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        for r in requests:
            if r.interface not in INTERFACES:
                raise InputError(f"unknown interface {r.interface!r}", record=r.key)
        out = []
        for r, m in zip(requests, self.margins(requests), strict=True):
            nll_yes, nll_no = _nll(m)
            text = self.prompt(r.question, r.interface, r.image is not None)
            out.append(YesNoResult(r.key, nll_yes, nll_no, nll_no - nll_yes, 0, 1, text, sha256_text(text),
                                   len(text.split())))
        return out


class GroundedReader(_Base):
    """``ref:scene-vqa-grounded``: the trained perception CNN + the fixed reading logic (module docstring)."""

    def __init__(self, folder: Path | None = None, name: str = "scene-vqa-grounded") -> None:
        base = folder or WEIGHTS_DIR
        cfg_path, weights_path = base / f"{name}.json", base / f"{name}.safetensors"
        if not cfg_path.is_file() or not weights_path.is_file():
            raise InputError(f"reference model {name!r} has no shipped weights", path=weights_path)
        self.spec = f"ref:{name}"
        self.config = json.loads(cfg_path.read_text(encoding="utf-8"))
        self.net = build_perception(self.config)
        self.net.load_state_dict(load_file(str(weights_path)))
        self.net.eval()
        self.weights_sha256 = sha256_file(weights_path)
        self.shapes, self.colours = self.config["aux_labels"]
        self._torch = torch

    def describe(self) -> BackendDescription:
        return BackendDescription.of({"spec": self.spec, "family": "scene-vqa-reader", "model_class": "GroundedReader",
                "revision": None, "dtype": "float32", "device": "cpu", "pixel_budget": list(IMAGE_SIZE),
                "weights_sha256": self.weights_sha256,
                "reading": {"kappa_relation": KAPPA_RELATION, "kappa_presence": KAPPA_PRESENCE,
                            "kappa_colour": KAPPA_COLOUR, "relation_margin": RELATION_MARGIN},
                "template": sha256_text(prompt_text("{question}", "yesno", True)),
                "verbalizer_ids": {k: list(v) for k, v in VERBALIZER_IDS.items()}})

    def class_maps(self, image: Any) -> tuple[np.ndarray, np.ndarray]:
        """Per-cell shape and colour probabilities (classes, h, w) of one image.

        One image per forward: a batched convolution may round differently with the batch's size, and a
        margin must not depend on which other requests share its chunk."""
        torch = self._torch
        with torch.inference_mode():
            f = self.net["trunk"](image_tensor([image]))
            shape = torch.softmax(self.net["shape"](f), dim=1).double().numpy()[0]
            colour = torch.softmax(self.net["colour"](f), dim=1).double().numpy()[0]
        return shape, colour

    def _target(self, name: str, shape: np.ndarray, colour: np.ndarray) -> np.ndarray | None:
        """Per-cell probability that the cell belongs to the object ``name`` (category or "colour shape")."""
        if name in DEFAULT_OBJECTS:
            return shape[1 + self.shapes.index(DEFAULT_OBJECTS[name])]
        parts = name.split(" ")
        if len(parts) == 2 and parts[0] in self.colours and parts[1] in self.shapes:
            return shape[1 + self.shapes.index(parts[1])] * colour[1 + self.colours.index(parts[0])]
        return None

    @staticmethod
    def _locate(score: np.ndarray) -> tuple[float, float, float]:
        """(presence, x, y): the best cell's probability and the centroid of the cells above half of it."""
        h, w = score.shape
        top = float(score.max())
        weights = np.where(score >= 0.5 * top, score, 0.0)
        ys, xs = np.mgrid[0:h, 0:w]
        total = float(weights.sum()) or 1.0
        return top, float((weights * (xs + 0.5)).sum() / total / w), float((weights * (ys + 0.5)).sum() / total / h)

    def read(self, key: tuple[str, ...], shape: np.ndarray, colour: np.ndarray) -> float:
        """The margin the reading logic gives statement ``key`` on one image's class maps."""
        if key[0] in ("relation", "note"):
            subject, relation, obj = key[1:4] if key[0] == "relation" else (None, key[2], None)
            if subject is None or obj is None:  # a note names no objects
                return 0.0
            s_map, o_map = self._target(subject, shape, colour), self._target(obj, shape, colour)
            if s_map is None or o_map is None:
                return 0.0
            ps, sx, sy = self._locate(s_map)
            po, ox, oy = self._locate(o_map)
            signed = {"left of": ox - sx, "right of": sx - ox, "above": oy - sy, "below": sy - oy}[relation]
            return KAPPA_RELATION * (signed - RELATION_MARGIN) * min(ps, po)
        if key[0] == "presence":
            target = self._target(key[1], shape, colour)
            return 0.0 if target is None else KAPPA_PRESENCE * (float(target.max()) - 0.5)
        if key[0] == "colour" and key[2] in self.colours:
            target = self._target(key[1], shape, colour)
            if target is None:
                return 0.0
            weights = np.where(target >= 0.5 * target.max(), target, 0.0)
            p = float((weights * colour[1 + self.colours.index(key[2])]).sum() / (weights.sum() or 1.0))
            return KAPPA_COLOUR * (p - 0.5)
        return 0.0

    def margins(self, requests: Sequence[YesNoRequest]) -> list[float]:
        out = [0.0] * len(requests)
        maps: dict[str | None, tuple[np.ndarray, np.ndarray]] = {}  # one forward per distinct image
        for k, request in enumerate(requests):
            if request.image is None:
                continue
            digest = pixels_sha256(request.image)
            if digest not in maps:
                maps[digest] = self.class_maps(request.image)
            key = statement_key(request.question)
            if key is not None and key[0] == "note":  # the reader answers the query, never the note
                parsed = parse_statement(request.question)
                key = None if parsed is None else ("relation", *parsed)
            out[k] = 0.0 if key is None else self.read(key, *maps[digest])
        return out


class CountPrior(_Base):
    """``ref:scene-vqa-prior``: m = log((n_yes + 1) / (n_no + 1)) of the statement key; never looks."""

    def __init__(self, folder: Path | None = None, name: str = "scene-vqa-prior") -> None:
        path = (folder or WEIGHTS_DIR) / f"{name}.json"
        if not path.is_file():
            raise InputError(f"reference model {name!r} has no shipped counts", path=path)
        self.spec = f"ref:{name}"
        self.config = json.loads(path.read_text(encoding="utf-8"))
        self.counts = {tuple(k.split("|")): v for k, v in self.config["counts"].items()}
        self.sha256 = sha256_file(path)

    def describe(self) -> BackendDescription:
        return BackendDescription.of({"spec": self.spec, "family": "scene-vqa-count-prior", "model_class": "CountPrior",
                "revision": None, "dtype": "float64", "device": "cpu", "counts_sha256": self.sha256,
                "template": sha256_text(prompt_text("{question}", "yesno", True)),
                "verbalizer_ids": {k: list(v) for k, v in VERBALIZER_IDS.items()}})

    def margins(self, requests: Sequence[YesNoRequest]) -> list[float]:
        out = []
        for r in requests:
            key = statement_key(r.question)
            yes, no = self.counts.get(key, (0, 0)) if key is not None else (0, 0)
            out.append(float(np.log((yes + 1.0) / (no + 1.0))))
        return out


def load_backend(name: str, **options: Any) -> Any:
    """Load a shipped scene-VQA model (loader options of other backends, e.g. device, are ignored).

    ``dtype``: the grounded reader runs float32 (auto or float32); the count prior is a float64 table that
    takes auto only. Another dtype is refused with what the model supports."""
    if name not in VQA_MODELS:
        raise InputError(f"unknown scene-VQA model {name!r}; available: {', '.join(VQA_MODELS)}", field="model")
    check_supported(options.get("dtype"), ("float32",) if name == "scene-vqa-grounded" else (), f"ref:{name}")
    folder = options.get("weights_dir")
    cls = GroundedReader if name == "scene-vqa-grounded" else CountPrior
    return cls(Path(folder) if folder else None, name)
