"""``open_clip:<spec>``: open_clip dual encoders (a FeatureBackend).

Spec forms (the part after ``open_clip:``):

* ``ARCH/TAG`` — a built-in architecture with a named pretrained tag (``ViT-B-32/laion2b_s34b_b79k``);
* ``ARCH/PATH`` — a built-in architecture with a local checkpoint file (``ViT-B-32//ckpt/epoch_10.pt``);
* ``ARCH`` — the architecture with random weights (recorded as ``pretrained: null``);
* ``local-dir:DIR`` — a folder with ``open_clip_config.json`` + weights (+ tokenizer files): what
  ``vlaudit models tiny --family open_clip`` writes;
* ``hf-hub:ORG/REPO`` — an open_clip hub repository.

Embeddings: ``model.encode_image/encode_text(..., normalize=True)`` — open_clip's own L2 normalisation —
returned as float32 rows, batched. Options: ``dtype`` (``auto`` = bfloat16 on CUDA, float32 on CPU),
``device``, ``batch_size``, ``revision`` (not supported by open_clip; must stay unset).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vlaudit.backends.torch_utils import BatchedDualEncoder, import_torch, l2_normalise, resolve_device_dtype
from vlaudit.errors import InputError, MissingDependencyError

if TYPE_CHECKING:
    from PIL import Image

_SCHEMAS = ("local-dir:", "hf-hub:")


def parse_open_clip_name(name: str) -> tuple[str, str | None]:
    """Split the spec into (model_name for open_clip, pretrained tag/path or None)."""
    if name.startswith(_SCHEMAS):
        return name, None
    arch, sep, pretrained = name.partition("/")
    if not arch:
        raise InputError(f"open_clip spec {name!r} has no architecture", field="model")
    return arch, (pretrained or None) if sep else None


def _import_open_clip() -> Any:
    try:
        import open_clip  # optional at run time: a clear error without it
    except ImportError as exc:
        raise MissingDependencyError("the open_clip: backend needs open_clip: `pip install open_clip_torch`") from exc
    return open_clip


class OpenClipBackend(BatchedDualEncoder):
    """An open_clip model, its eval transform and tokenizer (see the module docstring)."""

    def __init__(self, spec: str, model: Any, preprocess: Any, tokenizer: Any, *, device: Any, dtype: Any,
                 batch_size: int, model_name: str, pretrained: str | None) -> None:
        super().__init__(spec, model, device=device, dtype=dtype, batch_size=batch_size)
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.model_name = model_name
        self.pretrained = pretrained
        self.dim = int(getattr(model, "embed_dim", 0) or model.text_projection.shape[-1])

    def describe(self) -> dict[str, Any]:
        import open_clip  # optional at run time: a clear error without it

        return {**self._common_facts("open_clip"), "model_name": self.model_name, "pretrained": self.pretrained,
                "open_clip": open_clip.__version__}

    def _encode_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        torch = import_torch()
        pixels = torch.stack([self.preprocess(image.convert("RGB")) for image in images])
        with torch.inference_mode():
            return l2_normalise(self.model.encode_image(pixels.to(self.device, self.dtype), normalize=True))

    def _encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        torch = import_torch()
        tokens = self.tokenizer(list(texts)).to(self.device)
        with torch.inference_mode():
            return l2_normalise(self.model.encode_text(tokens, normalize=True))


def load_backend(name: str, *, revision: str | None = None, dtype: str | None = None, device: str | None = None,
                 batch_size: int = 32) -> OpenClipBackend:
    """Load ``open_clip:<name>`` (see the module docstring for the forms of ``name``)."""
    import_torch()
    open_clip = _import_open_clip()
    if revision is not None:
        raise InputError("open_clip models have no revision option; pin a checkpoint file instead",
                         field="revision")
    model_name, pretrained = parse_open_clip_name(name)
    if model_name.startswith("local-dir:") and not Path(model_name.removeprefix("local-dir:")).is_dir():
        raise InputError("open_clip local-dir: folder not found", path=model_name.removeprefix("local-dir:"),
                         field="model")
    resolved_device, resolved_dtype = resolve_device_dtype(device, dtype)
    precision = {"float32": "fp32", "bfloat16": "pure_bf16", "float16": "pure_fp16"}[
        str(resolved_dtype).removeprefix("torch.")
    ]
    try:
        model, _, preprocess = open_clip.create_model_and_transforms(
            model_name, pretrained=pretrained, precision=precision, device=resolved_device
        )
        tokenizer = open_clip.get_tokenizer(model_name)
    except (OSError, RuntimeError, ValueError) as exc:
        raise InputError(
            f"cannot load open_clip model {name!r}: {exc}; available architectures include "
            f"{', '.join(open_clip.list_models()[:8])}, ...",
            field="model",
        ) from exc
    model.eval()
    return OpenClipBackend(f"open_clip:{name}", model, preprocess, tokenizer, device=resolved_device,
                           dtype=resolved_dtype, batch_size=batch_size, model_name=model_name,
                           pretrained=pretrained)
