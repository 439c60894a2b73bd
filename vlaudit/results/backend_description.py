"""The typed seam between a backend and the run record: :class:`BackendDescription` and :class:`PrefixCacheDecision`.

A backend's ``describe()`` returns a :class:`BackendDescription`: the facts that change its outputs, which go
into the run manifest (``manifest.json``'s ``backend``, a features run's ``model``) and, through
:func:`vlaudit.scoring.run.manifest.model_fingerprint`, into every cache key. The facts every backend may state are
typed fields (spec, family, class, engine, revision, dtype, device, pixel budget, template fingerprints,
verbalizer and letter ids, prefix cache); a backend's own facts go into :attr:`BackendDescription.extra`, a
frozen mapping of JSON values. :meth:`BackendDescription.to_dict` writes the JSON object exactly as the
backends wrote their plain ``describe()`` dicts before this type: the same keys in the same order (the order
the backend gave them, :attr:`BackendDescription.keys`), so a manifest and every hash taken over it stay
byte-identical and a rerun into an older run folder still matches.

A backend's ``prepare()`` returns a :class:`PrefixCacheDecision` (or None when it decides nothing): whether
it shares each image's prefix KV cache in this run and why; the runner records it as the manifest's
``prefix_cache`` from that return value.

A leaf module (standard library and :mod:`vlaudit.results.versioned` only), so that the backends, the
scoring runner, the finished-run reader and the API's :class:`~vlaudit.api.margins.Margins` share one type.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Generic, TypeVar, Union

from vlaudit.errors import InputError
from vlaudit.results.versioned import JsonObject, JsonValue

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(Mapping[K, V], Generic[K, V]):
    """An immutable, hashable, picklable mapping that keeps its insertion order (a Ray actor sends one back)."""

    __slots__ = ("_data",)

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._data: dict[K, V] = dict(items)

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(tuple(self._data.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __getstate__(self) -> dict[K, V]:
        return self._data

    def __setstate__(self, state: dict[K, V]) -> None:
        self._data = state


#: a JSON value frozen: objects as :class:`FrozenMap`, arrays as tuples
FrozenJson = Union[str, int, float, bool, None, tuple["FrozenJson", ...], FrozenMap[str, "FrozenJson"]]  # noqa: UP007
#: a frozen JSON object (:attr:`BackendDescription.extra`)
JsonMap = FrozenMap[str, FrozenJson]


def freeze(value: object, where: str = "value") -> FrozenJson:
    """``value`` as frozen JSON: mappings as :class:`FrozenMap` (keys as text), lists and tuples as tuples, a
    Path as its text, numpy-like numbers as Python numbers (floats kept as they are, NaN included: the hashes
    are taken over them); anything else is a TypeError naming ``where``."""
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, Mapping):
        return FrozenMap((str(key), freeze(item, f"{where}.{key}")) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item, f"{where}[{index}]") for index, item in enumerate(value))
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{where}: {type(value).__name__} is not a JSON value")


def thaw(value: FrozenJson) -> JsonValue:
    """Frozen JSON back as plain JSON (objects as dicts, arrays as lists)."""
    if isinstance(value, FrozenMap):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw(item) for item in value]
    return value



class ReadsAsJson:
    """Read access to a record by its JSON keys (``record["enabled"]``, ``record.get("dtype")``, ``"x" in
    record``): code written against the plain dicts the backends returned before these types reads on."""

    def to_dict(self) -> JsonObject:
        raise NotImplementedError

    def __getitem__(self, key: str) -> JsonValue:
        return self.to_dict()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.to_dict()

    def get(self, key: str, default: JsonValue = None) -> JsonValue:
        return self.to_dict().get(key, default)


@dataclass(frozen=True)
class PrefixCacheEstimate:
    """The cost estimate behind a shared-prefix decision (:func:`vlaudit.backends.hf.prefix_cache.prefix_cache_decision`):
    ``estimate`` is whether reuse pays, from the image-prefix and question-suffix token counts, the queries per
    image, the batch size and one call's overhead in token-forwards."""

    estimate: bool
    prefix_tokens: int
    suffix_tokens: int
    queries_per_image: float
    batch_size: int
    call_overhead_tokens: int


@dataclass(frozen=True)
class PrefixCacheDecision(ReadsAsJson):
    """Whether a run shares each image's prefix KV cache, and why (the manifest's ``prefix_cache``).

    ``override``: what ``--prefix-cache`` / ``--no-prefix-cache`` forced (None: not forced); ``cost``: the
    estimate the decision came from (None for a backend that estimates nothing, as vLLM's automatic prefix
    caching). JSON: ``enabled``, ``reason``, ``estimate``, ``override``, then the estimate's counts — the
    order the ``hf:`` backend has always written (keys of an absent estimate left out)."""

    enabled: bool
    reason: str
    override: bool | None = None
    cost: PrefixCacheEstimate | None = None

    def to_dict(self) -> JsonObject:
        out: JsonObject = {"enabled": self.enabled, "reason": self.reason}
        if self.cost is not None:
            out["estimate"] = self.cost.estimate
        out["override"] = self.override
        if self.cost is not None:
            out.update({name: getattr(self.cost, name) for name in _ESTIMATE_COUNTS})
        return out

    @classmethod
    def from_dict(cls, data: object, *, path: str | Path = "<prefix cache decision>",
                  name: str = "prefix_cache") -> PrefixCacheDecision:
        """Read the decision back (a manifest's ``prefix_cache``); a field of the wrong kind is an InputError."""
        if not isinstance(data, Mapping):
            raise InputError("must be a JSON object", path=path, field=name)
        enabled, reason, override = data.get("enabled"), data.get("reason"), data.get("override")
        if not isinstance(enabled, bool):
            raise InputError("must be true or false", path=path, field=f"{name}.enabled")
        if not isinstance(reason, str):
            raise InputError("must be text", path=path, field=f"{name}.reason")
        if override is not None and not isinstance(override, bool):
            raise InputError("must be true, false or null", path=path, field=f"{name}.override")
        cost = None
        if "estimate" in data:
            estimate = data.get("estimate")
            if not isinstance(estimate, bool):
                raise InputError("must be true or false", path=path, field=f"{name}.estimate")
            counts: dict[str, int | float] = {}
            for key in _ESTIMATE_COUNTS:
                value = data.get(key)
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise InputError("must be a number", path=path, field=f"{name}.{key}")
                counts[key] = value
            cost = PrefixCacheEstimate(estimate=estimate, prefix_tokens=int(counts["prefix_tokens"]),
                                       suffix_tokens=int(counts["suffix_tokens"]),
                                       queries_per_image=float(counts["queries_per_image"]),
                                       batch_size=int(counts["batch_size"]),
                                       call_overhead_tokens=int(counts["call_overhead_tokens"]))
        return cls(enabled=enabled, reason=reason, override=override, cost=cost)


