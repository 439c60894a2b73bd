"""Greedy decoding under the scoring prompt: the :class:`~vlaudit.backends.base.GeneratingBackend` capability of
the transformers backends (``vca generate-check``).

The prompt is the backend's exact scoring prompt (:meth:`prompt`), or — with ``answer_prefix=False`` — the same
prompt without the scoring prefix (``generation_prefix``, "Answer:" for the AutoProcessor families; "" for
mistral-common, whose answer opens the assistant turn), since that prefix is where likelihood scoring and free
generation differ. Decoding is greedy (``do_sample=False``), ``max_new_tokens`` tokens at most, batched by
``batch_size`` with the backend's left padding (requests with and without an image apart); the text is the new
tokens decoded with special tokens removed.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import torch

from vlaudit.backends.base import GenerationResult, YesNoRequest


class GreedyGeneration:
    """``generate`` for a backend with ``prompt``, ``encode(prompts, images)``, ``model``, ``tokenizer`` and
    ``batch_size`` (:class:`vlaudit.backends.hf.mllm.HfMllmBackend`)."""

    generation_prefix: str = ""

    def generation_prompt(self, question: str, interface: str, with_image: int, answer_prefix: bool = True) -> str:
        """The scoring prompt, with or without its trailing scoring prefix."""
        prompt: str = self.prompt(question, interface, with_image)  # type: ignore[attr-defined]  # the host backend's
        if not answer_prefix and self.generation_prefix and prompt.endswith(self.generation_prefix):
            return prompt[:-len(self.generation_prefix)]
        return prompt

    def generate(self, requests: Sequence[YesNoRequest], max_new_tokens: int,
                 answer_prefix: bool = True) -> list[GenerationResult]:
        """Greedy continuations of every request's prompt, in request order (see the module docstring)."""
        by_key: dict[str, GenerationResult] = {}
        backend: Any = self
        for with_image in (False, True):
            todo = [r for r in requests if (r.image is not None) == with_image]
            for start in range(0, len(todo), backend.batch_size):
                chunk = todo[start:start + backend.batch_size]
                prompts = [self.generation_prompt(r.question, r.interface, len(r.images), answer_prefix)
                           for r in chunk]
                batch = backend.encode(prompts, [r.images for r in chunk] if with_image else None)
                pad = backend.tokenizer.pad_token_id
                with torch.inference_mode(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ids = backend.model.generate(**batch, max_new_tokens=int(max_new_tokens), do_sample=False,
                                                 num_beams=1, pad_token_id=pad, temperature=None, top_p=None,
                                                 top_k=None)
                new = ids[:, batch["input_ids"].shape[1]:]
                for request, row in zip(chunk, new, strict=True):
                    tokens = [int(t) for t in row.tolist()]
                    while tokens and tokens[-1] == pad:
                        tokens.pop()
                    text = backend.tokenizer.decode(tokens, skip_special_tokens=True)
                    by_key[request.key] = GenerationResult(request.key, text, len(tokens))
        return [by_key[r.key] for r in requests]
