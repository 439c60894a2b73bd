"""``ref:scene-clip-spatial`` and ``ref:scene-clip-bag``: two small dual encoders with planted behaviour.

Both are trained contrastively on procedural-scene captions (:mod:`vlaudit.reference.scene_clip_train`) with the
same data, objective, seed and budget; they differ only in what their architecture *can* represent.

Image front end (shared, fixed, not learned): the picture is resized to 160×120 and cut into its foreground
*regions* — connected components of the pixels that differ from the background colour (the median border
colour) by more than any texture does (:func:`region_features`). Each region is described by its mean colour,
log area, aspect, fill fraction and its mask resampled inside its own bounding box (12×12), plus its centre.
A region encoder (an MLP shared by all regions) maps each description to a code; codes are pooled.

* **bag** — position-blind by construction in both towers. Image: the region encoder never sees the centre and
  the codes are pooled by mean and max — a function of the *set* of region descriptions, so where an object
  sits, and which of two objects is left of the other, is not in the embedding. Text: words are embedded one
  by one and pooled by mean and max over the *sorted* token ids — a function of the bag of words, so "a dog to
  the left of a chair" and "a chair to the left of a dog" get bit-identical embeddings (equal bags are memoised
  per backend, so the batch a caption lands in cannot change its float32 bits) and every strict role-swap
  cycle is an exact tie.
* **spatial** — the same region descriptions *with* their centres, the codes also pooled weighted by x and by
  y (coordinate channels: each feature's centroid), and a bidirectional GRU over the words in order.

Why regions rather than a per-patch CNN: on this machine's CPU budget (a few minutes per model) per-patch
encoders (a strided CNN, then an MLP, on 20-px patches) had reached only 0.65–0.72 zero-shot CycleAcc on
``coco-object-coarse`` after 3 minutes; shapes cut across patch borders are slow to learn. Regions give whole
shapes to a tiny MLP, and both encoders reach 1.0 there. The front end is tuned to the procedural scenes
(pale backgrounds, saturated objects): on natural photos its regions mean little.

Text is lower-cased and split into words (``[a-z]+``); words outside the training vocabulary map to ``<unk>``;
at most 32 words are read. Embeddings are L2-normalised float32; the zero-shot score is their cosine (cycle
paper §5). These are calibration instruments for the audits: their numbers say what a position-blind
or a position-aware encoder looks like under exact cycles, nothing about real models.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from safetensors.torch import load_file, save
from scipy import ndimage
from torch import nn
from torch.nn import functional as F

from vlaudit.backends.base import batch_one, unsupported_perturbation
from vlaudit.backends.dtypes import check_supported
from vlaudit.errors import InputError
from vlaudit.files import atomic_write, write_json
from vlaudit.reference.catalogue import WEIGHTS_DIR
from vlaudit.results.backend_description import BackendDescription

IMAGE_WIDTH, IMAGE_HEIGHT = 160, 120
MAX_TOKENS = 32
PAD, UNK = "<pad>", "<unk>"
KINDS = ("bag", "spatial")
MAX_REGIONS = 12
SHAPE = 12
REGION_DIM = 1 + 3 + 3 + SHAPE * SHAPE + 2
FOREGROUND_DIFF = 48  # > the texture amplitude (≤ 18) and JPEG noise, < every object colour's contrast
MIN_PIXELS = 6
_WORD = re.compile(r"[a-z]+")


def words(text: str) -> list[str]:
    """Lower-cased alphabetic words of ``text`` (the tokenizer of both text towers)."""
    return _WORD.findall(text.lower())


class Vocabulary:
    """Word → id with ``<pad>`` = 0 and ``<unk>`` = 1."""

    def __init__(self, tokens: Sequence[str]) -> None:
        if list(tokens[:2]) != [PAD, UNK]:
            raise ValueError("a vocabulary starts with <pad>, <unk>")
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, texts: Sequence[str], *, max_tokens: int = MAX_TOKENS) -> np.ndarray:
        """(n, max_tokens) int64 ids, padded with 0 (a fixed width: a text's ids never depend on its batch)."""
        out = np.zeros((len(texts), max_tokens), dtype=np.int64)
        for row, text in enumerate(texts):
            ids = [self.index.get(w, 1) for w in words(text)][:max_tokens]
            out[row, : len(ids)] = ids
        return out


def image_array(image: Any) -> np.ndarray:
    """(120, 160, 3) uint8 of a PIL image resized to the scene size (bilinear)."""
    rgb = image.convert("RGB")
    if rgb.size != (IMAGE_WIDTH, IMAGE_HEIGHT):
        rgb = rgb.resize((IMAGE_WIDTH, IMAGE_HEIGHT), Image.Resampling.BILINEAR)
    return np.asarray(rgb, dtype=np.uint8)


def region_features(image: Any) -> np.ndarray:
    """(MAX_REGIONS, REGION_DIM) float32: the picture's foreground regions, largest first, zero rows unused.

    Foreground = pixels whose largest channel difference from the background colour (the median of the border
    pixels) exceeds ``FOREGROUND_DIFF``; regions = its 8-connected components of ≥ ``MIN_PIXELS`` pixels. Row:
    [1 (used), mean colour (3), log area fraction, log aspect, fill fraction, the region's mask resampled to
    SHAPE×SHAPE inside its own bounding box (SHAPE²), centre x, centre y (both in [−1, 1])]. Everything but the
    last two columns is unchanged by moving the region: the bag tower never reads those two.
    """
    pixels = image_array(image).astype(np.int16)
    border = np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]])
    background = np.median(border, axis=0)
    diff = np.abs(pixels - background)
    # three comparisons instead of a max over the 3-long channel axis (a slow strided reduction)
    foreground = (diff[..., 0] > FOREGROUND_DIFF) | (diff[..., 1] > FOREGROUND_DIFF) | (diff[..., 2] > FOREGROUND_DIFF)
    labels, count = ndimage.label(foreground, structure=np.ones((3, 3), dtype=bool))
    out = np.zeros((MAX_REGIONS, REGION_DIM), dtype=np.float32)
    if count == 0:
        return out
    sizes = np.bincount(labels.ravel(), minlength=count + 1)[1:]
    boxes = ndimage.find_objects(labels)
    row = 0
    for index in np.argsort(-sizes, kind="stable"):
        if row == MAX_REGIONS or sizes[index] < MIN_PIXELS:
            break
        rows, cols = boxes[index]
        mask = labels[rows, cols] == index + 1
        h, w = mask.shape
        colour = pixels[rows, cols][mask].mean(axis=0) / 255.0
        shape = Image.fromarray(mask.astype(np.uint8) * 255).resize((SHAPE, SHAPE), Image.Resampling.BOX)
        cx = (cols.start + cols.stop) / IMAGE_WIDTH - 1.0
        cy = (rows.start + rows.stop) / IMAGE_HEIGHT - 1.0
        out[row] = np.concatenate([[1.0], colour, [np.log(sizes[index] / (IMAGE_WIDTH * IMAGE_HEIGHT)),
                                                    np.log(w / h), mask.mean()],
                                   np.asarray(shape, dtype=np.float32).ravel() / 255.0, [cx, cy]])
        row += 1
    return out


