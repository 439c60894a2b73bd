"""``ref:scene-mcq-*`` — constructed multiple-choice mechanisms on the scenes of
:mod:`vlaudit.builders.mcq_scenes`: calibration instruments for the letter audit, not stand-ins for models.

A question "Where is the red square relative to the blue circle?" has a *type*, the ordered colour pair
(red, blue); a seeded fraction :attr:`SceneMcq.image_fraction` of the 30 types is answered from the image,
the rest from a seeded prior table (one relation per type):

* image-read types: a fixed reader — the centroids of the two colours' pixels give the relation (the larger
  of |dx|, |dy| decides the axis). Under the letter interface the read relation's option gets logit M and the
  others 0; an image without both colours (blank, mean, an erased view) and the text-only context give
  every option logit 0: no evidence, no preference.
* prior types: the prior relation's option gets logit P in every context, image or not.

Log-probabilities are the log-softmax of these logits over the item's options. So an image-read item has
r_o = M, r_text = r_blank = 0 and G_img = M > 0 (Dep, and correct on these unambiguous scenes), and a prior
item has G_img = r_o − r_o = 0 (not Dep, VCA §3); the true credited fraction of a set of items is the share
whose type is image-read (:meth:`SceneMcq.reads_image`), known before scoring. Yes/no questions ("Is the red
square to the left of the blue circle?") get the same mechanism as a margin: ±M from the image, ±P from the
prior, 0 without evidence.

``scene-mcq-mixture`` (40% of the types from the image), ``scene-mcq-grounded`` (every type) and
``scene-mcq-prior`` (none) are registered in :data:`vlaudit.reference.models.TRAINED_MODELS`; nothing is trained.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from vlaudit.backends.base import INTERFACES, BackendDescription, YesNoBackendBase, YesNoRequest, YesNoResult
from vlaudit.backends.dtypes import check_supported
from vlaudit.backends.prompt.letters import ALL_LETTERS
from vlaudit.builders.mcq_scenes import MCQ_COLOURS, MCQ_RELATIONS
from vlaudit.builders.scene_render import OBJECT_COLORS
from vlaudit.hashing import sha256_text
from vlaudit.reference.planted_noise import ScoresAlone

MCQ_SEED = 20261203
IMAGE_FRACTION = 0.4
IMAGE_LOGIT = 4.0
PRIOR_LOGIT = 2.0
#: mechanism -> fraction of question types read from the image
MCQ_MECHANISMS = {"scene-mcq-mixture": IMAGE_FRACTION, "scene-mcq-grounded": 1.0, "scene-mcq-prior": 0.0}

_WHERE = re.compile(r"where is the (\w+) \w+ relative to the (\w+) \w+\?", re.IGNORECASE)
_IS = re.compile(r"is the (\w+) \w+ (?:to the )?(left of|right of|above|below) the (\w+) \w+\?", re.IGNORECASE)
_OPTION = re.compile(r"^([A-Z])\. (.+)$", re.MULTILINE)


def mcq_types() -> list[tuple[str, str]]:
    """Every question type: the ordered pairs of distinct scene colours."""
    return [(a, b) for a in MCQ_COLOURS for b in MCQ_COLOURS if a != b]


def image_types(fraction: float = IMAGE_FRACTION, seed: int = MCQ_SEED) -> frozenset[tuple[str, str]]:
    """The seeded round(fraction · 30) types answered from the image."""
    types = mcq_types()
    chosen = np.random.default_rng(seed).permutation(len(types))[: int(round(fraction * len(types)))]
    return frozenset(types[int(k)] for k in chosen)


def prior_relation(subject: str, obj: str, seed: int = MCQ_SEED) -> str:
    """The prior table's relation for a type (seeded, one per ordered colour pair)."""
    table = np.random.default_rng(seed + 1).integers(0, len(MCQ_RELATIONS), size=len(mcq_types()))
    return MCQ_RELATIONS[int(table[mcq_types().index((subject, obj))])]


def read_relation(image: Any, subject: str, obj: str) -> str | None:
    """The relation of the ``subject`` colour's shape to the ``obj`` colour's one, None unless both are seen."""
    pixels = np.asarray(image.convert("RGB"), dtype=np.int16)
    centres = []
    for colour in (subject, obj):
        close = np.abs(pixels - np.asarray(OBJECT_COLORS[colour], dtype=np.int16)).sum(axis=2) < 48
        if close.sum() < 16:
            return None
        ys, xs = np.nonzero(close)
        centres.append((float(xs.mean()), float(ys.mean())))
    dx, dy = centres[0][0] - centres[1][0], centres[0][1] - centres[1][1]
    if abs(dx) >= abs(dy):
        return "left" if dx < 0 else "right"
    return "above" if dy < 0 else "below"


