"""The backend registry: one :class:`BackendEntry` per prefix (``hf:``, ``hf-clip:``, ``open_clip:``, ``ref:``,
``openai:``, ``vllm:``, and the text-only ``hf-lm:``), registered once with :func:`register`.

A model spec is ``PREFIX:NAME`` (e.g. ``hf:Qwen/Qwen2-VL-2B-Instruct``, ``hf:/path/to/dir``,
``open_clip:ViT-B-32/laion2b_s34b_b79k``, ``openai:http://127.0.0.1:8000/v1#Qwen/Qwen2-VL-7B-Instruct``);
:func:`parse_spec` is the one place it is cut, into a :class:`ModelSpec` (prefix, name, entry). An entry says
everything known about its prefix before a model loads: the loader, the kind of model, the options classes
its loader takes, how many images one query may hold, whether prompts load from the config alone, a one-line
summary (``vlaudit models list`` prints it) and the pip extra a missing package names. Loaders and the other
per-name functions are named by import path (``"module:function"``), so resolving a spec imports only the one
backend module it needs (torch and transformers stay unimported until then). Registering a prefix once, with
everything about it in one record, follows inspect_ai's ``@modelapi`` providers
(UKGovernmentBEIS/inspect_ai @ 3f5bf2b3 : src/inspect_ai/model/_registry.py).

A :class:`ModelRef` is a spec and its backend's typed options (:mod:`vlaudit.backends.options`); it carries the
parsed spec (:attr:`ModelRef.prefix`, :attr:`ModelRef.name`, :attr:`ModelRef.entry`), so a ref gets the right
default options and another backend's class is refused in one line. :func:`load_backend` loads a ref with a
:class:`~vlaudit.backends.options.RunOptions` (device, batch size): every prefix's loader is called as
``load_backend(name, options, run, ...)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
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

#: the kinds of model a prefix serves: multimodal LLMs read through yes/no verbalizers, dual encoders, and the
#: text-only scorers of log p(caption) (the blind baselines of ``vlaudit giveaway --lm``)
KINDS = ("yesno", "features", "text")

OptionsClasses = tuple[type[BackendOptions], ...]


@dataclass(frozen=True)
class BackendEntry:
    """Everything the registry knows about one prefix before a model of it loads.

    ``loader``: ``"module:function"`` called as ``loader(name, options, run, **wording)`` (a text scorer's as
    ``loader(name, device=, dtype=, batch_size=)``). ``kind``: one of :data:`KINDS`, or ``"module:function"``
    naming the kind of each NAME for a prefix that serves both image–text kinds (``ref:``). ``options``: the
    options classes the loader takes, its default first; ``options_by_kind``: the same per kind, for a prefix
    whose kind depends on the name. ``images_of``: ``"module:function"`` saying how many images one query of
    NAME may hold (from its config; None: one). ``config_only``: prompts and verbalizers load from the model's
    config and tokenizer alone (``weights=False``). ``summary``: one line, what it serves. ``extra``: the
    ``pip install 'vlaudit[EXTRA]'`` extra of pyproject.toml that a missing package of this backend names (None
    where its packages are vlaudit's own dependencies, or live in their own environment: ``vllm:``'s
    ``make vllm-env``). ``unknown_name``: ``"module:function"`` refusing a NAME the prefix does not serve
    (``(name, kind, field=) -> InputError | None``), known before loading."""

    prefix: str
    loader: str
    kind: str
    summary: str
    options: OptionsClasses = ()
    options_by_kind: Mapping[str, OptionsClasses] = field(default_factory=dict)
    images_of: str | None = None
    config_only: bool = False
    extra: str | None = None
    unknown_name: str | None = None

    def __post_init__(self) -> None:
        if not self.prefix or ":" in self.prefix:
            raise ValueError(f"a backend prefix is a non-empty word without ':', not {self.prefix!r}")
        by_name = ":" in self.kind
        if not by_name and self.kind not in KINDS:
            raise ValueError(f"backend {self.prefix}: has kind {self.kind!r}; expected one of {', '.join(KINDS)} "
                             "or 'module:function'")
        if by_name and (self.options or set(self.options_by_kind) != {"yesno", "features"}):
            raise ValueError(f"backend {self.prefix}: serves both kinds: give options_by_kind for each, not options")
        if not by_name and (self.options_by_kind or (self.kind != "text" and not self.options)):
            raise ValueError(f"backend {self.prefix}: takes options classes (its default first)")

    @property
    def install(self) -> str | None:
        """``pip install 'vlaudit[EXTRA]'`` for a backend with an extra, None otherwise."""
        return None if self.extra is None else f"pip install 'vlaudit[{self.extra}]'"

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of model the prefix serves (both image–text kinds for one whose kind goes by the name)."""
        return tuple(self.options_by_kind) if ":" in self.kind else (self.kind,)

    def kind_of(self, name: str) -> str:
        """The kind of ``NAME`` (a prefix serving both: by its ``kind`` function; an unknown name reads as
        ``"yesno"``, and :meth:`refusal` names it)."""
        return str(_resolve(self.kind)(name) or "yesno") if ":" in self.kind else self.kind

    def options_of(self, name: str) -> OptionsClasses:
        """The options classes the loader takes for ``NAME``, its default first."""
        return self.options or self.options_by_kind[self.kind_of(name)]

    def max_images(self, name: str, options: BackendOptions) -> int:
        """How many images one query of ``NAME`` may hold, before its weights load."""
        return 1 if self.images_of is None else int(_resolve(self.images_of)(name, options))

    def refusal(self, name: str, kind: str, *, field: str) -> InputError | None:
        """The one-line refusal of a ``NAME`` the prefix does not serve (None for one it does, or when the prefix
        cannot tell before loading), listing the names of ``kind``."""
        if self.unknown_name is None:
            return None
        refused: InputError | None = _resolve(self.unknown_name)(name, kind, field=field)
        return refused

    def load_function(self) -> Any:
        """The loader, its module imported now."""
        return _resolve(self.loader)


