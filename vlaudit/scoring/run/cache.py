"""The resumable score cache: numbered chunk files of complete records, each written atomically and sealed.

A run directory holds ``cache/chunk-000000.jsonl``, ``cache/chunk-000001.jsonl``, ... Each file is written to
a temporary name, fsynced and renamed (:func:`vlaudit.files.atomic_write`), so a run killed at any moment —
even by SIGKILL — leaves only whole chunks behind; a restart reads them back and scores the rest. Records
are keyed by :func:`cache_key`, a sha256 over the model fingerprint (id, revision, weights, dtype, pixel
budget, chat template, verbalizers), the exact serialized prompt, the content hash of the image the model
sees and the interface — so a changed prompt, model or image never reuses a stale margin.
Floats are stored as JSON numbers, whose shortest repr round-trips a float64 exactly.

Each chunk ends with a seal line ``{"end": {"records": N, "sha256": ...}}`` over the bytes before it. A
chunk damaged after it was written (a disk fault, an interrupted copy of a run folder: truncated, garbled,
empty, or unsealed) is moved to ``cache/damaged/`` with a warning naming it, and its records are scored
again. The whole chunk goes, never only its bad lines: the run then rescores exactly the chunk it scored
before, in the same batches, so the rebuilt margins are bit-identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from vlaudit.files import atomic_write, jsonl_line
from vlaudit.hashing import sha256_bytes, sha256_json

_CHUNK = re.compile(r"^chunk-(\d{6,})\.jsonl$")
DAMAGED_DIR = "damaged"


def cache_key(model_fingerprint: str, prompt: str, image_sha256: str | None, interface: str) -> str:
    """sha256 of (model fingerprint, serialized prompt, context image content hash, interface)."""
    return sha256_json({"model": model_fingerprint, "prompt": prompt, "image": image_sha256, "interface": interface})


class DamagedChunk(Exception):
    """A chunk file that is not the whole, sealed chunk that was written; the message says how."""


def read_chunk(path: Path) -> list[dict[str, Any]]:
    """The records of one sealed chunk file; raises :class:`DamagedChunk` unless it is exactly as written."""
    data = path.read_bytes()
    if not data:
        raise DamagedChunk("empty file")
    if not data.endswith(b"\n"):
        raise DamagedChunk("truncated (no final newline)")
    start = data.rfind(b"\n", 0, len(data) - 1) + 1
    body, seal_line = data[:start], data[start:]
    try:
        seal = orjson.loads(seal_line)
        end = seal["end"]
        expected_records, expected_sha = int(end["records"]), str(end["sha256"])
    except (orjson.JSONDecodeError, TypeError, KeyError, ValueError):
        raise DamagedChunk("no seal line at its end (truncated, or written by an older vlaudit)") from None
    if sha256_bytes(body) != expected_sha:
        raise DamagedChunk("checksum mismatch (the bytes changed after the chunk was written)")
    records = []
    for number, line in enumerate(body.splitlines(), start=1):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:  # only a writer bug gets past the checksum
            raise DamagedChunk(f"invalid JSON at line {number}: {exc}") from None
        if not isinstance(record, dict) or not isinstance(record.get("key"), str):
            raise DamagedChunk(f"line {number} is not a record with a key")
        records.append(record)
    if len(records) != expected_records:
        raise DamagedChunk(f"{len(records)} records where the seal says {expected_records}")
    return records


class ChunkCache:
    """Append-only store of scored records under ``directory`` (one JSON object per line, with ``key``).

    ``warn`` receives one message per damaged chunk moved aside by :meth:`load`; ``damaged`` lists them as
    ``{"chunk", "moved_to", "reason"}``."""

    def __init__(self, directory: str | Path, warn: Callable[[str], None] | None = None) -> None:
        self.directory = Path(directory)
        self.records: dict[str, dict[str, Any]] = {}
        self.next_index = 0
        self.warn = warn
        self.damaged: list[dict[str, str]] = []

    def load(self) -> dict[str, dict[str, Any]]:
        """Read every whole chunk; temporary files of a killed write are removed, damaged chunks moved aside."""
        self.records = {}
        self.next_index = 0
        self.damaged = []
        if not self.directory.is_dir():
            return self.records
        for path in sorted(self.directory.iterdir()):
            match = _CHUNK.match(path.name)
            if match is None:
                if path.name.startswith(".chunk-") and path.name.endswith(".tmp"):
                    path.unlink(missing_ok=True)  # left by a kill during a write; never renamed, never read
                continue
            self.next_index = max(self.next_index, int(match.group(1)) + 1)
            try:
                rows = read_chunk(path)
            except (DamagedChunk, OSError) as exc:
                self._move_aside(path, str(exc))
                continue
            for row in rows:
                self.records[row["key"]] = row
        return self.records

    def _move_aside(self, path: Path, reason: str) -> None:
        target_dir = self.directory / DAMAGED_DIR
        target_dir.mkdir(exist_ok=True)
        target = target_dir / path.name
        copy = 1
        while target.exists():  # an earlier damaged chunk of the same number is kept too
            target = target_dir / f"{path.name}.{copy}"
            copy += 1
        path.rename(target)
        self.damaged.append({"chunk": str(path), "moved_to": str(target), "reason": reason})
        if self.warn is not None:
            self.warn(f"cache chunk {path} is damaged ({reason}); moved it to {target}; its records are "
                      "scored again")

    def append(self, records: Iterable[Mapping[str, Any]]) -> Path:
        """Write one sealed chunk atomically and add its records to the in-memory index."""
        rows = [dict(r) for r in records]
        body = "".join(jsonl_line(row) for row in rows)
        seal = jsonl_line({"end": {"records": len(rows), "sha256": sha256_bytes(body.encode("utf-8"))}})
        path = self.directory / f"chunk-{self.next_index:06d}.jsonl"
        with atomic_write(path) as handle:
            handle.write(body + seal)
        self.next_index += 1
        for row in rows:
            self.records[row["key"]] = row
        return path
