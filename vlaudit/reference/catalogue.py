"""The reference models by name: what each ``ref:<name>`` is, how it loads, and which items it understands.

Names and descriptions only (no torch, no transformers), so that ``vlaudit models list``, the backend registry's
``ref:`` kind lookup and a cached rerun of ``vca score`` know a reference model without importing its builders
(:mod:`vlaudit.reference.models` builds and loads them).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError, unknown_names

REFERENCE_VERSION = 2  # 2: the tiny vocabularies hold the option letters

# name -> (builder kind, family)
REFERENCE_MODELS: dict[str, tuple[str, str]] = {
    "tiny-qwen2-vl": ("mllm", "qwen2-vl"),
    "tiny-qwen2.5-vl": ("mllm", "qwen2.5-vl"),
    "tiny-qwen3-vl": ("mllm", "qwen3-vl"),
    "tiny-llava-onevision": ("mllm", "llava-onevision"),
    "tiny-clip": ("dual", "clip"),
    "tiny-siglip": ("dual", "siglip"),
    "tiny-open-clip": ("dual", "open_clip"),
}

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"

#: what the scene-statement models read: the yes/no statements of ``data scenes`` / ``data factorial``
SCENE_STATEMENTS = ("only the statements of `data scenes` and `data factorial` (\"The cup is left of the dog.\"); "
                    "on other items m = 0 in every context")
#: what the multiple-choice mechanisms read: the questions of ``data mcq-scenes``
MCQ_SCENES = ("only the questions of `data mcq-scenes` (\"Where is the red square relative to the blue "
              "circle?\"); on other items every option is equally likely")
SCENE_CAPTIONS = "the captions and images of `data scenes` (\"a red cube left of a blue ball\")"


@dataclass(frozen=True)
class TrainedReference:
    """A reference model trained here and shipped as weights.

    ``kind``: ``"features"`` (dual encoder) or ``"yesno"`` (yes/no margins). ``loader``: ``"module:function"``
    called as ``loader(name, **options)`` → a backend. ``trainer``: ``"module:function"`` called as
    ``trainer(name, out_dir, *, log, short=False)`` → a dict with at least ``curve`` (a list of per-epoch or
    per-step dicts with a ``loss``) and ``files`` (the paths written into ``out_dir``); ``short=True`` is a brief
    retrain (seconds) used by tests to check that the loss goes down. ``trainer`` is None for a constructed
    mechanism model (nothing to train). ``understands``: the items it was built for (``models list`` prints it);
    on any other item it has no evidence and no answer, and an audit of those items means nothing.
    ``reads_scenes``: its margins also depend on a folder of scenes the user gives (so its shipped files alone
    do not identify it).
    """

    kind: str
    loader: str
    trainer: str | None  # None: a constructed mechanism, nothing to train
    description: str
    understands: str = SCENE_STATEMENTS
    reads_scenes: bool = False

    def files(self, name: str) -> dict[str, Path]:
        """The shipped files this model reads (``weights/NAME.*``): with its code, what identifies it."""
        return {path.name: path for path in sorted(WEIGHTS_DIR.glob(f"{name}.*"))}


# name -> how it is loaded and retrained
TRAINED_MODELS: dict[str, TrainedReference] = {
    "scene-clip-spatial": TrainedReference(
        "features", "vlaudit.reference.scene_clip:load_backend", "vlaudit.reference.scene_clip_train:train_reference",
        "dual encoder trained on procedural scenes; keeps position (region centres as coordinate channels, "
        "ordered text encoder)", SCENE_CAPTIONS),
    "scene-clip-bag": TrainedReference(
        "features", "vlaudit.reference.scene_clip:load_backend", "vlaudit.reference.scene_clip_train:train_reference",
        "dual encoder trained on procedural scenes; position-blind by construction (set of regions without "
        "centres, bag of words)", SCENE_CAPTIONS),
    "scene-vqa-grounded": TrainedReference(
        "yesno", "vlaudit.reference.scene_vqa_reader:load_backend", "vlaudit.reference.scene_vqa_train:train_reference",
        "yes/no model that must look: a perception CNN trained on scene masks + fixed reading logic; no image, "
        "no evidence"),
    "scene-vqa-prior": TrainedReference(
        "yesno", "vlaudit.reference.scene_vqa_reader:load_backend", "vlaudit.reference.scene_vqa_train:train_reference",
        "yes/no model that never looks: answer counts per statement from prior-following training data"),
    "scene-vqa-mixture": TrainedReference(
        "yesno", "vlaudit.reference.scene_vqa_mixture:load_backend", None,
        "calibration instrument: a seeded 40% of statement types read from the image, the rest from the prior "
        "(the true credited fraction is known)", reads_scenes=True),
    "scene-vqa-reader": TrainedReference(
        "yesno", "vlaudit.reference.scene_vqa_mixture:load_backend", None,
        "calibration instrument: every statement read from the image (the mixture at fraction 1)",
        reads_scenes=True),
    "batch-noise": TrainedReference(
        "yesno", "vlaudit.reference.batch_noise:load_backend", None,
        "calibration instrument for vca stability: margins plus noise of a known scale that depends on the "
        "batch a request is scored in (batch 1 is exact)",
        "any yes/no item (seeded noise of a known scale, not an answer)"),
    "scene-vqa-prior-table": TrainedReference(
        "yesno", "vlaudit.reference.scene_vqa_mixture:load_backend", None,
        "calibration instrument: every statement answered from the prior table (the mixture at fraction 0)",
        reads_scenes=True),
    "scene-mcq-mixture": TrainedReference(
        "yesno", "vlaudit.reference.scene_mcq:load_backend", None,
        "multiple-choice calibration instrument: a seeded 40% of question types read from the image, the rest "
        "from a prior table (the true credited fraction is known)", MCQ_SCENES),
    "scene-mcq-grounded": TrainedReference(
        "yesno", "vlaudit.reference.scene_mcq:load_backend", None,
        "multiple-choice calibration instrument: every question read from the image", MCQ_SCENES),
    "scene-mcq-prior": TrainedReference(
        "yesno", "vlaudit.reference.scene_mcq:load_backend", None,
        "multiple-choice calibration instrument: every question answered from the prior table", MCQ_SCENES),
}


def resolve(target: str) -> Callable[..., Any]:
    """The function named by ``"module:function"``."""
    module_name, function_name = target.split(":")
    return getattr(importlib.import_module(module_name), function_name)


def reference_kind(name: str) -> str | None:
    """``"yesno"`` or ``"features"`` for a known reference model, None for an unknown name."""
    if name in TRAINED_MODELS:
        return TRAINED_MODELS[name].kind
    if name in REFERENCE_MODELS:
        return "yesno" if REFERENCE_MODELS[name][0] == "mllm" else "features"
    return None


def all_reference_names() -> list[str]:
    """Every ``ref:`` name: random-weight tiny models first, then the trained ones."""
    return [*REFERENCE_MODELS, *TRAINED_MODELS]


#: what each kind of reference model is, in a refusal's words
KIND_WORDS = {"yesno": "multimodal LLM", "features": "dual encoder"}


def unknown_reference(name: str, kind: str | None = None, *, field: str = "model") -> InputError | None:
    """The one-line refusal of a ``ref:`` name that is not a reference model (None for one that is), with its
    closest spelling among the models of ``kind`` (``"yesno"``, ``"features"``; None: every kind), which it
    lists."""
    if reference_kind(name) is not None:
        return None
    names = [n for n in all_reference_names() if kind is None or reference_kind(n) == kind]
    what = f"reference {KIND_WORDS[kind]}" if kind in KIND_WORDS else "reference model"
    return unknown_names([name], names, what=what, field=field)