class BackendRegistry:
    """Backend entries by prefix, in the order registered; a prefix is registered once."""

    def __init__(self) -> None:
        self._entries: dict[str, BackendEntry] = {}

    def register(self, entry: BackendEntry) -> BackendEntry:
        """Add ``entry``; a prefix registered before raises (two backends never share a prefix)."""
        if entry.prefix in self._entries:
            raise ValueError(f"backend prefix {entry.prefix}: is registered twice "
                             f"({self._entries[entry.prefix].loader} and {entry.loader})")
        self._entries[entry.prefix] = entry
        return entry

    def get(self, prefix: str) -> BackendEntry | None:
        """The entry of ``prefix``, None for a prefix never registered."""
        return self._entries.get(prefix)

    def entries(self, *, text: bool | None = None) -> tuple[BackendEntry, ...]:
        """Every entry (``text=True``: the text-only scorers only; ``False``: the image–text backends only)."""
        return tuple(e for e in self._entries.values() if text is None or (e.kind == "text") == text)


#: the registry every spec is parsed against
REGISTRY = BackendRegistry()
register = REGISTRY.register

register(BackendEntry(
    "hf", "vlaudit.backends.hf.mllm:load_backend", "yesno",
    "multimodal chat LLMs via transformers (yes/no margins)",
    options=(HfOptions,), images_of="vlaudit.backends.hf.mllm:max_images_of", config_only=True))
register(BackendEntry(
    "hf-clip", "vlaudit.backends.dual.hf_clip:load_backend", "features",
    "CLIP / SigLIP dual encoders via transformers", options=(DualOptions,)))
register(BackendEntry(
    "open_clip", "vlaudit.backends.dual.open_clip_backend:load_backend", "features", "open_clip dual encoders",
    options=(DualOptions,)))
# the reference models live above this layer (vlaudit.reference), so they are reached by import path too
register(BackendEntry(
    "ref", "vlaudit.reference.load:load_backend", "vlaudit.reference.catalogue:reference_kind",
    "vlaudit's own small reference models",
    options_by_kind={"yesno": (HfOptions, PlantedOptions), "features": (DualOptions,)},
    unknown_name="vlaudit.reference.catalogue:unknown_reference"))
# openai: takes as many images as the chat format holds (the served model's limit is the server's)
register(BackendEntry(
    "openai", "vlaudit.backends.openai.endpoint:load_backend", "yesno",
    "a model behind an OpenAI-compatible server, URL#MODEL (yes/no margins from its log-probs)",
    options=(EndpointOptions,), images_of="vlaudit.backends.openai.endpoint:max_images_of", extra="openai"))
register(BackendEntry(
    "vllm", "vlaudit.backends.vllm.mllm:load_backend", "yesno",
    "multimodal chat LLMs in vLLM's offline engine (yes/no margins; needs the vllm package)",
    options=(VllmOptions,), config_only=True))
register(BackendEntry(
    "hf-lm", "vlaudit.backends.hf.lm:load_text_lm", "text",
    "text-only causal LMs via transformers (GPT-2, Qwen2.5, ...): log p(caption), a blind baseline"))


def backend_entries(*, text: bool | None = None) -> tuple[BackendEntry, ...]:
    """The registered entries in order (``text``: as :meth:`BackendRegistry.entries`)."""
    return REGISTRY.entries(text=text)


class UnknownBackendError(VlauditError, ValueError):
    """A model spec with an unknown prefix; the message lists what is available."""


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``PREFIX:NAME`` model spec and its prefix's registry entry."""

    prefix: str
    name: str
    entry: BackendEntry = field(repr=False, compare=False)

    def __str__(self) -> str:
        return f"{self.prefix}:{self.name}"

    @property
    def kind(self) -> str:
        """The kind of model it names (:data:`KINDS`), known before loading."""
        return self.entry.kind_of(self.name)


def available_backends() -> str:
    """The registered image–text prefixes on one line: ``hf:, hf-clip:, open_clip:, ref:, openai:, vllm:``."""
    return _prefixes(text=False)


