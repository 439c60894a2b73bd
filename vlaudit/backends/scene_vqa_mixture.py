"""``ref:scene-vqa-mixture`` — a calibration instrument for D-CC, not a stand-in for a real model.

A constructed mechanism model (issue 12): its behaviour is known exactly, so the audit's D-CC must recover
it. Statement *types* are (relation, subject category) pairs; a seeded fraction :attr:`image_fraction` of
the types is answered from the image and the rest from the text prior
(:func:`vlaudit.backends.scene_vqa.category_prior`):

* image-read types: a **fixed reader of the scene images** — the image's pixel hash
  (:func:`vlaudit.hashing.pixels_sha256`) is looked up among the procedural scenes it was given
  (``scene_graphs.json`` + ``images/``), and the statement is answered from that scene's annotation:
  m = +M when it holds, −M when it does not (or a named object is absent). Any image it does not know
  (blank, mean, erased views) and the text-only context give m = 0: no evidence, no preference.
* prior types: m = ±P from the category-pair prior in every context, image or not.

Under the primary controls an image-read item therefore has G_img = M − 0 > 0 (Dep) and is correct, and a
prior item has G_img = P − P = 0 (not Dep, VCA §3: Dep is strict). The true credited fraction of a set of
items is the share of its items whose type is image-read (:meth:`SceneVqaMixture.reads_image`), known
before any scoring; the demo checks that D-CC equals it. NLLs are those of a two-way softmax with the
margin m: NLL(yes) = log(1 + e^−m), NLL(no) = log(1 + e^m).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.backends.base import INTERFACES, YesNoRequest, YesNoResult
from vlaudit.backends.scene_vqa import PRIOR_CATEGORIES, category_prior, prompt_text
from vlaudit.errors import InputError
from vlaudit.hashing import pixels_sha256, sha256_file, sha256_text
from vlaudit.relations import PLANAR_RELATIONS, relation_phrase

MIXTURE_SEED = 20261202
IMAGE_FRACTION = 0.4
IMAGE_MARGIN = 4.0
PRIOR_MARGIN = 2.0
_PHRASE = "|".join(re.escape(relation_phrase(r)) for r in PLANAR_RELATIONS)
_STATEMENT = re.compile(rf"\bthe ([a-z ]+?) is ({_PHRASE}) the ([a-z ]+?)[.?\"]", re.IGNORECASE)
_RELATION = {relation_phrase(r): r for r in PLANAR_RELATIONS}


def parse_statement(question: str) -> tuple[str, str, str] | None:
    """(subject, relation, object) of the first spatial statement in ``question``; None if there is none."""
    match = _STATEMENT.search(question)
    if match is None:
        return None
    return match.group(1).lower(), _RELATION[match.group(2).lower()], match.group(3).lower()


def image_types(fraction: float = IMAGE_FRACTION, seed: int = MIXTURE_SEED) -> frozenset[tuple[str, str]]:
    """The seeded set of (relation, subject) types answered from the image: round(fraction · 32) of them."""
    types = [(r, c) for r in PLANAR_RELATIONS for c in PRIOR_CATEGORIES]
    rng = np.random.default_rng(seed)
    chosen = rng.permutation(len(types))[: int(round(fraction * len(types)))]
    return frozenset(types[int(k)] for k in chosen)


class SceneVqaMixture:
    """The mechanism described in the module docstring, over the scenes in ``scenes_dir``."""

    def __init__(self, scenes_dir: str | Path, *, image_fraction: float = IMAGE_FRACTION,
                 seed: int = MIXTURE_SEED) -> None:
        from PIL import Image

        from vlaudit.tables import read_json

        folder = Path(scenes_dir)
        graphs_path = folder / "scene_graphs.json"
        if not graphs_path.is_file():
            raise InputError("the mixture reference model needs the scenes it reads (scene_graphs.json)",
                             path=graphs_path, field="scenes")
        self.spec = "ref:scene-vqa-mixture"
        self.image_fraction = image_fraction
        self.seed = seed
        self.types = image_types(image_fraction, seed)
        self.graphs_sha256 = sha256_file(graphs_path)
        self._scenes: dict[str, dict[str, Any]] = {}
        for image_id, graph in read_json(graphs_path).items():
            path = folder / "images" / f"{int(image_id):012d}.jpg"
            if path.is_file():
                with Image.open(path) as handle:
                    self._scenes[pixels_sha256(handle.convert("RGB"))] = graph  # type: ignore[index]

    def reads_image(self, question: str) -> bool:
        """True when the statement's type is answered from the image (the planted credit of the item)."""
        parsed = parse_statement(question)
        return parsed is not None and (parsed[1], parsed[0]) in self.types

    def margin(self, question: str, image: Any) -> float:
        """m = NLL(no) − NLL(yes) of the mechanism (see the module docstring)."""
        parsed = parse_statement(question)
        if parsed is None:
            return 0.0
        subject, relation, obj = parsed
        if (relation, subject) not in self.types:
            prior = category_prior(subject, obj, relation)
            return 0.0 if prior is None else (PRIOR_MARGIN if prior else -PRIOR_MARGIN)
        graph = None if image is None else self._scenes.get(pixels_sha256(image.convert("RGB")))  # type: ignore[arg-type]
        if graph is None:
            return 0.0
        named = {}
        for o in graph["objects"].values():
            named.setdefault(o["name"], []).append(o)
        if len(named.get(subject, ())) != 1 or len(named.get(obj, ())) != 1:
            return -IMAGE_MARGIN  # a named object is absent (or not unique): the statement does not hold
        a, b = named[subject][0], named[obj][0]
        ax, ay = a["x"] + a["w"] / 2.0, a["y"] + a["h"] / 2.0
        bx, by = b["x"] + b["w"] / 2.0, b["y"] + b["h"] / 2.0
        holds = {"left of": ax < bx, "right of": ax > bx, "above": ay < by, "below": ay > by}[relation]
        return IMAGE_MARGIN if holds else -IMAGE_MARGIN

    def prompt(self, question: str, interface: str, with_image: bool) -> str:
        return prompt_text(question, interface, with_image)

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "family": "scene-vqa-mixture", "model_class": "SceneVqaMixture",
                "revision": None, "dtype": "float64", "device": "cpu", "image_fraction": self.image_fraction,
                "seed": self.seed, "scenes_sha256": self.graphs_sha256, "image_margin": IMAGE_MARGIN,
                "prior_margin": PRIOR_MARGIN, "template": sha256_text(prompt_text("{question}", "yesno", True)),
                "verbalizer_ids": {k: [0, 1] for k in INTERFACES}}

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        out = []
        for r in requests:
            m = self.margin(r.question, r.image)
            nll_yes, nll_no = float(np.logaddexp(0.0, -m)), float(np.logaddexp(0.0, m))
            text = self.prompt(r.question, r.interface, r.image is not None)
            out.append(YesNoResult(r.key, nll_yes, nll_no, nll_no - nll_yes, 0, 1, text, sha256_text(text),
                                   len(text.split())))
        return out


def load_backend(name: str = "scene-vqa-mixture", **options: Any) -> SceneVqaMixture:
    """Options: ``scenes`` (folder of ``data scenes`` output; default ``$VLAUDIT_MIXTURE_SCENES``),
    ``image_fraction``, ``mixture_seed``. Other backends' loader options are ignored."""
    scenes = options.get("scenes") or os.environ.get("VLAUDIT_MIXTURE_SCENES")
    if not scenes:
        raise InputError("ref:scene-vqa-mixture reads procedural scenes: set VLAUDIT_MIXTURE_SCENES to a "
                         "`vlaudit data scenes` output folder", field="model")
    return SceneVqaMixture(scenes, image_fraction=float(options.get("image_fraction") or IMAGE_FRACTION),
                           seed=int(options.get("mixture_seed") or MIXTURE_SEED))
