"""Matched image contexts (VCA §11, Table 10): derangement, canvases and box erasures."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from vlaudit.contexts.image_contexts import (
    BLANK_RGB,
    CONTEXTS,
    ContextUnavailable,
    image_mean_rgb,
    irre_tiles,
    mismatch_donors,
    protected_union,
    render_context,
)
from vlaudit.errors import VlauditError


def _noise_image(width: int, height: int, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8), mode="RGB")


# ------------------------------------------------------------------------------------------------ mismatch

_pool = st.lists(
    st.tuples(st.sampled_from([f"img{i}.jpg" for i in range(8)]), st.sampled_from(["train", "val", None])),
    min_size=1,
    max_size=30,
)


def _valid(rows: list[tuple[str, str | None]]) -> bool:
    pools: dict[str | None, set[str]] = {}
    for image, split in rows:
        pools.setdefault(split, set()).add(image)
    return all(len(pool) >= 2 for pool in pools.values())


@settings(max_examples=150, deadline=None)
@given(rows=_pool, seed=st.integers(0, 2**31))
def test_derangement_properties(rows: list[tuple[str, str | None]], seed: int) -> None:
    ids = [f"item{i}" for i in range(len(rows))]
    images = [image for image, _ in rows]
    splits = [split for _, split in rows]
    if not _valid(rows):
        with pytest.raises(ContextUnavailable):
            mismatch_donors(ids, images, splits, seed)
        return
    donors = mismatch_donors(ids, images, splits, seed)
    assert set(donors) == set(ids)
    split_images: dict[str | None, set[str]] = {}
    for image, split in rows:
        split_images.setdefault(split, set()).add(image)
    donor_by_image: dict[tuple[str | None, str], str] = {}
    for item_id, image, split in zip(ids, images, splits, strict=True):
        donor = donors[item_id]
        assert donor != image  # never the item's own image
        assert donor in split_images[split]  # same split
        # items sharing an image (in one split) share a donor
        assert donor_by_image.setdefault((split, image), donor) == donor
    # deterministic per seed, independent of the item order
    assert mismatch_donors(ids, images, splits, seed) == donors
    order = list(reversed(range(len(ids))))
    reordered = mismatch_donors([ids[i] for i in order], [images[i] for i in order], [splits[i] for i in order], seed)
    assert reordered == donors


def test_derangement_is_a_permutation_of_each_split() -> None:
    images = [f"{i}.png" for i in range(20)]
    donors = mismatch_donors([str(i) for i in range(20)], images, None, seed=3)
    assert sorted(donors.values()) == sorted(images)  # a bijection on the pool
    assert donors != mismatch_donors([str(i) for i in range(20)], images, None, seed=4)


def test_derangement_skips_text_only_items_and_rejects_tiny_splits() -> None:
    donors = mismatch_donors(["a", "b", "c"], ["x.png", None, "y.png"], None, seed=0)
    assert donors == {"a": "y.png", "c": "x.png"}
    with pytest.raises(ContextUnavailable, match="split 'val'"):
        mismatch_donors(["a", "b", "c"], ["x.png", "y.png", "z.png"], ["train", "train", "val"], seed=0)
    assert issubclass(ContextUnavailable, VlauditError)


# ------------------------------------------------------------------------------------------------ canvases


@settings(max_examples=25, deadline=None)
@given(width=st.integers(1, 64), height=st.integers(1, 64), seed=st.integers(0, 1000))
def test_blank_and_mean_canvases(width: int, height: int, seed: int) -> None:
    image = _noise_image(width, height, seed)
    blank = render_context("blank", image)
    mean = render_context("mean", image)
    assert blank.size == mean.size == (width, height)
    assert blank.mode == mean.mode == "RGB"
    assert (np.asarray(blank) == np.array(BLANK_RGB)).all()
    expected = tuple(int(np.floor(v + 0.5)) for v in np.asarray(image, dtype=np.float64).reshape(-1, 3).mean(0))
    assert (np.asarray(mean) == np.array(expected)).all()


def test_simple_contexts() -> None:
    image = _noise_image(20, 10).convert("L")  # a grayscale source is converted to RGB
    assert render_context("text", image) is None
    original = render_context("original", image)
    assert original.mode == "RGB" and original.size == (20, 10)
    donor = _noise_image(7, 9, seed=5)
    mismatch = render_context("mismatch", image, donor=donor)
    assert np.array_equal(np.asarray(mismatch), np.asarray(donor))
    with pytest.raises(ContextUnavailable):
        render_context("mismatch", image)
    with pytest.raises(ValueError, match="unknown context"):
        render_context("sepia", image)
    assert set(CONTEXTS) == {"original", "text", "blank", "mean", "mismatch", "rele", "irre", "irre-disjoint", "blur",
                             "patch-shuffle"}


def test_mean_rgb_of_a_uniform_image() -> None:
    assert image_mean_rgb(Image.new("RGB", (5, 3), (10, 200, 33))) == (10, 200, 33)


# ------------------------------------------------------------------------------------------------ erasures

_box = st.tuples(st.integers(0, 90), st.integers(0, 70), st.integers(1, 40), st.integers(1, 40))


def _inside(union: tuple[int, int, int, int], width: int, height: int) -> np.ndarray:
    mask = np.zeros((height, width), dtype=bool)
    x0, y0, x1, y1 = union
    mask[y0:y1, x0:x1] = True
    return mask


@settings(max_examples=60, deadline=None)
@given(subject=_box, obj=_box, seed=st.integers(0, 100))
def test_rele_touches_only_the_padded_union(subject: tuple, obj: tuple, seed: int) -> None:
    width, height = 100, 80
    image = _noise_image(width, height, seed)
    boxes = {"subject": list(subject), "object": list(obj)}
    try:
        union = protected_union(boxes, width, height)
    except ContextUnavailable:  # a box clipped to nothing
        return
    before = np.asarray(image)
    after = np.asarray(render_context("rele", image, boxes=boxes))
    inside = _inside(union, width, height)
    assert np.array_equal(after[~inside], before[~inside])
    assert (after[inside] == np.array(image_mean_rgb(image), dtype=np.uint8)).all()
    # the union covers both boxes
    for x, y, w, h in (subject, obj):
        assert union[0] <= x and union[1] <= y
        assert union[2] >= min(width, x + w) and union[3] >= min(height, y + h)


@settings(max_examples=60, deadline=None)
@given(subject=_box, obj=_box, seed=st.integers(0, 100))
def test_irre_disjoint_leaves_the_protected_union_untouched(subject: tuple, obj: tuple, seed: int) -> None:
    width, height = 100, 80
    image = _noise_image(width, height, seed)
    boxes = {"subject": list(subject), "object": list(obj)}
    try:
        union = protected_union(boxes, width, height)
    except ContextUnavailable:
        return
    inside = _inside(union, width, height)
    # the paper's irre always has a view; it may erase inside the union (measured, see test_erasure_geometry)
    assert irre_tiles(union, width, height)
    render_context("irre", image, boxes=boxes)
    if not irre_tiles(union, width, height, disjoint=True):
        with pytest.raises(ContextUnavailable):
            render_context("irre-disjoint", image, boxes=boxes)
        return
    before = np.asarray(image)
    after = np.asarray(render_context("irre-disjoint", image, boxes=boxes))
    assert np.array_equal(after[inside], before[inside])
    assert (after != before).any(axis=-1).sum() > 0 or (before == image_mean_rgb(image)).all()


def test_irre_fills_the_distant_tiles() -> None:
    image = _noise_image(80, 80, seed=1)
    boxes = {"subject": [0, 0, 10, 10], "object": [5, 5, 10, 10]}  # top-left corner
    after = np.asarray(render_context("irre", image, boxes=boxes))
    mean = np.array(image_mean_rgb(image), dtype=np.uint8)
    # a small union: the farthest tiles are the same whether or not tiles touching the union may be taken
    assert np.array_equal(after, np.asarray(render_context("irre-disjoint", image, boxes=boxes)))
    assert (after[70:, 70:] == mean).all()  # the farthest tile (bottom-right) is filled
    assert np.array_equal(after[:20, :20], np.asarray(image)[:20, :20])
    erased = (after == mean).all(axis=-1).mean()
    assert 0.2 <= erased <= 0.35  # about IRRE_AREA_FRACTION of the image, in whole tiles


def test_erasures_need_boxes() -> None:
    image = _noise_image(30, 30)
    for context in ("rele", "irre", "irre-disjoint"):
        with pytest.raises(ContextUnavailable, match="boxes"):
            render_context(context, image)
        with pytest.raises(ContextUnavailable):
            render_context(context, image, boxes={"subject": [100, 100, 5, 5], "object": [0, 0, 5, 5]})
    whole = {"subject": [0, 0, 30, 30], "object": [0, 0, 30, 30]}
    with pytest.raises(ContextUnavailable, match="no 8x8 grid tile"):
        render_context("irre-disjoint", image, boxes=whole)
    # the paper's construction still fills the most distant quarter, all of it inside the union
    filled = (np.asarray(render_context("irre", image, boxes=whole)) == image_mean_rgb(image)).all(axis=-1)
    assert 0.25 <= filled.mean() <= 0.35


def test_contexts_do_not_mutate_their_input() -> None:
    image = _noise_image(40, 30, seed=2)
    before = np.asarray(image).copy()
    boxes = {"subject": [2, 2, 8, 8], "object": [10, 4, 6, 6]}
    for context in CONTEXTS:
        render_context(context, image, boxes=boxes, donor=_noise_image(4, 4))
    assert np.array_equal(np.asarray(image), before)


def test_boxes_from_any_sequence_and_bad_boxes() -> None:
    image = _noise_image(50, 40, seed=3)
    as_lists = render_context("rele", image, boxes={"subject": [2, 2, 8, 8], "object": [20, 10, 6, 6]})
    as_arrays = render_context("rele", image, boxes={"subject": np.array([2, 2, 8, 8]), "object": (20, 10, 6, 6)})
    assert np.array_equal(np.asarray(as_lists), np.asarray(as_arrays))
    for bad in ([1, 2, 3], "abcd", None, [0, 0, -1, 5], [0, 0, float("nan"), 5]):
        with pytest.raises(ContextUnavailable):
            render_context("rele", image, boxes={"subject": bad, "object": [0, 0, 5, 5]})
