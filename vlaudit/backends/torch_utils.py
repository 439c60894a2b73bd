"""Helpers shared by the dual-encoder backends (``hf-clip:`` and ``open_clip:``).

* :func:`import_torch` — the torch module (the backends that call it need it);
* :func:`resolve_device_dtype` — the user's ``device``/``dtype`` options (the vocabulary of
  :mod:`vlaudit.backends.dtypes`; ``auto``: bf16 on CUDA, fp32 on CPU);
* :func:`l2_normalise` — float32 rows ``x / ||x||₂`` (the normalisation CLIP, SigLIP and open_clip apply before
  their similarity), so a dot product of two rows is the model's cosine;
* :class:`BatchedDualEncoder` — the batching half of the FeatureBackend protocol: subclasses implement
  ``_encode_images``/``_encode_texts`` on one batch; this class splits inputs into ``batch_size`` batches and
  stacks float32 rows.

Imported only by the dual-encoder backends, which the registry loads by import path when a spec names them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from vlaudit.backends.dtypes import resolve_dtype
from vlaudit.errors import InputError

if TYPE_CHECKING:
    from PIL import Image


def import_torch() -> Any:
    """The torch module (a declared dependency, imported with this module)."""
    return torch


def resolve_device_dtype(device: str | None, dtype: str | None) -> tuple[Any, Any]:
    """``(torch.device, torch.dtype)`` from the user's options (``auto``: bf16 on CUDA, fp32 on CPU)."""
    torch = import_torch()
    device = device or "auto"
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    resolved_device = torch.device(device)
    return resolved_device, getattr(torch, resolve_dtype(dtype, resolved_device.type))


def l2_normalise(features: Any) -> np.ndarray:
    """Float32 rows divided by their L2 norm (CLIP/SigLIP/open_clip's own normalisation)."""
    torch = import_torch()
    values = features.detach().to(torch.float32)
    values = values / values.norm(p=2, dim=-1, keepdim=True)
    return values.cpu().numpy().astype(np.float32, copy=False)


def batched(items: Sequence[Any], batch_size: int, encode: Callable[[Sequence[Any]], np.ndarray],
            dim: int) -> np.ndarray:
    """Encode ``items`` in batches of ``batch_size`` and stack the float32 rows (empty input → (0, dim))."""
    if batch_size < 1:
        raise InputError(f"batch_size must be ≥ 1, got {batch_size}", field="batch_size")
    if len(items) == 0:
        return np.zeros((0, dim), dtype=np.float32)
    parts = [encode(items[start:start + batch_size]) for start in range(0, len(items), batch_size)]
    return np.ascontiguousarray(np.concatenate(parts, axis=0), dtype=np.float32)


@dataclass(frozen=True)
class PreparedImages:
    """The model inputs of ``count`` images, one entry of ``batches`` per forward pass of ``batch_size``."""

    batches: tuple[Any, ...]
    count: int
    batch_size: int


class BatchedDualEncoder:
    """Common state and batching of a dual encoder; subclasses encode one batch and set ``dim``."""

    spec: str
    dim: int

    def __init__(self, spec: str, model: Any, *, device: Any, dtype: Any, batch_size: int) -> None:
        self.spec = spec
        self.model = model
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size

    def _common_facts(self, backend: str) -> dict[str, Any]:
        """The describe() entries every dual encoder reports."""
        return {"spec": self.spec, "backend": backend, "dtype": str(self.dtype).removeprefix("torch."),
                "device": str(self.device), "batch_size": self.batch_size, "normalize": "l2", "dim": self.dim}

    def _image_inputs(self, images: Sequence[Image.Image]) -> Any:
        """The model's inputs for one batch of images (its preprocessing: resize, crop, normalise)."""
        raise NotImplementedError

    def _image_forward(self, inputs: Any) -> np.ndarray:
        """L2-normalised float32 embeddings of one batch of :meth:`_image_inputs`."""
        raise NotImplementedError

    def _encode_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        return self._image_forward(self._image_inputs(images))

    def _encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def encode_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        """L2-normalised float32 image embeddings, one row per image."""
        return batched(images, self.batch_size, self._encode_images, self.dim)

    def prepare_images(self, images: Sequence[Image.Image]) -> PreparedImages:
        """The model's inputs for ``images``, in the batches :meth:`encode_images` makes: preprocessing that a
        caller may run on another thread while the previous batches' forward passes run."""
        batches = [self._image_inputs(images[start:start + self.batch_size])
                   for start in range(0, len(images), self.batch_size)]
        return PreparedImages(batches=tuple(batches), count=len(images), batch_size=self.batch_size)

    def encode_prepared_images(self, prepared: PreparedImages) -> np.ndarray:
        """:meth:`encode_images` of the images :meth:`prepare_images` prepared: the same batches, the same rows."""
        if prepared.batch_size != self.batch_size:  # prepared under another batch size (vca stability's batch-1)
            raise ValueError(f"images prepared in batches of {prepared.batch_size}, encoder batches {self.batch_size}")
        if prepared.count == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._image_forward(batch) for batch in prepared.batches]
        return np.ascontiguousarray(np.concatenate(parts, axis=0), dtype=np.float32)

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 text embeddings, one row per text."""
        return batched(list(texts), self.batch_size, self._encode_texts, self.dim)
