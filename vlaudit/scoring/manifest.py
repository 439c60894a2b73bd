"""The run manifest: everything that determines a run's margins, so that it can be rebuilt exactly.

Model id, revision, dtype, pixel budget (it changes the model's input), the prompt template hash with one
stored example prompt per template, the context constants, package versions, the git commit of vlaudit,
the seed and the command's arguments.
"""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from vlaudit.hashing import sha256_file, sha256_json

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
