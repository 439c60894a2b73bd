"""The resumable score cache: numbered chunk files of complete records, each written atomically.

A run directory holds ``cache/chunk-000000.jsonl``, ``cache/chunk-000001.jsonl``, ... Each file is written to
a temporary name, fsynced and renamed (:func:`vlaudit.tables.write_jsonl`), so a run killed at any moment —
even by SIGKILL — leaves only whole chunks behind; a restart reads them back and scores the rest. Records
are keyed by :func:`cache_key`, a sha256 over the model fingerprint (id, revision, weights, dtype, pixel
budget, chat template, verbalizers), the exact serialized prompt, the content hash of the image the model
sees and the interface — so a changed prompt, model or image never reuses a stale margin.
Floats are stored as JSON numbers, whose shortest repr round-trips a float64 exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.hashing import sha256_json
from vlaudit.tables import iter_jsonl, write_jsonl

_CHUNK = re.compile(r"^chunk-(\d{6,})\.jsonl$")


def cache_key(model_fingerprint: str, prompt: str, image_sha256: str | None, interface: str) -> str:
    """sha256 of (model fingerprint, serialized prompt, context image content hash, interface)."""
    return sha256_json({"model": model_fingerprint, "prompt": prompt, "image": image_sha256, "interface": interface})


class ChunkCache:
    """Append-only store of scored records under ``directory`` (one JSON object per line, with ``key``)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.records: dict[str, dict[str, Any]] = {}
        self.next_index = 0

    def load(self) -> dict[str, dict[str, Any]]:
        """Read every complete chunk (temporary files of a killed write are ignored and removed)."""
        self.records = {}
        self.next_index = 0
        if not self.directory.is_dir():
            return self.records
        for path in sorted(self.directory.iterdir()):
            match = _CHUNK.match(path.name)
            if match is None:
                if path.name.startswith(".chunk-") and path.name.endswith(".tmp"):
                    path.unlink(missing_ok=True)  # left by a kill during a write; never renamed, never read
                continue
            self.next_index = max(self.next_index, int(match.group(1)) + 1)
            for line, record in iter_jsonl(path):
                if "key" not in record:
                    raise InputError("cache record without key", path=path, record=f"line {line}", field="key")
                self.records[record["key"]] = record
        return self.records

    def append(self, records: Iterable[Mapping[str, Any]]) -> Path:
        """Write one chunk atomically and add its records to the in-memory index."""
        rows = [dict(r) for r in records]
        path = self.directory / f"chunk-{self.next_index:06d}.jsonl"
        write_jsonl(path, rows)
        self.next_index += 1
        for row in rows:
            self.records[row["key"]] = row
        return path
