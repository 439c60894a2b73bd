"""The run manifest: everything that determines a run's outputs, so that it can be rebuilt exactly.

One type (:class:`RunManifest`) and one writer (:func:`write_manifest`) for every command that writes a
resumable run or a manifest (``vca score``, ``vca score-dual``, ``cycles score-mllm``, ``features``): the
schema version, the command, its run spec as recorded (``arguments``: resolved paths and content
fingerprints, :mod:`vlaudit.scoring.run_spec`), what the command adds (model id, revision, dtype, pixel
budget, prompt template hash with one example prompt per template, context constants, counts, ...), the
package versions and the git commit of vlaudit.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from vlaudit.hashing import sha256_file, sha256_json
from vlaudit.tables import write_json

MANIFEST_FILE = "manifest.json"
#: 1: the fields of :class:`RunManifest` (earlier manifests carry no ``schema_version``)
MANIFEST_SCHEMA_VERSION = 1
_OWN_KEYS = ("schema_version", "command", "arguments", "packages", "git_commit")

PACKAGES = ("vlaudit", "torch", "transformers", "tokenizers", "pillow", "numpy", "pyarrow", "open_clip_torch")


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> str | None:
    """HEAD of the checkout vlaudit runs from (None outside a git checkout)."""
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def model_fingerprint(describe: dict[str, Any], weights: dict[str, Any] | None, interface: str | None = None) -> str:
    """sha256 of what changes a model's outputs (device and batch size excluded: rounding only).

    Of the verbalizer token ids only those of ``interface`` count, so that a run that adds an interface
    reuses the cached margins of the interfaces it already scored."""
    ignored = ("device", "prefix_cache", "prefix_cache_decision", "verbalizer_ids")
    relevant = {k: v for k, v in describe.items() if k not in ignored}
    if interface is not None:
        relevant["verbalizer_ids"] = (describe.get("verbalizer_ids") or {}).get(interface)
    return sha256_json({"model": relevant, "weights": weights})


def local_weights_identity(name: str) -> dict[str, Any] | None:
    """For a local model directory: (file, size, sha256 of config) so rebuilt weights never reuse a cache."""
    path = Path(name)
    if not path.is_dir():
        return None
    files = {p.name: p.stat().st_size for p in sorted(path.iterdir()) if p.is_file()}
    weights = {}
    for p in sorted(path.glob("*.safetensors")):
        if p.stat().st_size <= 64 * 2**20:  # small files are hashed; large ones are named by size
            weights[p.name] = sha256_file(p)
    config = path / "config.json"
    return {"files": files, "weights_sha256": weights,
            "config_sha256": sha256_file(config) if config.is_file() else None}


@dataclass(frozen=True)
class RunManifest:
    """A run folder's ``manifest.json``.

    ``record`` holds what the command adds; its keys are written at the top level beside the common ones
    (the readers of a run — the factorial analysis, the HTML report, ``read_features`` — read them there).
    """

    command: str
    arguments: dict[str, Any]
    record: dict[str, Any] = field(default_factory=dict)
    packages: dict[str, str | None] = field(default_factory=package_versions)
    git_commit: str | None = field(default_factory=git_commit)
    schema_version: int = MANIFEST_SCHEMA_VERSION

    def __post_init__(self) -> None:
        clash = sorted(set(self.record) & set(_OWN_KEYS))
        if clash:
            raise ValueError(f"a manifest record may not redefine {clash}")

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "command": self.command, **self.record,
                "arguments": self.arguments, "packages": self.packages, "git_commit": self.git_commit}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunManifest:
        """Read a manifest back (one written before ``schema_version`` existed reads as version 0)."""
        return cls(command=str(data.get("command") or (data.get("arguments") or {}).get("command") or ""),
                   arguments=dict(data.get("arguments") or {}),
                   record={k: v for k, v in data.items() if k not in _OWN_KEYS},
                   packages=dict(data.get("packages") or {}), git_commit=data.get("git_commit"),
                   schema_version=int(data.get("schema_version", 0)))


def write_manifest(folder: str | Path, manifest: RunManifest) -> Path:
    """Write ``FOLDER/manifest.json`` atomically (a temporary file renamed into place)."""
    return write_json(Path(folder) / MANIFEST_FILE, manifest.to_dict())
