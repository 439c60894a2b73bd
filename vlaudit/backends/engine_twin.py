"""The ``engine`` perturbation of ``vca stability``: the same weights and prompts, scored by the other engine.

A run scored by ``hf:DIR`` is re-scored by ``vllm:DIR`` (transformers forward → vLLM's engine) and a ``vllm:``
run by ``hf:``, with the run's precision, revision, pixel budget, wording and interfaces. Both backends
render the prompt with the same code (:mod:`vlaudit.backends.vllm_mllm`), so what differs is only how the
forward is computed (kernels, fused ops, the order of sums): the |Δ margin| between engines is a noise source
users measure by hand (Qwen2-VL log-probs differ by 0.17–0.30 nat between transformers and vLLM with an image
on GPUs, vllm #12699, #47425). It enters τ like every other perturbation (``vca stability``).

Loading the other engine costs a second model in memory and, for vLLM, its start-up, so ``engine`` is measured
only when asked for by name (``--perturbations engine``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from vlaudit.backends.base import ENGINE
from vlaudit.backends.options import HfOptions, RunOptions, VllmOptions
from vlaudit.backends.registry import ModelRef, load_backend

#: a spec's prefix -> the prefix of the same weights in the other engine
TWIN_PREFIX = {"hf": "vllm", "vllm": "hf"}


def twin_spec(spec: str) -> str | None:
    """``hf:X`` → ``vllm:X`` and back; None for a backend with no twin engine."""
    prefix, _, name = spec.partition(":")
    return f"{TWIN_PREFIX[prefix]}:{name}" if prefix in TWIN_PREFIX and name else None


def engine_perturbation(backend: Any) -> dict[str, str]:
    """``{"engine": what changes}`` for a backend with a twin engine (none otherwise)."""
    twin = twin_spec(str(getattr(backend, "spec", "")))
    return {ENGINE: f"the same weights and prompts scored by {twin.partition(':')[0]}: (another engine)"} \
        if twin else {}


def _twin_options(backend: Any, twin: str) -> HfOptions:
    """The run backend's options for the twin: the shared fields, the resolved dtype (auto may differ)."""
    own = backend.options
    values: dict[str, Any] = {name: (own.get(name) if isinstance(own, dict) else getattr(own, name, None))
              for name in ("revision", "min_pixels", "max_pixels", "system")}
    values["trust_remote_code"] = bool(own.get("trust_remote_code") if isinstance(own, dict)
                                       else own.trust_remote_code)
    dtype = own.get("dtype") if isinstance(own, dict) else backend.dtype
    kind = VllmOptions if twin.startswith("vllm:") else HfOptions
    return kind(dtype=str(dtype), **values)


@contextlib.contextmanager
def other_engine(backend: Any) -> Iterator[Any]:
    """The run backend's twin in the other engine, on the run's device type, loaded for the block."""
    twin = twin_spec(backend.spec)
    if twin is None:  # pragma: no cover - engine_perturbation offers the name only for a twin
        raise AssertionError(backend.spec)
    own = backend.options if isinstance(backend.options, dict) else backend.prompts.options
    interfaces = [*backend.verbalizer_ids, *(["letter"] if backend.letter_ids else [])]
    device = getattr(backend.device, "type", backend.device)  # a torch.device (hf:) or its type (vllm:)
    loaded = load_backend(ModelRef(twin, _twin_options(backend, twin)),
                          RunOptions(batch_size=backend.batch_size, device=str(device or "auto")),
                          interfaces=interfaces, question_templates=own.get("question_templates"))
    try:
        yield loaded
    finally:
        del loaded
