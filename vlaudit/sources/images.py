"""The images of a run, read from the user's images folder: confined paths, decoded once, failures named.

A :class:`ImageStore` loads and verifies the image files under one folder (:func:`confined_path` refuses a
path that leaves it, see :mod:`vlaudit.sources.image_paths`); every problem is an :class:`ImageFailure`
whose message starts with a fixed reason, so run summaries can count failures by kind.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image as PILImage
from PIL import UnidentifiedImageError

from vlaudit.hashing import sha256_bytes
from vlaudit.sources.image_paths import confine

if TYPE_CHECKING:
    from PIL import Image


class ImageFailure(Exception):
    """An item's image cannot be used (missing, corrupt, or outside the images directory).

    Messages read ``<reason>: <details>`` with a fixed reason (``image file not found``, ``corrupt or
    unreadable image``, ``image outside --images``) that the run summary counts by."""


def confined_path(images_dir: Path, relative: str) -> Path:
    """``images_dir / relative``, refusing a path that leaves ``images_dir`` (``..``, absolute); see paths.py."""
    candidate = confine(images_dir, relative)
    if candidate is None:
        raise ImageFailure(f"image outside --images: {relative!r} leaves {str(images_dir)!r}")
    return candidate


class ImageStore:
    """Loads and verifies images under one directory, remembering the last few decoded ones."""

    def __init__(self, images_dir: str | Path, capacity: int = 64) -> None:
        self.images_dir = Path(images_dir)
        self.capacity = capacity
        self._cache: dict[str, tuple[Image.Image, str]] = {}

    def load(self, relative: str) -> tuple[Image.Image, str]:
        """(RGB image, sha256 of the file bytes); raises :class:`ImageFailure` with the reason."""
        if relative in self._cache:
            return self._cache[relative]
        path = confined_path(self.images_dir, relative)
        if not path.is_file():
            raise ImageFailure(f"image file not found: {path}")
        data = path.read_bytes()
        try:
            with PILImage.open(io.BytesIO(data)) as handle:
                handle.load()
                image = handle.convert("RGB")
        except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
            # PIL names the in-memory buffer by its address; drop it so that failures.jsonl is reproducible
            detail = re.sub(r"<_io\.BytesIO object at 0x[0-9a-fA-F]+>", "the file", str(exc))
            raise ImageFailure(f"corrupt or unreadable image: {path}: {type(exc).__name__}: {detail}") from exc
        entry = (image, sha256_bytes(data))
        if len(self._cache) >= self.capacity:
            self._cache.pop(next(iter(self._cache)))
        self._cache[relative] = entry
        return entry