def _prefixes(*, text: bool) -> str:
    return ", ".join(f"{entry.prefix}:" for entry in REGISTRY.entries(text=text))


def parse_spec_or_none(spec: str) -> ModelSpec | None:
    """``PREFIX:NAME`` of any registered prefix (the text-only ones included) parsed; None for anything else
    (a test double's ``fake:x``, a spec a manifest recorded that no prefix serves)."""
    prefix, sep, name = spec.partition(":")
    entry = REGISTRY.get(prefix)
    return ModelSpec(prefix, name, entry) if sep and name and entry is not None else None


def parse_spec(spec: str, *, text: bool = False) -> ModelSpec:
    """Split ``PREFIX:NAME`` of an image–text backend (``text=True``: of a text-only scorer, ``--lm``); an
    unknown or missing prefix raises with the list of available ones."""
    parsed = parse_spec_or_none(spec)
    if parsed is None or (parsed.entry.kind == "text") != text:
        if text:
            raise InputError(f"unknown text model spec {spec!r}; expected PREFIX:NAME with PREFIX one of "
                             f"{_prefixes(text=True)}", field="--lm")
        raise UnknownBackendError(
            f"unknown model spec {spec!r}; expected PREFIX:NAME with PREFIX one of {available_backends()} "
            "('vlaudit models list' says what each serves)"
        )
    return parsed


def backend_kind(spec: str) -> str:
    """``"yesno"`` for multimodal LLMs, ``"features"`` for dual encoders — known from the spec, before loading."""
    return parse_spec(spec).kind


def require_kind(spec: str, kind: str, *, field: str = "--model") -> None:
    """Raise a clear error when ``spec`` is not a backend of ``kind`` (checked before any model is loaded): a
    name its prefix does not serve (a misspelt ``ref:`` name) is refused with the closest name of ``kind``."""
    parsed = parse_spec(spec)
    refused = parsed.entry.refusal(parsed.name, kind, field=field)
    if refused is not None:
        raise refused
    if parsed.kind != kind:
        wanted = ("a multimodal LLM (hf:..., openai:URL#MODEL or ref:tiny-qwen2-vl, ...)" if kind == "yesno"
                  else "a dual encoder (hf-clip:..., open_clip:... or ref:tiny-open-clip, ...)")
        raise InputError(f"{spec!r} is not {wanted}", field=field)


def max_images_of(model: ModelRef) -> int:
    """How many images one query of ``model`` may hold, before its weights load: several for the ``hf:``
    families of :data:`vlaudit.backends.base.MULTI_IMAGE_FAMILIES` (read from the config) and ``openai:``
    models, one otherwise."""
    return model.entry.max_images(model.name, model.backend_options)


def options_classes(spec: str) -> tuple[type[BackendOptions], ...]:
    """The options classes a model spec's backend takes, its default first (known before loading)."""
    parsed = parse_spec(spec)
    return parsed.entry.options_of(parsed.name)


@dataclass(frozen=True)
class ModelRef:
    """A model spec (``hf:…``, ``hf-clip:…``, ``open_clip:…``, ``ref:…``) and the options its backend loads it
    with (default: the prefix's options class with its defaults; another backend's class is refused). The spec
    is parsed once: :attr:`prefix`, :attr:`name`, :attr:`entry`."""

    spec: str
    options: BackendOptions | None = None

    def __post_init__(self) -> None:
        allowed = self.parsed.entry.options_of(self.name)
        if self.options is None:
            object.__setattr__(self, "options", allowed[0]())
        elif type(self.options) not in allowed:
            names = " or ".join(kind.__name__ for kind in allowed)
            raise InputError(f"{self.spec!r} takes {names}, not {type(self.options).__name__}",
                             field="model.options")

    @cached_property
    def parsed(self) -> ModelSpec:
        """The spec, parsed (:func:`parse_spec`)."""
        return parse_spec(self.spec)

    @property
    def prefix(self) -> str:
        """The spec's prefix (``hf``, ``ref``, ...)."""
        return self.parsed.prefix

    @property
    def name(self) -> str:
        """What follows the prefix: a hub id, a folder, ``URL#MODEL``, a reference name."""
        return self.parsed.name

    @property
    def entry(self) -> BackendEntry:
        """The prefix's registry entry."""
        return self.parsed.entry

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
    extras: dict[str, object] = {}
    if interfaces is not None:
        extras["interfaces"] = list(interfaces)
    if question_templates is not None:
        extras["question_templates"] = dict(question_templates)
    if not weights:
        extras["weights"] = False
    backend: Backend = model.entry.load_function()(model.name, model.backend_options, run or RunOptions(), **extras)
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
    """Load a text-only scorer ``PREFIX:NAME`` (an entry of kind ``"text"``: ``hf-lm:gpt2``, ``hf-lm:/path``)."""
    parsed = parse_spec(spec, text=True)
    return parsed.entry.load_function()(parsed.name, device=device, dtype=dtype, batch_size=batch_size)
