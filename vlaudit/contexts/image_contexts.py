"""Matched image contexts of the Visual Credit Audit (VCA §11, Table 10) as pure functions of (item, image, seed).

=========  =================================================================================  ===============
context    construction                                                                       role
=========  =================================================================================  ===============
original   the unmodified RGB image                                                           primary support
text       no image at all (``render_context`` returns None; no placeholder in the prompt)   primary control
blank      same-size canvas filled with the fixed mid-gray ``BLANK_RGB`` = (128, 128, 128)    primary control
mean       same-size canvas filled with the image's own mean colour (VCA §18 robustness)      robustness
mismatch   a donor image of the same split (seeded derangement of the split's images)         robustness only
rele       padded subject–object box union filled with the image mean (relation-erased)       box stress test
irre       distant grid tiles filled with the image mean, overlap with the union measured    box stress test
irre-      today's variant: only grid tiles disjoint from the protected union (zero overlap)   box stress test
disjoint
blur       Gaussian blur of radius ``BLUR_FRACTION · max(W, H)`` pixels (strong)               stress probe
patch-     the ``PATCH_GRID × PATCH_GRID`` grid of equal tiles moved by a fixed derangement    stress probe
shuffle
=========  =================================================================================  ===============

An item with several images (MMMU) is rendered one image at a time, in order
(:func:`vlaudit.scoring.run.plan.render_images`): each of its images blanked, mean-filled, blurred or shuffled;
mismatch shows another item's whole image set; the erasure views, built around one image's boxes, are
unavailable for it.

The paper fixes the roles and the constructions but not the padding and tile constants; ours are module
constants, recorded by :func:`context_parameters` so that a run manifest can state them:

* Padding: the subject–object union (COCO ``[x, y, w, h]`` pixels) grows on every side by
  ``PAD_FRACTION · max(W, H)`` pixels (at least ``PAD_MIN_PX``), clipped to the image. This padded union is
  both what RelE fills and what IrrE protects.
* IrrE tiles (VCA §11, Table 10 "Distant tiles filled outside the protected union"; Table 11 measures how
  many IrrE views still erase inside it): the image is cut into an ``IRRE_GRID × IRRE_GRID`` grid (the last
  row/column takes the remainder) and tiles are taken farthest first (distance from the tile centre to the
  union centre; ties by row, then column) until the filled area reaches ``IRRE_AREA_FRACTION`` of the image.
  ``irre`` (the paper's construction) ranks every tile, so a large union — VSR's boxes leave little
  background — is partly erased and the overlap is measured (:func:`erasure_geometry`); every item with boxes
  gets a view. ``irre-disjoint`` ranks only tiles that do not touch the union, so it never changes a pixel
  inside it (zero overlap by construction) and an item whose union leaves no free tile has no view
  (:class:`ContextUnavailable`, counted as skipped).
* Mean colour: the per-channel arithmetic mean of the RGB image over all pixels, rounded to integers.
* Stress probes (VCA §18, "strong blur and deterministic 8×8 patch shuffle"): they retain or degrade the
  image's content, so they are never controls — ``vca report`` refuses them in ``--controls`` and reports
  each only as its own robustness row (decision survival, support drop) with its n. Blur: PIL's Gaussian
  blur with radius ``max(1, BLUR_FRACTION · max(W, H))``. Patch shuffle: tiles of ``W // PATCH_GRID`` ×
  ``H // PATCH_GRID`` pixels (the right/bottom remainder strips stay in place), tile k moved to position
  π(k) of one fixed derangement of the 64 positions (a seeded cycle, seed ``PATCH_SHUFFLE_SEED``, the same
  for every image, so no tile stays in place); an image smaller than the grid is returned unchanged.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image as PILImage
from PIL import ImageFilter

from vlaudit.errors import VlauditError
from vlaudit.geometry import pixel_rect

if TYPE_CHECKING:
    from PIL import Image

CONTEXTS = ("original", "text", "blank", "mean", "mismatch", "rele", "irre", "irre-disjoint", "blur",
            "patch-shuffle")
BOX_CONTEXTS = ("rele", "irre", "irre-disjoint")  # the views that need subject/object boxes
STRESS_CONTEXTS = ("blur", "patch-shuffle")
BLUR_FRACTION = 0.05
PATCH_GRID = 8
PATCH_SHUFFLE_SEED = 0
BLANK_RGB = (128, 128, 128)
PAD_FRACTION = 0.05
PAD_MIN_PX = 4
IRRE_GRID = 8
IRRE_AREA_FRACTION = 0.25

Box = tuple[int, int, int, int]  # (x0, y0, x1, y1), half-open pixel bounds


class ContextUnavailable(VlauditError):
    """A context that cannot be built for this item (no boxes for rele/irre, no donor, no free tile, ...)."""


def context_parameters() -> dict[str, object]:
    """The constants that define the contexts, for run manifests and cache keys."""
    return {
        "blank_rgb": list(BLANK_RGB),
        "pad_fraction": PAD_FRACTION,
        "pad_min_px": PAD_MIN_PX,
        "irre_grid": IRRE_GRID,
        "irre_area_fraction": IRRE_AREA_FRACTION,
        "irre": "distant tiles, farthest first, overlap with the union measured (VCA §11)",
        "irre-disjoint": "distant tiles disjoint from the union only (not the paper's; zero overlap by construction)",
        "mismatch": "seeded single-cycle derangement of the sorted distinct images of each split",
        "blur_fraction": BLUR_FRACTION,
        "patch_grid": PATCH_GRID,
        "patch_shuffle_seed": PATCH_SHUFFLE_SEED,
    }


# ---------------------------------------------------------------------------------------------- mismatch


def _split_seed(seed: int, split: str | None) -> np.random.Generator:
    # A stable digest (not hash()) so that donors do not change between Python processes.
    digest = hashlib.sha256(f"{seed}\x00{'' if split is None else split}\x00{split is None}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def mismatch_donors(
    item_ids: Sequence[str],
    images: Sequence[str | None],
    splits: Sequence[str | None] | None,
    seed: int,
) -> dict[str, str]:
    """Map each item to the image of another item of its split: a seeded derangement (VCA Table 10, mismatch).

    Within each split (``None`` split, or ``splits=None``, is one pool) the *distinct* images are sorted,
    shuffled with a generator seeded by (seed, split) and each image is sent to its successor on the
    resulting cycle — a derangement, so no item ever receives its own image, and items that share an image
    share a donor. The result depends only on the set of (image, split) pairs and the seed, not on the order
    of the items. Items without an image (text-only items) get no donor. A split with fewer than two distinct
    images raises :class:`ContextUnavailable`.
    """
    if len(images) != len(item_ids) or (splits is not None and len(splits) != len(item_ids)):
        raise ValueError("item_ids, images and splits must have the same length")
    split_of = list(splits) if splits is not None else [None] * len(item_ids)
    pools: dict[str | None, set[str]] = {}
    for image, split in zip(images, split_of, strict=True):
        if image is not None and image != "":
            pools.setdefault(split, set()).add(str(image))
    donor_of: dict[tuple[str | None, str], str] = {}
    for split, pool in pools.items():
        ordered = sorted(pool)
        if len(ordered) < 2:
            raise ContextUnavailable(
                f"mismatch needs at least two distinct images in split {split!r}; it has {len(ordered)}"
            )
        cycle = [ordered[i] for i in _split_seed(seed, split).permutation(len(ordered))]
        for position, image in enumerate(cycle):
            donor_of[(split, image)] = cycle[(position + 1) % len(cycle)]
    return {
        str(item_id): donor_of[(split, str(image))]
        for item_id, image, split in zip(item_ids, images, split_of, strict=True)
        if image is not None and image != ""
    }


# ---------------------------------------------------------------------------------------------- geometry


def image_mean_rgb(image: Image.Image) -> tuple[int, int, int]:
    """Per-channel mean colour of the RGB image over all pixels, rounded half-up to integers."""
    # From the 3×256 histogram (computed in C): Σ level·count is an exact integer, so the mean equals the
    # float64 mean over the pixels, at a fraction of the cost on real-size images.
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    counts = np.asarray(rgb.histogram(), dtype=np.int64).reshape(3, 256)
    n_pixels = rgb.width * rgb.height
    mean = (counts @ np.arange(256, dtype=np.int64)) / n_pixels
    red, green, blue = (int(math.floor(value + 0.5)) for value in mean)
    return red, green, blue


def _clip_box(box: Sequence[float], width: int, height: int, name: str) -> Box:
    try:
        values = [float(v) for v in box]
    except (TypeError, ValueError):
        values = []
    if len(values) != 4:
        raise ContextUnavailable(f"box {name!r} must be [x, y, w, h], got {box!r}")
    x, y, w, h = values
    if not all(math.isfinite(v) for v in (x, y, w, h)) or w < 0 or h < 0:
        raise ContextUnavailable(f"box {name!r} is not a valid [x, y, w, h]: {box!r}")
    x0, y0, x1, y1 = pixel_rect(values, width, height)
    if x1 <= x0 or y1 <= y0:
        raise ContextUnavailable(f"box {name!r} {box!r} lies outside the {width}x{height} image")
    return x0, y0, x1, y1


def protected_union(boxes: Mapping[str, Sequence[float]] | None, width: int, height: int) -> Box:
    """The padded subject–object union ``(x0, y0, x1, y1)`` that RelE fills and IrrE protects (see module doc)."""
    if not boxes or "subject" not in boxes or "object" not in boxes:
        raise ContextUnavailable("rele/irre need boxes {'subject': [x, y, w, h], 'object': [x, y, w, h]}")
    sx0, sy0, sx1, sy1 = _clip_box(boxes["subject"], width, height, "subject")
    ox0, oy0, ox1, oy1 = _clip_box(boxes["object"], width, height, "object")
    pad = max(PAD_MIN_PX, math.ceil(PAD_FRACTION * max(width, height)))
    return (max(0, min(sx0, ox0) - pad), max(0, min(sy0, oy0) - pad),
            min(width, max(sx1, ox1) + pad), min(height, max(sy1, oy1) + pad))


def _grid_edges(length: int, parts: int) -> list[int]:
    parts = max(1, min(parts, length))
    step = length // parts
    return [i * step for i in range(parts)] + [length]


def irre_tiles(union: Box, width: int, height: int, *, disjoint: bool = False) -> list[Box]:
    """The tiles IrrE fills: the most distant grid tiles (``disjoint``: only those off the union; module doc)."""
    ux0, uy0, ux1, uy1 = union
    ucx, ucy = (ux0 + ux1) / 2.0, (uy0 + uy1) / 2.0
    xs, ys = _grid_edges(width, IRRE_GRID), _grid_edges(height, IRRE_GRID)
    candidates: list[tuple[float, int, int, Box]] = []
    for row in range(len(ys) - 1):
        for col in range(len(xs) - 1):
            tile = (xs[col], ys[row], xs[col + 1], ys[row + 1])
            overlaps = tile[0] < ux1 and ux0 < tile[2] and tile[1] < uy1 and uy0 < tile[3]
            if not (disjoint and overlaps):
                distance = math.hypot((tile[0] + tile[2]) / 2.0 - ucx, (tile[1] + tile[3]) / 2.0 - ucy)
                candidates.append((-distance, row, col, tile))
    candidates.sort()
    target = IRRE_AREA_FRACTION * width * height
    chosen: list[Box] = []
    area = 0
    for _, _, _, tile in candidates:
        if area >= target:
            break
        chosen.append(tile)
        area += (tile[2] - tile[0]) * (tile[3] - tile[1])
    return chosen


def _area(box: Box) -> int:
    return max(0, box[2] - box[0]) * max(0, box[3] - box[1])


def _overlap(a: Box, b: Box) -> int:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def erasure_geometry(boxes: Mapping[str, Sequence[float]] | None, width: int, height: int, *,
                     disjoint: bool = False) -> dict[str, float | None]:
    """How much of the image one item's erasure views remove, in % of the image area (VCA §11 "Erasure
    Geometry", Table 11).

    ``union_pct``: the padded subject–object union; ``rele_erased_pct``: what RelE fills (the union);
    ``irre_erased_pct``: what IrrE fills and ``irre_erased_in_union_pct``: the part of it inside the protected
    union (measured; zero by construction with ``disjoint``) — both None when IrrE is unavailable (``disjoint``
    and no tile outside the union). Raises :class:`ContextUnavailable` without usable boxes, like the views.
    """
    union = protected_union(boxes, width, height)
    total = 100.0 / (width * height)
    tiles = irre_tiles(union, width, height, disjoint=disjoint)
    return {"union_pct": _area(union) * total, "rele_erased_pct": _area(union) * total,
            "irre_erased_pct": sum(_area(t) for t in tiles) * total if tiles else None,
            "irre_erased_in_union_pct": sum(_overlap(t, union) for t in tiles) * total if tiles else None}


def _fill(image: Image.Image, regions: Sequence[Box], colour: tuple[int, int, int]) -> Image.Image:
    pixels = np.array(image.convert("RGB"), dtype=np.uint8)
    for x0, y0, x1, y1 in regions:
        pixels[y0:y1, x0:x1] = colour
    return PILImage.fromarray(pixels, mode="RGB")


def patch_permutation(grid: int = PATCH_GRID, seed: int = PATCH_SHUFFLE_SEED) -> np.ndarray:
    """The fixed derangement of the grid's tiles: ``perm[k]`` is where tile k goes (a single seeded cycle)."""
    n = grid * grid
    cycle = np.random.default_rng(seed).permutation(n)
    perm = np.empty(n, dtype=np.int64)
    perm[cycle] = np.roll(cycle, -1)  # each tile moves to its successor on the cycle: no fixed point
    return perm


