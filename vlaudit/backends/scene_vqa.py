"""``ref:scene-vqa-grounded`` and ``ref:scene-vqa-prior`` — small trained yes/no models with planted behaviour.

Both read the literal verbalizers of VCA §9: one forward pass gives logits over the answer vocabulary
(" yes", " no", " true", " false"); NLL(a) = −log softmax(a) and the margin m = NLL(no) − NLL(yes) (or
NLL(false) − NLL(true) for the truefalse interface). The prompt is the item's question followed by
"Answer yes or no:" (or "Answer true or false:"); the text-only context (image None) is handled by the model
with a learned "no image" vector in place of everything it reads from pixels.

Architecture (:class:`SceneVqaNet`, built from the JSON config shipped beside the safetensors weights):

* statement encoder: word + position embeddings and a width-3 convolution; attention-pooling heads over its
  states give a subject query, an object query and (several heads + the mean) a statement vector;
* image encoder, resized to 80×60: ``cnn`` — three 3×3 conv layers + coordinate channels (grounded), or
  ``patch`` — non-overlapping 5×5 patches, a per-patch MLP, no coordinates (prior: position-blind by
  construction, so left/right/above/below are absent from its image features and only presence/colour remain);
* fusion: subject and object queries attend over the feature map (bilinear key·query scores); what they read
  there (values, shape/colour class probabilities of dense heads trained on the object masks, the attended
  position — zero for the position-blind encoder —, the best key score) meets the statement vector in a
  bilinear product, then an MLP.

Planted behaviour comes from the training data (:mod:`vlaudit.backends.scene_vqa_train`): the grounded model
sees statements whose text carries no prior (every form true and false equally often), so it must look; the
prior model sees spatial statements whose truth follows the category-pair prior :func:`category_prior` 85% of
the time (and a factorial evidence note that is usually right), so the text alone scores well.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vlaudit.backends.base import INTERFACES, YesNoRequest, YesNoResult
from vlaudit.errors import InputError
from vlaudit.hashing import sha256_file, sha256_text

if TYPE_CHECKING:
    from PIL import Image

WEIGHTS_DIR = Path(__file__).parent / "weights"
VQA_MODELS = ("scene-vqa-grounded", "scene-vqa-prior")
IMAGE_SIZE = (80, 60)  # (width, height) every image is resized to
VERBALIZERS = ("yes", "no", "true", "false")
PRIOR_SEED = 20261201
#: the scene categories the category-pair prior ranks (vlaudit.builders.scenes.DEFAULT_OBJECTS)
PRIOR_CATEGORIES = ("bottle", "bus", "car", "cat", "chair", "clock", "cup", "dog")
_WORD = re.compile(r"[a-z]+")


@lru_cache(maxsize=1)
def _prior_ranks() -> tuple[dict[str, int], dict[str, int]]:
    rng = np.random.default_rng(PRIOR_SEED)
    return ({c: int(r) for c, r in zip(PRIOR_CATEGORIES, rng.permutation(len(PRIOR_CATEGORIES)), strict=True)},
            {c: int(r) for c, r in zip(PRIOR_CATEGORIES, rng.permutation(len(PRIOR_CATEGORIES)), strict=True)})


def category_prior(subject: str, obj: str, relation: str) -> bool | None:
    """The planted text prior: is "subject RELATION object" usually true? None when the prior is silent.

    Two seeded rankings of the scene categories (one per axis, seed :data:`PRIOR_SEED`): "A left of B" is
    the prior answer iff rank_x(A) < rank_x(B), "A above B" iff rank_y(A) < rank_y(B); right of / below are
    their inverses, so a true/false pair on the same objects is both prior-following or both prior-violating.
    """
    rank_x, rank_y = _prior_ranks()
    if subject not in rank_x or obj not in rank_x or subject == obj:
        return None
    if relation in ("left of", "right of"):
        before = rank_x[subject] < rank_x[obj]
        return before if relation == "left of" else not before
    if relation in ("above", "below"):
        before = rank_y[subject] < rank_y[obj]
        return before if relation == "above" else not before
    return None


def words(text: str) -> list[str]:
    """The statement encoder's tokens: lower-case alphabetic words."""
    return _WORD.findall(text.lower())


