"""Every way to name a model, read from the registries' names alone: ``vlaudit models list`` imports no torch."""

from __future__ import annotations

from dataclasses import dataclass

from vlaudit.backends.registry import BACKENDS, TEXT_BACKENDS
from vlaudit.backends.tiny_families import TINY_FAMILIES
from vlaudit.reference.catalogue import REFERENCE_MODELS, TRAINED_MODELS


@dataclass(frozen=True)
class ModelRegistry:
    """Every way to name a model: ``backends`` (spec pattern, what it serves), the ``tiny_families`` of
    :func:`vlaudit.build_tiny_model`, the constructed ``reference`` models, the ``trained`` ones (name →
    description; weights shipped) and the items each trained one ``understands`` (name → which items; on
    any other item its margins are 0 in every context and an audit of them means nothing)."""

    backends: list[tuple[str, str]]
    tiny_families: tuple[str, ...]
    reference: list[str]
    trained: dict[str, str]
    understands: dict[str, str]


def model_registry() -> ModelRegistry:
    """The backends, tiny families and reference models vlaudit can load."""
    every = {**BACKENDS, **TEXT_BACKENDS}  # the text-only prefixes (vlaudit giveaway --lm) are listed after
    return ModelRegistry(backends=[(f"{prefix}:<name>", desc) for prefix, (_, desc) in every.items()],
                         tiny_families=TINY_FAMILIES, reference=[f"ref:{n}" for n in REFERENCE_MODELS],
                         trained={name: entry.description for name, entry in TRAINED_MODELS.items()},
                         understands={name: entry.understands for name, entry in TRAINED_MODELS.items()})
