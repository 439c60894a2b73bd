"""``ref:<name>`` — vlaudit's own small reference models, built offline from config on first use.

A reference model is a tiny, seeded, random-weight model of a real family (the same classes, tokenizers,
processors and file formats users load from a hub). It is built once into the reference cache
(``$VLAUDIT_CACHE/ref/<name>-v<version>-s<seed>``, default ``~/.cache/vlaudit``) — atomically: built in a
temporary folder and renamed — and then loaded through the ordinary ``hf:``, ``hf-clip:`` or ``open_clip:``
path. This is what the offline demo scores, and what users can smoke-test a pipeline with. Its outputs
mean nothing about vision-language behaviour: the weights are random.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError

REFERENCE_VERSION = 1

# name -> (builder kind, family)
REFERENCE_MODELS: dict[str, tuple[str, str]] = {
    "tiny-qwen2-vl": ("mllm", "qwen2-vl"),
    "tiny-qwen2.5-vl": ("mllm", "qwen2.5-vl"),
    "tiny-qwen3-vl": ("mllm", "qwen3-vl"),
    "tiny-llava-onevision": ("mllm", "llava-onevision"),
    "tiny-clip": ("dual", "clip"),
    "tiny-siglip": ("dual", "siglip"),
    "tiny-open-clip": ("dual", "open_clip"),
    # trained / constructed yes/no models with planted behaviour (issue 12): shipped weights, nothing to build
    "scene-vqa-grounded": ("vqa", "scene-vqa"),
    "scene-vqa-prior": ("vqa", "scene-vqa"),
    "scene-vqa-mixture": ("vqa", "scene-vqa-mixture"),
    "scene-vqa-reader": ("vqa", "scene-vqa-mixture"),
    "scene-vqa-prior-table": ("vqa", "scene-vqa-mixture"),
}

# name -> "module:function" that retrains a reference model (``vlaudit models train-reference NAME``)
REFERENCE_TRAINERS: dict[str, str] = {
    "scene-vqa-grounded": "vlaudit.backends.scene_vqa_train:train_reference",
    "scene-vqa-prior": "vlaudit.backends.scene_vqa_train:train_reference",
}


def cache_root() -> Path:
    """The folder reference models are built into (``$VLAUDIT_CACHE`` or ``~/.cache/vlaudit``)."""
    return Path(os.environ.get("VLAUDIT_CACHE", Path.home() / ".cache" / "vlaudit"))


def reference_dir(name: str, *, seed: int = 0, root: Path | None = None) -> Path:
    """Build the reference model ``name`` if it is not cached yet and return its folder."""
    if name not in REFERENCE_MODELS:
        raise InputError(f"unknown reference model {name!r}; available: {', '.join(REFERENCE_MODELS)}",
                         field="model")
    kind, family = REFERENCE_MODELS[name]
    if kind == "vqa":
        raise InputError(f"ref:{name} ships its weights in the package (vlaudit/backends/weights); it has no "
                         "built folder", field="model")
    target = (root or cache_root()) / "ref" / f"{name}-v{REFERENCE_VERSION}-s{seed}"
    if (target / ".complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        if kind == "mllm":
            from vlaudit.backends.tiny_mllm import build_tiny_mllm

            build_tiny_mllm(family, staging, seed=seed)
        else:
            from vlaudit.backends.tiny_dual import build_tiny_dual

            build_tiny_dual(family, staging, seed=seed)
        (staging / ".complete").write_text(f"{name} v{REFERENCE_VERSION} seed {seed}\n", encoding="utf-8")
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


def load_backend(name: str, *, seed: int = 0, **options: Any) -> Any:
    """Load ``ref:<name>`` through the ordinary backend of its family (options pass through)."""
    from vlaudit.backends.registry import load_backend as load_spec

    kind, family = REFERENCE_MODELS.get(name, ("", ""))
    if kind == "vqa":
        if family == "scene-vqa-mixture":
            from vlaudit.backends.scene_vqa_mixture import load_backend as load_mixture

            return load_mixture(name, **options)
        from vlaudit.backends.scene_vqa import load_backend as load_vqa

        return load_vqa(name, **options)

    backend = load_spec(reference_spec(name, seed=seed), **options)
    backend.spec = f"ref:{name}"
    return backend
