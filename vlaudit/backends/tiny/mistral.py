"""A tiny random Mistral3 ("Ministral") model with the real tekken tokenizer, built from config offline.

The folder holds what a Ministral checkpoint holds for the MistralCommon path: ``config.json`` +
``model.safetensors`` (``Mistral3ForConditionalGeneration``: Mistral LM + Pixtral vision tower + patch-merger
projector) and ``tekken.json``. The tekken vocabulary is mistral-common's own ``tekken_240911.json``
(131,072 ids: 1,000 control tokens then the BPE ranks), so the embedding table has the real 131,072 rows;
only its ``image`` section is shrunk (14-pixel patches, 2×2 spatial merge, at most 56 pixels a side) so the
vision tower stays tiny. It loads with ``hf:DIR`` through :mod:`vlaudit.backends.mistral.mllm`.
"""

from __future__ import annotations

import json
from pathlib import Path

import transformers as tf

from vlaudit.backends.tiny.real_tokenizers import tekken_path

# The tiny vision side: mistral-common's ImageEncoder and the Pixtral tower must agree on these.
TINY_IMAGE = {"image_patch_size": 14, "max_image_size": 56, "spatial_merge_size": 2}


def write_tiny_tekken(out: Path) -> dict[str, int]:
    """Copy the real tekken vocabulary into ``out/tekken.json`` with the tiny image settings; its control ids."""
    data = json.loads(tekken_path().read_text(encoding="utf-8"))
    data["image"] = dict(TINY_IMAGE)
    (out / "tekken.json").write_text(json.dumps(data), encoding="utf-8")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer  # optional extra [ministral]

    tekken = Tekkenizer.from_file(out / "tekken.json")
    return {"vocab_size": tekken.n_words, "bos": tekken.bos_id, "eos": tekken.eos_id, "pad": tekken.pad_id,
            "img": tekken.get_special_token("[IMG]")}


def build_tiny_ministral(out: Path) -> None:
    """Write config + safetensors + tekken.json of a tiny Mistral3 model into ``out`` (caller seeds torch)."""
    ids = write_tiny_tekken(out)
    config = tf.Mistral3Config(
        text_config=dict(model_type="mistral", vocab_size=ids["vocab_size"], hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                         max_position_embeddings=4096, bos_token_id=ids["bos"], eos_token_id=ids["eos"],
                         pad_token_id=ids["pad"], sliding_window=None, tie_word_embeddings=True),
        vision_config=dict(model_type="pixtral", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=2, head_dim=16, image_size=TINY_IMAGE["max_image_size"],
                           patch_size=TINY_IMAGE["image_patch_size"]),
        image_token_index=ids["img"], spatial_merge_size=TINY_IMAGE["spatial_merge_size"],
        tie_word_embeddings=True)
    model = tf.Mistral3ForConditionalGeneration(config)
    model.save_pretrained(out)
