"""Drawing primitives shared by the procedural scenes and the evidence-source factorial.

Every shape is a polygon whose tight bounding box is exactly the requested box (unit vertices are
normalised to span [-1, 1] on both axes), so the COCO ``bbox`` written for an object is its segmentation's
box and its ``area`` is the polygon area (shoelace). Shapes are filled with PIL, which is fast enough for
hundreds of small scenes per second; backgrounds are numpy arrays.
"""

from __future__ import annotations

import io
import math
import os
import shutil
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

Color = tuple[int, int, int]

# Saturated object colours with names a caption or a GQA attribute can use.
OBJECT_COLORS: dict[str, Color] = {
    "red": (215, 35, 35),
    "green": (30, 150, 50),
    "blue": (35, 75, 215),
    "yellow": (235, 200, 20),
    "orange": (240, 130, 20),
    "purple": (130, 50, 170),
    "pink": (235, 105, 175),
    "brown": (125, 75, 35),
    "black": (20, 20, 20),
    "white": (250, 250, 250),
}

# Pale backgrounds; an object never takes the colour listed as clashing with its background.
BACKGROUND_COLORS: dict[str, Color] = {
    "cream": (245, 238, 215),
    "light gray": (205, 205, 205),
    "pale blue": (200, 220, 240),
    "pale green": (210, 235, 205),
    "beige": (225, 210, 180),
}
BACKGROUND_CLASH = {"cream": "white", "light gray": "white", "pale blue": "white", "pale green": "white",
                    "beige": "white"}
TEXTURES = ("plain", "striped", "checkered", "speckled")


def _regular(n: int, phase: float = -math.pi / 2, radii: Sequence[float] = (1.0,)) -> np.ndarray:
    angles = phase + np.arange(n * len(radii)) * (2 * math.pi / (n * len(radii)))
    r = np.resize(np.asarray(radii, dtype=np.float64), angles.size)
    return np.stack([r * np.cos(angles), r * np.sin(angles)], axis=1)


def _unit_shapes() -> dict[str, np.ndarray]:
    arm = 0.36
    cross = np.array([(-arm, -1), (arm, -1), (arm, -arm), (1, -arm), (1, arm), (arm, arm), (arm, 1), (-arm, 1),
                      (-arm, arm), (-1, arm), (-1, -arm), (-arm, -arm)], dtype=np.float64)
    shapes = {
        "circle": _regular(24, phase=0.0),
        "square": np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], dtype=np.float64),
        "triangle": np.array([(0, -1), (1, 1), (-1, 1)], dtype=np.float64),
        "diamond": np.array([(0, -1), (1, 0), (0, 1), (-1, 0)], dtype=np.float64),
        "pentagon": _regular(5),
        "hexagon": _regular(6, phase=0.0),
        "star": _regular(5, radii=(1.0, 0.62)),
        "cross": cross,
    }
    out = {}
    for name, pts in shapes.items():
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        # Normalise so the tight box of every shape is exactly [-1, 1]², i.e. bbox == requested box.
        out[name] = 2.0 * (pts - lo) / (hi - lo) - 1.0
    return out


UNIT_SHAPES: dict[str, np.ndarray] = _unit_shapes()
SHAPES: tuple[str, ...] = tuple(UNIT_SHAPES)


def polygon_area(points: np.ndarray) -> float:
    """Shoelace area of a simple polygon given as an (n, 2) array."""
    x, y = points[:, 0], points[:, 1]
    return float(0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def shape_polygon(shape: str, box: Sequence[float]) -> np.ndarray:
    """Vertices (n, 2) of ``shape`` filling the COCO box [x, y, w, h] (tight bounding box == box)."""
    x, y, w, h = (float(v) for v in box)
    unit = UNIT_SHAPES[shape]
    return np.stack([x + (unit[:, 0] + 1.0) * (w / 2.0), y + (unit[:, 1] + 1.0) * (h / 2.0)], axis=1)


def background(width: int, height: int, color: Color, texture: str, rng: np.random.Generator) -> np.ndarray:
    """An (h, w, 3) uint8 canvas: plain, striped, checkered or speckled around ``color`` (low contrast)."""
    if texture == "striped":
        period = int(rng.integers(6, 14))
        shade = -18 * _pattern("diagonal" if rng.random() < 0.5 else "rows", period, width, height)
    elif texture == "checkered":
        shade = -16 * _pattern("checker", int(rng.integers(8, 16)), width, height)
    elif texture == "speckled":
        shade = rng.integers(-14, 15, size=(height, width), dtype=np.int16)
    elif texture == "plain":
        shade = np.zeros((height, width), dtype=np.int16)
    else:
        raise ValueError(f"unknown texture {texture!r} (expected one of {TEXTURES})")
    return np.clip(shade[..., None] + np.asarray(color, dtype=np.int16), 0, 255).astype(np.uint8)


@lru_cache(maxsize=64)
def _pattern(kind: str, period: int, width: int, height: int) -> np.ndarray:
    """A 0/1 int16 (h, w) band pattern, cached: only a few periods and sizes ever occur."""
    yy, xx = np.mgrid[0:height, 0:width]
    if kind == "diagonal":
        band = ((xx + yy) // period) % 2
    elif kind == "rows":
        band = (yy // period) % 2
    else:
        band = ((xx // period) + (yy // period)) % 2
    band = band.astype(np.int16)
    band.flags.writeable = False
    return band


def draw_polygons(canvas: np.ndarray | Color, polygons: Sequence[tuple[np.ndarray, Color]],
                  size: tuple[int, int] | None = None):
    """Fill each (vertices, colour) polygon in order onto ``canvas`` (an (h, w, 3) array, or a plain colour
    with ``size`` = (w, h)); returns a PIL RGB image."""
    if isinstance(canvas, np.ndarray):
        image = Image.fromarray(canvas, mode="RGB")
    else:
        if size is None:
            raise ValueError("a plain-colour canvas needs size=(width, height)")
        image = Image.new("RGB", size, tuple(canvas))
    draw = ImageDraw.Draw(image)
    for points, color in polygons:
        draw.polygon([(float(px), float(py)) for px, py in points], fill=tuple(color))
    return image


class ImageDirWriter:
    """Write many image files into a staging folder, then swap it in as ``target`` in one rename.

    Renaming hundreds of files over existing ones is slow on some filesystems and a killed run would leave
    a mix of old and new images; staging keeps ``target`` either the old or the complete new set.
    """

    def __init__(self, target: str | Path) -> None:
        self.target = Path(target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.staging = Path(tempfile.mkdtemp(prefix=f".{self.target.name}-", suffix=".tmp",
                                             dir=self.target.parent))
        self.staging.chmod(0o755)  # mkdtemp makes it private; the swapped-in folder should look like mkdir's

    def write(self, name: str, data: bytes) -> None:
        (self.staging / name).write_bytes(data)

    def commit(self) -> None:
        old = None
        if self.target.exists():
            old = self.target.with_name(f".{self.target.name}-old-{os.getpid()}")
            os.replace(self.target, old)
        os.replace(self.staging, self.target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> ImageDirWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def encode(image, fmt: str, **options) -> bytes:
    """Encoded bytes of a PIL image (``fmt`` = PNG or JPEG)."""
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()
