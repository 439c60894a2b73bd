"""``ref:scene-vqa-mixture`` — a calibration instrument for D-CC, not a stand-in for a real model.

A constructed mechanism model: its behaviour is known exactly, so the audit's D-CC must recover
it. Statement *types* are (relation, subject category) pairs; a seeded fraction :attr:`image_fraction` of
the types is answered from the image and the rest from the text prior
(:func:`vlaudit.reference.scene_vqa.category_prior`):

* image-read types: a **fixed reader of the scene images** — the image's pixel hash
  (:func:`vlaudit.hashing.pixels_sha256`) is looked up among the procedural scenes it was given
  (``scene_graphs.json`` + ``images/``), and the statement is answered from that scene's annotation:
  m = +M when it holds, −M when it does not (or a named object is absent). An image of named colours on a plain
  background (the factorial's "red circle") is read by the centroids of each colour's pixels. Any other image
  (blank, mean, erased views) and the text-only context give m = 0: no evidence, no preference.
* prior types: m = ±P in every context, image or not — an evidence note about the same objects is believed,
  else the category-pair prior decides.

``scene-vqa-reader`` (every type from the image) and ``scene-vqa-prior-table`` (every type from the prior) are
the two pure mechanisms it blends, registered for calibration runs of their own.

Under the primary controls an image-read item therefore has G_img = M − 0 > 0 (Dep) and is correct, and a
prior item has G_img = P − P = 0 (not Dep, VCA §3: Dep is strict). The true credited fraction of a set of
items is the share of its items whose type is image-read (:meth:`SceneVqaMixture.reads_image`), known
before any scoring; the demo checks that D-CC equals it. NLLs are those of a two-way softmax with the
margin m: NLL(yes) = log(1 + e^−m), NLL(no) = log(1 + e^m).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlaudit.backends.base import YesNoBackendBase, YesNoRequest, YesNoResult
from vlaudit.backends.dtypes import check_supported
from vlaudit.builders.scene_render import OBJECT_COLORS
from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.hashing import pixels_sha256, sha256_file, sha256_text
from vlaudit.reference.planted_noise import ScoresAlone
from vlaudit.reference.scene_vqa import (
    PRIOR_CATEGORIES,
    VERBALIZER_IDS,
    category_prior,
    parse_note,
    parse_statement,
    prompt_text,
)
from vlaudit.relations import INVERSE_RELATIONS, PLANAR_RELATIONS
from vlaudit.results.backend_description import BackendDescription

MIXTURE_SEED = 20261202
IMAGE_FRACTION = 0.4
IMAGE_MARGIN = 4.0
PRIOR_MARGIN = 2.0
FACTORIAL_MARGIN = 0.05  # the factorial's relation rule: centres apart by more than 0.05 of the extent


def _colour_centre(image: Any, name: str) -> tuple[float, float] | None:
    """Centroid of the pixels within a small distance of the colour a name starts with ("red circle")."""
    colour = name.split(" ", 1)[0]
    if colour not in OBJECT_COLORS:
        return None
    pixels = np.asarray(image, dtype=np.int16)
    close = np.abs(pixels - np.asarray(OBJECT_COLORS[colour], dtype=np.int16)).sum(axis=2) < 48
    if close.sum() < 16:
        return None
    ys, xs = np.nonzero(close)
    return float(xs.mean()), float(ys.mean())
def image_types(fraction: float = IMAGE_FRACTION, seed: int = MIXTURE_SEED) -> frozenset[tuple[str, str]]:
    """The seeded set of (relation, subject) types answered from the image: round(fraction · 32) of them."""
    types = [(r, c) for r in PLANAR_RELATIONS for c in PRIOR_CATEGORIES]
    rng = np.random.default_rng(seed)
    chosen = rng.permutation(len(types))[: int(round(fraction * len(types)))]
    return frozenset(types[int(k)] for k in chosen)


class SceneVqaMixture(ScoresAlone, YesNoBackendBase):
    """The mechanism described in the module docstring, over the scenes in ``scenes_dir``."""

    def __init__(self, scenes_dir: str | Path, *, image_fraction: float = IMAGE_FRACTION,
                 seed: int = MIXTURE_SEED) -> None:
        folder = Path(scenes_dir)
        graphs_path = folder / "scene_graphs.json"
        if not graphs_path.is_file():
            raise InputError("the mixture reference model needs the scenes it reads (scene_graphs.json)",
                             path=graphs_path, field="scenes")
        self.spec = "ref:scene-vqa-mixture"
        self.verbalizer_ids = VERBALIZER_IDS
        self.image_fraction = image_fraction
        self.seed = seed
        self.types = image_types(image_fraction, seed)
        self.graphs_sha256 = sha256_file(graphs_path)
        self._scenes: dict[str, dict[str, Any]] = {}
        for image_id, graph in read_json(graphs_path).items():
            path = folder / "images" / f"{int(image_id):012d}.jpg"
            if path.is_file():
                with Image.open(path) as handle:
                    self._scenes[pixels_sha256(handle.convert("RGB"))] = graph

    def reads_image(self, question: str) -> bool:
        """True when the statement's type is answered from the image (the planted credit of the item)."""
        parsed = parse_statement(question)
        if parsed is None:
            return False
        return self.image_fraction >= 1.0 or (parsed[1], parsed[0]) in self.types

    def margin(self, question: str, image: Any) -> float:
        """m = NLL(no) − NLL(yes) of the mechanism (see the module docstring)."""
        parsed = parse_statement(question)
        if parsed is None:
            return 0.0
        if not self.reads_image(question):
            return self._prior(question, parsed)
        if image is None:
            return 0.0
        holds = self._read(image.convert("RGB"), *parsed)
        return 0.0 if holds is None else (IMAGE_MARGIN if holds else -IMAGE_MARGIN)

    @staticmethod
    def _prior(question: str, parsed: tuple[str, str, str]) -> float:
        """The text prior: an evidence note about the same objects is believed; else the category-pair prior."""
        subject, relation, obj = parsed
        note = parse_note(question)
        if note is not None and {note[0], note[2]} == {subject, obj}:
            same = note[1] == relation if note[0] == subject else note[1] == INVERSE_RELATIONS[relation]
            return PRIOR_MARGIN if same else -PRIOR_MARGIN
        prior = category_prior(subject, obj, relation)
        return 0.0 if prior is None else (PRIOR_MARGIN if prior else -PRIOR_MARGIN)

    def _read(self, image: Any, subject: str, relation: str, obj: str) -> bool | None:
        """Does the relation hold in ``image``? None when the image is not one the reader can read."""
        graph = self._scenes.get(pixels_sha256(image))
        if graph is not None:
            named: dict[str, list[dict[str, Any]]] = {}
            for o in graph["objects"].values():
                named.setdefault(o["name"], []).append(o)
            if len(named.get(subject, ())) != 1 or len(named.get(obj, ())) != 1:
                return False  # a named object is absent (or not unique): the statement does not hold
            a, b = named[subject][0], named[obj][0]
            centres = [(o["x"] + o["w"] / 2.0, o["y"] + o["h"] / 2.0) for o in (a, b)]
            margin = (0.0, 0.0)
        else:
            # a plain-background image of named colours (the factorial): centroids of each colour's pixels
            a_centre, b_centre = (_colour_centre(image, name) for name in (subject, obj))
            if a_centre is None or b_centre is None:
                return None
            centres = [a_centre, b_centre]
            margin = (FACTORIAL_MARGIN * image.size[0], FACTORIAL_MARGIN * image.size[1])
        (ax, ay), (bx, by) = centres
        return {"left of": ax + margin[0] < bx, "right of": bx + margin[0] < ax,
                "above": ay + margin[1] < by, "below": by + margin[1] < ay}[relation]

    def prompt(self, question: str, interface: str, with_image: int) -> str:
        return prompt_text(question, interface, with_image)

    def describe(self) -> BackendDescription:
        return BackendDescription.of({"spec": self.spec, "family": "scene-vqa-mixture", "model_class": "SceneVqaMixture",
                "revision": None, "dtype": "float64", "device": "cpu", "image_fraction": self.image_fraction,
                "seed": self.seed, "scenes_sha256": self.graphs_sha256, "image_margin": IMAGE_MARGIN,
                "prior_margin": PRIOR_MARGIN, "template": sha256_text(prompt_text("{question}", "yesno", True)),
                "verbalizer_ids": {k: list(v) for k, v in VERBALIZER_IDS.items()}})

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        out = []
        for r in requests:
            m = self.margin(r.question, r.image)
            nll_yes, nll_no = float(np.logaddexp(0.0, -m)), float(np.logaddexp(0.0, m))
            text = self.prompt(r.question, r.interface, r.image is not None)
            out.append(YesNoResult(r.key, nll_yes, nll_no, nll_no - nll_yes, 0, 1, text, sha256_text(text),
                                   len(text.split())))
        return out


