"""Math-preserving perturbations of a transformers yes/no backend: what the noise floor is measured under.

Each perturbation changes how a margin is computed, never what it is mathematically (``vca stability``):

* ``batch-1`` — one request per forward instead of the run's batch (other rows' padding and kernels);
* ``padding-right`` — right padding with the logits read at each row's last real token, instead of left;
* ``dtype`` — the other floating dtype of the device: bfloat16 for a float32 model, float32 for a
  bfloat16 one on the CPU; float16 for a bfloat16 one on a GPU (a copy of the weights, the run's untouched);
* ``attention`` — the other attention kernel (eager for sdpa, sdpa for eager);
* ``prefix-cache`` — shared image-prefix KV reuse off when the run had it on, on when off (Qwen-VL families).

The mixin reads ``model``, ``batch_size``, ``tokenizer`` and ``prefix_cache`` of the backend it is mixed into
(:class:`vlaudit.backends.hf.mllm.HfMllmBackend`); a backend without a tokenizer padding side (mistral-common)
sets ``pads_by_side = False``.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

import torch

from vlaudit.backends.base import (
    ATTENTION,
    BATCH_ONE,
    DTYPE,
    PADDING_RIGHT,
    PREFIX_CACHE,
    attribute_set,
    batch_one,
    unsupported_perturbation,
)

__all__ = ["ATTENTION", "BATCH_ONE", "DTYPE", "PADDING_RIGHT", "PREFIX_CACHE"]


def other_dtype(dtype: Any, device_type: str) -> Any:
    """The dtype a ``dtype`` model is re-scored in (see the module docstring)."""
    if dtype == torch.float32:
        return torch.bfloat16
    if dtype == torch.bfloat16 and device_type.startswith("cuda"):
        return torch.float16
    return torch.float32


def other_attention(model: Any) -> str | None:
    """eager for an sdpa model, sdpa for an eager one; None when the model cannot switch."""
    current = getattr(model.config, "_attn_implementation", None)
    if current not in ("eager", "sdpa") or not hasattr(model, "set_attn_implementation"):
        return None
    return "eager" if current == "sdpa" else "sdpa"


class TorchPerturbations:
    """The perturbations of the module docstring, for a backend holding a transformers model."""

    model: Any
    batch_size: int
    pads_by_side: bool = True
    prefix_cache_families: tuple[str, ...] = ()

    def perturbations(self) -> dict[str, str]:
        """Name → what changes, for what this model supports (see the module docstring)."""
        out = batch_one(self.batch_size)
        if self.pads_by_side and self.batch_size > 1:
            out[PADDING_RIGHT] = "right padding instead of left (logits at each row's last real token)"
        dtype = self.model.dtype
        device = str(next(self.model.parameters()).device)
        out[DTYPE] = f"{str(other_dtype(dtype, device)).replace('torch.', '')} instead of " \
                     f"{str(dtype).replace('torch.', '')}"
        attention = other_attention(self.model)
        if attention is not None:
            out[ATTENTION] = f"{attention} attention instead of {self.model.config._attn_implementation}"
        if getattr(self, "family", None) in self.prefix_cache_families:
            state = "off" if getattr(self, "prefix_cache", False) else "on"
            out[PREFIX_CACHE] = f"shared image-prefix reuse {state}"
        return out

    @contextlib.contextmanager
    def perturbed(self, name: str) -> Iterator[Any]:
        """This backend, or a copy of it, changed by perturbation ``name`` (the original is restored)."""
        supported = self.perturbations()
        if name not in supported:
            raise unsupported_perturbation(type(self).__name__, name, supported)
        if name == BATCH_ONE:
            with attribute_set(self, "batch_size", 1):
                yield self
        elif name == PADDING_RIGHT:
            with attribute_set(self.tokenizer, "padding_side", "right"):  # type: ignore[attr-defined]  # the host's
                yield self
        elif name == PREFIX_CACHE:
            with attribute_set(self, "prefix_cache", not getattr(self, "prefix_cache", False)):
                yield self
        elif name == DTYPE:
            device = str(next(self.model.parameters()).device)
            clone = copy.copy(self)
            clone.model = copy.deepcopy(self.model).to(other_dtype(self.model.dtype, device))
            clone.model_dtype = clone.model.dtype  # type: ignore[attr-defined]  # the host backend's
            try:
                yield clone
            finally:
                del clone.model
        else:  # ATTENTION
            before = self.model.config._attn_implementation
            self.model.set_attn_implementation(other_attention(self.model))
            try:
                yield self
            finally:
                self.model.set_attn_implementation(before)
