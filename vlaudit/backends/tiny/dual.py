"""Tiny random dual encoders (CLIP, SigLIP, open_clip) built from config with locally built tokenizers
(or, for CLIP and open_clip, CLIP's real BPE vocabulary shipped with open_clip: ``tokenizer="real"``).

They exist so that users can smoke-test a pipeline, and our tests can run the real model path, with no
network: :func:`build_tiny_dual` writes a directory that loads through the normal specs —
``hf-clip:DIR`` for ``clip`` / ``siglip`` and ``open_clip:local-dir:DIR`` for ``open_clip``. Weights are
random (seeded), so the embeddings mean nothing; the shapes, tokenizers, processors and file formats are the
real ones (safetensors weights, no pickle).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    CLIPConfig,
    CLIPImageProcessor,
    CLIPModel,
    CLIPProcessor,
    CLIPTokenizer,
    PreTrainedTokenizerFast,
    SiglipConfig,
    SiglipImageProcessor,
    SiglipModel,
    SiglipProcessor,
)

from vlaudit.backends.tiny.families import DUAL_FAMILIES
from vlaudit.backends.tiny.real_tokenizers import clip_tokenizer, clip_vocab_merges
from vlaudit.errors import InputError, MissingDependencyError

FAMILIES = DUAL_FAMILIES
REAL_TOKENIZER_FAMILIES = ("clip", "open_clip")  # CLIP's BPE ships with open_clip; SigLIP's vocabulary does not

# Words the tiny tokenizers should know as whole tokens (the rest falls back to bytes/characters).
_CORPUS = [
    "a photo of a dog to the left of a chair", "a cat above a table", "the red car next to a blue bus",
    "a man holding an umbrella", "two people on a bench", "a green square right of a yellow circle",
    "a triangle below a circle", "a larger object than the other", "is the dog left of the chair?",
    "yes no true false Yes No True False",
]


def _require(module: str, package: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - the packages are declared dependencies
        raise MissingDependencyError(f"building tiny models needs {module}; install it with `pip install {package}`") from exc


def _byte_chars() -> list[str]:
    return sorted(pre_tokenizers.ByteLevel.alphabet())


def _clip_tokenizer():
    """A CLIPTokenizer over a character-level byte vocabulary (every byte alone and as a word end)."""
    vocab: dict[str, int] = {}
    for char in _byte_chars():
        vocab[char] = len(vocab)
    for char in _byte_chars():
        vocab[char + "</w>"] = len(vocab)
    for special in ("<|startoftext|>", "<|endoftext|>"):
        vocab[special] = len(vocab)
    return CLIPTokenizer(vocab=vocab, merges=[])


def _bpe_tokenizer_json(vocab_size: int, *, bos: str, eos: str, pad: str) -> str:
    """A byte-level BPE trained on a small fixed corpus; ``pad`` is id 0 and ``eos`` the highest id.

    The eos id is the highest so that argmax pooling (open_clip's default text pooling) finds the end token.
    """
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[pad, bos], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_CORPUS, trainer=trainer)
    tokenizer.add_special_tokens([eos])
    bos_id, eos_id = tokenizer.token_to_id(bos), tokenizer.token_to_id(eos)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", special_tokens=[(bos, bos_id), (eos, eos_id)]
    )
    return tokenizer.to_str()


def _fast_tokenizer(tokenizer_json: str, *, bos: str, eos: str, pad: str, max_length: int):
    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(tokenizer_json), bos_token=bos, eos_token=eos, pad_token=pad,
        unk_token=None, model_max_length=max_length,
    )


def _build_clip(out_dir: Path, real: bool = False) -> None:
    if real:  # CLIP's own 49,408-token BPE from open_clip's bundled file, 77-token context
        tokenizer = clip_tokenizer(77)
    else:
        tokenizer = _clip_tokenizer()
        tokenizer.model_max_length = 32
    config = CLIPConfig(
        text_config=dict(
            vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, max_position_embeddings=tokenizer.model_max_length,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        ),
        vision_config=dict(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=32,
            patch_size=8,
        ),
        projection_dim=16,
    )
    model = CLIPModel(config).eval()
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    model.save_pretrained(out_dir)
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out_dir)


def _build_siglip(out_dir: Path) -> None:
    max_length = 16
    tokenizer_json = _bpe_tokenizer_json(400, bos="<s>", eos="</s>", pad="<pad>")
    tokenizer = _fast_tokenizer(tokenizer_json, bos="<s>", eos="</s>", pad="<pad>", max_length=max_length)
    config = SiglipConfig(
        text_config=dict(
            vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, max_position_embeddings=max_length, pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, projection_size=32,
        ),
        vision_config=dict(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=32,
            patch_size=8,
        ),
    )
    model = SiglipModel(config).eval()
    image_processor = SiglipImageProcessor(size={"height": 32, "width": 32})
    model.save_pretrained(out_dir)
    SiglipProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out_dir)


def _build_open_clip(out_dir: Path, real: bool = False) -> None:
    _require("open_clip", "open_clip_torch")
    import open_clip  # optional at run time (checked just above)
    text_cfg: dict[str, Any]
    if real:
        # no hf_tokenizer_name: open_clip then uses its own SimpleTokenizer over the bundled CLIP BPE
        text_cfg = {"context_length": 77, "vocab_size": len(clip_vocab_merges()[0])}
    else:
        context_length = 16
        tokenizer_json = _bpe_tokenizer_json(400, bos="<start_of_text>", eos="<end_of_text>", pad="<pad>")
        tokenizer = _fast_tokenizer(tokenizer_json, bos="<start_of_text>", eos="<end_of_text>", pad="<pad>",
                                    max_length=context_length)
        tokenizer.save_pretrained(out_dir)
        # the tokenizer lives beside the config; open_clip loads it from the local dir when this is set
        text_cfg = {"context_length": context_length, "vocab_size": len(tokenizer), "hf_tokenizer_name": "local-dir",
                    "pad_id": tokenizer.pad_token_id, "pool_type": "argmax"}
    model_cfg: dict[str, Any] = {
        "embed_dim": 16,
        "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "head_width": 16, "patch_size": 8},
        "text_cfg": {**text_cfg, "width": 32, "heads": 2, "layers": 2},
    }
    preprocess_cfg = {"size": 32, "mean": [0.48145466, 0.4578275, 0.40821073],
                      "std": [0.26862954, 0.26130258, 0.27577711], "interpolation": "bicubic",
                      "resize_mode": "shortest"}
    model = open_clip.CLIP(
        embed_dim=model_cfg["embed_dim"],
        vision_cfg=open_clip.model.CLIPVisionCfg(**model_cfg["vision_cfg"]),
        text_cfg=open_clip.model.CLIPTextCfg(**model_cfg["text_cfg"]),
    ).eval()
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(out_dir / "open_clip_model.safetensors"))
    config = {"model_cfg": model_cfg, "preprocess_cfg": preprocess_cfg}
    (out_dir / "open_clip_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def build_tiny_dual(family: str, out_dir: str | Path, seed: int = 0, tokenizer: str | None = None) -> Path:
    """Write a tiny random ``family`` dual encoder ("clip", "siglip" or "open_clip") into ``out_dir``.

    Load it back with ``hf-clip:OUT_DIR`` (clip, siglip) or ``open_clip:local-dir:OUT_DIR`` (open_clip).
    The same ``seed`` gives the same weights. ``tokenizer="real"`` (clip, open_clip) uses CLIP's real BPE
    vocabulary from open_clip's bundled file; the text embedding then has its 49,408 rows.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown dual-encoder family {family!r}; expected one of {', '.join(FAMILIES)}")
    tokenizer = tokenizer or "local"
    if tokenizer not in ("local", "real") or tokenizer == "real" and family not in REAL_TOKENIZER_FAMILIES:
        raise InputError(f"tiny {family} has no {tokenizer!r} tokenizer (real: {', '.join(REAL_TOKENIZER_FAMILIES)})",
                         field="tokenizer")
    _require("torch", "torch")
    _require("transformers", "transformers")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if family == "siglip":
            _build_siglip(out)
        else:
            {"clip": _build_clip, "open_clip": _build_open_clip}[family](out, tokenizer == "real")
    (out / "vlaudit_tiny.json").write_text(
        json.dumps({"family": family, "seed": seed, "tokenizer": tokenizer, "spec": tiny_spec(family, out)},
                   indent=2) + "\n",
        encoding="utf-8",
    )
    return out


def tiny_spec(family: str, out_dir: str | Path) -> str:
    """The model spec that loads a tiny model written by :func:`build_tiny_dual`."""
    if family == "open_clip":
        return f"open_clip:local-dir:{Path(out_dir)}"
    return f"hf-clip:{Path(out_dir)}"
