"""The run manifest of a scoring run: the model's fingerprint and weights identity, and the one manifest type.

The type (:class:`~vlaudit.results.manifest.RunManifest`) and its writer (:func:`write_manifest`) live in
the leaves ``results/manifest.py`` and ``files.py`` so that builders can write a dataset's manifest too;
they are re-exported here for the scoring commands (``vca score``, ``vca score-dual``, ``cycles score-mllm``,
``features``), which record their run spec under ``arguments``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vlaudit.files import write_manifest
from vlaudit.hashing import sha256_file, sha256_json
from vlaudit.results.backend_description import BackendDescription
from vlaudit.results.manifest import (
    MANIFEST_FILE,
    MANIFEST_SCHEMA_VERSION,
    RunManifest,
    git_commit,
    package_versions,
)
from vlaudit.results.versioned import JsonObject, JsonValue

__all__ = ["MANIFEST_FILE", "MANIFEST_SCHEMA_VERSION", "RunManifest", "git_commit", "local_weights_identity",
           "model_fingerprint", "package_versions", "write_manifest"]


def model_fingerprint(describe: BackendDescription | Mapping[str, JsonValue], weights: JsonObject | None,
                      interface: str | None = None) -> str:
    """sha256 of what changes a model's outputs (device and batch size excluded: rounding only), over the
    description's JSON (:meth:`~vlaudit.results.backend_description.BackendDescription.to_dict`: the same
    hash as the plain ``describe()`` dict it replaced).

    Of the verbalizer token ids only those of ``interface`` count, so that a run that adds an interface
    reuses the cached margins of the interfaces it already scored."""
    if isinstance(describe, BackendDescription):
        describe = describe.to_dict()
    # "server": what a served model's server says about itself (its version; the dtype the user said), recorded
    # only: a dtype the server itself reports is in "served", which counts
    ignored = ("device", "prefix_cache", "prefix_cache_decision", "verbalizer_ids", "letter_ids", "server")
    relevant = {k: v for k, v in describe.items() if k not in ignored}
    if interface == "letter":  # the option letters' ids play the verbalizers' part
        relevant["verbalizer_ids"] = describe.get("letter_ids")
    elif interface is not None:
        ids = describe.get("verbalizer_ids")
        relevant["verbalizer_ids"] = ids.get(interface) if isinstance(ids, Mapping) else None
    return sha256_json({"model": relevant, "weights": weights})


def local_weights_identity(name: str) -> JsonObject | None:
    """For a local model directory: (file, size, sha256 of config) so rebuilt weights never reuse a cache."""
    path = Path(name)
    if not path.is_dir():
        return None
    files: JsonObject = {p.name: p.stat().st_size for p in sorted(path.iterdir()) if p.is_file()}
    weights: JsonObject = {}
    for p in sorted(path.glob("*.safetensors")):
        if p.stat().st_size <= 64 * 2**20:  # small files are hashed; large ones are named by size
            weights[p.name] = sha256_file(p)
    config = path / "config.json"
    return {"files": files, "weights_sha256": weights,
            "config_sha256": sha256_file(config) if config.is_file() else None}
