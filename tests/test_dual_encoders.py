"""Dual encoders on tiny models built from config: backends, features, zero-shot scores, the CLI chain."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from vlaudit.backends.base import FeatureBackend
from vlaudit.backends.options import DualOptions, RunOptions
from vlaudit.backends.registry import ModelRef, load_backend
from vlaudit.backends.tiny.dual import build_tiny_dual, tiny_spec
from vlaudit.errors import InputError, MissingDependencyError
from vlaudit.files import write_jsonl
from vlaudit.scoring.features import (
    collect_inputs,
    cosine_rows,
    read_features,
    write_features,
)
from vlaudit.sources.cycle_tables import read_cycles

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_dual")
    return {family: build_tiny_dual(family, root / family, seed=0) for family in ("clip", "open_clip")}


def _images(n: int = 4, size: tuple[int, int] = (40, 30)) -> list[Image.Image]:
    rng = np.random.default_rng(7)
    return [Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)) for _ in range(n)]


# ------------------------------------------------------------------------------------------------ backends


@pytest.mark.parametrize("family", ["clip", "siglip", "open_clip"])
def test_tiny_model_builds_and_loads_offline(family: str, tmp_path: Path, no_network: None) -> None:
    out = build_tiny_dual(family, tmp_path / family, seed=0)
    backend = load_backend(tiny_spec(family, out), RunOptions(device="cpu", batch_size=3))
    assert isinstance(backend, FeatureBackend)
    assert backend.describe()["spec"] == tiny_spec(family, out)
    images = backend.encode_images(_images(5))
    texts = backend.encode_texts(["a dog to the left of a chair", "yes", "a cat above a table"])
    assert images.dtype == texts.dtype == np.float32
    assert images.shape[0] == 5 and texts.shape[0] == 3 and images.shape[1] == texts.shape[1]
    np.testing.assert_allclose(np.linalg.norm(images, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(texts, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(texts[0], texts[1])
    # the weights come from disk: a second load (and a second build with the same seed) gives the same rows
    again = load_backend(tiny_spec(family, build_tiny_dual(family, tmp_path / "again", seed=0)),
                         RunOptions(device="cpu", batch_size=1))
    np.testing.assert_allclose(again.encode_images(_images(5)), images, atol=1e-6)  # batch size is invisible
    np.testing.assert_allclose(again.encode_texts(["yes"]), texts[1:2], atol=1e-6)
    assert backend.encode_images([]).shape == (0, images.shape[1])


def test_bad_specs_and_missing_dependency(tmp_path: Path, tiny_dirs: dict[str, Path],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="folder does not exist"):
        load_backend(f"hf-clip:{tmp_path / 'nothing'}")
    with pytest.raises(InputError, match="not found"):
        load_backend(f"open_clip:local-dir:{tmp_path / 'nothing'}")
    with pytest.raises(InputError, match="revision"):
        load_backend(ModelRef(f"open_clip:local-dir:{tiny_dirs['open_clip']}", DualOptions(revision="main")))
    with pytest.raises(InputError, match="dtype"):
        load_backend(ModelRef(f"hf-clip:{tiny_dirs['clip']}", DualOptions(dtype="float8")))
    monkeypatch.setitem(sys.modules, "open_clip", None)  # what an environment without open_clip looks like
    with pytest.raises(MissingDependencyError, match="open_clip_torch"):
        load_backend(f"open_clip:local-dir:{tiny_dirs['open_clip']}")


def test_open_clip_spec_forms() -> None:
    from vlaudit.backends.dual.open_clip_backend import parse_open_clip_name

    assert parse_open_clip_name("ViT-B-32/laion2b_s34b_b79k") == ("ViT-B-32", "laion2b_s34b_b79k")
    assert parse_open_clip_name("ViT-B-32//ckpt/epoch_10.pt") == ("ViT-B-32", "/ckpt/epoch_10.pt")
    assert parse_open_clip_name("ViT-B-32") == ("ViT-B-32", None)
    assert parse_open_clip_name("local-dir:/a/b") == ("local-dir:/a/b", None)
    assert parse_open_clip_name("hf-hub:org/repo") == ("hf-hub:org/repo", None)


# ------------------------------------------------------------------------------------------------ features


@pytest.mark.parametrize("family", ["clip", "open_clip"])
def test_prepared_images_embed_as_encode_images(family: str, tiny_dirs: dict[str, Path]) -> None:
    """Preprocessing apart from the forward (what write_features runs on its helper thread) changes no bit:
    the same batches, the same rows; a batch size changed in between is refused, not silently re-batched."""
    backend = load_backend(tiny_spec(family, tiny_dirs[family]), RunOptions(device="cpu", batch_size=2))
    images = _images(5)
    prepared = backend.prepare_images(images)
    assert len(prepared.batches) == 3 and prepared.count == 5
    np.testing.assert_array_equal(backend.encode_prepared_images(prepared), backend.encode_images(images))
    assert backend.encode_prepared_images(backend.prepare_images([])).shape == (0, backend.dim)
    backend.batch_size = 1
    with pytest.raises(ValueError, match="prepared in batches of 2"):
        backend.encode_prepared_images(prepared)


def test_features_preprocess_off_the_forward_thread(write_dual_dataset, tmp_path: Path,
                                                    tiny_dirs: dict[str, Path]) -> None:
    """write_features decodes and preprocesses the next chunk on a helper thread while this chunk's forward
    runs: the forwards stay on the caller's thread, the preprocessing never is."""
    import threading

    cycles_path, images_dir = write_dual_dataset(tmp_path, with_text=False, with_file_names=False)
    inputs = collect_inputs(read_cycles(cycles_path), cycles_path, images_dir)
    backend = load_backend(f"open_clip:local-dir:{tiny_dirs['open_clip']}", RunOptions(device="cpu", batch_size=1))
    threads: dict[str, set[str]] = {"inputs": set(), "forward": set()}
    image_inputs, image_forward = backend._image_inputs, backend._image_forward

    def inputs_seen(images):
        threads["inputs"].add(threading.current_thread().name)
        return image_inputs(images)

    def forward_seen(batch):
        threads["forward"].add(threading.current_thread().name)
        return image_forward(batch)

    backend._image_inputs, backend._image_forward = inputs_seen, forward_seen
    write_features(backend, inputs, tmp_path / "f", chunk=1)
    assert threads["forward"] == {threading.current_thread().name}
    assert threads["inputs"] and all(name.startswith("vlaudit-decode") for name in threads["inputs"])


