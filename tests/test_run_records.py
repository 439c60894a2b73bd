"""The typed records of the manifests other than a scoring run's (vlaudit.results.run_records).

Each writer (``features``, ``vca score-dual``, ``data factorial``) builds its record through the real code on a
tiny input; the manifest it writes reads back with ``from_dict`` key for key and in order, and the bytes are
those of the plain dict the writer built before these types (rebuilt here by the old formula)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlaudit.errors import InputError
from vlaudit.files import write_manifest
from vlaudit.results.manifest import MANIFEST_KEYS, ManifestRecord, RunManifest
from vlaudit.results.run_records import (
    DUAL_RECORD_KEYS,
    FACTORIAL_RECORD_KEYS,
    FEATURES_RECORD_KEYS,
    DualScoringRunRecord,
    FactorialDatasetRecord,
    FeatureCounts,
    FeaturesRunRecord,
)


class _Dual:
    """A deterministic dual encoder (no torch): an image's mean colour, a text's length and vowels."""

    spec = "fake:dual"
    batch_size = 2

    def describe(self) -> dict:
        return {"spec": self.spec, "family": "fake", "dim": 3}

    def encode_images(self, images) -> np.ndarray:
        rows = np.asarray([np.asarray(i.convert("RGB"), dtype=np.float64).mean(axis=(0, 1)) + 1 for i in images])
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)

    def encode_texts(self, texts) -> np.ndarray:
        rows = np.asarray([[len(t), sum(c in "aeiou" for c in t), 1.0] for t in texts], dtype=np.float64)
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _own_keys(manifest: dict) -> list[str]:
    return [key for key in manifest if key not in MANIFEST_KEYS]


def _same_bytes(tmp_path: Path, command: str, typed: ManifestRecord, plain: dict) -> None:
    """The typed record and the plain dict write the same manifest.json bytes."""
    written = []
    for name, record in (("typed", typed), ("plain", plain)):
        manifest = RunManifest(command=command, arguments={"seed": 5}, record=record, packages={"numpy": "2"},
                               git_commit="abc")
        written.append(write_manifest(tmp_path / name, manifest).read_bytes())
    assert written[0] == written[1]


# ------------------------------------------------------------------------------------------------ features


def _features(write_dual_dataset, tmp_path: Path, provenance: dict) -> dict:
    from vlaudit.scoring.features import collect_inputs, write_features
    from vlaudit.sources.cycle_tables import read_cycles

    cycles_path, images_dir = write_dual_dataset(tmp_path / "data", with_text=False, with_file_names=False)
    inputs = collect_inputs(read_cycles(cycles_path), cycles_path, images_dir)
    returned = write_features(_Dual(), inputs, tmp_path / "feats", provenance=provenance, arguments={"x": 1})
    manifest = json.loads((tmp_path / "feats" / "manifest.json").read_text())
    assert returned == manifest
    return manifest


def test_a_features_manifest_reads_back_into_its_record_key_for_key(write_dual_dataset, tmp_path: Path) -> None:
    from vlaudit.results.backend_description import BackendDescription

    provenance = {"cycles": "c.jsonl", "images_dir": "images", "test_cycles": {"seed": "t.jsonl"}}
    manifest = _features(write_dual_dataset, tmp_path, provenance)
    record = FeaturesRunRecord.from_dict(manifest, path="feats/manifest.json")
    assert _own_keys(manifest) == list(record.to_dict()) == ["model", *provenance, *FEATURES_RECORD_KEYS[1:]]
    assert record.to_dict() == {key: manifest[key] for key in _own_keys(manifest)}
    assert record.model == BackendDescription.of(_Dual().describe()) and dict(record.provenance)["cycles"] == "c.jsonl"
    assert record.counts == FeatureCounts(image_ids=4, unique_images=3, caption_ids=4, unique_texts=3)
    assert (record.dim, record.dtype, record.normalized) == (3, "float32", "l2")
    assert set(record.files_sha256) == {"images.parquet", "texts.parquet"}
    # the plain dict write_features built before the record: the same bytes
    plain = {"model": _Dual().describe(), **provenance, "files": manifest["files"],
             "files_sha256": manifest["files_sha256"], "dim": 3, "dtype": "float32", "normalized": "l2",
             "counts": manifest["counts"], "vlaudit": manifest["vlaudit"], "seconds": manifest["seconds"]}
    _same_bytes(tmp_path, "features", record, plain)
    assert FeaturesRunRecord.from_dict(manifest) == record


def test_a_provenance_that_names_the_model_is_what_the_manifest_says(write_dual_dataset, tmp_path: Path) -> None:
    """The demo's provenance names the model by its spec: that is written under ``model``, in first place."""
    manifest = _features(write_dual_dataset, tmp_path, {"model": "fake:dual", "cycles": ["a", "b"]})
    assert manifest["model"] == "fake:dual" and _own_keys(manifest)[:2] == ["model", "cycles"]
    record = FeaturesRunRecord.from_dict(manifest)
    assert record.model is None and record.to_dict() == {key: manifest[key] for key in _own_keys(manifest)}
    assert list(record.to_dict()) == _own_keys(manifest)
    provenance = {"model": "fake:dual", "cycles": ["a", "b"]}
    plain = {"model": _Dual().describe(), **provenance, **{key: manifest[key] for key in FEATURES_RECORD_KEYS[1:]}}
    _same_bytes(tmp_path, "features", record, plain)
    with pytest.raises(ValueError, match="files"):
        FeaturesRunRecord.of(model=None, provenance={"files": {}}, files={}, files_sha256={}, dim=1,
                             counts=FeatureCounts(0, 0, 0, 0), vlaudit="0", seconds=0.0)


