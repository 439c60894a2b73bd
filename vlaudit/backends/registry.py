"""The backend registry, keyed by prefix: ``hf:``, ``hf-clip:``, ``open_clip:``, ``ref:``, ``vllm:``, ``openai:``.

A model spec is ``PREFIX:NAME`` (e.g. ``hf:Qwen/Qwen2-VL-2B-Instruct``, ``hf:/path/to/dir``,
``open_clip:ViT-B-32/laion2b_s34b_b79k``, ``openai:http://127.0.0.1:8000/v1#Qwen/Qwen2-VL-7B-Instruct``). Loaders are referenced by import path so that resolving a spec
imports only the one backend module it needs (torch and transformers stay unimported until then).

A :class:`ModelRef` is a spec and its backend's typed options (:mod:`vlaudit.backends.options`); the registry
says which options classes each prefix takes (:data:`OPTIONS`), so a ref gets the right default and another
backend's class is refused in one line. :func:`load_backend` loads a ref with a
:class:`~vlaudit.backends.options.RunOptions` (device, batch size): every prefix's loader is called as
``load_backend(name, options, run, ...)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vlaudit.backends.options import (
    BackendOptions,
    DualOptions,
    EndpointOptions,
    HfOptions,
    PlantedOptions,
    RunOptions,
    VllmOptions,
    option_values,
)
from vlaudit.errors import InputError, VlauditError

if TYPE_CHECKING:
    from vlaudit.backends.base import Backend

# prefix -> ("module:function", what it serves)
BACKENDS: dict[str, tuple[str, str]] = {
    "hf": ("vlaudit.backends.hf_mllm:load_backend", "multimodal chat LLMs via transformers (yes/no margins)"),
    "hf-clip": ("vlaudit.backends.hf_clip:load_backend", "CLIP / SigLIP dual encoders via transformers"),
    "open_clip": ("vlaudit.backends.open_clip_backend:load_backend", "open_clip dual encoders"),
    "ref": ("vlaudit.reference.load:load_backend", "vlaudit's own small reference models"),
    "openai": ("vlaudit.backends.openai_endpoint:load_backend",
               "a model behind an OpenAI-compatible server, URL#MODEL (yes/no margins from its log-probs)"),
    "vllm": ("vlaudit.backends.vllm_mllm:load_backend",
             "multimodal chat LLMs in vLLM's offline engine (yes/no margins; needs the vllm package)"),
}
#: text-only prefixes: scorers of log p(caption) without the image, the blind baselines of ``vlaudit giveaway
#: --lm`` (kept apart from :data:`BACKENDS`, which serve image–text scores); prefix -> ("module:function", what)
TEXT_BACKENDS: dict[str, tuple[str, str]] = {
    "hf-lm": ("vlaudit.backends.hf_lm:load_text_lm",
              "text-only causal LMs via transformers (GPT-2, Qwen2.5, ...): log p(caption), a blind baseline"),
}
#: the prefixes whose models are multimodal LLMs read through yes/no verbalizers (the others: dual encoders)
YES_NO_PREFIXES = ("hf", "vllm", "openai")
# prefix -> "module:function" naming the kind of each NAME, for a prefix that serves both kinds; the reference
# models live above this layer (vlaudit.reference), so they are reached by import path like the loaders
KIND_OF: dict[str, str] = {"ref": "vlaudit.reference.catalogue:reference_kind"}
# prefix -> "module:function" refusing a NAME the prefix does not serve (None for one it does), listing only the
# names of the kind a command takes, with the closest spelling: known before loading
UNKNOWN_NAME_OF: dict[str, str] = {"ref": "vlaudit.reference.catalogue:unknown_reference"}


# prefix -> "module:function" saying how many images one query of NAME may hold, known before its weights load
# (from its config; openai: by the chat format, the served model's limit is the server's); a prefix without one
# takes a single image (ref:, vllm:)
IMAGES_OF: dict[str, str] = {"hf": "vlaudit.backends.hf_mllm:max_images_of",
                             "openai": "vlaudit.backends.openai_endpoint:max_images_of"}


# prefix -> the options classes its loader takes (the first is the default); ref: by the kind of each NAME
OPTIONS: dict[str, tuple[type[BackendOptions], ...]] = {
    "hf": (HfOptions,), "hf-clip": (DualOptions,), "open_clip": (DualOptions,), "vllm": (VllmOptions,),
    "openai": (EndpointOptions,),
}
#: the yes/no prefixes whose prompts and verbalizers load from the model's config and tokenizer alone
#: (``weights=False``: no weights read, no engine or server reached)
CONFIG_ONLY_PREFIXES = ("hf", "vllm")
_REF_OPTIONS: dict[str, tuple[type[BackendOptions], ...]] = {"yesno": (HfOptions, PlantedOptions),
                                                             "features": (DualOptions,)}


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
    return "yesno" if parsed.prefix in YES_NO_PREFIXES else "features"

def require_kind(spec: str, kind: str, *, field: str = "--model") -> None:
    """Raise a clear error when ``spec`` is not a backend of ``kind`` (checked before any model is loaded): a
    name its prefix does not serve (a misspelt ``ref:`` name) is refused with the closest name of ``kind``."""
    parsed = parse_spec(spec)
    if parsed.prefix in UNKNOWN_NAME_OF:
        refused = _resolve(UNKNOWN_NAME_OF[parsed.prefix])(parsed.name, kind, field=field)
        if refused is not None:
            raise refused
    if backend_kind(spec) != kind:
        wanted = ("a multimodal LLM (hf:..., openai:URL#MODEL or ref:tiny-qwen2-vl, ...)" if kind == "yesno"
                  else "a dual encoder (hf-clip:..., open_clip:... or ref:tiny-open-clip, ...)")
        raise InputError(f"{spec!r} is not {wanted}", field=field)


def max_images_of(model: ModelRef) -> int:
    """How many images one query of ``model`` may hold, before its weights load: several for the ``hf:``
    families of :data:`vlaudit.backends.base.MULTI_IMAGE_FAMILIES` (read from the config) and ``openai:``
    models, one otherwise."""
    parsed = parse_spec(model.spec)
    target = IMAGES_OF.get(parsed.prefix)
    return 1 if target is None else int(_resolve(target)(parsed.name, model.backend_options))


def options_classes(spec: str) -> tuple[type[BackendOptions], ...]:
    """The options classes a model spec's backend takes, its default first (known before loading)."""
    parsed = parse_spec(spec)
    return OPTIONS.get(parsed.prefix) or _REF_OPTIONS[backend_kind(spec)]