_ESTIMATE_COUNTS = ("prefix_tokens", "suffix_tokens", "queries_per_image", "batch_size", "call_overhead_tokens")


@dataclass(frozen=True)
class BackendDescription(ReadsAsJson):
    """What changes a backend's outputs: the manifest's ``backend`` entry and the input of every cache key.

    The typed fields are the facts backends share (None: the backend does not state it); a backend's own facts
    (``commit_hash``, ``engine_options``, ``served``, ``dim``, ...) are in :attr:`extra`. :attr:`keys` is the
    order the JSON object lists them in (a field not listed is not written); empty, the fields that are set
    come in declaration order, then ``extra``. Build one from a backend's facts with :meth:`of`.
    """

    spec: str
    family: str | None = None
    #: the model's class (``Qwen2VLForConditionalGeneration``, ``vllm.LLM``)
    model_class: str | None = None
    #: the engine that computes the forward pass and its version (``vllm 0.x``), when not transformers
    engine: str | None = None
    revision: str | None = None
    dtype: str | None = None
    device: str | None = None
    #: the processor's image-size limits (``min_pixels``, ``max_pixels``, the processor's own size)
    pixel_budget: FrozenJson = None
    #: the prompt pieces' fingerprint (question templates, generation prefix, system message)
    template: FrozenJson = None
    chat_template_sha256: str | None = None
    #: interface → (yes id, no id)
    verbalizer_ids: FrozenMap[str, tuple[int, ...]] | None = None
    #: the option letters' ids A, B, ... (the letter interface)
    letter_ids: tuple[int, ...] | None = None
    #: whether the backend shares image prefixes (its state; the run's decision is ``prefix_cache_decision``)
    prefix_cache: bool | None = None
    prefix_cache_decision: PrefixCacheDecision | None = None
    extra: JsonMap = field(default_factory=FrozenMap)
    keys: tuple[str, ...] = ()

    @classmethod
    def of(cls, facts: Mapping[str, object]) -> BackendDescription:
        """The description of a backend's facts, in their order: the shared facts checked into the typed
        fields, the others frozen into :attr:`extra` (a TypeError names a fact of the wrong kind)."""
        if isinstance(facts, BackendDescription):
            return facts
        typed: dict[str, object] = {}
        extra: dict[str, FrozenJson] = {}
        for key, value in facts.items():
            if key in _TYPED:
                typed[key] = _typed_value(key, value)
            else:
                extra[key] = freeze(value, key)
        if not isinstance(typed.get("spec"), str):
            raise TypeError("a backend description needs its spec (text)")
        return cls(**typed, extra=FrozenMap(extra), keys=tuple(str(key) for key in facts))  # type: ignore[arg-type]  # each typed value checked by _typed_value

    def to_dict(self) -> JsonObject:
        """The JSON object, key for key and in the order of the backend's plain ``describe()`` dict."""
        order = self.keys or (*(name for name in _TYPED if getattr(self, name) is not None), *self.extra)
        out: JsonObject = {}
        for key in order:
            if key in _TYPED:
                value = getattr(self, key)
                out[key] = value.to_dict() if isinstance(value, PrefixCacheDecision) else thaw(value)
            else:
                out[key] = thaw(self.extra[key])
        return out


_TYPED = tuple(f.name for f in fields(BackendDescription) if f.name not in ("extra", "keys"))
_TEXT = ("spec", "family", "model_class", "engine", "revision", "dtype", "device", "chat_template_sha256")


def _typed_value(key: str, value: object) -> object:
    """One shared fact checked against its field's type (a TypeError naming it otherwise)."""
    if value is None:
        return None
    if key in _TEXT:
        if not isinstance(value, str):
            raise TypeError(f"{key}: {type(value).__name__}, not text")
        return value
    if key == "prefix_cache":
        if not isinstance(value, bool):
            raise TypeError(f"{key}: {type(value).__name__}, not true/false")
        return value
    if key == "prefix_cache_decision":
        return value if isinstance(value, PrefixCacheDecision) else PrefixCacheDecision.from_dict(value, name=key)
    if key == "verbalizer_ids":
        if not isinstance(value, Mapping):
            raise TypeError(f"{key}: {type(value).__name__}, not an object")
        return FrozenMap((str(name), _ids(f"{key}.{name}", ids)) for name, ids in value.items())
    if key == "letter_ids":
        return _ids(key, value)
    return freeze(value, key)


def _ids(key: str, value: object) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(i, numbers.Integral) and not isinstance(i, bool)
                                                        for i in value):
        raise TypeError(f"{key}: not a list of token ids")
    return tuple(int(i) for i in value)

