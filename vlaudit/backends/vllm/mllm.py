"""``vllm:`` — the literal yes/no margins of :mod:`vlaudit.backends.hf.mllm`, computed by vLLM's offline engine
(``vllm.LLM``) instead of a transformers forward (VCA §3, §9, §11).

Prompts: rendered by the transformers backend itself, loaded without weights (``hf_mllm.load_backend(...,
weights=False)``): the same chat template, system message, question templates, generation prefix "Answer:"
and verbalizer resolution, so a ``vllm:DIR`` run and an ``hf:DIR`` run score the same strings (the manifest
records ``prompt_rendering`` and the template fingerprints as the HF backend does; the tests check that the
engine's prompt token ids equal the HF processor's). The text-only context sends no image and no
placeholder, as there.

Scoring: one engine step per request, ``max_tokens=1`` at temperature 0, with ``logprob_token_ids`` naming
the interface's verbalizers (or the K option letters under the letter interface), so every option's
log-probability comes from **one** forward, unaffected by any top-k cut. vLLM returns raw (untempered)
log-softmax values of the next token; NLL = −log p and margin m = NLL(no) − NLL(yes) as in
:func:`vlaudit.backends.yesno_common.yes_no_results`. vLLM's automatic prefix caching (blocks of
``block_size`` tokens: a system+image prefix is computed once per image) and its encoder cache stay on
unless ``--no-prefix-cache``.

vLLM is imported only when a ``vllm:`` model loads (the registry imports this module on that prefix only).
Its log goes to stderr at level WARNING unless the environment says otherwise (``VLLM_LOGGING_STREAM``,
``VLLM_LOGGING_LEVEL``: vLLM writes INFO lines to stdout by default, among vlaudit's tables). An engine that
fails to start or to score, for a reason other than a missing file or a bad setting (vLLM's CPU attention
refusing a head size, a CUDA error), is one line (:class:`EngineError`), never a traceback.
On a CPU-only machine set ``VLLM_ENABLE_V1_MULTIPROCESSING=0`` (the engine then runs in this process: start-up
and memory halve) and ``VLLM_CPU_KVCACHE_SPACE`` (GiB of KV cache); docs/guide/served-models.md.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vlaudit.backends.base import (
    ANSWER_WORDS,
    BackendDescription,
    GenerationResult,
    PrefixCacheDecision,
    YesNoBackendBase,
    YesNoRequest,
    YesNoResult,
)
from vlaudit.backends.dtypes import resolve_dtype
from vlaudit.backends.hf import mllm as hf_mllm
from vlaudit.backends.hf.model_source import check_model_source
from vlaudit.backends.options import VLLM_ENGINE_FIELDS, HfOptions, RunOptions, VllmOptions
from vlaudit.backends.prompt.letters import LETTER_INTERFACE
from vlaudit.backends.yesno_common import check_interfaces, yes_no_results
from vlaudit.errors import EXIT_INCOMPLETE, InputError, MissingDependencyError, VlauditError
from vlaudit.hashing import sha256_text

if TYPE_CHECKING:
    from vlaudit.backends.hf.mllm import HfMllmBackend

#: how the prompts are rendered (recorded in ``describe()``): by the transformers backend's code
PROMPT_RENDERING = "hf_mllm"
#: one image per prompt and no video: vLLM otherwise profiles video inputs at start-up (minutes on a CPU)
MM_LIMITS = {"image": 1, "video": 0}
#: vLLM's logging, unless the environment sets it: to stderr (its default is stdout), warnings and errors only;
#: read when vllm is first imported, and by the engine's own processes, which inherit the environment
LOG_DEFAULTS = {"VLLM_LOGGING_STREAM": "ext://sys.stderr", "VLLM_LOGGING_LEVEL": "WARNING"}


class EngineError(VlauditError):
    """The vLLM engine failed mid-run (the finished chunks are cached; the same command resumes)."""

    exit_code = EXIT_INCOMPLETE


def engine_failure(exc: Exception) -> str:
    """An engine's exception as one line: its type and the first line of its message (a C++ error's message
    goes on with the stack frames), with the way out for vLLM's CPU attention refusing a head size."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if "head_dim" in first or "head size" in first.lower():
        text += (" (vLLM's CPU attention takes head sizes 32, 64, 80, ...; a tiny model it serves: "
                 "`vlaudit models tiny --family qwen2-vl --head-dim 32 --out DIR`)")
    return text