#: mechanism models: name -> fraction of statement types read from the image (1: always look, 0: never)
MECHANISMS = {"scene-vqa-mixture": IMAGE_FRACTION, "scene-vqa-reader": 1.0, "scene-vqa-prior-table": 0.0}


def load_backend(name: str = "scene-vqa-mixture", **options: Any) -> SceneVqaMixture:
    """Options: ``scenes`` (folder of ``data scenes`` output; default ``$VLAUDIT_MIXTURE_SCENES``),
    ``image_fraction``, ``mixture_seed``. Other backends' loader options are ignored.

    ``scene-vqa-reader`` (every type from the image) and ``scene-vqa-prior-table`` (every type from the
    prior) are the two pure mechanisms the mixture blends. They compute in float64: ``dtype`` auto only."""
    check_supported(options.get("dtype"), (), f"ref:{name}")
    scenes = options.get("scenes") or os.environ.get("VLAUDIT_MIXTURE_SCENES")
    if not scenes:
        raise InputError("ref:scene-vqa-mixture reads procedural scenes: set VLAUDIT_MIXTURE_SCENES to a "
                         "`vlaudit data scenes` output folder", field="model")
    fraction = options.get("image_fraction")
    backend = SceneVqaMixture(scenes, image_fraction=float(MECHANISMS[name] if fraction is None else fraction),
                              seed=int(options.get("mixture_seed") or MIXTURE_SEED))
    backend.spec = f"ref:{name}"
    return backend
