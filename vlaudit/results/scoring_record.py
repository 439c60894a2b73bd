"""What a yes/no scoring run adds to its ``manifest.json``: :class:`ScoringRunRecord`, a frozen record.

``vca score`` (and the commands that score through its runner: ``suite eval``'s yes/no models, the demo)
records the model (its spec, the backend's :class:`~vlaudit.results.backend_description.BackendDescription`,
the fingerprints every cache key holds), the prompt (template hash, one example prompt per template), the run's
shape (contexts, interfaces, context constants, seed, item count, executor), the prefix-cache decision the
backend's ``prepare()`` returned (:class:`~vlaudit.results.backend_description.PrefixCacheDecision`) and what
identifies the weights without loading them. :meth:`ScoringRunRecord.to_dict` writes the keys at the
manifest's top level exactly as the runner wrote its plain dict before this type (the same keys, order and
values), so a manifest stays byte-identical and an older run folder still resumes;
:meth:`ScoringRunRecord.from_dict` reads one back from a manifest.

A leaf module (the results layer), beside :mod:`vlaudit.results.manifest` whose
:class:`~vlaudit.results.manifest.RunManifest` holds it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.results.backend_description import (
    BackendDescription,
    FrozenJson,  # noqa: F401  get_type_hints() resolves JsonMap's "FrozenJson" forward references here
    FrozenMap,
    JsonMap,
    PrefixCacheDecision,
    thaw,
)
from vlaudit.results.record_fields import (
    count_field,
    frozen_object,
    names_field,
    object_field,
    text_field,
    texts_field,
)
from vlaudit.results.versioned import JsonObject, JsonValue

#: the keys a scoring run's record writes, in the order written
SCORING_RECORD_KEYS = ("model", "spec", "backend", "model_fingerprint", "model_fingerprint_by_interface",
                       "revision", "dtype", "pixel_budget", "prompt_template_sha256", "example_prompts", "contexts",
                       "interfaces", "context_parameters", "seed", "n_items", "executor", "prefix_cache",
                       "model_files")


@dataclass(frozen=True)
class ScoringRunRecord:
    """A yes/no scoring run's own manifest keys (module docstring).

    ``backend``: what changes the model's outputs (the manifest's ``backend``; its ``revision``, ``dtype``
    and ``pixel_budget`` are repeated at the top level, read from it); ``model_fingerprint``: the sha256 of
    it and the weights' identity (:func:`vlaudit.scoring.run.manifest.model_fingerprint`), and per interface
    the one each cache key of that interface holds; ``example_prompts``: template (``yesno/image``, ...) →
    the prompt of the first item; ``context_parameters``: the constants that define the contexts;
    ``executor``: where the forward passes ran; ``prefix_cache``: the backend's decision (None: it decided
    nothing); ``model_files``: what identifies the weights without loading them (None: not known without
    loading, or not given)."""

    model: str
    spec: str
    backend: BackendDescription
    model_fingerprint: str
    model_fingerprint_by_interface: FrozenMap[str, str]
    prompt_template_sha256: str
    example_prompts: FrozenMap[str, str]
    contexts: tuple[str, ...]
    interfaces: tuple[str, ...]
    context_parameters: JsonMap
    seed: int
    n_items: int
    executor: JsonMap
    prefix_cache: PrefixCacheDecision | None = None
    model_files: JsonMap | None = None

    @classmethod
    def of(cls, *, model: str, spec: str, backend: BackendDescription, model_fingerprint: str,
           model_fingerprint_by_interface: Mapping[str, str], prompt_template_sha256: str,
           example_prompts: Mapping[str, str], contexts: Sequence[str], interfaces: Sequence[str],
           context_parameters: Mapping[str, object], seed: int, n_items: int, executor: Mapping[str, object],
           prefix_cache: PrefixCacheDecision | None = None,
           model_files: Mapping[str, object] | None = None) -> ScoringRunRecord:
        """The record of the runner's values, the mappings frozen, the counts as Python ints (a numpy seed); a
        TypeError names a value JSON cannot hold."""
        return cls(model=model, spec=spec, backend=backend, model_fingerprint=model_fingerprint,
                   model_fingerprint_by_interface=FrozenMap(model_fingerprint_by_interface),
                   prompt_template_sha256=prompt_template_sha256, example_prompts=FrozenMap(example_prompts),
                   contexts=tuple(contexts), interfaces=tuple(interfaces),
                   context_parameters=frozen_object(context_parameters, "context_parameters"), seed=int(seed),
                   n_items=int(n_items), executor=frozen_object(executor, "executor"), prefix_cache=prefix_cache,
                   model_files=None if model_files is None else frozen_object(model_files, "model_files"))

    def to_dict(self) -> JsonObject:
        """The manifest's top-level keys of the run, as the runner has always written them."""
        facts = self.backend.to_dict()
        return {
            "model": self.model, "spec": self.spec, "backend": facts, "model_fingerprint": self.model_fingerprint,
            "model_fingerprint_by_interface": dict(self.model_fingerprint_by_interface),
            "revision": facts.get("revision"), "dtype": facts.get("dtype"), "pixel_budget": facts.get("pixel_budget"),
            "prompt_template_sha256": self.prompt_template_sha256, "example_prompts": dict(self.example_prompts),
            "contexts": list(self.contexts), "interfaces": list(self.interfaces),
            "context_parameters": thaw(self.context_parameters), "seed": self.seed, "n_items": self.n_items,
            "executor": thaw(self.executor),
            "prefix_cache": None if self.prefix_cache is None else self.prefix_cache.to_dict(),
            "model_files": None if self.model_files is None else thaw(self.model_files),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, JsonValue], *, path: str | Path = "<manifest>") -> ScoringRunRecord:
        """The record of a scoring run's manifest (its top-level keys); a key missing or of the wrong kind is an
        InputError naming it."""
        facts = object_field(data, "backend", path)
        try:
            backend = BackendDescription.of(facts)
        except TypeError as exc:
            raise InputError(str(exc), path=path, field="backend") from exc
        decision = data.get("prefix_cache")
        files = data.get("model_files")
        return cls.of(
            model=text_field(data, "model", path), spec=text_field(data, "spec", path), backend=backend,
            model_fingerprint=text_field(data, "model_fingerprint", path),
            model_fingerprint_by_interface=texts_field(data, "model_fingerprint_by_interface", path),
            prompt_template_sha256=text_field(data, "prompt_template_sha256", path),
            example_prompts=texts_field(data, "example_prompts", path),
            contexts=names_field(data, "contexts", path), interfaces=names_field(data, "interfaces", path),
            context_parameters=object_field(data, "context_parameters", path), seed=count_field(data, "seed", path),
            n_items=count_field(data, "n_items", path), executor=object_field(data, "executor", path),
            prefix_cache=None if decision is None else PrefixCacheDecision.from_dict(decision, path=path),
            model_files=None if files is None else object_field(data, "model_files", path))
