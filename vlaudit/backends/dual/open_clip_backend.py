"""``open_clip:<spec>``: open_clip dual encoders (a FeatureBackend).

Spec forms (the part after ``open_clip:``):

* ``ARCH/TAG`` — a built-in architecture with a named pretrained tag (``ViT-B-32/laion2b_s34b_b79k``);
* ``ARCH/PATH`` — a built-in architecture with a local checkpoint file (``ViT-B-32//ckpt/epoch_10.pt``);
* ``ARCH`` — the architecture with random weights (recorded as ``pretrained: null``);
* ``local-dir:DIR`` — a folder with ``open_clip_config.json`` + weights (+ tokenizer files): what
  ``vlaudit models tiny --family open_clip`` writes;
* ``hf-hub:ORG/REPO`` — an open_clip hub repository.

Embeddings: ``model.encode_image/encode_text(..., normalize=True)`` — open_clip's own L2 normalisation —
returned as float32 rows, batched. Options: ``dtype`` (:mod:`vlaudit.backends.dtypes`; ``auto`` = bfloat16 on CUDA,
float32 on CPU),
``device``, ``batch_size``, ``revision`` (not supported by open_clip; must stay unset).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from huggingface_hub import constants

from vlaudit.backends.dual.load_logs import held_log_records
from vlaudit.backends.dual.perturbations import DualPerturbations
from vlaudit.backends.options import DualOptions, RunOptions
from vlaudit.backends.torch_utils import BatchedDualEncoder, import_torch, l2_normalise, resolve_device_dtype
from vlaudit.errors import InputError, MissingDependencyError
from vlaudit.results.backend_description import BackendDescription
from vlaudit.sources.hub_access import offline_reason, offline_unless_reachable

if TYPE_CHECKING:
    from PIL import Image

_SCHEMAS = ("local-dir:", "hf-hub:")


def parse_open_clip_name(name: str) -> tuple[str, str | None]:
    """Split the spec into (model_name for open_clip, pretrained tag/path or None)."""
    if name.startswith(_SCHEMAS):
        return name, None
    arch, sep, pretrained = name.partition("/")
    if not arch:
        raise InputError(f"open_clip spec {name!r} has no architecture", field="--model")
    return arch, (pretrained or None) if sep else None


def _import_open_clip() -> Any:
    try:
        import open_clip  # optional at run time: a clear error without it
    except ImportError as exc:
        raise MissingDependencyError("the open_clip: backend needs open_clip: `pip install open_clip_torch`") from exc
    return open_clip


def load_error(open_clip: Any, name: str, model_name: str, pretrained: str | None, exc: Exception) -> InputError:
    """What is missing, said plainly: the architecture, the pretrained tag, a checkpoint file, or the
    weights of a known tag that are not in the local cache (offline) — and how to provide them."""
    spec = f"open_clip:{name}"
    if not model_name.startswith(_SCHEMAS) and model_name not in open_clip.list_models():
        return InputError(f"{spec}: unknown open_clip architecture {model_name!r}; available include "
                          f"{', '.join(open_clip.list_models()[:8])}, … (open_clip.list_models())", field="--model")
    if pretrained is None:
        return InputError(f"cannot load {spec}: {exc}", field="--model")
    if Path(pretrained).is_file():
        reason = (str(exc).strip().splitlines() or [""])[0].split(". ")[0][:100]
        return InputError(f"{spec}: {pretrained!r} is not a checkpoint open_clip can load into {model_name} "
                          f"({type(exc).__name__}{': ' + reason if reason else ''}); give the checkpoint file of "
                          "this architecture (a .pt/.bin state dict or .safetensors)", field="--model")
    if not open_clip.get_pretrained_cfg(model_name, pretrained):
        if "/" in pretrained or Path(pretrained).suffix:
            return InputError(f"{spec}: checkpoint file {pretrained!r} not found", field="--model")
        tags = open_clip.list_pretrained_tags_by_model(model_name)
        return InputError(f"{spec}: {model_name} has no pretrained tag {pretrained!r}; its tags: "
                          f"{', '.join(tags) or 'none'} (or give a checkpoint file: {model_name}//PATH)",
                          field="--model")
    offline = constants.HF_HUB_OFFLINE
    where = (f"not in the local cache ({constants.HF_HUB_CACHE}) and {offline_reason()}"
             if offline else f"not in the local cache ({constants.HF_HUB_CACHE}) and could not be downloaded")
    return InputError(f"{spec}: the weights of {model_name} {pretrained!r} are {where}; provide them by running "
                      "once online to fill the cache, by pointing HF_HOME at a cache that holds them, or by "
                      f"giving a local checkpoint: --model open_clip:{model_name}//PATH/TO/WEIGHTS.bin",
                      field="--model")


class OpenClipBackend(DualPerturbations, BatchedDualEncoder):
    """An open_clip model, its eval transform and tokenizer (see the module docstring); re-scored under batch
    1 and the other dtype by ``vca stability`` (:mod:`vlaudit.backends.dual.perturbations`)."""

    def __init__(self, spec: str, model: Any, preprocess: Any, tokenizer: Any, *, device: Any, dtype: Any,
                 batch_size: int, model_name: str, pretrained: str | None) -> None:
        super().__init__(spec, model, device=device, dtype=dtype, batch_size=batch_size)
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.model_name = model_name
        self.pretrained = pretrained
        self.dim = int(getattr(model, "embed_dim", 0) or model.text_projection.shape[-1])

    def describe(self) -> BackendDescription:
        import open_clip  # optional at run time: a clear error without it

        return BackendDescription.of({**self._common_facts("open_clip"), "model_name": self.model_name, "pretrained": self.pretrained,
                "open_clip": open_clip.__version__})

    def _image_inputs(self, images: Sequence[Image.Image]) -> Any:
        torch = import_torch()
        return torch.stack([self.preprocess(image.convert("RGB")) for image in images])

    def _image_forward(self, inputs: Any) -> np.ndarray:
        torch = import_torch()
        with torch.inference_mode():
            return l2_normalise(self.model.encode_image(inputs.to(self.device, self.dtype), normalize=True))

    def _encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        torch = import_torch()
        tokens = self.tokenizer(list(texts)).to(self.device)
        with torch.inference_mode():
            return l2_normalise(self.model.encode_text(tokens, normalize=True))


def load_backend(name: str, options: DualOptions = DualOptions(), run: RunOptions = RunOptions()
                 ) -> OpenClipBackend:
    """Load ``open_clip:<name>`` (see the module docstring for the forms of ``name``)."""
    revision, dtype, device, batch_size = options.revision, options.dtype, run.device, run.batch_size or 32
    import_torch()
    open_clip = _import_open_clip()
    if revision is not None:
        raise InputError("open_clip models have no revision option; pin a checkpoint file instead",
                         field="revision")
    model_name, pretrained = parse_open_clip_name(name)
    if model_name.startswith("local-dir:") and not Path(model_name.removeprefix("local-dir:")).is_dir():
        raise InputError("open_clip local-dir: folder not found", path=model_name.removeprefix("local-dir:"),
                         field="--model")
    if model_name.startswith("hf-hub:") or (pretrained is not None and not Path(pretrained).is_file()):
        offline_unless_reachable()  # weights from the hub: an unreachable hub fails in seconds, not a minute
    resolved_device, resolved_dtype = resolve_device_dtype(device, dtype)
    precision = {"float32": "fp32", "bfloat16": "pure_bf16", "float16": "pure_fp16"}[
        str(resolved_dtype).removeprefix("torch.")
    ]
    with held_log_records() as held:  # open_clip logs its failures on the root logger before raising
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                model_name, pretrained=pretrained, precision=precision, device=resolved_device
            )
            tokenizer = open_clip.get_tokenizer(model_name)
        except Exception as exc:
            # a file that is not a checkpoint fails anywhere in torch.load or open_clip (UnpicklingError,
            # EOFError, IndexError, KeyError): every failure on an existing file is that file's fault
            named_file = pretrained is not None and Path(pretrained).is_file()
            if not named_file and not isinstance(exc, (OSError, RuntimeError, ValueError)):
                raise
            raise load_error(open_clip, name, model_name, pretrained, exc) from exc
    held.release()  # loaded: its warnings, if any, go on to whoever listens
    model.eval()
    return OpenClipBackend(f"open_clip:{name}", model, preprocess, tokenizer, device=resolved_device,
                           dtype=resolved_dtype, batch_size=batch_size, model_name=model_name,
                           pretrained=pretrained)
