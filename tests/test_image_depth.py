"""Images are converted with their bit depth honoured (:func:`vlaudit.sources.images.rgb_image`): a 16-bit PNG is
scaled to 8 bits, not clipped to white, and scored and embedded exactly like its 8-bit twin; a depth with no
fixed scale is refused saying why."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlaudit.sources.images import ImageFailure, ImageStore, rgb_image


def _twins(folder: Path) -> tuple[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    grey = np.random.default_rng(3).integers(0, 256, (24, 32), dtype=np.uint16)
    Image.fromarray(grey.astype(np.uint8), mode="L").save(folder / "eight.png")
    Image.fromarray(grey * 257).save(folder / "sixteen.png")  # PIL writes uint16 greyscale as a 16-bit PNG
    with Image.open(folder / "sixteen.png") as check:
        assert check.mode.startswith("I")
    return "eight.png", "sixteen.png"


def test_a_16_bit_png_reads_like_its_8_bit_twin(tmp_path) -> None:
    eight, sixteen = _twins(tmp_path)
    store = ImageStore(tmp_path)
    a, b = np.asarray(store.load(eight)[0]), np.asarray(store.load(sixteen)[0])
    assert a.dtype == b.dtype == np.uint8 and a.shape == b.shape
    assert np.array_equal(a, b) and not np.all(b == 255)  # not clipped to white


@pytest.mark.parametrize("values", [np.array([[0, 1], [128, 65535]]), np.array([[300, 40000], [7, 65000]])])
def test_sixteen_bit_values_are_scaled_not_clipped(values) -> None:
    out = np.asarray(rgb_image(Image.fromarray(values.astype(np.uint16))))[..., 0]
    assert np.array_equal(out, np.rint(values / 257).astype(np.uint8))


@pytest.mark.parametrize(("image", "words"), [
    (Image.fromarray(np.full((2, 2), 0.5, dtype=np.float32)), "floating-point pixels"),
    (Image.fromarray(np.array([[0, 70000]], dtype=np.int32)), "outside the 16-bit range"),
])
def test_a_depth_without_a_scale_is_refused_saying_why(image, words) -> None:
    with pytest.raises(ImageFailure, match=f"unsupported image depth: .*{words}"):
        rgb_image(image)


def test_the_twins_embed_alike(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    eight, sixteen = _twins(tmp_path / "images")
    (tmp_path / "cycles.jsonl").write_text(json.dumps(
        {"cycle_id": "c", "family": "toy", "image_1": eight, "image_2": sixteen, "caption_1": "a", "caption_2": "b",
         "text_1": "a cat", "text_2": "a dog"}) + "\n")
    code, _, err = cli("features", "--model", "ref:tiny-open-clip", "--cycles", tmp_path / "cycles.jsonl", "--images",
                       tmp_path / "images", "--out", tmp_path / "feats")
    assert code == 0, err
    from vlaudit.scoring.features import read_features

    features = read_features(tmp_path / "feats")
    rows = features.image_index()
    assert np.array_equal(features.images[rows[eight]], features.images[rows[sixteen]])
