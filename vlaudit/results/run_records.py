"""What the other writers of a ``manifest.json`` add to it: frozen records beside the scoring run's.

A yes/no scoring run's record is :class:`~vlaudit.results.scoring_record.ScoringRunRecord`; this module holds
the records of the other commands that write a :class:`~vlaudit.results.manifest.RunManifest`:

* :class:`FeaturesRunRecord` — a features folder (``features``, and the features that ``vca score-dual``,
  ``suite eval``'s dual encoders, ``cycles experiment`` and the demo write through
  :func:`vlaudit.scoring.features.write_features`): the model's description, the caller's provenance, the
  files and their sha256, the dimension, the counts, the vlaudit version and the seconds taken;
* :class:`DualScoringRunRecord` — a ``vca score-dual`` run (the dual-encoder VCA margins,
  :mod:`vlaudit.scoring.dual_margins`);
* :class:`FactorialDatasetRecord` — the ``data factorial`` dataset (:mod:`vlaudit.builders.factorial`): its
  design, its probe accounting and its image hashes.

Each ``to_dict()`` writes the keys at the manifest's top level exactly as the writer's plain dict did before
these types (the same keys, order and values), so a manifest stays byte-identical and every reader (which
reads the JSON) reads on; ``from_dict()`` reads one back from a manifest, a key missing or of the wrong kind
an :class:`~vlaudit.errors.InputError` naming the file and the field.

A leaf module (the results layer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vlaudit.errors import InputError

# FrozenJson: get_type_hints() resolves the "FrozenJson" forward references inside JsonMap in this namespace
from vlaudit.results.backend_description import BackendDescription, FrozenJson, FrozenMap, JsonMap, thaw  # noqa: F401
from vlaudit.results.manifest import MANIFEST_KEYS
from vlaudit.results.record_fields import (
    count_field,
    frozen_object,
    names_field,
    object_field,
    text_field,
    texts_field,
)
from vlaudit.results.versioned import JsonObject, JsonValue

#: a features run's own keys, in the order written (the caller's provenance keys come after ``model``)
FEATURES_RECORD_KEYS = ("model", "files", "files_sha256", "dim", "dtype", "normalized", "counts", "vlaudit",
                        "seconds")
#: a ``vca score-dual`` run's keys, in the order written
DUAL_RECORD_KEYS = ("model", "spec", "backend", "kind", "decision", "no_image", "text_field", "contexts",
                    "interfaces", "context_parameters", "seed", "n_items", "n_groups")
#: the ``data factorial`` dataset's keys, in the order written
FACTORIAL_RECORD_KEYS = ("seed", "n_per_relation", "canvas", "relations", "states", "stems", "items",
                         "stems_per_relation", "probes", "checks", "image_sha256")
#: the decision a dual encoder's margin states (VCA §13)
DUAL_DECISION = "m_c(s) = cos(x_c, s) - max over the group's other statements of cos(x_c, s')"


def _description(data: Mapping[str, JsonValue], key: str, path: str | Path) -> BackendDescription:
    facts = object_field(data, key, path)
    try:
        return BackendDescription.of(facts)
    except TypeError as exc:
        raise InputError(str(exc), path=path, field=key) from exc


def _counts(data: Mapping[str, JsonValue], key: str, path: str | Path) -> dict[str, int]:
    numbers: dict[str, int] = {}
    for name, item in object_field(data, key, path).items():
        if isinstance(item, bool) or not isinstance(item, int):
            raise InputError("must be a whole number", path=path, field=f"{key}.{name}")
        numbers[name] = item
    return numbers


def _number(data: Mapping[str, JsonValue], key: str, path: str | Path) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError("must be a number", path=path, field=key)
    return value


def _text_or_none(data: Mapping[str, JsonValue], key: str, path: str | Path) -> str | None:
    if key not in data:
        raise InputError("missing", path=path, field=key)
    value = data[key]
    if value is not None and not isinstance(value, str):
        raise InputError("must be text or null", path=path, field=key)
    return value


# ------------------------------------------------------------------------------------------------ features


@dataclass(frozen=True)
class FeatureCounts:
    """How many ids a features folder embeds and how many distinct contents (one forward pass each)."""

    image_ids: int
    unique_images: int
    caption_ids: int
    unique_texts: int

    def to_dict(self) -> JsonObject:
        return {"image_ids": self.image_ids, "unique_images": self.unique_images, "caption_ids": self.caption_ids,
                "unique_texts": self.unique_texts}

    @classmethod
    def from_dict(cls, data: Mapping[str, JsonValue], *, path: str | Path = "<manifest>",
                  key: str = "counts") -> FeatureCounts:
        value = object_field(data, key, path)
        numbers: dict[str, int] = {}
        for name in ("image_ids", "unique_images", "caption_ids", "unique_texts"):
            item = value.get(name)
            if isinstance(item, bool) or not isinstance(item, int):
                raise InputError("must be a whole number", path=path, field=f"{key}.{name}")
            numbers[name] = item
        return cls(**numbers)


@dataclass(frozen=True)
class FeaturesRunRecord:
    """A features folder's own manifest keys (module docstring).

    ``model``: the backend's description (None where the caller's ``provenance`` names the model itself, as
    the demo does with its spec: then that is what is written under ``model``); ``provenance``: the caller's
    own keys (the cycles file, the images folder, ...), written after ``model``; ``files``: table → file name;
    ``files_sha256``: file name → the sha256 of the file written (what :func:`~vlaudit.scoring.features.read_features`
    checks); ``dim``: the embedding dimension; ``dtype``/``normalized``: how the rows are stored (float32, L2)."""

    model: BackendDescription | None
    provenance: JsonMap
    files: FrozenMap[str, str]
    files_sha256: FrozenMap[str, str]
    dim: int
    counts: FeatureCounts
    vlaudit: str
    seconds: float
    dtype: str = "float32"
    normalized: str = "l2"

    @classmethod
    def of(cls, *, model: BackendDescription | None, provenance: Mapping[str, object] | None,
           files: Mapping[str, str], files_sha256: Mapping[str, str], dim: int, counts: FeatureCounts,
           vlaudit: str, seconds: float, dtype: str = "float32", normalized: str = "l2") -> FeaturesRunRecord:
        """The record of the writer's values; a provenance key that is one of the record's own (but ``model``)
        is a ValueError, a value JSON cannot hold a TypeError naming it."""
        extra = dict(provenance or {})
        clash = sorted(set(extra) & set(FEATURES_RECORD_KEYS[1:]))
        if clash:
            raise ValueError(f"a features provenance may not redefine {clash}")
        return cls(model=None if "model" in extra else model, provenance=frozen_object(extra, "provenance"),
                   files=FrozenMap(files), files_sha256=FrozenMap(files_sha256), dim=int(dim), counts=counts,
                   vlaudit=vlaudit, seconds=seconds, dtype=dtype, normalized=normalized)

    def to_dict(self) -> JsonObject:
        """The manifest's top-level keys of the run, as :func:`~vlaudit.scoring.features.write_features` has
        always written them."""
        out: JsonObject = {"model": None if self.model is None else self.model.to_dict()}
        out.update({key: thaw(value) for key, value in self.provenance.items()})
        out.update({"files": dict(self.files), "files_sha256": dict(self.files_sha256), "dim": self.dim,
                    "dtype": self.dtype, "normalized": self.normalized, "counts": self.counts.to_dict(),
                    "vlaudit": self.vlaudit, "seconds": self.seconds})
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, JsonValue], *, path: str | Path = "<manifest>") -> FeaturesRunRecord:
        """The record of a features manifest (its top-level keys; the keys that are neither the manifest's nor
        the record's own are the provenance); a key missing or of the wrong kind is an InputError naming it."""
        if "model" not in data:
            raise InputError("missing", path=path, field="model")
        # a JSON object under "model" is the backend's description; anything else is the caller's own model
        model = _description(data, "model", path) if isinstance(data["model"], dict) else None
        provenance = {key: value for key, value in data.items()
                      if key not in MANIFEST_KEYS and (key not in FEATURES_RECORD_KEYS or
                                                       (key == "model" and model is None))}
        return cls.of(model=model, provenance=provenance, files=texts_field(data, "files", path),
                      files_sha256=texts_field(data, "files_sha256", path), dim=count_field(data, "dim", path),
                      counts=FeatureCounts.from_dict(data, path=path), vlaudit=text_field(data, "vlaudit", path),
                      seconds=_number(data, "seconds", path), dtype=text_field(data, "dtype", path),
                      normalized=text_field(data, "normalized", path))


# ------------------------------------------------------------------------------------------------ vca score-dual


@dataclass(frozen=True)
class DualScoringRunRecord:
    """A ``vca score-dual`` run's own manifest keys: the model (its name, spec and description), the decision
    (``kind``, ``decision``: the margin's definition, ``no_image``: what stands for the text context's image,
    ``text_field``: the items' column embedded as the statement, None: the question unwrapped), the run's
    shape (contexts, the one interface, the context constants, seed) and the item and group counts."""

    model: str
    spec: str
    backend: BackendDescription
    no_image: str
    text_field: str | None
    contexts: tuple[str, ...]
    interfaces: tuple[str, ...]
    context_parameters: JsonMap
    seed: int
    n_items: int
    n_groups: int
    kind: str = "dual-encoder"
    decision: str = DUAL_DECISION

    @classmethod
    def of(cls, *, model: str, spec: str, backend: BackendDescription, no_image: str, text_field: str | None,
           contexts: Sequence[str], interfaces: Sequence[str], context_parameters: Mapping[str, object], seed: int,
           n_items: int, n_groups: int, kind: str = "dual-encoder",
           decision: str = DUAL_DECISION) -> DualScoringRunRecord:
        """The record of the run's values (counts as Python ints; a TypeError names a value JSON cannot hold)."""
        return cls(model=model, spec=spec, backend=backend, no_image=no_image, text_field=text_field,
                   contexts=tuple(contexts), interfaces=tuple(interfaces),
                   context_parameters=frozen_object(context_parameters, "context_parameters"), seed=int(seed),
                   n_items=int(n_items), n_groups=int(n_groups), kind=kind, decision=decision)

    def to_dict(self) -> JsonObject:
        """The manifest's top-level keys of the run, as ``vca score-dual`` has always written them."""
        return {"model": self.model, "spec": self.spec, "backend": self.backend.to_dict(), "kind": self.kind,
                "decision": self.decision, "no_image": self.no_image, "text_field": self.text_field,
                "contexts": list(self.contexts), "interfaces": list(self.interfaces),
                "context_parameters": thaw(self.context_parameters), "seed": self.seed, "n_items": self.n_items,
                "n_groups": self.n_groups}

    @classmethod
    def from_dict(cls, data: Mapping[str, JsonValue], *, path: str | Path = "<manifest>") -> DualScoringRunRecord:
        """The record of a ``vca score-dual`` manifest; a key missing or of the wrong kind is an InputError
        naming it."""
        return cls.of(model=text_field(data, "model", path), spec=text_field(data, "spec", path),
                      backend=_description(data, "backend", path), no_image=text_field(data, "no_image", path),
                      text_field=_text_or_none(data, "text_field", path), contexts=names_field(data, "contexts", path),
                      interfaces=names_field(data, "interfaces", path),
                      context_parameters=object_field(data, "context_parameters", path), seed=count_field(data, "seed", path),
                      n_items=count_field(data, "n_items", path), n_groups=count_field(data, "n_groups", path),
                      kind=text_field(data, "kind", path), decision=text_field(data, "decision", path))


# ------------------------------------------------------------------------------------------------ data factorial


@dataclass(frozen=True)
class FactorialDatasetRecord:
    """The ``data factorial`` dataset's own manifest keys (VCA §10): the design (seed, stems per relation, the
    canvas size, the relations, the source states and their symbols), the build check's accounting (stems,
    items, stems per relation, unique probes per context, the checks run) and each image's sha256."""

    seed: int
    n_per_relation: int
    canvas: tuple[int, ...]
    relations: tuple[str, ...]
    states: FrozenMap[str, str]
    stems: int
    items: int
    stems_per_relation: FrozenMap[str, int]
    probes: FrozenMap[str, int]
    checks: tuple[str, ...]
    image_sha256: FrozenMap[str, str]

    @classmethod
    def of(cls, *, seed: int, n_per_relation: int, canvas: Sequence[int], relations: Sequence[str],
           states: Mapping[str, str], stems: int, items: int, stems_per_relation: Mapping[str, int],
           probes: Mapping[str, int], checks: Sequence[str], image_sha256: Mapping[str, str]) -> FactorialDatasetRecord:
        return cls(seed=int(seed), n_per_relation=int(n_per_relation), canvas=tuple(int(c) for c in canvas),
                   relations=tuple(relations), states=FrozenMap(states), stems=int(stems), items=int(items),
                   stems_per_relation=FrozenMap((k, int(v)) for k, v in stems_per_relation.items()),
                   probes=FrozenMap((k, int(v)) for k, v in probes.items()), checks=tuple(checks),
                   image_sha256=FrozenMap(image_sha256))

    def to_dict(self) -> JsonObject:
        """The manifest's top-level keys of the dataset, as ``data factorial`` has always written them."""
        return {"seed": self.seed, "n_per_relation": self.n_per_relation, "canvas": list(self.canvas),
                "relations": list(self.relations), "states": dict(self.states), "stems": self.stems,
                "items": self.items, "stems_per_relation": dict(self.stems_per_relation),
                "probes": dict(self.probes), "checks": list(self.checks), "image_sha256": dict(self.image_sha256)}

    @classmethod
    def from_dict(cls, data: Mapping[str, JsonValue], *, path: str | Path = "<manifest>") -> FactorialDatasetRecord:
        """The record of the dataset's manifest; a key missing or of the wrong kind is an InputError naming it."""
        canvas = data.get("canvas")
        if not isinstance(canvas, list) or not all(isinstance(c, int) and not isinstance(c, bool) for c in canvas):
            raise InputError("must be a list of whole numbers", path=path, field="canvas")
        return cls.of(seed=count_field(data, "seed", path), n_per_relation=count_field(data, "n_per_relation", path),
                      canvas=[int(c) for c in canvas if isinstance(c, int)], relations=names_field(data, "relations", path),
                      states=texts_field(data, "states", path), stems=count_field(data, "stems", path),
                      items=count_field(data, "items", path),
                      stems_per_relation=_counts(data, "stems_per_relation", path),
                      probes=_counts(data, "probes", path), checks=names_field(data, "checks", path),
                      image_sha256=texts_field(data, "image_sha256", path))