class ImageTower(nn.Module):
    """Regions → per-region MLP codes → pooled (bag: mean, max; spatial: also code × x, code × y) → MLP.

    The bag tower reads each region without its centre (columns ``1:-2``) and pools symmetrically, so it is a
    function of the *set* of region descriptors; the spatial tower also reads the centre and pools the codes
    weighted by x and by y (coordinate channels: each feature's centroid).
    """

    def __init__(self, kind: str, width: int, code: int, dim: int) -> None:
        super().__init__()
        self.kind = kind
        inputs = REGION_DIM - 1 - (0 if kind == "spatial" else 2)
        self.encoder = nn.Sequential(nn.Linear(inputs, width), nn.ReLU(), nn.Linear(width, code), nn.ReLU())
        pooled = code * (4 if kind == "spatial" else 2)
        # BatchNorm: pooled codes of different pictures share a large common component; standardising each
        # feature across the batch lets contrastive training move within a few hundred steps
        self.head = nn.Sequential(nn.BatchNorm1d(pooled), nn.Linear(pooled, 2 * dim), nn.ReLU(),
                                  nn.Linear(2 * dim, dim))

    def forward(self, regions: torch.Tensor) -> torch.Tensor:
        """``regions``: (n, MAX_REGIONS, REGION_DIM) from :func:`region_features`."""
        used = regions[..., :1]
        inputs = regions[..., 1:] if self.kind == "spatial" else regions[..., 1:-2]
        codes = self.encoder(inputs) * used
        count = used.sum(dim=1).clamp(min=1.0)
        parts = [codes.sum(dim=1) / count, codes.amax(dim=1)]
        if self.kind == "spatial":
            parts += [(codes * regions[..., -2:-1]).sum(dim=1) / count,
                      (codes * regions[..., -1:]).sum(dim=1) / count]
        return self.head(torch.cat(parts, dim=1))


