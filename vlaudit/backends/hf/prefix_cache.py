"""Shared-prefix KV-cache reuse for the Qwen-VL families (the "one pass over each image's tokens" limit).

All questions about one image share the token prefix ``system turn + user header + <|vision_start|> image
tokens <|vision_end|>``; because ``<|vision_end|>`` is a special token, the tokenization of prompt = prefix +
suffix is exactly the prefix's tokens followed by the suffix's. The prefix (with the vision tower) runs once
with ``use_cache``; each batch of suffixes then runs on a copy of that cache, batch-expanded, right-padded
(causal attention: a real token never sees a later pad) with explicit mrope position ids. Text tokens after
the image sit at ``index + rope_delta`` on all three mrope axes, where ``rope_delta`` is what the model stored
for the prefix (Qwen2-VL ``get_rope_index``). The result equals a full forward up to float rounding
(checked in tests/test_hf_mllm.py).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Protocol

import torch

from vlaudit.backends.base import YesNoRequest, YesNoResult
from vlaudit.backends.yesno_common import yes_no_results
from vlaudit.results.backend_description import PrefixCacheDecision, PrefixCacheEstimate


class PrefixBackend(Protocol):
    """What prefix reuse reads of a transformers yes/no backend
    (:class:`vlaudit.backends.hf.mllm.HfMllmBackend`): its model, tokenizer, device and batch size, how it
    renders and encodes a prompt, and its answer token ids."""

    model: Any
    tokenizer: Any
    device: Any
    batch_size: int
    verbalizer_ids: dict[str, tuple[int, int]]
    letter_ids: tuple[int, ...]

    def prompt(self, question: str, interface: str, with_image: int) -> str: ...

    def encode(self, prompts: Sequence[str], images: Sequence[Any] | None) -> dict[str, Any]: ...


# A forward call's fixed cost (Python dispatch, kernel launches, the per-call vision/processor setup) in
# token-forward equivalents, measured on CPU with the tiny and the representative Qwen2-VL of
# benchmarks/score_limit.py: prefix reuse trades ~2 calls per image for one pass over the image's tokens.
CALL_OVERHEAD_TOKENS = 256


def prefix_cache_decision(*, prefix_tokens: int, suffix_tokens: int, queries_per_image: float, batch_size: int,
                          override: bool | None = None, supported: bool = True) -> PrefixCacheDecision:
    """Whether sharing each image's prefix KV cache pays for a run, and why (recorded in the manifest).

    Full forwards recompute the image prefix (vision tower + ``prefix_tokens``) for every query about an
    image; reuse computes it once but needs its own forward per image plus one suffix pass per batch. With
    q queries per image (questions × interfaces), reuse saves ``(q − 1) · prefix_tokens`` token-forwards and
    costs about ``2 − min(q, B)/B`` extra calls of ``CALL_OVERHEAD_TOKENS`` each; it is enabled when the
    saving is larger. ``override`` (``--prefix-cache`` / ``--no-prefix-cache``) wins over the estimate.
    """
    q = float(queries_per_image)
    saved = max(q - 1.0, 0.0) * prefix_tokens
    extra_calls = 2.0 - min(q, batch_size) / batch_size
    cost = extra_calls * CALL_OVERHEAD_TOKENS
    estimate = supported and q >= 2 and saved > cost
    if not supported:
        enabled, reason = False, "this model family has no verified prefix reuse"
    elif override is not None:
        enabled, reason = bool(override), "forced on (--prefix-cache)" if override else "forced off (--no-prefix-cache)"
    else:
        enabled = estimate
        reason = (f"saves ~{saved:.0f} token-forwards per image vs ~{cost:.0f} for extra calls" if enabled
                  else f"saves ~{saved:.0f} token-forwards per image, less than ~{cost:.0f} for extra calls")
    return PrefixCacheDecision(
        enabled=bool(enabled), reason=reason, override=override,
        cost=PrefixCacheEstimate(estimate=bool(estimate), prefix_tokens=int(prefix_tokens),
                                 suffix_tokens=int(suffix_tokens), queries_per_image=round(q, 3),
                                 batch_size=int(batch_size), call_overhead_tokens=CALL_OVERHEAD_TOKENS))


def split_prompt(prompt: str, block_end: str) -> tuple[str, str]:
    """Split a rendered prompt right after the (last) image block end marker."""
    index = prompt.rindex(block_end) + len(block_end)
    return prompt[:index], prompt[index:]


def score_shared_prefix(backend: PrefixBackend, requests: Sequence[YesNoRequest],
                        block_end: str) -> list[YesNoResult]:
    """Score requests that share one image (and hence one prefix) with one prefix forward."""
    prompts = [backend.prompt(r.question, r.interface, True) for r in requests]
    parts = [split_prompt(p, block_end) for p in prompts]
    by_prefix: dict[str, list[int]] = {}
    for index, (prefix, _) in enumerate(parts):
        by_prefix.setdefault(prefix, []).append(index)
    results: list[YesNoResult | None] = [None] * len(requests)
    model = backend.model
    tokenizer = backend.tokenizer
    pad_id = int(tokenizer.pad_token_id)
    for prefix, members in by_prefix.items():
        # only requests with an image share a prefix cache (the caller groups them by image)
        batch = backend.encode([prefix], [requests[members[0]].image])
        with torch.inference_mode():
            out = model(**batch, use_cache=True, logits_to_keep=1)
        # transformers ≥ 5.2x returns and takes `cache`; the 5.1x that vLLM pins `past_key_values`, and there a
        # `cache=` keyword is silently ignored (the suffix would not see the image prefix)
        cache_keyword = "cache" if "cache" in out else "past_key_values"
        cache = out[cache_keyword]
        rope_delta = model.model.rope_deltas.clone()  # (1, 1): text position offset after the image
        n_prefix = int(batch["input_ids"].shape[1])
        suffix_ids = [tokenizer.encode(parts[i][1], add_special_tokens=False) for i in members]
        for start in range(0, len(members), backend.batch_size):
            rows = members[start:start + backend.batch_size]
            ids = suffix_ids[start:start + backend.batch_size]
            width = max(len(x) for x in ids)
            k = len(rows)
            input_ids = torch.full((k, width), pad_id, dtype=torch.long)
            mask = torch.zeros((k, n_prefix + width), dtype=torch.long)
            mask[:, :n_prefix] = 1
            for row, tokens in enumerate(ids):
                input_ids[row, :len(tokens)] = torch.tensor(tokens, dtype=torch.long)
                mask[row, n_prefix:n_prefix + len(tokens)] = 1
            positions = torch.arange(n_prefix, n_prefix + width, dtype=torch.long).view(1, 1, -1)
            positions = (positions + rope_delta.to("cpu").view(1, 1, 1)).expand(3, k, width).contiguous()
            row_cache = copy.deepcopy(cache)
            row_cache.batch_repeat_interleave(k)
            device = backend.device
            with torch.inference_mode():
                logits = model(input_ids=input_ids.to(device), attention_mask=mask.to(device),
                               position_ids=positions.to(device), use_cache=True,
                               **{cache_keyword: row_cache}).logits
            last = torch.tensor([len(tokens) - 1 for tokens in ids], device=logits.device)
            final = logits[torch.arange(k, device=logits.device), last]
            logprobs = torch.log_softmax(final.double(), dim=-1).cpu()
            chunk = [requests[i] for i in rows]
            n_tokens = [n_prefix + len(tokens) for tokens in ids]
            scored = yes_no_results(chunk, [prompts[i] for i in rows], logprobs, n_tokens, backend.verbalizer_ids,
                                    backend.letter_ids)
            for i, result in zip(rows, scored, strict=True):
                results[i] = result
    return [r for r in results if r is not None]

