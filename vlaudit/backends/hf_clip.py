"""``hf-clip:<model id or local dir>``: CLIP and SigLIP dual encoders through transformers (a FeatureBackend).

Embeddings are the model's projected pooled features, L2-normalised in float32 exactly as the models'
own forward normalises them before the similarity (``x / ||x||₂``), so a dot product of two rows is the
cosine the model scores with (before its logit scale and bias). Inputs are batched (``batch_size``).

Options: ``revision`` (hub ids), ``dtype`` (``auto`` = bfloat16 on CUDA, float32 on CPU; or ``float32``,
``bfloat16``, ``float16``), ``device`` (``auto`` = cuda when available), ``batch_size``,
``trust_remote_code`` (off unless asked). Torch and transformers are imported inside the functions only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from vlaudit.errors import InputError, MissingDependencyError

if TYPE_CHECKING:
    from PIL import Image

_DTYPES = ("auto", "float32", "bfloat16", "float16")


def import_torch() -> Any:
    """Import torch or raise :class:`MissingDependencyError` naming what to install."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a declared dependency
        raise MissingDependencyError("dual-encoder backends need torch: `pip install torch torchvision`") from exc
    return torch


def resolve_device_dtype(device: str | None, dtype: str | None) -> tuple[Any, Any]:
    """``(torch.device, torch.dtype)`` from the user's options (``auto``: bf16 on CUDA, fp32 on CPU)."""
    torch = import_torch()
    device = device or "auto"
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    resolved_device = torch.device(device)
    dtype = dtype or "auto"
    if dtype not in _DTYPES:
        raise InputError(f"unknown dtype {dtype!r}; expected one of {', '.join(_DTYPES)}", field="dtype")
    if dtype == "auto":
        dtype = "bfloat16" if resolved_device.type == "cuda" else "float32"
    return resolved_device, getattr(torch, dtype)


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


def _pooled(output: Any) -> Any:
    # transformers 5 returns a model output whose pooler_output holds the projected features; 4.x a tensor.
    return output if not hasattr(output, "pooler_output") else output.pooler_output


class HFDualBackend:
    """A CLIP or SigLIP model and its processor (see the module docstring)."""

    def __init__(self, spec: str, model: Any, processor: Any, *, device: Any, dtype: Any, batch_size: int,
                 revision: str | None) -> None:
        self.spec = spec
        self.model = model
        self.processor = processor
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size
        self.revision = revision
        self.model_type = str(getattr(model.config, "model_type", "unknown"))
        text_config = getattr(model.config, "text_config", None)
        self.max_text_length = int(getattr(text_config, "max_position_embeddings", 77))
        # SigLIP was trained on texts padded to a fixed length and pools the last position: pad the same way.
        self.text_padding = "max_length" if "siglip" in self.model_type else "longest"
        self.dim = int(getattr(model.config, "projection_dim", 0) or getattr(text_config, "projection_size", 0)
                       or getattr(text_config, "hidden_size", 0))

    def describe(self) -> dict[str, Any]:
        import transformers

        return {
            "spec": self.spec, "backend": "hf-clip", "model_type": self.model_type, "revision": self.revision,
            "dtype": str(self.dtype).removeprefix("torch."), "device": str(self.device),
            "batch_size": self.batch_size, "normalize": "l2", "text_padding": self.text_padding,
            "max_text_length": self.max_text_length, "dim": self.dim, "transformers": transformers.__version__,
        }

    def _encode_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        torch = import_torch()
        inputs = self.processor(images=[image.convert("RGB") for image in images], return_tensors="pt")
        # every image input the processor makes (SigLIP2 adds pixel_attention_mask and spatial_shapes)
        kwargs = {key: value.to(self.device, self.dtype) if value.is_floating_point() else value.to(self.device)
                  for key, value in inputs.items() if hasattr(value, "to")}
        with torch.inference_mode():
            return l2_normalise(_pooled(self.model.get_image_features(**kwargs)))

    def _encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        torch = import_torch()
        inputs = self.processor(text=list(texts), return_tensors="pt", padding=self.text_padding,
                                truncation=True, max_length=self.max_text_length)
        kwargs = {"input_ids": inputs["input_ids"].to(self.device)}
        if "attention_mask" in inputs and "siglip" not in self.model_type:
            # SigLIP's text tower attends to its padding by design (it was trained that way); CLIP masks it.
            kwargs["attention_mask"] = inputs["attention_mask"].to(self.device)
        with torch.inference_mode():
            return l2_normalise(_pooled(self.model.get_text_features(**kwargs)))

    def encode_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        """L2-normalised float32 image embeddings, one row per image."""
        return batched(images, self.batch_size, self._encode_images, self.dim)

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 text embeddings, one row per text."""
        return batched(list(texts), self.batch_size, self._encode_texts, self.dim)


def load_backend(name: str, *, revision: str | None = None, dtype: str | None = None, device: str | None = None,
                 batch_size: int = 32, trust_remote_code: bool = False) -> HFDualBackend:
    """Load ``hf-clip:<name>`` (a hub id or a local directory) with AutoModel + AutoProcessor."""
    import_torch()
    try:
        from transformers import AutoModel, AutoProcessor
    except ImportError as exc:  # pragma: no cover - transformers is a declared dependency
        raise MissingDependencyError("the hf-clip: backend needs transformers: `pip install transformers`") from exc
    resolved_device, resolved_dtype = resolve_device_dtype(device, dtype)
    try:
        model = AutoModel.from_pretrained(name, revision=revision, dtype=resolved_dtype,
                                          trust_remote_code=trust_remote_code)
        processor = AutoProcessor.from_pretrained(name, revision=revision, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot load a CLIP/SigLIP model from {name!r}: {exc}", field="model") from exc
    if not (hasattr(model, "get_image_features") and hasattr(model, "get_text_features")):
        raise InputError(
            f"{name!r} is a {type(model).__name__}, not a dual encoder (CLIP/SigLIP); use hf:{name} for chat models",
            field="model",
        )
    model = model.to(resolved_device).eval()
    return HFDualBackend(f"hf-clip:{name}", model, processor, device=resolved_device, dtype=resolved_dtype,
                         batch_size=batch_size, revision=revision)
