"""``ref:scene-clip-spatial`` / ``ref:scene-clip-bag``: planted position-blindness, shipped weights, retraining."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlaudit.backends.registry import backend_kind, load_backend
from vlaudit.reference.models import TRAINED_MODELS, WEIGHTS_DIR

NAMES = ("scene-clip-spatial", "scene-clip-bag")


def _scene(shift: int = 0) -> Image.Image:
    """A red square and a blue square on cream; ``shift`` moves both right by a whole number of patches."""
    pixels = np.full((120, 160, 3), (245, 238, 215), dtype=np.uint8)
    pixels[40:60, 20 + shift:40 + shift] = (215, 35, 35)
    pixels[40:60, 80 + shift:100 + shift] = (35, 75, 215)
    return Image.fromarray(pixels)


def _mirror(image: Image.Image) -> Image.Image:
    return image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def test_trained_references_are_registered_features_backends() -> None:
    for name in NAMES:
        assert name in TRAINED_MODELS
        assert backend_kind(f"ref:{name}") == "features"
        assert (WEIGHTS_DIR / f"{name}.safetensors").is_file() and (WEIGHTS_DIR / f"{name}.json").is_file()
    total = sum((WEIGHTS_DIR / f"{n}.{ext}").stat().st_size for n in NAMES for ext in ("safetensors", "json"))
    assert total <= 4 * 2**20


def test_bag_encoder_is_blind_to_word_order_and_object_positions(one_torch_thread: None) -> None:
    bag = load_backend("ref:scene-clip-bag")
    assert bag.spec == "ref:scene-clip-bag"
    texts = ["a dog to the left of a chair", "a chair to the left of a dog", "a dog to the right of a chair"]
    first = bag.encode_texts(texts[:1])
    both = bag.encode_texts(texts)  # another batch: equal bags of words stay bit-identical
    assert np.array_equal(first[0], both[1]) and np.array_equal(both[0], both[1])
    assert not np.allclose(both[0], both[2])
    # moving the objects changes only the regions' centres, which the bag tower never reads
    shifted = bag.encode_images([_scene(0), _scene(20)])
    assert np.allclose(shifted[0], shifted[1], atol=1e-5)
    norms = np.linalg.norm(shifted, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


def test_spatial_encoder_sees_order_and_position(one_torch_thread: None) -> None:
    spatial = load_backend("ref:scene-clip-spatial")
    texts = spatial.encode_texts(["a dog to the left of a chair", "a chair to the left of a dog"])
    assert not np.allclose(texts[0], texts[1], atol=1e-4)
    images = spatial.encode_images([_scene(0), _mirror(_scene(0))])
    assert not np.allclose(images[0], images[1], atol=1e-4)


def test_short_retrain_lowers_the_loss(tmp_path: Path, one_torch_thread: None) -> None:
    from vlaudit.reference.models import resolve

    trainer = resolve(TRAINED_MODELS["scene-clip-bag"].trainer)
    result = trainer("scene-clip-bag", tmp_path, log=lambda message: None, short=True)
    losses = [row["loss"] for row in result["curve"]]
    assert losses[-1] < losses[0]
    assert (tmp_path / "scene-clip-bag.safetensors").is_file()
    from vlaudit.reference.scene_clip import load_backend as load_scene_clip

    retrained = load_scene_clip("scene-clip-bag", weights_dir=tmp_path)  # the reference's own loader
    assert retrained.encode_texts(["a red dog"]).shape == (1, retrained.dim)


def test_train_reference_rejects_unknown_names(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vlaudit.cli import app
    from vlaudit.errors import InputError
    from vlaudit.reference.scene_clip_train import train_reference

    result = CliRunner().invoke(app, ["models", "train-reference", "no-such-model", "--out", str(tmp_path)])
    assert isinstance(result.exception, InputError)  # the CLI entry point prints it as one line, exit 2
    assert "scene-clip-spatial" in str(result.exception)
    with pytest.raises(InputError, match="not a scene-clip model"):
        train_reference("tiny-clip", tmp_path)
