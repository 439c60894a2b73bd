"""A built model folder's seal: the size and sha256 of every file, written last (``.complete``) and checked on
every reuse, so a weights file truncated or edited in the cache is found before a loader trips over it."""

from __future__ import annotations

import json
import time
from pathlib import Path

from vlaudit.hashing import sha256_file

SEAL = ".complete"


def _listing(folder: Path) -> dict[str, list[int | str]]:
    return {str(p.relative_to(folder)): [p.stat().st_size, sha256_file(p)]
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != SEAL}


def seal_folder(folder: Path, label: str) -> None:
    """Write ``folder/.complete``: ``label`` and every file's size and sha256 (the folder is complete)."""
    (folder / SEAL).write_text(json.dumps({"label": label, "files": _listing(folder)}, indent=1) + "\n",
                               encoding="utf-8")


def folder_damage(folder: Path) -> str | None:
    """What is wrong with a sealed folder (a file missing, truncated or changed), or None when it is whole.
    A seal written before files were listed (one line of text) is taken as whole."""
    try:
        seal = json.loads((folder / SEAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = seal.get("files") if isinstance(seal, dict) else None
    if not isinstance(files, dict):
        return None
    for name, (size, digest) in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != size:
            return f"{name} has {path.stat().st_size} bytes, {size} were written"
        if sha256_file(path) != digest:
            return f"{name} changed since it was written"
    return None


def move_aside(folder: Path) -> Path:
    """Rename a damaged folder to ``<parent>/damaged/<name>-<time>`` (kept for a look, never loaded again)."""
    target = folder.parent / "damaged" / f"{folder.name}-{time.strftime('%Y%m%dT%H%M%S')}-{time.time_ns() % 10**6}"
    target.parent.mkdir(parents=True, exist_ok=True)
    folder.rename(target)
    return target