def _import_vllm() -> Any:
    for name, value in LOG_DEFAULTS.items():
        os.environ.setdefault(name, value)
    try:
        import vllm  # the optional engine, imported only when a vllm: model loads
    except ImportError as exc:
        missing: Exception | None = exc
    else:  # a folder named vllm on the path imports as an empty namespace package
        missing = None if hasattr(vllm, "LLM") else ImportError("no module named 'vllm'")
    if missing is not None:
        raise MissingDependencyError(
            f"vllm: models need the vllm package ({missing}); build its environment with `make vllm-env` "
            "(docs/guide/served-models.md)") from missing
    return vllm


def engine_version() -> str | None:
    """The installed vLLM distribution and version (``vllm`` or the CPU build ``vllm-cpu``), None if absent."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return f"{dist} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


class VllmMllmBackend(YesNoBackendBase):
    """A multimodal chat LLM in vLLM's offline engine, prompted exactly as :class:`HfMllmBackend` prompts it."""

    tokenizer_kind = "AutoProcessor"

    def __init__(self, spec: str, llm: Any, prompts: HfMllmBackend, *, options: VllmOptions, dtype: str,
                 prefix_cache: bool, batch_size: int, device: str = "cpu") -> None:
        self.spec = spec
        self.device = device  # the engine's device type (vLLM's platform)
        self.llm = llm
        self.prompts = prompts  # the transformers backend without weights: prompts and verbalizers
        self.options = options
        self.dtype = dtype
        self.prefix_cache = prefix_cache
        self.batch_size = batch_size
        self.verbalizer_ids = prompts.verbalizer_ids
        self.letter_ids = prompts.letter_ids
        self.refused_letters = prompts.refused_letters  # letters not one token (the runner names them)
        self.verbalizers = prompts.verbalizers
        self.family = prompts.family

    def prompt(self, question: str, interface: str, with_image: int) -> str:
        """The transformers backend's exact prompt (one image placeholder; vLLM's processor expands it)."""
        return self.prompts.prompt(question, interface, with_image)

    def describe(self) -> BackendDescription:
        """What changes outputs (manifest, cache keys): the prompt facts the HF backend records, and the engine."""
        processor = self.prompts.processor
        image_processor = getattr(processor, "image_processor", None)
        size = getattr(image_processor, "size", None)
        return BackendDescription.of({
            "spec": self.spec,
            "family": self.family,
            "model_class": "vllm.LLM",
            "engine": engine_version(),
            "revision": self.options.revision,
            "dtype": self.dtype,
            "device": self.device,
            "prompt_rendering": PROMPT_RENDERING,
            "pixel_budget": {"min_pixels": self.options.min_pixels, "max_pixels": self.options.max_pixels,
                             "image_processor_size": hf_mllm.plain_size(size)},
            "chat_template_sha256": sha256_text(str(getattr(processor, "chat_template", "") or "")),
            "template": hf_mllm.template_fingerprint(self.prompts.question_templates, self.prompts.system_override),
            "verbalizer_ids": {k: list(v) for k, v in self.verbalizer_ids.items()},
            **({"letter_ids": list(self.letter_ids)} if self.letter_ids else {}),
            "engine_options": {"tensor_parallel_size": self.options.tensor_parallel_size,
                               "pipeline_parallel_size": self.options.pipeline_parallel_size,
                               "max_model_len": self.options.max_model_len,
                               "block_size": self.options.block_size,
                               # only when set, so the keys of runs made before the option stay valid
                               **({"enforce_eager": True} if self.options.enforce_eager else {})},
            "prefix_cache": self.prefix_cache,
        })

    def prepare(self, items: Sequence[Any], images_dir: Any, interfaces: Sequence[str]) -> PrefixCacheDecision:
        """The prefix-cache decision the runner records (the manifest's ``prefix_cache``): vLLM's automatic
        prefix caching, on unless turned off; vLLM estimates nothing, so the decision carries no cost."""
        return PrefixCacheDecision(
            enabled=self.prefix_cache,
            reason=f"vLLM automatic prefix caching in blocks of {self.options.block_size} tokens"
            if self.prefix_cache else "forced off (--no-prefix-cache)",
            override=None if self.prefix_cache else False)

    def perturbations(self) -> dict[str, str]:
        """vLLM schedules its own batches: no math-preserving perturbation is switchable inside one engine."""
        return {}

    def _option_ids(self, request: YesNoRequest) -> list[int]:
        if request.interface == LETTER_INTERFACE:
            return [int(i) for i in self.letter_ids[:request.n_options]]
        return [int(i) for i in self.verbalizer_ids[request.interface]]

    def _inputs(self, prompt: str, request: YesNoRequest) -> dict[str, Any]:
        if request.image is None:
            return {"prompt": prompt}
        return {"prompt": prompt, "multi_modal_data": {"image": request.image.convert("RGB")}}

    def engine_outputs(self, requests: Sequence[YesNoRequest]) -> list[Any]:
        """vLLM's ``RequestOutput`` of each request (one next-token step, the options' log-probs requested)."""
        vllm = _import_vllm()
        prompts = [self.prompt(r.question, r.interface, r.image is not None) for r in requests]
        params = []
        for request in requests:
            ids = self._option_ids(request)
            # this vLLM wants logprobs == len(logprob_token_ids); the sampled token is added to the dict
            params.append(vllm.SamplingParams(max_tokens=1, temperature=0.0, logprobs=len(ids),
                                              logprob_token_ids=ids))
        try:
            outputs: list[Any] = self.llm.generate([self._inputs(p, r) for p, r in zip(prompts, requests, strict=True)],
                                                   params, use_tqdm=False)
        except (VlauditError, KeyboardInterrupt):
            raise
        except Exception as exc:  # the engine's own failure (a kernel, CUDA, a dead engine process): one line
            raise EngineError(f"the vLLM engine of {self.spec} failed: {engine_failure(exc)}; the finished "
                              "chunks are cached: rerun the same command once it is fixed") from exc
        return outputs

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        """Both verbalizers' (or every letter's) log-probs of each request from one engine step, in order."""
        check_interfaces(requests, self.verbalizer_ids, self.letter_ids)
        if not requests:
            return []
        outputs = self.engine_outputs(requests)
        prompts, rows, n_tokens = [], [], []
        for request, output in zip(requests, outputs, strict=True):
            logprobs = output.outputs[0].logprobs[0]  # token id -> Logprob of the one step
            ids = self._option_ids(request)
            missing = [i for i in ids if i not in logprobs]
            if missing:  # pragma: no cover - logprob_token_ids always returns the ids asked for
                raise InputError(f"vLLM returned no log-prob for token ids {missing}", record=request.key)
            rows.append({i: logprobs[i].logprob for i in ids})
            prompts.append(self.prompt(request.question, request.interface, request.image is not None))
            n_tokens.append(len(output.prompt_token_ids))
        return yes_no_results(requests, prompts, rows, n_tokens, self.verbalizer_ids, self.letter_ids)

    def context_length(self) -> int | None:
        """The engine's window: vLLM's ``max_model_len`` (the option, else what the engine derived from the
        model's config), None when the engine does not say."""
        config = getattr(getattr(self.llm, "llm_engine", None), "model_config", None)
        limit = getattr(config, "max_model_len", None) or self.options.max_model_len
        return int(limit) if isinstance(limit, int) and limit > 0 else None

    def generate(self, requests: Sequence[YesNoRequest], max_new_tokens: int,
                 answer_prefix: bool = True) -> list[GenerationResult]:
        """Greedy continuations (temperature 0) of every request's prompt, with or without "Answer:"."""
        vllm = _import_vllm()
        prefix = hf_mllm.GENERATION_PREFIX
        inputs = []
        for request in requests:
            prompt = self.prompt(request.question, request.interface, request.image is not None)
            if not answer_prefix and prompt.endswith(prefix):
                prompt = prompt[:-len(prefix)]
            inputs.append(self._inputs(prompt, request))
        params = vllm.SamplingParams(max_tokens=int(max_new_tokens), temperature=0.0)
        outputs = self.llm.generate(inputs, params, use_tqdm=False)
        return [GenerationResult(r.key, o.outputs[0].text, len(o.outputs[0].token_ids))
                for r, o in zip(requests, outputs, strict=True)]


