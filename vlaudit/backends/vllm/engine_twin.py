"""The ``engine`` perturbation of ``vca stability``: the same weights and prompts, scored by the other engine.

A run scored by ``hf:DIR`` is re-scored by ``vllm:DIR`` (transformers forward → vLLM's engine) and a ``vllm:``
run by ``hf:``, with the run's precision, revision, pixel budget, wording and interfaces. Both backends
render the prompt with the same code (:mod:`vlaudit.backends.vllm.mllm`), so what differs is only how the
forward is computed (kernels, fused ops, the order of sums): the |Δ margin| between engines is a noise source
users measure by hand (Qwen2-VL log-probs differ by 0.17–0.30 nat between transformers and vLLM with an image
on GPUs, vllm #12699, #47425). It enters τ like every other perturbation (``vca stability``).

Loading the other engine costs its start-up and, for vLLM, minutes on a big model, so ``engine`` is measured
only when asked for by name (``--perturbations engine``). A model that needs a GPU server needs it in both
engines, so the second engine is loaded with the settings it needs (:func:`twin_load`): a ``vllm:`` twin takes
the engine settings given to ``vca stability`` (every engine field of
:class:`~vlaudit.backends.options.VllmOptions`: ``--tensor-parallel-size``, ``--pipeline-parallel-size``,
``--gpu-memory-utilization``, ``--max-model-len``, ``--block-size``, ``--max-num-seqs``, ``--enforce-eager``),
an ``hf:`` twin the ``--device-map`` given (:class:`~vlaudit.backends.options.RunOptions`), and ``auto`` when
the ``vllm:`` run was split over several GPUs (tensor × pipeline parallel > 1). The
first engine is freed before the second loads (``release_first``: its weights, its vLLM engine process, the
GPU memory they held; :func:`release_engine`), since the run's own margins are read from its cache, and the
second is freed when the block ends: the two never share the GPUs.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator, Mapping
from dataclasses import fields, replace
from typing import Any

from vlaudit.backends.base import ENGINE
from vlaudit.backends.options import HfOptions, RunOptions, VllmOptions
from vlaudit.backends.registry import ModelRef, load_backend, parse_spec, parse_spec_or_none
from vlaudit.errors import InputError

#: a spec's prefix -> the prefix of the same weights in the other engine
TWIN_PREFIX = {"hf": "vllm", "vllm": "hf"}


def twin_spec(spec: str) -> str | None:
    """``hf:X`` → ``vllm:X`` and back; None for a backend with no twin engine."""
    parsed = parse_spec_or_none(spec)
    return f"{TWIN_PREFIX[parsed.prefix]}:{parsed.name}" if parsed is not None and parsed.prefix in TWIN_PREFIX \
        else None


def engine_perturbation(backend: Any) -> dict[str, str]:
    """``{"engine": what changes}`` for a backend with a twin engine (none otherwise)."""
    twin = twin_spec(str(getattr(backend, "spec", "")))
    return {ENGINE: f"the same weights and prompts scored by {parse_spec(twin).prefix}: (another engine)"} \
        if twin else {}


def twin_settings(engine: VllmOptions | None = None, engine_run: RunOptions | None = None) -> dict[str, Any]:
    """The second engine's settings given away from their defaults, by name: the engine fields of ``engine``
    (those :class:`VllmOptions` adds to :class:`HfOptions`; its model fields are the run's own, refused when
    set) and the ``device_map`` of ``engine_run`` (its other fields are the run's, refused when set)."""
    model_fields = {f.name for f in fields(HfOptions)}
    given: dict[str, Any] = {}
    if engine is not None:
        for f in fields(engine):
            value = getattr(engine, f.name)
            if value == f.default:
                continue
            if f.name in model_fields:
                raise InputError("is the run's own setting; the second engine takes only engine settings",
                                 field=str(f.metadata.get("flag") or f"-o {f.name}"))
            given[f.name] = value
    if engine_run is not None:
        engine_run.check_used(("device_map",), "the second engine of vca stability")
        if engine_run.device_map is not None:
            given["device_map"] = engine_run.device_map
    return given


def _given(engine: Mapping[str, Any] | None) -> dict[str, Any]:
    """The engine settings given away from their defaults (:func:`twin_settings`; a name :class:`VllmOptions`
    does not declare, such as ``device_map``, when not None)."""
    defaults = {f.name: f.default for f in fields(VllmOptions)}
    return {k: v for k, v in (engine or {}).items() if v is not None and v != defaults.get(k)}


def _twin_options(backend: Any, twin: str, engine: Mapping[str, Any] | None = None) -> HfOptions:
    """The run backend's options for the twin: the shared fields, the resolved dtype (auto may differ), and for
    a ``vllm:`` twin the engine settings given."""
    own = backend.options
    values: dict[str, Any] = {name: (own.get(name) if isinstance(own, dict) else getattr(own, name, None))
              for name in ("revision", "min_pixels", "max_pixels", "system")}
    values["trust_remote_code"] = bool(own.get("trust_remote_code") if isinstance(own, dict)
                                       else own.trust_remote_code)
    dtype = own.get("dtype") if isinstance(own, dict) else backend.dtype
    if twin.startswith("vllm:"):
        values.update({k: v for k, v in _given(engine).items() if k != "device_map"})
        return VllmOptions(dtype=str(dtype), **values)
    return HfOptions(dtype=str(dtype), **values)


def check_twin_settings(spec: str, engine: Mapping[str, Any] | None) -> None:
    """Refuse, in one line naming the twin, a second-engine setting that ``spec``'s twin does not take (a
    ``--device-map`` for a ``vllm:`` twin, a vLLM setting for an ``hf:`` one): before any model loads."""
    twin = twin_spec(spec)
    given = _given(engine)
    if twin is None or not given:
        return
    if twin.startswith("vllm:") and "device_map" in given:
        raise InputError(f"the second engine of {spec} is {twin}, which vLLM places by --tensor-parallel-size "
                         "and --pipeline-parallel-size", field="--device-map")
    refused = sorted(set(given) - {"device_map"}) if twin.startswith("hf:") else []
    if refused:
        raise InputError(f"the second engine of {spec} is {twin}, a transformers model: it takes --device-map "
                         "(default: auto when the vllm: run spans several GPUs)",
                         field="--" + refused[0].replace("_", "-"))


def twin_load(backend: Any, engine: Mapping[str, Any] | None = None) -> tuple[ModelRef, RunOptions]:
    """(the twin's model and options, its run options) for the run's loaded ``backend``; ``engine``: the
    settings given to ``vca stability`` (:func:`twin_settings`: vLLM engine fields, ``device_map``). A setting
    the twin does not take is refused in one line naming the twin."""
    twin = twin_spec(backend.spec)
    if twin is None:  # pragma: no cover - engine_perturbation offers the name only for a twin
        raise AssertionError(backend.spec)
    check_twin_settings(backend.spec, engine)
    given = _given(engine)
    device = getattr(backend.device, "type", backend.device)  # a torch.device (hf:) or its type (vllm:)
    run = RunOptions(batch_size=backend.batch_size, device=str(device or "auto"))
    if twin.startswith("vllm:"):
        return ModelRef(twin, _twin_options(backend, twin, engine)), run
    own = backend.options
    split = int(getattr(own, "tensor_parallel_size", 1) or 1) * int(getattr(own, "pipeline_parallel_size", 1) or 1)
    device_map = given.get("device_map") or ("auto" if split > 1 else None)
    return ModelRef(twin, _twin_options(backend, twin)), replace(run, device_map=device_map)


def release_engine(backend: Any) -> None:
    """Free what a loaded ``hf:`` or ``vllm:`` backend holds on its devices — its weights, its vLLM engine (the
    engine-core process included) — so another model fits; it renders prompts still, but scores no more."""
    llm = getattr(backend, "llm", None)
    if llm is not None:  # vllm: shut the engine core down, then vLLM's distributed state
        backend.llm = None
        shutdown = getattr(getattr(getattr(llm, "llm_engine", None), "engine_core", None), "shutdown", None)
        if callable(shutdown):
            shutdown()
        del llm
        gc.collect()
        if "vllm.distributed.parallel_state" in sys.modules:
            with contextlib.suppress(Exception):  # the engine is gone; a cleanup that fails leaves only memory
                sys.modules["vllm.distributed.parallel_state"].cleanup_dist_env_and_memory()
    elif getattr(backend, "model", None) is not None:
        backend.model = None
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


@contextlib.contextmanager
def other_engine(backend: Any, engine: Mapping[str, Any] | None = None, *, release_first: bool = False
                 ) -> Iterator[Any]:
    """The run backend's twin in the other engine, on the run's device type, loaded for the block with the
    settings of :func:`twin_load`; ``release_first``: ``backend`` is freed first (:func:`release_engine`;
    it scores no more). The twin is freed when the block ends."""
    model, run = twin_load(backend, engine)
    own = backend.options if isinstance(backend.options, dict) else backend.prompts.options
    interfaces = [*backend.verbalizer_ids, *(["letter"] if backend.letter_ids else [])]
    if release_first:
        release_engine(backend)
    loaded = load_backend(model, run, interfaces=interfaces, question_templates=own.get("question_templates"))
    try:
        yield loaded
    finally:
        release_engine(loaded)
        del loaded
