"""Content hashes and the canonical JSON they are taken over — one definition for every cache key and manifest.

* :func:`canonical_json` — ``json.dumps`` with sorted keys, no whitespace (``","``/``":"``), non-ASCII kept
  as is and unknown objects written as ``str(obj)``: equal mappings give equal text whatever their key order.
* :func:`sha256_bytes` / :func:`sha256_text` / :func:`sha256_file` / :func:`sha256_json` — lowercase hex sha256
  of bytes, of a text's UTF-8 bytes, of a file's bytes (streamed in 1 MiB blocks), of ``canonical_json(obj)``.
* :func:`pixels_sha256` — sha256 of ``"{mode}:{width}x{height}:"`` followed by the image's raw pixel bytes
  (``Image.tobytes()``), so two images are equal under it iff mode, size and every pixel agree.

Standard library only (PIL images are duck-typed), so importing this module stays cheap.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from PIL import Image


def canonical_json(obj: Any) -> str:
    """Sorted-key, whitespace-free JSON text of ``obj`` (non-ASCII kept; other objects as ``str``)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_json(obj: Any) -> str:
    """Hex sha256 of :func:`canonical_json` of ``obj`` (UTF-8)."""
    return sha256_text(canonical_json(obj))


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@overload
def pixels_sha256(image: Image.Image) -> str: ...


@overload
def pixels_sha256(image: None) -> None: ...


@overload
def pixels_sha256(image: Image.Image | None) -> str | None: ...


def pixels_sha256(image: Image.Image | None) -> str | None:
    """Hex sha256 of an image's mode, size and pixels (see the module docstring); None for no image."""
    if image is None:
        return None
    digest = hashlib.sha256(f"{image.mode}:{image.size[0]}x{image.size[1]}:".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()