def patch_shuffle(image: Image.Image, grid: int = PATCH_GRID, seed: int = PATCH_SHUFFLE_SEED) -> Image.Image:
    """Move the equal tiles of a ``grid × grid`` cut by :func:`patch_permutation` (see the module doc)."""
    pixels = np.array(image.convert("RGB"), dtype=np.uint8)
    height, width = pixels.shape[:2]
    th, tw = height // grid, width // grid
    if th == 0 or tw == 0:
        return PILImage.fromarray(pixels, mode="RGB")
    out = pixels.copy()
    for k, target in enumerate(patch_permutation(grid, seed)):
        sr, sc = divmod(k, grid)
        tr, tc = divmod(int(target), grid)
        out[tr * th:(tr + 1) * th, tc * tw:(tc + 1) * tw] = pixels[sr * th:(sr + 1) * th, sc * tw:(sc + 1) * tw]
    return PILImage.fromarray(out, mode="RGB")


def blur(image: Image.Image) -> Image.Image:
    """Strong Gaussian blur, radius ``max(1, BLUR_FRACTION · max(W, H))`` pixels (see the module doc)."""
    rgb = image.convert("RGB")
    return rgb.filter(ImageFilter.GaussianBlur(radius=max(1.0, BLUR_FRACTION * max(rgb.size))))