def prompt_text(question: str, interface: str, with_image: bool) -> str:
    """The exact prompt: an image marker (when there is an image), the question, the answer instruction."""
    positive, negative = (v.strip() for v in INTERFACES[interface])
    return f"{'<image> ' if with_image else ''}{question} Answer {positive} or {negative}:"


def build_net(config: dict[str, Any]) -> Any:
    """A :class:`SceneVqaNet` from its JSON config (torch imported here)."""
    import torch
    from torch import nn

    class SceneVqaNet(nn.Module):
        def __init__(self, cfg: dict[str, Any]) -> None:
            super().__init__()
            self.cfg = cfg
            vocab, emb, hid, key = len(cfg["vocab"]), cfg["embed"], cfg["hidden"], cfg["key"]
            self.embed = nn.Embedding(vocab, emb, padding_idx=0)
            self.position = nn.Embedding(cfg["max_words"], emb)
            self.context = nn.Conv1d(emb, hid, 3, padding=1)
            heads = cfg["statement_heads"]
            self.pool = nn.Linear(hid, 2 + heads)  # subject, object, then the statement heads
            self.q_subject = nn.Linear(hid, key)
            self.q_object = nn.Linear(hid, key)
            self.statement = nn.Linear((heads + 1) * hid, hid)
            if cfg["encoder"] == "cnn":
                ch = cfg["channels"]
                self.image = nn.Sequential(
                    nn.Conv2d(3, ch[0], 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(ch[0], ch[1], 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(ch[1], ch[2], 3, padding=1), nn.ReLU())
                feat = ch[2] + (2 if cfg["coords"] else 0)
            else:
                p, ch = cfg["patch"], cfg["channels"]
                self.image = nn.Sequential(
                    nn.Conv2d(3, ch[0], p, stride=p), nn.ReLU(), nn.Conv2d(ch[0], ch[1], 1), nn.ReLU(),
                    nn.Conv2d(ch[1], ch[2], 1), nn.ReLU())
                feat = ch[2]
            # dense heads (shape, colour per cell; class 0 = background): trained on the known object masks,
            # read at the attended locations
            self.shape_head = nn.Conv2d(feat, cfg["aux_classes"][0], 1)
            self.color_head = nn.Conv2d(feat, cfg["aux_classes"][1], 1)
            self.keys = nn.Conv2d(feat, key, 1)
            self.values = nn.Conv2d(feat, hid, 1)
            zdim = 2 * hid + 6 + 2 * sum(cfg["aux_classes"]) + 2
            self.no_image = nn.Parameter(torch.zeros(zdim))
            self.bilinear_a = nn.Linear(zdim, 2 * hid)
            self.bilinear_b = nn.Linear(hid, 2 * hid)
            self.head = nn.Sequential(nn.Linear(zdim + 3 * hid, 2 * hid), nn.ReLU(),
                                      nn.Linear(2 * hid, len(VERBALIZERS)))

        def image_features(self, pixels: torch.Tensor) -> torch.Tensor:
            """(B, feat, h, w) feature map; the grounded encoder appends x, y coordinate channels."""
            f = self.image(pixels)
            if self.cfg["encoder"] == "cnn" and self.cfg["coords"]:
                b, _, h, w = f.shape
                ys = torch.linspace(-1, 1, h).view(1, 1, h, 1).expand(b, 1, h, w)
                xs = torch.linspace(-1, 1, w).view(1, 1, 1, w).expand(b, 1, h, w)
                f = torch.cat([f, xs, ys], dim=1)
            return f

        def forward(self, tokens: torch.Tensor, features: torch.Tensor | None, has_image: torch.Tensor,
                    attention: list[torch.Tensor] | None = None) -> torch.Tensor:
            """Verbalizer logits (B, K, 4) of K statements (B, K, T) about each of B feature maps (B, F, h, w);
            a row without an image (``has_image`` False) reads the learned no-image vector instead; the subject
            and object attention maps (B, K, P) are appended to ``attention`` when a list is given."""
            b, k, t = tokens.shape
            flat = tokens.reshape(b * k, t)
            mask = flat != 0
            steps = torch.arange(t).clamp(max=self.cfg["max_words"] - 1)
            x = self.embed(flat) + self.position(steps)[None]
            states = torch.relu(self.context(x.transpose(1, 2))).transpose(1, 2)
            scores = self.pool(states).masked_fill(~mask[..., None], -1e9)
            weights = torch.softmax(scores, dim=1)
            pooled = torch.einsum("ntk,nth->nkh", weights, states)
            q_s = self.q_subject(pooled[:, 0]).reshape(b, k, -1)
            q_o = self.q_object(pooled[:, 1]).reshape(b, k, -1)
            mean = (states * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp_min(1)
            g = torch.tanh(self.statement(torch.cat([pooled[:, 2:].flatten(1), mean], dim=1)))
            z = self.no_image.expand(b * k, -1)
            if features is not None:
                keys = self.keys(features).flatten(2)  # (B, key, P)
                values = self.values(features).flatten(2).transpose(1, 2)  # (B, P, hid)
                classes = torch.cat([torch.softmax(self.shape_head(features).flatten(2), dim=1),
                                     torch.softmax(self.color_head(features).flatten(2), dim=1)],
                                    dim=1).transpose(1, 2)  # (B, P, shapes + colours)
                if self.cfg["coords"]:
                    coords = features[:, -2:].flatten(2).transpose(1, 2)  # (B, P, 2): x, y in [-1, 1]
                else:
                    coords = torch.zeros(features.shape[0], keys.shape[2], 2)
                scale = keys.shape[1] ** -0.5
                parts, where = [], []
                for q in (q_s, q_o):
                    logits = torch.bmm(q, keys) * scale  # (B, K, P)
                    attn = torch.softmax(logits, dim=2)
                    if attention is not None:  # training reads where the queries looked
                        attention.append(attn)
                    where.append(torch.bmm(attn, coords).reshape(b * k, 2))
                    parts += [torch.bmm(attn, values).reshape(b * k, -1),
                              torch.bmm(attn, classes).reshape(b * k, -1),
                              logits.max(dim=2).values.reshape(b * k, 1)]
                seen = torch.cat([*parts, where[0], where[1], where[0] - where[1]], dim=1)
                z = torch.where(has_image.repeat_interleave(k)[:, None], seen, z)
            fused = torch.cat([z, g, torch.tanh(self.bilinear_a(z)) * self.bilinear_b(g)], dim=1)
            return self.head(fused).reshape(b, k, -1)

    return SceneVqaNet(config)


def image_tensor(images: Sequence[Image.Image]) -> Any:
    """(B, 3, 60, 80) float32, normalised; every image is resized (bilinear, antialiased) to 80×60."""
    arrays = [np.asarray(im.convert("RGB").resize(IMAGE_SIZE, resample=2), dtype=np.uint8) for im in images]
    return pixels_to_tensor(np.stack(arrays))


def pixels_to_tensor(pixels: np.ndarray) -> Any:
    """uint8 (B, H, W, 3) → normalised float32 (B, 3, H, W)."""
    import torch

    x = torch.from_numpy(np.ascontiguousarray(pixels)).permute(0, 3, 1, 2).float()
    return (x / 255.0 - 0.5) / 0.25


def encode_tokens(texts: Sequence[str], vocab: dict[str, int]) -> Any:
    """Right-padded (N, T) int64 token ids (0 = pad, 1 = unknown word)."""
    import torch

    ids = [[vocab.get(w, 1) for w in words(t)] or [1] for t in texts]
    width = max(len(i) for i in ids)
    out = torch.zeros((len(ids), width), dtype=torch.long)
    for row, seq in enumerate(ids):
        out[row, :len(seq)] = torch.tensor(seq, dtype=torch.long)
    return out


def weights_paths(name: str, folder: Path | None = None) -> tuple[Path, Path]:
    """(config JSON, safetensors) of a shipped model."""
    base = folder or WEIGHTS_DIR
    return base / f"{name}.json", base / f"{name}.safetensors"


def save_model(net: Any, config: dict[str, Any], name: str, folder: Path | None = None) -> tuple[Path, Path]:
    """Write the config and the float32 weights (atomically) beside each other."""
    import os
    import tempfile

    from safetensors.torch import save_file

    from vlaudit.tables import write_json

    cfg_path, weights_path = weights_paths(name, folder)
    weights_path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().float().contiguous() for k, v in net.state_dict().items()}
    fd, tmp = tempfile.mkstemp(prefix=f".{weights_path.name}.", suffix=".tmp", dir=weights_path.parent)
    os.close(fd)
    try:
        save_file(state, tmp, metadata={"name": name})
        os.chmod(tmp, 0o644)  # mkstemp creates owner-only files; shipped weights are package data
        os.replace(tmp, weights_path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    write_json(cfg_path, config)
    return cfg_path, weights_path


class SceneVqaBackend:
    """A :class:`~vlaudit.backends.base.YesNoBackend` over a shipped :class:`SceneVqaNet`."""

    def __init__(self, name: str, folder: Path | None = None, batch_size: int = 256) -> None:
        import torch
        from safetensors.torch import load_file

        cfg_path, weights_path = weights_paths(name, folder)
        if not cfg_path.is_file() or not weights_path.is_file():
            raise InputError(f"reference model {name!r} has no shipped weights (train it with "
                             f"`vlaudit models train-reference {name}`)", path=weights_path)
        self.name = name
        self.spec = f"ref:{name}"
        self.config = json.loads(cfg_path.read_text(encoding="utf-8"))
        self.vocab = {w: i for i, w in enumerate(self.config["vocab"])}
        self.net = build_net(self.config)
        self.net.load_state_dict(load_file(str(weights_path)))
        self.net.eval()
        self.batch_size = batch_size
        self.weights_sha256 = sha256_file(weights_path)
        self.verbalizer_ids = {k: [self.vocab[v.strip()] for v in pair] for k, pair in INTERFACES.items()}
        self._answer_index = {v: i for i, v in enumerate(VERBALIZERS)}
        self._torch = torch

    def _gray(self) -> Image.Image:
        from PIL import Image as PILImage

        return PILImage.new("RGB", IMAGE_SIZE, (128, 128, 128))

    def prompt(self, question: str, interface: str, with_image: bool) -> str:
        return prompt_text(question, interface, with_image)

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "family": "scene-vqa", "model_class": "SceneVqaNet",
                "revision": None, "dtype": "float32", "device": "cpu", "pixel_budget": list(IMAGE_SIZE),
                "weights_sha256": self.weights_sha256, "config": {k: v for k, v in self.config.items()
                                                                  if k != "vocab"},
                "template": sha256_text(prompt_text("{question}", "yesno", True)),
                "verbalizer_ids": self.verbalizer_ids}

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        """NLLs of the interface's two verbalizers from one forward per request (batched)."""
        torch = self._torch
        out: list[YesNoResult] = []
        for request in requests:
            if request.interface not in INTERFACES:
                raise InputError(f"unknown interface {request.interface!r}", record=request.key)
        for start in range(0, len(requests), self.batch_size):
            chunk = requests[start:start + self.batch_size]
            prompts = [self.prompt(r.question, r.interface, r.image is not None) for r in chunk]
            tokens = encode_tokens(prompts, self.vocab)
            has_image = torch.tensor([r.image is not None for r in chunk])
            with torch.inference_mode():
                features = None
                if bool(has_image.any()):
                    # a text-only row gets the blank canvas's features, then reads the no-image vector instead
                    gray = self._gray()
                    features = self.net.image_features(image_tensor([r.image or gray for r in chunk]))
                logits = self.net(tokens[:, None, :], features, has_image)[:, 0, :]
                logprobs = torch.log_softmax(logits.double(), dim=1)
            for k, request in enumerate(chunk):
                pos, neg = (self._answer_index[v.strip()] for v in INTERFACES[request.interface])
                nll_yes, nll_no = -float(logprobs[k, pos]), -float(logprobs[k, neg])
                ids = self.verbalizer_ids[request.interface]
                out.append(YesNoResult(request.key, nll_yes, nll_no, nll_no - nll_yes, ids[0], ids[1],
                                       prompts[k], sha256_text(prompts[k]), int((tokens[k] != 0).sum())))
        return out


def load_backend(name: str, **options: Any) -> SceneVqaBackend:
    """Load a shipped scene-VQA model (loader options of other backends, e.g. dtype, are ignored)."""
    if name not in VQA_MODELS:
        raise InputError(f"unknown scene-VQA model {name!r}; available: {', '.join(VQA_MODELS)}", field="model")
    folder = options.get("weights_dir")
    return SceneVqaBackend(name, Path(folder) if folder else None)
