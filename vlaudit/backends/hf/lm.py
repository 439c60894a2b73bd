"""``hf-lm:NAME`` — a text-only causal language model (GPT-2, Qwen2.5, …) scoring log p(caption): a blind baseline.

The model is ``AutoModelForCausalLM`` + ``AutoTokenizer`` from a hub id or a local folder. A caption's tokens
``t_1 … t_n`` (the tokenizer's own, no special tokens) are scored after one context token ``t_0`` — the
tokenizer's BOS, else its EOS (GPT-2's and Qwen's ``<|endoftext|>`` start a document) — so every caption token
is predicted: ``log p(caption) = Σ_k log p(t_k | t_0 … t_{k-1})`` (float64 sum of float32 log-probabilities), and
``tokens = n``. With neither BOS nor EOS the first token is the context and ``n - 1`` tokens are scored.
The length-normalised reading is ``log p / tokens`` (VALSE's unimodal baseline compares perplexities:
Heidelberg-NLP/VALSE @ 2152d90 : unimodal_valse_eval.py, correct iff ppl(caption) < ppl(foil)).

Batching: captions sorted by token count (longest first) are padded on the right into batches of
``batch_size``; the attention mask hides the padding and a causal model's positions before the padding are
exactly those of the unpadded caption, so a caption's score does not depend on its batch (to float tolerance).
Where the logits are the plain output projection of the last hidden state (Llama/Qwen/GPT-2 style heads, no
softcapping or logit scale), only the scored positions are projected onto the vocabulary, a few hundred
rows at a time: padding costs no vocabulary projection and no (batch, length, vocab) tensor is held.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from vlaudit.backends.hf.model_source import check_model_source
from vlaudit.backends.hf.text_logprob import TextLogProb
from vlaudit.backends.torch_utils import resolve_device_dtype
from vlaudit.errors import InputError
from vlaudit.hashing import sha256_json

PREFIX = "hf-lm"
_HEAD_ROWS = 256  # positions projected onto the vocabulary at a time
# configs whose logits are not the plain projection of the last hidden state (softcapped, scaled)
_LOGIT_TRANSFORMS = ("final_logit_softcapping", "logit_scale", "output_multiplier_scale", "logits_scaling")


def _plain_head(model: Any) -> Any:
    """The output projection when logits are exactly ``head(model.base_model(...).last_hidden_state)`` (then only the
    positions that are scored are projected, in rows of :data:`_HEAD_ROWS`); None otherwise (full forward)."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    config = model.config
    if head is None or getattr(model, "base_model", model) is model or any(getattr(config, name, None) for name in _LOGIT_TRANSFORMS):
        return None
    return head


def _target_logprobs(logits: Any, targets: Any) -> Any:
    """log p(t) = logit(t) − logsumexp(logits) over the last axis, for each target id ``t``.

    The log-sum-exp is taken in place in ``logits`` (which the caller no longer reads): its row maximum is
    subtracted, the rest exponentiated and summed — the same steps as ``torch.logsumexp``, one pass fewer and
    no second (rows, vocabulary) tensor, so scoring costs little beyond the forward pass (``giveaway_speed``
    bench). No (batch, length, vocabulary) log-softmax is materialised.
    """
    picked = logits.gather(-1, targets[..., None])[..., 0]
    top = logits.amax(dim=-1, keepdim=True)
    total = logits.sub_(top).exp_().sum(dim=-1).log_()
    return picked - top[..., 0] - total


class CausalLmScorer:
    """A loaded causal LM and its tokenizer (see the module docstring)."""

    def __init__(self, spec: str, model: Any, tokenizer: Any, *, device: Any, batch_size: int,
                 revision: str | None = None) -> None:
        self.spec, self.model, self.tokenizer = spec, model, tokenizer
        self.device, self.batch_size, self.revision = device, batch_size, revision
        start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        self.start_id: int | None = None if start is None else int(start)
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (self.start_id or 0))
        self.head = _plain_head(model)

    @property
    def fingerprint(self) -> str:
        """sha256 over what decides a score: spec, revision, config, dtype, vocabulary size, context token."""
        return sha256_json({"spec": self.spec, "revision": self.revision, "config": self.model.config.to_json_string(),
                            "dtype": str(next(self.model.parameters()).dtype), "vocab": len(self.tokenizer),
                            "start": self.start_id})

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Each caption's ids with the context token first."""
        ids = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        prefix = [] if self.start_id is None else [self.start_id]
        out = [prefix + list(row) for row in ids]
        for text, row in zip(texts, out, strict=True):
            if len(row) < 2:
                raise InputError(f"caption {text!r} has no token to score", field="caption")
        return out

    def forward_batch(self, rows: Sequence[Sequence[int]]) -> np.ndarray:
        """Σ log p of the tokens after the first, per row (right-padded, masked), float64."""
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for k, row in enumerate(rows):
            ids[k, :len(row)] = torch.tensor(row, dtype=torch.long)
            mask[k, :len(row)] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        with torch.inference_mode():
            if self.head is None:
                logits = self.model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
                logp = _target_logprobs(logits, ids[:, 1:])
                return (logp * mask[:, 1:]).double().sum(dim=1).cpu().numpy()
            hidden = self.model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state[:, :-1]
            keep = mask[:, 1:].bool()
            states, targets = hidden[keep], ids[:, 1:][keep]
            owner = torch.arange(len(rows), device=ids.device)[:, None].expand_as(keep)[keep]
            sums = torch.zeros(len(rows), dtype=torch.float64, device=ids.device)
            for start in range(0, states.shape[0], _HEAD_ROWS):  # the vocabulary projection in cache-sized rows
                logits = self.head(states[start:start + _HEAD_ROWS]).float()
                part = _target_logprobs(logits, targets[start:start + _HEAD_ROWS])
                sums.index_add_(0, owner[start:start + _HEAD_ROWS], part.double())
        return sums.cpu().numpy()

    def score(self, texts: Sequence[str]) -> list[TextLogProb]:
        """log p of every caption, batched by length (module docstring)."""
        encoded = self.encode(texts)
        order = sorted(range(len(texts)), key=lambda k: (-len(encoded[k]), k))
        out: list[TextLogProb | None] = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            sums = self.forward_batch([encoded[k] for k in chunk])
            for k, value in zip(chunk, sums, strict=True):
                out[k] = TextLogProb(float(value), len(encoded[k]) - 1)
        return [o for o in out if o is not None]


def load_text_lm(name: str, *, device: str | None = "cpu", dtype: str | None = None, batch_size: int = 16,
                 revision: str | None = None) -> CausalLmScorer:
    """Load ``hf-lm:<name>`` (a hub id or a local folder) with AutoModelForCausalLM + AutoTokenizer."""
    check_model_source(PREFIX, name, revision)
    resolved_device, resolved_dtype = resolve_device_dtype(device, dtype)
    try:
        tokenizer = AutoTokenizer.from_pretrained(name, revision=revision, trust_remote_code=False)
        model = AutoModelForCausalLM.from_pretrained(name, revision=revision, dtype=resolved_dtype,
                                                     trust_remote_code=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot load a causal LM from {name!r}: {exc}", field="--lm") from exc
    model = model.to(resolved_device).eval()
    return CausalLmScorer(f"{PREFIX}:{name}", model, tokenizer, device=resolved_device, batch_size=batch_size,
                          revision=revision)