class _Counting:
    """Counts what reaches the backend (the real backend still does the work)."""

    def __init__(self, backend: FeatureBackend) -> None:
        self.backend, self.spec, self.batch_size = backend, backend.spec, backend.batch_size
        self.images = self.texts = 0

    def describe(self) -> dict:
        return self.backend.describe()

    def encode_images(self, images: list[Image.Image]) -> np.ndarray:
        self.images += len(images)
        return self.backend.encode_images(images)

    def encode_texts(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.backend.encode_texts(texts)


def test_features_deduplicate_and_are_deterministic(write_dual_dataset, tmp_path: Path, tiny_dirs: dict[str, Path]) -> None:
    cycles_path, images_dir = write_dual_dataset(tmp_path, with_text=False, with_file_names=False)
    cycles = read_cycles(cycles_path)
    inputs = collect_inputs(cycles, cycles_path, images_dir)  # ids resolved as ID.png, texts from the sidecar
    assert list(inputs.images) == ["a", "b", "c", "d"] and len(inputs.texts) == 4
    backend = _Counting(load_backend(f"hf-clip:{tiny_dirs['clip']}", RunOptions(device="cpu", batch_size=2)))
    manifest = write_features(backend, inputs, tmp_path / "f1", chunk=2)
    assert (backend.images, backend.texts) == (3, 3)  # one forward per distinct content
    assert manifest["counts"] == {"image_ids": 4, "unique_images": 3, "caption_ids": 4, "unique_texts": 3}
    feats = read_features(tmp_path / "f1")
    assert feats.images.dtype == np.float32 and feats.images.shape == (4, manifest["dim"])
    index = feats.image_index()
    np.testing.assert_array_equal(feats.images[index["a"]], feats.images[index["d"]])
    write_features(backend.backend, inputs, tmp_path / "f2", chunk=3)
    for name in ("images.parquet", "texts.parquet"):
        assert (tmp_path / "f1" / name).read_bytes() == (tmp_path / "f2" / name).read_bytes()


def test_zero_shot_scores_are_the_direct_cosine(write_dual_dataset, tmp_path: Path, tiny_dirs: dict[str, Path]) -> None:
    cycles_path, images_dir = write_dual_dataset(tmp_path)
    cycles = read_cycles(cycles_path)
    backend = load_backend(f"open_clip:local-dir:{tiny_dirs['open_clip']}", RunOptions(device="cpu"))
    write_features(backend, collect_inputs(cycles, cycles_path, images_dir), tmp_path / "feats")
    rows = cosine_rows(read_features(tmp_path / "feats"), cycles)
    assert len(rows) == len({(u, v) for c in cycles for u, v, _ in c.entries()}) == 10  # shared pairs once
    texts = {c.caption_1: c.extra["text_1"] for c in cycles} | {c.caption_2: c.extra["text_2"] for c in cycles}
    for row in rows:
        with Image.open(images_dir / f"{row['image_id']}.png") as image:
            u = backend.model.encode_image(backend.preprocess(image.convert("RGB"))[None]).detach().numpy()[0]
        v = backend.model.encode_text(backend.tokenizer([texts[row["caption_id"]]])).detach().numpy()[0]
        u, v = u.astype(np.float64), v.astype(np.float64)
        direct = float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))
        assert row["score"] == pytest.approx(direct, abs=1e-6)


