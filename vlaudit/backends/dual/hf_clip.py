"""``hf-clip:<model id or local dir>``: CLIP and SigLIP dual encoders through transformers (a FeatureBackend).

Embeddings are the model's projected pooled features, L2-normalised in float32 exactly as the models'
own forward normalises them before the similarity (``x / ||x||₂``), so a dot product of two rows is the
cosine the model scores with (before its logit scale and bias). Inputs are batched (``batch_size``).

Options (:class:`~vlaudit.backends.options.DualOptions`): ``revision`` (hub ids), ``dtype`` (a spelling of
:mod:`vlaudit.backends.dtypes`: ``auto`` = bfloat16 on CUDA, float32 on CPU; ``float32``/``fp32``,
``float16``/``fp16``/``half``, ``bfloat16``/``bf16``); from the run (:class:`~vlaudit.backends.options.RunOptions`)
``device`` (``auto`` = cuda when available) and ``batch_size``. No repository code runs. The registry imports
this module (torch, transformers) only when a spec names ``hf-clip:``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import transformers
from transformers import AutoModel, AutoProcessor

from vlaudit.backends.dual.perturbations import DualPerturbations
from vlaudit.backends.hf.model_source import check_model_source
from vlaudit.backends.options import DualOptions, RunOptions
from vlaudit.backends.torch_utils import BatchedDualEncoder, import_torch, l2_normalise, resolve_device_dtype
from vlaudit.errors import InputError
from vlaudit.results.backend_description import BackendDescription

if TYPE_CHECKING:
    from PIL import Image


def _pooled(output: Any) -> Any:
    # transformers 5 returns a model output whose pooler_output holds the projected features; 4.x a tensor.
    return output if not hasattr(output, "pooler_output") else output.pooler_output


class HfClipBackend(DualPerturbations, BatchedDualEncoder):
    """A CLIP or SigLIP model and its processor (see the module docstring); re-scored under batch 1 and the
    other dtype by ``vca stability`` (:mod:`vlaudit.backends.dual.perturbations`)."""

    def __init__(self, spec: str, model: Any, processor: Any, *, device: Any, dtype: Any, batch_size: int,
                 revision: str | None) -> None:
        super().__init__(spec, model, device=device, dtype=dtype, batch_size=batch_size)
        self.processor = processor
        self.revision = revision
        self.model_type = str(getattr(model.config, "model_type", "unknown"))
        text_config = getattr(model.config, "text_config", None)
        self.max_text_length = int(getattr(text_config, "max_position_embeddings", 77))
        # SigLIP was trained on texts padded to a fixed length and pools the last position: pad the same way.
        self.text_padding = "max_length" if "siglip" in self.model_type else "longest"
        self.dim = int(getattr(model.config, "projection_dim", 0) or getattr(text_config, "projection_size", 0)
                       or getattr(text_config, "hidden_size", 0))

    def describe(self) -> BackendDescription:
        return BackendDescription.of({**self._common_facts("hf-clip"), "model_type": self.model_type, "revision": self.revision,
                "text_padding": self.text_padding, "max_text_length": self.max_text_length,
                "transformers": transformers.__version__})

    def _image_inputs(self, images: Sequence[Image.Image]) -> Any:
        return self.processor(images=[image.convert("RGB") for image in images], return_tensors="pt")

    def _image_forward(self, inputs: Any) -> np.ndarray:
        torch = import_torch()
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


def load_backend(name: str, options: DualOptions = DualOptions(), run: RunOptions = RunOptions()) -> HfClipBackend:
    """Load ``hf-clip:<name>`` (a hub id or a local directory) with AutoModel + AutoProcessor."""
    revision, dtype, device, batch_size = options.revision, options.dtype, run.device, run.batch_size or 32
    check_model_source("hf-clip", name, revision)
    import_torch()
    resolved_device, resolved_dtype = resolve_device_dtype(device, dtype)
    try:
        model = AutoModel.from_pretrained(name, revision=revision, dtype=resolved_dtype,
                                          trust_remote_code=False)
        processor = AutoProcessor.from_pretrained(name, revision=revision, trust_remote_code=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot load a CLIP/SigLIP model from {name!r}: {exc}", field="model") from exc
    if not (hasattr(model, "get_image_features") and hasattr(model, "get_text_features")):
        raise InputError(
            f"{name!r} is a {type(model).__name__}, not a dual encoder (CLIP/SigLIP); use hf:{name} for chat models",
            field="model",
        )
    model = model.to(resolved_device).eval()
    return HfClipBackend(f"hf-clip:{name}", model, processor, device=resolved_device, dtype=resolved_dtype,
                         batch_size=batch_size, revision=revision)