def render_context(
    context: str,
    image: Image.Image,
    *,
    boxes: Mapping[str, Sequence[float]] | None = None,
    donor: Image.Image | None = None,
    seed: int = 0,
) -> Image.Image | None:
    """The visual input of one context for one item (VCA §11, Table 10; constructions in the module doc).

    ``image`` is the item's original image; ``donor`` the image chosen by :func:`mismatch_donors` (needed for
    ``mismatch`` only); ``boxes`` the subject/object boxes in pixels (needed for :data:`BOX_CONTEXTS` only).
    Returns None for ``text``. ``seed`` is accepted so that every context is a function of (item, image,
    seed); the constructions above are deterministic and do not consume it (the mismatch seed acts through
    the donor). Never mutates its inputs.
    """
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}; expected one of {', '.join(CONTEXTS)}")
    if context == "text":
        return None
    rgb = image.convert("RGB")
    if context == "original":
        return rgb  # convert() always returns a new image, so the caller's image is never shared
    if context == "blank":
        return PILImage.new("RGB", rgb.size, BLANK_RGB)
    if context == "mean":
        return PILImage.new("RGB", rgb.size, image_mean_rgb(rgb))
    if context == "blur":
        return blur(rgb)
    if context == "patch-shuffle":
        return patch_shuffle(rgb)
    if context == "mismatch":
        if donor is None:
            raise ContextUnavailable("mismatch needs a donor image (see mismatch_donors)")
        return donor.convert("RGB")
    width, height = rgb.size
    union = protected_union(boxes, width, height)
    if context == "rele":
        return _fill(rgb, [union], image_mean_rgb(rgb))
    tiles = irre_tiles(union, width, height, disjoint=context == "irre-disjoint")
    if not tiles:
        raise ContextUnavailable(
            f"irre: no {IRRE_GRID}x{IRRE_GRID} grid tile lies outside the protected union {union} "
            f"of the {width}x{height} image"
        )
    return _fill(rgb, tiles, image_mean_rgb(rgb))