def test_bad_feature_inputs(write_dual_dataset, tmp_path: Path) -> None:
    cycles_path, images_dir = write_dual_dataset(tmp_path, with_text=False)
    rows = [json.loads(line) for line in cycles_path.read_text().splitlines()]
    (tmp_path / "cycles.captions.jsonl").unlink()
    with pytest.raises(InputError, match="captions table"):
        collect_inputs(read_cycles(cycles_path), cycles_path, images_dir)
    rows[0]["file_name_1"] = "../cycles.jsonl"
    rows[0]["text_1"] = rows[0]["text_2"] = "x"
    write_jsonl(cycles_path, rows[:1])
    with pytest.raises(InputError, match="escapes the images folder"):
        collect_inputs(read_cycles(cycles_path), cycles_path, images_dir)
    rows[0]["file_name_1"] = "missing.png"
    write_jsonl(cycles_path, rows[:1])
    with pytest.raises(InputError, match="not found"):
        collect_inputs(read_cycles(cycles_path), cycles_path, images_dir)
    with pytest.raises(InputError, match="manifest"):
        read_features(tmp_path)


# ------------------------------------------------------------------------------------------------ CLI


@pytest.mark.parametrize("padded", [False, True])
def test_cli_features_zero_shot_eval(write_dual_dataset, tmp_path: Path, tiny_dirs: dict[str, Path], no_network: None,
                                     padded: bool) -> None:
    """The documented chain features → cycles zero-shot (CSV) → cycles eval, also on zero-padded COCO-style ids
    (a CSV reader that parsed ``0001`` as the integer 1 broke the last step)."""
    import vlaudit.commands.cycles_eval  # noqa: F401  (registers `cycles eval`)
    import vlaudit.commands.features  # noqa: F401
    from vlaudit.commands._apps import app

    cycles_path, images_dir = write_dual_dataset(tmp_path, padded=padded)
    runner = CliRunner()
    result = runner.invoke(app, ["features", "--model", f"open_clip:local-dir:{tiny_dirs['open_clip']}",
                                 "--cycles", str(cycles_path), "--images", str(images_dir),
                                 "--out", str(tmp_path / "feats"), "--batch-size", "2", "--device", "cpu"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    manifest = json.loads((tmp_path / "feats" / "manifest.json").read_text())
    assert manifest["model"]["backend"] == "open_clip" and manifest["counts"]["unique_images"] == 3
    scores = tmp_path / "scores.csv"
    result = runner.invoke(app, ["cycles", "zero-shot", "--features", str(tmp_path / "feats"),
                                 "--cycles", str(cycles_path), "--out", str(scores)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert scores.read_text().splitlines()[0].replace('"', "") == "image_id,caption_id,score"
    # the CSV holds the float64 cosines exactly (shortest repr), and the ids as written
    from vlaudit.sources.cycle_tables import read_scores

    direct = cosine_rows(read_features(tmp_path / "feats"), read_cycles(cycles_path))
    assert read_scores(scores) == {(r["image_id"], r["caption_id"]): r["score"] for r in direct}
    result = runner.invoke(app, ["cycles", "eval", "--cycles", str(cycles_path), "--scores", str(scores),
                                 "--out", str(tmp_path / "eval.json"), "--resamples", "50", "--min-cycles", "1"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    evaluation = json.loads((tmp_path / "eval.json").read_text())
    assert evaluation["families"]["toy"]["test"]["n"] == 3


def test_features_on_real_coco_jpegs(tmp_path: Path, tiny_dirs: dict[str, Path], shared_data: Path) -> None:
    """Real val2017 JPEGs found by COCO's ``{id:012d}.jpg`` rule; captions from the official captions file."""
    sample = shared_data / "coco_val2017_sample"
    captions_file = next((sample / "annotations").glob("captions_val2017*.json"))
    annotations = json.loads(captions_file.read_text())["annotations"]
    first: dict[str, dict] = {}
    for annotation in annotations:
        first.setdefault(str(annotation["image_id"]), annotation)
    ids = sorted(first)[:4]
    rows = [{"cycle_id": f"k{k}", "family": "real", "image_1": ids[2 * k], "caption_1": str(first[ids[2 * k]]["id"]),
             "image_2": ids[2 * k + 1], "caption_2": str(first[ids[2 * k + 1]]["id"]),
             "text_1": first[ids[2 * k]]["caption"], "text_2": first[ids[2 * k + 1]]["caption"]} for k in range(2)]
    cycles_path = tmp_path / "cycles.jsonl"
    write_jsonl(cycles_path, rows)
    cycles = read_cycles(cycles_path)
    inputs = collect_inputs(cycles, cycles_path, sample / "val2017")
    assert [p.name for p in inputs.images.values()] == [f"{int(i):012d}.jpg" for i in ids]
    backend = load_backend(f"hf-clip:{tiny_dirs['clip']}", RunOptions(device="cpu", batch_size=4))
    write_features(backend, inputs, tmp_path / "feats")
    scores = cosine_rows(read_features(tmp_path / "feats"), cycles)
    assert len(scores) == 8 and all(-1.0 - 1e-9 <= row["score"] <= 1.0 + 1e-9 for row in scores)