# ------------------------------------------------------------------------------------------------ vca score-dual


def test_a_dual_run_manifest_reads_back_into_its_record_key_for_key(tmp_path: Path) -> None:
    from dual_groups import make_groups

    from vlaudit.contexts.image_contexts import context_parameters
    from vlaudit.scoring.dual_margins import score_dual
    from vlaudit.sources.items import read_items

    items = read_items(make_groups(tmp_path, n=2))
    score_dual(_Dual(), items, images_dir=tmp_path / "images", out_dir=tmp_path / "run",
               contexts=["original", "text", "blank"], seed=3, arguments={"seed": 3})
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    record = DualScoringRunRecord.from_dict(manifest, path="run/manifest.json")
    assert _own_keys(manifest) == list(record.to_dict()) == list(DUAL_RECORD_KEYS)
    assert record.to_dict() == {key: manifest[key] for key in DUAL_RECORD_KEYS}
    assert (record.model, record.kind, record.no_image, record.text_field) == ("fake:dual", "dual-encoder",
                                                                               "mean-image", None)
    assert (record.contexts, record.interfaces, record.seed, record.n_items, record.n_groups) == (
        ("original", "text", "blank"), ("yesno",), 3, 4, 2)
    plain = {"model": "fake:dual", "spec": "fake:dual", "backend": _Dual().describe(), "kind": "dual-encoder",
             "decision": "m_c(s) = cos(x_c, s) - max over the group's other statements of cos(x_c, s')",
             "no_image": "mean-image", "text_field": None, "contexts": ["original", "text", "blank"],
             "interfaces": ["yesno"], "context_parameters": context_parameters(), "seed": 3, "n_items": 4,
             "n_groups": 2}
    _same_bytes(tmp_path, "vca score-dual", record, plain)
    # the features folder inside the run has its own record
    inner = json.loads((tmp_path / "run" / "features" / "manifest.json").read_text())
    assert FeaturesRunRecord.from_dict(inner).to_dict() == {key: inner[key] for key in _own_keys(inner)}


# ------------------------------------------------------------------------------------------------ data factorial


