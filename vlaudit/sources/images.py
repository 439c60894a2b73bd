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

import numpy as np
from PIL import Image as PILImage
from PIL import UnidentifiedImageError

from vlaudit.hashing import sha256_bytes
from vlaudit.sources.image_paths import confine

if TYPE_CHECKING:
    from PIL import Image


class ImageFailure(Exception):
    """An item's image cannot be used (missing, corrupt, or outside the images directory).

    Messages read ``<reason>: <details>`` with a fixed reason (``image file not found``, ``corrupt or
    unreadable image``, ``image outside --images``, ``unsupported image depth``) that the run summary counts by."""


_SIXTEEN_BIT = ("I;16", "I;16L", "I;16B", "I;16N")


def rgb_image(image: Image.Image) -> Image.Image:
    """``image`` as 8-bit RGB, its bit depth honoured: every image a run or an encoder sees goes through here.

    PIL's own ``convert("RGB")`` clips a 16-bit greyscale PNG (values 0–65535) at 255, turning it white; here
    it is scaled (v / 257, rounded: 8-bit values v·257 come back exactly), so a 16-bit image is embedded
    like its 8-bit twin. A 32-bit integer image is read as 16-bit when its values fit, and refused otherwise;
    a floating-point image is refused (its scale is not in the file)."""
    if image.mode in _SIXTEEN_BIT or image.mode == "I":
        values = np.asarray(image, dtype=np.int64)
        if values.size and (values.min() < 0 or values.max() > 65535):
            raise ImageFailure(f"unsupported image depth: 32-bit integer pixels ({values.min()}..{values.max()}) "
                               "outside the 16-bit range; save it as 8- or 16-bit")
        grey = np.rint(values / 257.0).astype(np.uint8)
        return PILImage.fromarray(grey, mode="L").convert("RGB")
    if image.mode == "F":
        raise ImageFailure("unsupported image depth: floating-point pixels (mode F) have no fixed scale; "
                           "save the image as 8- or 16-bit")
    return image.convert("RGB")  # a copy even when already RGB: the caller may close the file it came from


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
        entry = (_decode(data, path), sha256_bytes(data))
        if len(self._cache) >= self.capacity:
            self._cache.pop(next(iter(self._cache)))
        self._cache[relative] = entry
        return entry


def _decode(data: bytes, path: Path, *, draft: bool = False) -> Image.Image:
    """The file's bytes as an RGB image (``draft``: a JPEG decoded at reduced scale, for a quick check that
    still reads the whole stream); :class:`ImageFailure` with the reason."""
    try:
        with PILImage.open(io.BytesIO(data)) as handle:
            if draft:
                handle.draft("RGB", (64, 64))
            handle.load()
            return rgb_image(handle)
    except ImageFailure as exc:
        raise ImageFailure(f"{exc} ({path})") from exc
    except PILImage.DecompressionBombError as exc:  # not an OSError: PIL refuses to decode it at all
        raise ImageFailure(f"image too large to decode safely: {path}: {exc}") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        # PIL names the in-memory buffer by its address; drop it so that failures.jsonl is reproducible
        detail = re.sub(r"<_io\.BytesIO object at 0x[0-9a-fA-F]+>", "the file", str(exc))
        raise ImageFailure(f"corrupt or unreadable image: {path}: {type(exc).__name__}: {detail}") from exc


def check_image(images_dir: str | Path, relative: str) -> str | None:
    """Why the image ``relative`` under ``images_dir`` cannot be used (None when it can): outside the folder,
    not found, or not decodable — the checks :meth:`ImageStore.load` makes, at a JPEG's reduced scale, so that a
    run can refuse a wrong ``--images`` folder before any model loads."""
    try:
        path = confined_path(Path(images_dir), relative)
        if not path.is_file():
            raise ImageFailure(f"image file not found: {path}")
        _decode(path.read_bytes(), path, draft=True)
    except ImageFailure as exc:
        return str(exc)
    return None
