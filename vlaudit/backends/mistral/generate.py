"""Greedy decoding for the mistral-common backend (:class:`vlaudit.backends.mistral.mllm.MistralCommonBackend`).

The prompt is the backend's own mistral-common request (tokens and image arrays, :meth:`tokenize`); its answer
opens the assistant turn right after ``[/INST]``, so there is no scoring prefix and both prompt forms
(``answer_prefix`` True or False) are the same tokens. Decoding is greedy (``do_sample=False``) with the
backend's left padding, ``batch_size`` requests at a time (with and without an image apart); the text is the
new tokens decoded by mistral-common, control tokens dropped.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import torch

from vlaudit.backends.base import GenerationResult, YesNoRequest, config_context_length


class MistralGreedyGeneration:
    """``generate`` for a backend with ``tokenize``, ``encode(tokens, images)``, ``model``, ``mistral``,
    ``pad_id`` and ``batch_size``."""

    def context_length(self) -> int | None:
        """The most positions the language model was built for (its config), None when it does not say."""
        return config_context_length(self.model)  # type: ignore[attr-defined]  # the host backend's

    def generate(self, requests: Sequence[YesNoRequest], max_new_tokens: int,
                 answer_prefix: bool = True) -> list[GenerationResult]:
        """Greedy continuations of every request, in request order (see the module docstring)."""
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy  # optional extra [ministral]

        backend: Any = self
        by_key: dict[str, GenerationResult] = {}
        text_tokens = backend.mistral.instruct_tokenizer.tokenizer
        for with_image in (False, True):
            todo = [r for r in requests if (r.image is not None) == with_image]
            for start in range(0, len(todo), backend.batch_size):
                chunk = todo[start:start + backend.batch_size]
                encoded = [backend.tokenize(r.question, r.interface, r.image) for r in chunk]
                batch = backend.encode([e[0] for e in encoded], [a for e in encoded for a in e[1]])
                with torch.inference_mode(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ids = backend.model.generate(**batch, max_new_tokens=int(max_new_tokens), do_sample=False,
                                                 num_beams=1, pad_token_id=backend.pad_id)
                new = ids[:, batch["input_ids"].shape[1]:]
                for request, row in zip(chunk, new, strict=True):
                    tokens = [int(t) for t in row.tolist()]
                    while tokens and tokens[-1] in (backend.pad_id, text_tokens.eos_id):
                        tokens.pop()
                    kept = [t for t in tokens if t >= text_tokens.num_special_tokens]
                    by_key[request.key] = GenerationResult(request.key, text_tokens.decode(kept, special_token_policy=SpecialTokenPolicy.IGNORE), len(tokens))
        return [by_key[r.key] for r in requests]