class SceneMcq(ScoresAlone, YesNoBackendBase):
    """The mechanism of the module docstring."""

    tokenizer_kind = "symbolic (no tokenizer)"

    def __init__(self, name: str, image_fraction: float, seed: int = MCQ_SEED) -> None:
        self.spec = f"ref:{name}"
        self.image_fraction = image_fraction
        self.seed = seed
        self.types = image_types(image_fraction, seed)
        self.verbalizer_ids = dict.fromkeys(INTERFACES, (0, 1))
        self.letter_ids = tuple(range(len(ALL_LETTERS)))  # symbolic: letter k is id k

    def reads_image(self, question: str) -> bool:
        """True when the question's type is answered from the image (the planted credit of the item)."""
        parsed = _WHERE.search(question)
        return parsed is not None and (parsed.group(1).lower(), parsed.group(2).lower()) in self.types

    def answer(self, subject: str, obj: str, image: Any) -> tuple[str | None, float]:
        """(relation, logit) the mechanism puts on one relation, (None, 0) without evidence."""
        if (subject, obj) not in self.types:
            return prior_relation(subject, obj, self.seed), PRIOR_LOGIT
        relation = None if image is None else read_relation(image, subject, obj)
        return relation, IMAGE_LOGIT if relation is not None else 0.0

    def option_logps(self, question: str, image: Any, k: int) -> tuple[float, ...]:
        """log-softmax over the item's k options of the mechanism's logits."""
        parsed = _WHERE.search(question)
        logits = np.zeros(k)
        if parsed is not None and parsed.group(1).lower() in OBJECT_COLORS and parsed.group(2).lower() in OBJECT_COLORS:
            relation, logit = self.answer(parsed.group(1).lower(), parsed.group(2).lower(), image)
            for letter, text in _OPTION.findall(question):
                index = ALL_LETTERS.index(letter)
                if index < k and text.strip().lower() == relation:
                    logits[index] = logit
        return tuple(float(v) for v in logits - np.logaddexp.reduce(logits))

    def margin(self, question: str, image: Any) -> float:
        """The yes/no form: ±M from the image, ±P from the prior, 0 without evidence."""
        parsed = _IS.search(question)
        if parsed is None or parsed.group(1).lower() not in OBJECT_COLORS or parsed.group(3).lower() not in OBJECT_COLORS:
            return 0.0
        subject, asked, obj = parsed.group(1).lower(), parsed.group(2).lower().split(" ")[0], parsed.group(3).lower()
        if subject == obj:
            return 0.0
        relation, logit = self.answer(subject, obj, image)
        return 0.0 if relation is None else (logit if relation == asked else -logit)

    def prompt(self, question: str, interface: str, with_image: int) -> str:
        return f"{'<image> ' if with_image else ''}{question}\nAnswer:"

    def describe(self) -> BackendDescription:
        return BackendDescription.of({"spec": self.spec, "family": "scene-mcq", "model_class": "SceneMcq", "revision": None,
                "dtype": "float64", "device": "cpu", "image_fraction": self.image_fraction, "seed": self.seed,
                "image_logit": IMAGE_LOGIT, "prior_logit": PRIOR_LOGIT,
                "template": sha256_text(self.prompt("{question}", "letter", True)),
                "verbalizer_ids": {k: list(v) for k, v in self.verbalizer_ids.items()},
                "letter_ids": list(self.letter_ids)})

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        out = []
        for r in requests:
            text = self.prompt(r.question, r.interface, r.image is not None)
            if r.interface == "letter":
                nan = float("nan")
                out.append(YesNoResult(r.key, nan, nan, nan, -1, -1, text, sha256_text(text), len(text.split()),
                                       logp_options=self.option_logps(r.question, r.image, r.n_options),
                                       option_token_ids=self.letter_ids[:r.n_options]))
                continue
            m = self.margin(r.question, r.image)
            nll_yes, nll_no = float(np.logaddexp(0.0, -m)), float(np.logaddexp(0.0, m))
            out.append(YesNoResult(r.key, nll_yes, nll_no, nll_no - nll_yes, 0, 1, text, sha256_text(text),
                                   len(text.split())))
        return out


def load_backend(name: str = "scene-mcq-mixture", **options: Any) -> SceneMcq:
    """Options: ``image_fraction``, ``mcq_seed``; other loader options are ignored (float64: dtype auto only)."""
    check_supported(options.get("dtype"), (), f"ref:{name}")
    fraction = options.get("image_fraction")
    return SceneMcq(name, float(MCQ_MECHANISMS[name] if fraction is None else fraction),
                    seed=int(options.get("mcq_seed") or MCQ_SEED))