def engine_arguments(name: str, options: VllmOptions, *, dtype: str, prefix_cache: bool) -> dict[str, Any]:
    """The keywords of ``vllm.LLM(...)`` for ``name`` under ``options``: each engine field of
    :class:`VllmOptions` (:data:`VLLM_ENGINE_FIELDS`) by its own name, the ones at None or False left to vLLM's
    default (``enforce_eager`` only when asked: vLLM's default compiles the model at start-up)."""
    kwargs: dict[str, Any] = {
        "model": name, "tokenizer": name, "revision": options.revision, "dtype": dtype,
        "trust_remote_code": options.trust_remote_code, "enable_prefix_caching": prefix_cache,
        "limit_mm_per_prompt": dict(MM_LIMITS), "seed": 0}
    engine = {k: getattr(options, k) for k in VLLM_ENGINE_FIELDS}
    kwargs.update({k: v for k, v in engine.items() if v is not None and v is not False})
    pixels = {k: v for k, v in (("min_pixels", options.min_pixels), ("max_pixels", options.max_pixels))
              if v is not None}
    if pixels:
        kwargs["mm_processor_kwargs"] = pixels
    return kwargs


def load_backend(name: str, options: VllmOptions = VllmOptions(), run: RunOptions = RunOptions(), *,
                 interfaces: Sequence[str] = tuple(ANSWER_WORDS), question_templates: dict[str, str] | None = None,
                 weights: bool = True) -> Any:
    """Load ``vllm:<id or path>``: the prompts through transformers (no weights), the weights into ``vllm.LLM``.

    ``dtype`` resolves as for ``hf:`` (auto: bf16 on a GPU, fp32 on the CPU); ``run.prefix_cache`` False turns
    vLLM's prefix caching off (None or True: on); ``run.device`` and ``run.device_map`` are vLLM's to decide
    (it places the model by its platform and ``tensor_parallel_size``). ``weights=False``: prompts and
    verbalizers only (``models verbalizers``), no engine."""
    if run.device_map is not None:
        raise InputError("vllm: models are placed by the engine (--tensor-parallel-size); "
                         "--device-map is for hf: models", field="--device-map")
    check_model_source("vllm", name, options.revision)
    hf_options = HfOptions(**{k: getattr(options, k) for k in HfOptions.__dataclass_fields__})
    prompts = hf_mllm.load_backend(name, hf_options, RunOptions(device="cpu"), interfaces=interfaces,
                                   question_templates=question_templates, weights=False)
    if not weights:
        return prompts
    if not isinstance(prompts, hf_mllm.HfMllmBackend):
        raise InputError(f"vllm:{name} is prompted through mistral-common; the vllm: backend renders "
                         "transformers chat templates only", field="model")
    vllm = _import_vllm()
    device = _engine_device()  # vLLM places the model by its platform; --device is not its to choose
    dtype = resolve_dtype(options.dtype, device)
    prefix_cache = run.prefix_cache is not False
    try:
        llm = vllm.LLM(**engine_arguments(name, options, dtype=dtype, prefix_cache=prefix_cache))
    except VlauditError:
        raise
    except Exception as exc:  # a missing file, a bad setting, or the engine's own refusal (RuntimeError, ...)
        raise InputError(f"cannot load vllm:{name}: {engine_failure(exc)}", field="model") from exc
    return VllmMllmBackend(f"vllm:{name}", llm, prompts, options=options, dtype=dtype, prefix_cache=prefix_cache,
                           batch_size=run.batch_size or 8, device=device)


def _engine_device() -> str:
    """The device type vLLM's platform runs on ("cpu" for the CPU build, else "cuda")."""
    from vllm.platforms import current_platform  # the optional engine (see _import_vllm)

    return "cpu" if current_platform.is_cpu() else "cuda"
