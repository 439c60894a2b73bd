"""The backend registry, keyed by prefix: ``hf:``, ``hf-clip:``, ``open_clip:``, ``ref:``.

A model spec is ``PREFIX:NAME`` (e.g. ``hf:Qwen/Qwen2-VL-2B-Instruct``, ``hf:/path/to/dir``,
``open_clip:ViT-B-32/laion2b_s34b_b79k``). Loaders are referenced by import path so that resolving a spec
imports only the one backend module it needs (torch and transformers stay unimported until then).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from vlaudit.errors import InputError, VlauditError

# prefix -> ("module:function", what it serves)
BACKENDS: dict[str, tuple[str, str]] = {
    "hf": ("vlaudit.backends.hf_mllm:load_backend", "multimodal chat LLMs via transformers (yes/no margins)"),
    "hf-clip": ("vlaudit.backends.hf_clip:load_backend", "CLIP / SigLIP dual encoders via transformers"),
    "open_clip": ("vlaudit.backends.open_clip_backend:load_backend", "open_clip dual encoders"),
    "ref": ("vlaudit.reference.models:load_backend", "vlaudit's own small reference models"),
}
# prefix -> "module:function" naming the kind of each NAME, for a prefix that serves both kinds; the reference
# models live above this layer (vlaudit.reference), so they are reached by import path like the loaders
KIND_OF: dict[str, str] = {"ref": "vlaudit.reference.models:reference_kind"}


class UnknownBackendError(VlauditError, ValueError):
    """A model spec with an unknown prefix; the message lists what is available."""


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``PREFIX:NAME`` model spec."""

    prefix: str
    name: str

    def __str__(self) -> str:
        return f"{self.prefix}:{self.name}"


def available_backends() -> str:
    """The registered prefixes on one line: ``hf:, hf-clip:, open_clip:, ref:``."""
    return ", ".join(f"{prefix}:" for prefix in BACKENDS)


def parse_spec(spec: str) -> ModelSpec:
    """Split ``PREFIX:NAME``; an unknown or missing prefix raises with the list of available ones."""
    prefix, sep, name = spec.partition(":")
    if not sep or prefix not in BACKENDS or not name:
        raise UnknownBackendError(
            f"unknown model spec {spec!r}; expected PREFIX:NAME with PREFIX one of {available_backends()} "
            "('vlaudit models list' says what each serves)"
        )
    return ModelSpec(prefix, name)


def backend_kind(spec: str) -> str:
    """``"yesno"`` for multimodal LLMs, ``"features"`` for dual encoders — known from the spec, before loading."""
    parsed = parse_spec(spec)
    if parsed.prefix in KIND_OF:
        return _resolve(KIND_OF[parsed.prefix])(parsed.name) or "yesno"
    return "yesno" if parsed.prefix == "hf" else "features"


def require_kind(spec: str, kind: str, *, field: str = "--model") -> None:
    """Raise a clear error when ``spec`` is not a backend of ``kind`` (checked before any model is loaded)."""
    if backend_kind(spec) != kind:
        wanted = ("a multimodal LLM (hf:... or ref:tiny-qwen2-vl, ...)" if kind == "yesno"
                  else "a dual encoder (hf-clip:..., open_clip:... or ref:tiny-open-clip, ...)")
        raise InputError(f"{spec!r} is not {wanted}", field=field)


def load_backend(spec: str, **options: Any) -> Any:
    """Resolve a model spec to a loaded backend (options are passed to the prefix's loader)."""
    parsed = parse_spec(spec)
    return _resolve(BACKENDS[parsed.prefix][0])(parsed.name, **options)


def _resolve(target: str) -> Any:
    """The function named by ``"module:function"``, importing its module now."""
    module_name, function_name = target.split(":")
    return getattr(importlib.import_module(module_name), function_name)