class BagTextTower(nn.Module):
    """Order-free: per-word MLP, then mean and max over the sorted ids (pads masked)."""

    def __init__(self, vocab_size: int, width: int, dim: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, width, padding_idx=0)
        self.word = nn.Sequential(nn.Linear(width, width), nn.ReLU())
        self.head = nn.Sequential(nn.BatchNorm1d(2 * width), nn.Linear(2 * width, 2 * dim), nn.ReLU(),
                                  nn.Linear(2 * dim, dim))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        # Sorting makes the computation a function of the multiset of ids, bit for bit.
        ids = torch.sort(ids, dim=1, descending=True).values
        mask = (ids > 0).to(torch.float32)[..., None]
        h = self.word(self.embed(ids)) * mask
        mean = h.sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        top = (h - 1e4 * (1 - mask)).amax(dim=1).clamp(min=0.0)
        return self.head(torch.cat([mean, top], dim=1))


class OrderedTextTower(nn.Module):
    """Ordered: a bidirectional GRU over the words; final states of both directions + masked mean."""

    def __init__(self, vocab_size: int, width: int, dim: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, width, padding_idx=0)
        self.gru = nn.GRU(width, width, batch_first=True, bidirectional=True)
        self.head = nn.Sequential(nn.BatchNorm1d(4 * width), nn.Linear(4 * width, 2 * dim), nn.ReLU(),
                                  nn.Linear(2 * dim, dim))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        lengths = (ids > 0).sum(dim=1).clamp(min=1)
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(ids), lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        out, last = self.gru(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=ids.shape[1])
        mask = (ids > 0).to(torch.float32)[..., None]
        mean = (out * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return self.head(torch.cat([last[0], last[1], mean], dim=1))


class SceneClip(nn.Module):
    """Image tower + text tower + learned temperature (CLIP's logit scale, initialised at 1/0.07)."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        kind = config["kind"]
        if kind not in KINDS:
            raise ValueError(f"unknown scene-clip kind {kind!r}; expected one of {KINDS}")
        self.config = dict(config)
        dim, width = int(config["dim"]), int(config["width"])
        self.image = ImageTower(kind, int(config["region_width"]), int(config["code"]), dim)
        tower = BagTextTower if kind == "bag" else OrderedTextTower
        self.text = tower(len(config["vocab"]), width, dim)
        self.logit_scale = nn.Parameter(torch.tensor(float(np.log(1 / 0.07))))

    def encode_image(self, regions: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.image(regions), dim=-1)

    def encode_text(self, ids: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.text(ids), dim=-1)


def save_model(model: SceneClip, out_dir: Path, name: str, extra: dict[str, Any] | None = None) -> list[Path]:
    """Write ``NAME.safetensors`` (weights) and ``NAME.json`` (config + training record), atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    weights = out_dir / f"{name}.safetensors"
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    with atomic_write(weights, "wb") as handle:
        handle.write(save(state, metadata={"name": name, "kind": model.config["kind"]}))
    config_path = out_dir / f"{name}.json"
    write_json(config_path, {**model.config, **(extra or {})})
    return [weights, config_path]


def load_model(name: str, folder: Path | None = None) -> SceneClip:
    """The model ``NAME`` from ``folder`` (default: the weights shipped in the package)."""
    folder = folder or WEIGHTS_DIR
    config_path, weights = folder / f"{name}.json", folder / f"{name}.safetensors"
    if not config_path.is_file() or not weights.is_file():
        raise InputError(f"no trained weights for {name!r} in {str(folder)!r}; run "
                         f"`vlaudit models train-reference {name}`", field="model")
    model = SceneClip(json.loads(config_path.read_text(encoding="utf-8")))
    model.load_state_dict(load_file(str(weights)))
    return model.eval()


class SceneClipBackend:
    """FeatureBackend over a :class:`SceneClip` (CPU float32; ``batch_size`` items per forward)."""

    def __init__(self, name: str, model: SceneClip, *, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise InputError(f"batch_size must be ≥ 1, got {batch_size}", field="batch_size")
        self.spec = f"ref:{name}"
        self.name = name
        self.model = model
        self.batch_size = batch_size
        self.vocab = Vocabulary(model.config["vocab"])
        self.dim = int(model.config["dim"])
        self._bags: dict[tuple[int, ...], np.ndarray] = {}

    def describe(self) -> BackendDescription:
        config = self.model.config
        return BackendDescription.of({"spec": self.spec, "backend": "scene-clip", "kind": config["kind"], "dim": self.dim,
                "version": config.get("version"), "weights_sha256": config.get("weights_sha256"),
                "train_seed": config.get("train", {}).get("seed"), "dtype": "float32", "device": "cpu",
                "batch_size": self.batch_size, "normalize": "l2"})

    def perturbations(self) -> dict[str, str]:
        """What ``vca stability`` re-scores under: batch size 1 only (the towers run float32 on the CPU)."""
        return batch_one(self.batch_size)

    @contextlib.contextmanager
    def perturbed(self, name: str) -> Iterator[SceneClipBackend]:
        """This backend with one input per forward, its bag cache emptied so that every text is re-encoded."""
        if name not in self.perturbations():
            raise unsupported_perturbation(f"ref:{self.name}", name, self.perturbations())
        saved = self.batch_size, self._bags
        self.batch_size, self._bags = 1, {}
        try:
            yield self
        finally:
            self.batch_size, self._bags = saved

    def encode_images(self, images: Sequence[Any]) -> np.ndarray:
        out = np.zeros((len(images), self.dim), dtype=np.float32)
        with torch.no_grad():
            for start in range(0, len(images), self.batch_size):
                part = np.stack([region_features(im) for im in images[start:start + self.batch_size]])
                out[start:start + len(part)] = self.model.encode_image(torch.from_numpy(part)).numpy()
        return out

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        ids = self.vocab.encode(list(texts))
        if self.model.config["kind"] == "bag":
            return self._encode_bags(ids)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with torch.no_grad():
            for start in range(0, len(ids), self.batch_size):
                part = torch.from_numpy(ids[start:start + self.batch_size])
                out[start:start + len(part)] = self.model.encode_text(part).numpy()
        return out

    def _encode_bags(self, ids: np.ndarray) -> np.ndarray:
        """Equal bags of words → the same float32 row, whatever batch each text arrives in."""
        keys = [tuple(sorted(int(i) for i in row if i > 0)) for row in ids]
        todo = list(dict.fromkeys(k for k in keys if k not in self._bags))
        with torch.no_grad():
            for start in range(0, len(todo), self.batch_size):
                part = todo[start:start + self.batch_size]
                batch = np.zeros((len(part), ids.shape[1]), dtype=np.int64)
                for row, key in enumerate(part):
                    batch[row, : len(key)] = key
                rows = self.model.encode_text(torch.from_numpy(batch)).numpy()
                self._bags.update(zip(part, rows, strict=True))
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._bags[k] for k in keys]).astype(np.float32, copy=False)


def load_backend(name: str, *, batch_size: int = 64, weights_dir: str | Path | None = None,
                 dtype: str | None = None, **_ignored: Any) -> SceneClipBackend:
    """``ref:scene-clip-spatial`` / ``ref:scene-clip-bag`` from the shipped weights (or ``weights_dir``); they
    run float32 on the CPU (``dtype`` auto or float32; another is refused, naming these)."""
    check_supported(dtype, ("float32",), f"ref:{name}")
    return SceneClipBackend(name, load_model(name, Path(weights_dir) if weights_dir else None),
                            batch_size=batch_size)