@dataclass(frozen=True)
class ModelRef:
    """A model spec (``hf:…``, ``hf-clip:…``, ``open_clip:…``, ``ref:…``) and the options its backend loads it
    with (default: the prefix's options class with its defaults; another backend's class is refused)."""

    spec: str
    options: BackendOptions | None = None

    def __post_init__(self) -> None:
        allowed = options_classes(self.spec)
        if self.options is None:
            object.__setattr__(self, "options", allowed[0]())
        elif type(self.options) not in allowed:
            names = " or ".join(kind.__name__ for kind in allowed)
            raise InputError(f"{self.spec!r} takes {names}, not {type(self.options).__name__}",
                             field="model.options")

    @property
    def backend_options(self) -> BackendOptions:
        """The options, filled in (never None after construction)."""
        assert self.options is not None  # set in __post_init__
        return self.options



def load_backend(ref: ModelRef | str, run: RunOptions | None = None, *, interfaces: Sequence[str] | None = None,
                 question_templates: Mapping[str, str] | None = None, weights: bool = True) -> Backend:
    """Load the backend of ``ref`` (a spec alone takes its prefix's default options) with ``run``'s device and
    batch size (default: the loader's). Yes/no models also take ``interfaces`` to resolve verbalizers for,
    wording overrides (``question_templates``) and ``weights=False`` (``hf:``: prompts and verbalizers only).

    Each prefix's loader is called as ``load_backend(name, options, run, **those)``."""
    model = ModelRef(ref) if isinstance(ref, str) else ref
    parsed = parse_spec(model.spec)
    extras: dict[str, object] = {}
    if interfaces is not None:
        extras["interfaces"] = list(interfaces)
    if question_templates is not None:
        extras["question_templates"] = dict(question_templates)
    if not weights:
        extras["weights"] = False
    loader = _resolve(BACKENDS[parsed.prefix][0])
    backend: Backend = loader(parsed.name, model.backend_options, run or RunOptions(), **extras)
    return backend


@dataclass(frozen=True)
class BackendLoad:
    """One call of :func:`load_backend`, kept to be made elsewhere (each Ray actor loads its own replica)."""

    ref: ModelRef
    run: RunOptions | None = None
    interfaces: tuple[str, ...] | None = None
    question_templates: Mapping[str, str] | None = None

    def load(self) -> Backend:
        return load_backend(self.ref, self.run, interfaces=self.interfaces,
                            question_templates=self.question_templates)


def loader_keywords(options: BackendOptions, run: RunOptions, *, yesno: bool) -> dict[str, object]:
    """``options`` and ``run`` as the keywords of a loader that takes them loose (vlaudit's trained reference
    models): the options set, the device and batch size, and a yes/no model's device map and prefix cache."""
    keywords: dict[str, object] = dict(option_values(options))
    keywords["device"] = run.device
    if run.batch_size is not None:
        keywords["batch_size"] = run.batch_size
    if yesno:
        keywords |= {"device_map": run.device_map, "prefix_cache": run.prefix_cache}
    return keywords


def _resolve(target: str) -> Any:
    """The function named by ``"module:function"``, importing its module now."""
    module_name, function_name = target.split(":")
    return getattr(importlib.import_module(module_name), function_name)


def load_text_backend(spec: str, *, device: str | None = "cpu", batch_size: int = 16, dtype: str | None = None
                      ) -> Any:
    """Load a text-only scorer ``PREFIX:NAME`` of :data:`TEXT_BACKENDS` (``hf-lm:gpt2``, ``hf-lm:/path``)."""
    prefix, sep, name = spec.partition(":")
    if not sep or prefix not in TEXT_BACKENDS or not name:
        raise InputError(f"unknown text model spec {spec!r}; expected PREFIX:NAME with PREFIX one of "
                         f"{', '.join(p + ':' for p in TEXT_BACKENDS)}", field="--lm")
    return _resolve(TEXT_BACKENDS[prefix][0])(name, device=device, dtype=dtype, batch_size=batch_size)
