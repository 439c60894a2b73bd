"""``ref:<name>`` — vlaudit's own small reference models, built offline from config on first use.

A reference model is a tiny, seeded, random-weight model of a real family (the same classes, tokenizers,
processors and file formats users load from a hub). It is built once into the reference cache
(``$VLAUDIT_CACHE/ref/<name>-v<version>-s<seed>``, default ``~/.cache/vlaudit``) — atomically: built in a
temporary folder and renamed — and then loaded through the ordinary ``hf:``, ``hf-clip:`` or ``open_clip:``
path. This is what the offline demo scores, and what users can smoke-test a pipeline with. Its outputs
mean nothing about vision-language behaviour: the weights are random.

*Trained* reference models (:data:`~vlaudit.reference.catalogue.TRAINED_MODELS`, named in the torch-free
catalogue with the items each understands) are different: small models trained here on procedural scenes,
whose behaviour is planted by construction (e.g. ``ref:scene-clip-bag`` is position-blind in both towers). Their weights ship inside the package (``reference/weights/NAME.safetensors`` + ``NAME.json``) and
``vlaudit models train-reference NAME`` reproduces them with the registered trainer.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path

from vlaudit.backends.tiny.dual import build_tiny_dual
from vlaudit.backends.tiny.mllm import build_tiny_mllm
from vlaudit.errors import InputError
from vlaudit.reference.catalogue import (
    REFERENCE_MODELS,
    REFERENCE_VERSION,
    TRAINED_MODELS,
    WEIGHTS_DIR,
    TrainedReference,
    all_reference_names,
    reference_kind,
    resolve,
    unknown_reference,
)
from vlaudit.reference.integrity import folder_damage, move_aside, seal_folder
from vlaudit.reference.load import load_backend

# the catalogue's names, read here by the code that builds and loads the models (and by older imports)
__all__ = ["REFERENCE_MODELS", "REFERENCE_VERSION", "TRAINED_MODELS", "WEIGHTS_DIR", "TrainedReference",
           "all_reference_names", "cache_root", "load_backend", "reference_dir", "reference_kind", "reference_spec",
           "resolve"]

def cache_root() -> Path:
    """The folder reference models are built into (``$VLAUDIT_CACHE`` or ``~/.cache/vlaudit``)."""
    return Path(os.environ.get("VLAUDIT_CACHE", Path.home() / ".cache" / "vlaudit"))


def reference_dir(name: str, *, seed: int = 0, root: Path | None = None) -> Path:
    """Build the reference model ``name`` if it is not cached yet and return its folder."""
    if name not in REFERENCE_MODELS:
        refused = unknown_reference(name)
        raise refused if refused is not None else InputError(
            f"{name} is a trained reference model, not built from config; load it as ref:{name}", field="model")
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
