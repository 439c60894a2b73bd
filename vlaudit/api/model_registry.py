"""Every way to name a model, read from the registries' names alone: ``vlaudit models list`` imports no torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vlaudit.backends.registry import BackendEntry, backend_entries
from vlaudit.backends.tiny.families import TINY_FAMILIES
from vlaudit.reference.catalogue import REFERENCE_MODELS, TRAINED_MODELS


@dataclass(frozen=True)
class ModelRegistry:
    """Every way to name a model: ``backends`` (one row per registry entry: spec pattern, kind, options
    classes, what it serves; :data:`BACKEND_COLUMNS`), the ``tiny_families`` of
    :func:`vlaudit.build_tiny_model`, the constructed ``reference`` models, the ``trained`` ones (name →
    description; weights shipped) and the items each trained one ``understands`` (name → which items; on
    any other item its margins are 0 in every context and an audit of them means nothing)."""

    BACKEND_COLUMNS: ClassVar[tuple[str, ...]] = ("spec", "kind", "options", "serves")

    backends: list[tuple[str, str, str | None, str]]
    tiny_families: tuple[str, ...]
    reference: list[str]
    trained: dict[str, str]
    understands: dict[str, str]


def model_registry() -> ModelRegistry:
    """The backends, tiny families and reference models vlaudit can load."""
    # the text-only prefixes (vlaudit giveaway --lm) are listed after the image-text ones
    entries = (*backend_entries(text=False), *backend_entries(text=True))
    return ModelRegistry(backends=[backend_row(entry) for entry in entries],
                         tiny_families=TINY_FAMILIES, reference=[f"ref:{n}" for n in REFERENCE_MODELS],
                         trained={name: entry.description for name, entry in TRAINED_MODELS.items()},
                         understands={name: entry.understands for name, entry in TRAINED_MODELS.items()})


def backend_row(entry: BackendEntry) -> tuple[str, str, str | None, str]:
    """``entry`` as ``models list`` prints it: ``PREFIX:<name>``, its kind (``yesno/features (by name)`` for a
    prefix serving both), its options classes (default first; per kind for a prefix serving both; None for a
    text scorer, which takes device, dtype and batch size) and its summary."""
    if entry.options_by_kind:
        kind = f"{'/'.join(entry.kinds)} (by name)"
        options: str | None = "; ".join(f"{name}: {_names(classes)}" for name, classes in entry.options_by_kind.items())
    else:
        kind, options = entry.kind, _names(entry.options) or None
    return f"{entry.prefix}:<name>", kind, options, entry.summary


def _names(classes: tuple[type, ...]) -> str:
    return ", ".join(kind.__name__ for kind in classes)
