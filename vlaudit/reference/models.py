"""``ref:<name>`` — vlaudit's own small reference models, built offline from config on first use.

A reference model is a tiny, seeded, random-weight model of a real family (the same classes, tokenizers,
processors and file formats users load from a hub). It is built once into the reference cache
(``$VLAUDIT_CACHE/ref/<name>-v<version>-s<seed>``, default ``~/.cache/vlaudit``) — atomically: built in a
temporary folder and renamed — and then loaded through the ordinary ``hf:``, ``hf-clip:`` or ``open_clip:``
path. This is what the offline demo scores, and what users can smoke-test a pipeline with. Its outputs
mean nothing about vision-language behaviour: the weights are random.

*Trained* reference models (:data:`TRAINED_MODELS`) are different: small models trained here on procedural
scenes, whose behaviour is planted by construction (e.g. ``ref:scene-clip-bag`` is position-blind in both
towers). Their weights ship inside the package (``reference/weights/NAME.safetensors`` + ``NAME.json``) and
``vlaudit models train-reference NAME`` reproduces them with the registered trainer.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlaudit.backends.base import Backend
from vlaudit.backends.options import BackendOptions, RunOptions
from vlaudit.backends.registry import BACKENDS, loader_keywords
from vlaudit.backends.tiny_dual import build_tiny_dual
from vlaudit.backends.tiny_mllm import build_tiny_mllm
from vlaudit.errors import InputError
from vlaudit.reference.integrity import folder_damage, move_aside, seal_folder

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


@dataclass(frozen=True)
class TrainedReference:
    """A reference model trained here and shipped as weights.

    ``kind``: ``"features"`` (dual encoder) or ``"yesno"`` (yes/no margins). ``loader``: ``"module:function"``
    called as ``loader(name, **options)`` → a backend. ``trainer``: ``"module:function"`` called as
    ``trainer(name, out_dir, *, log, short=False)`` → a dict with at least ``curve`` (a list of per-epoch or
    per-step dicts with a ``loss``) and ``files`` (the paths written into ``out_dir``); ``short=True`` is a brief
    retrain (seconds) used by tests to check that the loss goes down. ``trainer`` is None for a constructed
    mechanism model (nothing to train).
    """

    kind: str
    loader: str
    trainer: str | None  # None: a constructed mechanism, nothing to train
    description: str


# name -> how it is loaded and retrained
TRAINED_MODELS: dict[str, TrainedReference] = {
    "scene-clip-spatial": TrainedReference(
        "features", "vlaudit.reference.scene_clip:load_backend", "vlaudit.reference.scene_clip_train:train_reference",
        "dual encoder trained on procedural scenes; keeps position (region centres as coordinate channels, "
        "ordered text encoder)"),
    "scene-clip-bag": TrainedReference(
        "features", "vlaudit.reference.scene_clip:load_backend", "vlaudit.reference.scene_clip_train:train_reference",
        "dual encoder trained on procedural scenes; position-blind by construction (set of regions without "
        "centres, bag of words)"),
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
        "(the true credited fraction is known)"),
    "scene-vqa-reader": TrainedReference(
        "yesno", "vlaudit.reference.scene_vqa_mixture:load_backend", None,
        "calibration instrument: every statement read from the image (the mixture at fraction 1)"),
    "batch-noise": TrainedReference(
        "yesno", "vlaudit.reference.batch_noise:load_backend", None,
        "calibration instrument for vca stability: margins plus noise of a known scale that depends on the "
        "batch a request is scored in (batch 1 is exact)"),
    "scene-vqa-prior-table": TrainedReference(
        "yesno", "vlaudit.reference.scene_vqa_mixture:load_backend", None,
        "calibration instrument: every statement answered from the prior table (the mixture at fraction 0)"),
    "scene-mcq-mixture": TrainedReference(
        "yesno", "vlaudit.reference.scene_mcq:load_backend", None,
        "multiple-choice calibration instrument: a seeded 40% of question types read from the image, the rest "
        "from a prior table (the true credited fraction is known)"),
    "scene-mcq-grounded": TrainedReference(
        "yesno", "vlaudit.reference.scene_mcq:load_backend", None,
        "multiple-choice calibration instrument: every question read from the image"),
    "scene-mcq-prior": TrainedReference(
        "yesno", "vlaudit.reference.scene_mcq:load_backend", None,
        "multiple-choice calibration instrument: every question answered from the prior table"),
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


def cache_root() -> Path:
    """The folder reference models are built into (``$VLAUDIT_CACHE`` or ``~/.cache/vlaudit``)."""
    return Path(os.environ.get("VLAUDIT_CACHE", Path.home() / ".cache" / "vlaudit"))


def reference_dir(name: str, *, seed: int = 0, root: Path | None = None) -> Path:
    """Build the reference model ``name`` if it is not cached yet and return its folder."""
    if name not in REFERENCE_MODELS:
        raise InputError(f"unknown reference model {name!r}; available: {', '.join(all_reference_names())}",
                         field="model")
    kind, family = REFERENCE_MODELS[name]
    target = (root or cache_root()) / "ref" / f"{name}-v{REFERENCE_VERSION}-s{seed}"
    if (target / ".complete").exists():
        damage = folder_damage(target)
        if damage is None:
            return target
        aside = move_aside(target)
        warnings.warn(f"reference model {name} in the cache is damaged ({damage}); moved to {aside} and rebuilt",
                      stacklevel=2)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        if kind == "mllm":
            build_tiny_mllm(family, staging, seed=seed)
        else:
            build_tiny_dual(family, staging, seed=seed)
        seal_folder(staging, f"{name} v{REFERENCE_VERSION} seed {seed}")
        try:
            os.replace(staging, target)
        except OSError:
            # Another process finished the same build first; its copy is identical (seeded).
            if not (target / ".complete").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def reference_spec(name: str, *, seed: int = 0, root: Path | None = None) -> str:
    """The ordinary model spec (``hf:DIR``, ``hf-clip:DIR`` or ``open_clip:local-dir:DIR``) of a reference."""
    folder = reference_dir(name, seed=seed, root=root)
    kind, family = REFERENCE_MODELS[name]
    if kind == "mllm":
        return f"hf:{folder}"
    return f"open_clip:local-dir:{folder}" if family == "open_clip" else f"hf-clip:{folder}"


def load_backend(name: str, options: BackendOptions, run: RunOptions, *, seed: int = 0,
                 **wording: object) -> Backend:
    """Load ``ref:<name>``: a trained reference through its loader (which takes the options as keywords), a
    tiny one through the ordinary backend of its family. ``wording``: the yes/no loader's ``interfaces``,
    ``question_templates`` and ``weights``."""
    if name in TRAINED_MODELS:
        kind = TRAINED_MODELS[name].kind
        backend = resolve(TRAINED_MODELS[name].loader)(
            name, **loader_keywords(options, run, yesno=kind == "yesno"), **wording)
    else:
        spec = reference_spec(name, seed=seed)
        prefix, _, folder = spec.partition(":")
        backend = resolve(BACKENDS[prefix][0])(folder, options, run, **wording)
    backend.spec = f"ref:{name}"
    return backend