def test_the_factorial_manifest_reads_back_into_its_record_key_for_key(tmp_path: Path) -> None:
    from vlaudit.builders import factorial as fx

    fx.build_factorial(tmp_path / "fx", seed=7, n_per_relation=1)
    manifest = json.loads((tmp_path / "fx" / "manifest.json").read_text())
    record = FactorialDatasetRecord.from_dict(manifest, path="fx/manifest.json")
    assert _own_keys(manifest) == list(record.to_dict()) == list(FACTORIAL_RECORD_KEYS)
    assert record.to_dict() == {key: manifest[key] for key in FACTORIAL_RECORD_KEYS}
    assert (record.seed, record.n_per_relation, record.canvas, record.stems, record.items) == (7, 1, (512, 512), 4, 36)
    assert record.probes["total"] == 4 * 15 and len(record.image_sha256) == 12
    accounting = {key: manifest[key] for key in ("stems", "items", "stems_per_relation", "probes", "checks")}
    plain = {"seed": 7, "n_per_relation": 1, "canvas": [512, 512], "relations": list(fx.RELATIONS),
             "states": {"pos": "+", "neg": "-", "none": "0"}, **accounting, "image_sha256": manifest["image_sha256"]}
    _same_bytes(tmp_path, fx.FACTORIAL_COMMAND, record, plain)


# ------------------------------------------------------------------------------------------------ bad fields


def _features_data() -> dict:
    return FeaturesRunRecord.of(
        model=None, provenance={"cycles": "c.jsonl"}, files={"images": "images.parquet", "texts": "texts.parquet"},
        files_sha256={"images.parquet": "0" * 64}, dim=4, counts=FeatureCounts(2, 1, 2, 2), vlaudit="1",
        seconds=0.5).to_dict()


def _dual_data() -> dict:
    from vlaudit.results.backend_description import BackendDescription

    return DualScoringRunRecord.of(model="m", spec="s", backend=BackendDescription.of({"spec": "s"}),
                                   no_image="zero", text_field="statement", contexts=["original"],
                                   interfaces=["yesno"], context_parameters={"blank_rgb": [1, 2, 3]}, seed=0,
                                   n_items=2, n_groups=1).to_dict()


def _factorial_data() -> dict:
    return FactorialDatasetRecord.of(seed=1, n_per_relation=1, canvas=[8, 8], relations=["left of"],
                                     states={"pos": "+"}, stems=1, items=9, stems_per_relation={"left of": 1},
                                     probes={"total": 15}, checks=["nine cells"],
                                     image_sha256={"images/a.png": "f" * 64}).to_dict()


@pytest.mark.parametrize("kind, data, key, bad, field, message", [
    (FeaturesRunRecord, _features_data, "dim", "4", "dim", "whole number"),
    (FeaturesRunRecord, _features_data, "counts", {"image_ids": 2}, "counts.unique_images", "whole number"),
    (FeaturesRunRecord, _features_data, "files_sha256", {"images.parquet": 1}, "files_sha256.images.parquet",
     "text"),
    (FeaturesRunRecord, _features_data, "model", {"family": "x"}, "model", "spec"),
    (FeaturesRunRecord, _features_data, "seconds", "fast", "seconds", "number"),
    (DualScoringRunRecord, _dual_data, "backend", None, "backend", "JSON object"),
    (DualScoringRunRecord, _dual_data, "text_field", 3, "text_field", "text or null"),
    (DualScoringRunRecord, _dual_data, "n_groups", True, "n_groups", "whole number"),
    (DualScoringRunRecord, _dual_data, "contexts", "original", "contexts", "list of names"),
    (FactorialDatasetRecord, _factorial_data, "canvas", [8, "8"], "canvas", "whole numbers"),
    (FactorialDatasetRecord, _factorial_data, "probes", {"total": 1.5}, "probes.total", "whole number"),
    (FactorialDatasetRecord, _factorial_data, "image_sha256", [], "image_sha256", "JSON object"),
])
def test_a_records_wrong_field_is_named(kind, data, key, bad, field, message) -> None:
    good = data()
    assert kind.from_dict(good).to_dict() == good
    with pytest.raises(InputError, match=message) as caught:
        kind.from_dict({**good, key: bad}, path="run/manifest.json")
    assert caught.value.path == "run/manifest.json" and caught.value.field == field


def test_a_missing_field_is_named() -> None:
    for kind, data, key in ((FeaturesRunRecord, _features_data(), "model"),
                            (DualScoringRunRecord, _dual_data(), "text_field"),
                            (FactorialDatasetRecord, _factorial_data(), "seed")):
        with pytest.raises(InputError) as caught:
            kind.from_dict({k: v for k, v in data.items() if k != key}, path="m.json")
        assert caught.value.field == key
