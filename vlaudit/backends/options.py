"""What each backend loads a model with: one typed, frozen options class per kind of backend.

:class:`HfOptions` serves ``hf:`` (multimodal chat LLMs) and the yes/no ``ref:`` models built like them,
:class:`DualOptions` serves ``hf-clip:``, ``open_clip:`` and the dual-encoder ``ref:`` models, and
:class:`VllmOptions` adds vLLM's engine settings for ``vllm:``, :class:`PlantedOptions` adds the knobs of vlaudit's own planted yes/no references (``ref:batch-noise``,
``ref:scene-vqa-mixture``, ...). The registry (:mod:`vlaudit.backends.registry`) says which classes a prefix
takes, so a :class:`~vlaudit.scoring.run.parts.ModelRef` gets the right default and a wrong class is refused.

These options say *what* model is scored (its weights, precision, image budget, prompt wording), so they are
compared when a run is rerun into its folder; how the forward passes are placed and batched lives in
:class:`~vlaudit.scoring.run.parts.RunOptions`. Each field's ``metadata`` holds its command-line ``flag`` and
``help`` (and ``min`` for a number): the one place an option is declared. The commands build their flags
from it (``@model_options`` in :mod:`vlaudit.commands._model_options`), ``-o KEY=VALUE`` and
``Spec.of(options=...)`` reach every field by name (:func:`vlaudit.backends.model_options.model_ref`), a field
with ``flag`` None is API only (no flag of its own; ``-o`` reaches it). Torch-free: the command layer imports
this module to build its flags.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Union

from vlaudit.backends.dtypes import DTYPE_HELP, parse_dtype
from vlaudit.errors import InputError

_DTYPE = field(default="auto", metadata={"flag": "--dtype", "help": DTYPE_HELP})
_SYSTEM_HELP = ("System message for every family (default: Qwen families 'You are a helpful assistant.', others "
                "none; '' for none), or a named one: qwen-neutral (VCA §18, 'Answer the user's question with "
                "exactly yes or no.').")


def at_least(name: str, value: float | None, minimum: float) -> None:
    """Refuse ``value`` below ``minimum`` (NaN too), naming the option ``name``."""
    if value is not None and not value >= minimum:  # `not >=`: NaN is refused too
        raise InputError(f"must be at least {minimum}, got {value!r}", field=name)


def _check_pixels(min_pixels: int | None, max_pixels: int | None) -> None:
    at_least("--min-pixels", min_pixels, 1)
    at_least("--max-pixels", max_pixels, 1)
    if min_pixels is not None and max_pixels is not None and min_pixels > max_pixels:
        raise InputError(f"{min_pixels} is above --max-pixels {max_pixels}", field="--min-pixels")


@dataclass(frozen=True)
class HfOptions:
    """``hf:`` models loaded through transformers (and the yes/no ``ref:`` models built like them).

    ``dtype`` is kept in its canonical spelling (fp32 and float32 are one run)."""

    dtype: str = _DTYPE
    revision: str | None = field(default=None, metadata={
        "flag": "--revision", "help": "Model revision: hub branch, tag or commit (default: main)."})
    min_pixels: int | None = field(default=None, metadata={
        "flag": "--min-pixels", "min": 1,
        "help": "Pixel budget: minimum pixels (Qwen-VL; default: the processor's)."})
    max_pixels: int | None = field(default=None, metadata={
        "flag": "--max-pixels", "min": 1,
        "help": "Pixel budget: maximum pixels (Qwen-VL; default: the processor's)."})
    trust_remote_code: bool = field(default=False, metadata={
        "flag": "--trust-remote-code", "help": "Allow model repo code (off)."})
    system: str | None = field(default=None, metadata={"flag": "--system", "help": _SYSTEM_HELP})
    #: transformers' attention kernel (eager, sdpa, ...; API only, default: the model's)
    attn_implementation: str | None = field(default=None, metadata={"flag": None})

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", parse_dtype(self.dtype, field="--dtype"))
        _check_pixels(self.min_pixels, self.max_pixels)


@dataclass(frozen=True)
class PlantedOptions(HfOptions):
    """vlaudit's planted yes/no references (``ref:batch-noise``, ``ref:scene-vqa-*``, ``ref:scene-mcq-*``): the
    :class:`HfOptions` a yes/no command passes, plus what the planted mechanism is (API only; None: the
    model's own default)."""

    noise_scale: float | None = field(default=None, metadata={"flag": None})
    scenes: str | None = field(default=None, metadata={"flag": None})
    image_fraction: float | None = field(default=None, metadata={"flag": None})
    mixture_seed: int | None = field(default=None, metadata={"flag": None})
    mcq_seed: int | None = field(default=None, metadata={"flag": None})


@dataclass(frozen=True)
class VllmOptions(HfOptions):
    """``vllm:`` models served in-process by vLLM's offline engine (:mod:`vlaudit.backends.vllm.mllm`): the
    :class:`HfOptions` (the same prompt rendering, precision and pixel budget) and the engine's settings.

    Each engine field is the ``vllm.LLM`` keyword of its name (:func:`vlaudit.backends.vllm.mllm.engine_arguments`
    passes it when not None or False), and its metadata is its flag: a new engine setting is one field here. A
    None engine setting is vLLM's own default. Every field changes the engine the margins come from (the
    parallel layout changes summation order), so a rerun into a run folder compares them all."""

    tensor_parallel_size: int = field(default=1, metadata={
        "flag": "--tensor-parallel-size", "min": 1,
        "help": "vllm: GPUs one copy of the model is split across (tensor parallel; 1)."})
    pipeline_parallel_size: int = field(default=1, metadata={
        "flag": "--pipeline-parallel-size", "min": 1,
        "help": "vllm: pipeline stages (layers split across GPUs; 1)."})
    gpu_memory_utilization: float | None = field(default=None, metadata={
        "flag": "--gpu-memory-utilization", "min": 0.01,
        "help": "vllm: fraction of each GPU's memory the engine may take (default: vLLM's, 0.9)."})
    max_model_len: int | None = field(default=None, metadata={
        "flag": "--max-model-len", "min": 1,
        "help": "vllm: longest prompt + answer in tokens (default: the model's context)."})
    block_size: int = field(default=32, metadata={
        "flag": "--block-size", "min": 1,
        "help": "vllm: KV-cache block in tokens; prefix caching reuses whole blocks (32)."})
    max_num_seqs: int | None = field(default=None, metadata={
        "flag": "--max-num-seqs", "min": 1,
        "help": "vllm: most sequences in one engine step, the engine's batch (default: vLLM's)."})
    enforce_eager: bool = field(default=False, metadata={
        "flag": "--enforce-eager",
        "help": "vllm: run the model eagerly, without torch.compile or graphs (starts in seconds, runs "
                "slower)."})

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least("--tensor-parallel-size", self.tensor_parallel_size, 1)
        at_least("--pipeline-parallel-size", self.pipeline_parallel_size, 1)
        at_least("--max-model-len", self.max_model_len, 1)
        at_least("--block-size", self.block_size, 1)
        at_least("--max-num-seqs", self.max_num_seqs, 1)
        if self.gpu_memory_utilization is not None and not 0 < self.gpu_memory_utilization <= 1:
            raise InputError(f"must be in (0, 1], got {self.gpu_memory_utilization!r}",
                             field="--gpu-memory-utilization")


#: the engine settings :class:`VllmOptions` adds to :class:`HfOptions` (flags a non-vllm model refuses when set)
VLLM_ENGINE_FIELDS = tuple(f.name for f in fields(VllmOptions) if f.name not in {g.name for g in fields(HfOptions)})


@dataclass(frozen=True)
class DualOptions:
    """Dual encoders: ``hf-clip:``, ``open_clip:`` (which takes no revision) and the dual ``ref:`` models."""

    dtype: str = _DTYPE
    revision: str | None = field(default=None, metadata={
        "flag": "--revision", "help": "Model revision (hf-clip: hub ids only; default: main)."})

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", parse_dtype(self.dtype, field="--dtype"))


#: how an endpoint backend reads the answer words: vLLM's ``logprob_token_ids`` (exact), the server's
#: ``top_logprobs`` (a word outside the top k is censored), or the first of the two the server offers
LOGPROB_TOKEN_IDS_MODES = ("auto", "on", "off")


@dataclass(frozen=True)
class EndpointOptions:
    """``openai:URL#MODEL`` — a model behind an OpenAI-compatible chat-completions server (``vllm serve``,
    SGLang, a hosted API returning log-probs).

    Fields marked ``operational`` change how the requests are sent, not what they return (replicas,
    concurrency, time-outs, retries, the key's variable): a rerun into the run's folder may change them. The
    API key itself is never held here: ``api_key_env`` is the *name* of the environment variable to read."""

    api_key_env: str | None = field(default=None, metadata={
        "flag": "--api-key-env", "operational": True,
        "help": "Name of the environment variable holding the API key, sent as a Bearer token (the key is "
                "never recorded; default: no key)."})
    replicas: tuple[str, ...] = field(default=(), metadata={
        "flag": "--replica", "operational": True,
        "help": "Base URL of another server of the same model (data-parallel; repeat the flag)."})
    concurrency: int = field(default=8, metadata={
        "flag": "--concurrency", "min": 1, "operational": True,
        "help": "Requests in flight at once, over all endpoints."})
    timeout: float = field(default=120.0, metadata={
        "flag": "--timeout", "min": 0.001, "operational": True, "help": "Seconds one request may take."})
    max_retries: int = field(default=5, metadata={
        "flag": "--max-retries", "min": 0, "operational": True,
        "help": "Retries of a request after a dropped connection, a time-out, HTTP 429 or 5xx."})
    backoff: float = field(default=0.5, metadata={
        "flag": "--backoff", "min": 0.0, "operational": True,
        "help": "First retry's back-off in seconds, doubled per retry, with jitter (HTTP 429: at least its "
                "Retry-After)."})
    top_logprobs: int = field(default=20, metadata={
        "flag": "--top-logprobs", "min": 1,
        "help": "k of top_logprobs when the server has no logprob_token_ids: an answer word outside the top k "
                "is censored (its log-prob only bounded above)."})
    logprob_token_ids: str = field(default="auto", metadata={
        "flag": "--logprob-token-ids",
        "help": "Read the answer words' exact log-probs with vLLM's logprob_token_ids: auto (when the server "
                "offers it), on (required), off (top_logprobs only)."})
    served_dtype: str | None = field(default=None, metadata={
        "flag": "--served-dtype",
        "help": "The dtype the server runs the model in, as it was started (vllm serve --dtype): recorded in "
                "the manifest beside what the server reports, with a warning when it reports another "
                "(default: not said)."})
    system: str | None = field(default=None, metadata={"flag": "--system", "help": _SYSTEM_HELP})

    def __post_init__(self) -> None:
        object.__setattr__(self, "replicas", tuple(str(url) for url in self.replicas))
        if self.served_dtype is not None:
            dtype = parse_dtype(self.served_dtype, field="--served-dtype")
            if dtype == "auto":
                raise InputError("say the dtype the server runs the model in (float32, float16, bfloat16); auto "
                                 "is the server's choice, which it does not report", field="--served-dtype")
            object.__setattr__(self, "served_dtype", dtype)
        at_least("--concurrency", self.concurrency, 1)
        at_least("--timeout", self.timeout, 0.001)
        at_least("--max-retries", self.max_retries, 0)
        at_least("--backoff", self.backoff, 0.0)
        at_least("--top-logprobs", self.top_logprobs, 1)
        if self.logprob_token_ids not in LOGPROB_TOKEN_IDS_MODES:
            raise InputError(f"must be one of {', '.join(LOGPROB_TOKEN_IDS_MODES)}, got {self.logprob_token_ids!r}",
                             field="--logprob-token-ids")


def operational_option_names() -> tuple[str, ...]:
    """The fields of every backend options class marked ``operational`` (a rerun may change them)."""
    return tuple(f.name for kind in (HfOptions, PlantedOptions, DualOptions, EndpointOptions) for f in fields(kind)
                 if f.metadata.get("operational"))


#: the options of any backend (the registry says which a prefix takes)
BackendOptions = Union[HfOptions, PlantedOptions, VllmOptions, DualOptions, EndpointOptions]  # noqa: UP007


def option_values(options: BackendOptions) -> dict[str, object]:
    """The options as loader keywords, in field order (a None left out where its default is None: the
    loader's own default then applies)."""
    return {f.name: getattr(options, f.name) for f in fields(options)
            if not (f.default is None and getattr(options, f.name) is None)}


@dataclass(frozen=True)
class RunOptions:
    """How a run is computed, not what it holds: a rerun may change any of these.

    ``batch_size`` None is the command's default (8 for a yes/no model, 32 for a dual encoder);
    ``device_map`` and ``prefix_cache`` apply to ``hf:`` models (placement across devices; shared
    image-prefix reuse, exact to float rounding); ``strict`` fails on a missing or corrupt image instead of
    recording it. A command refuses a field it has no use for set away from its default."""

    batch_size: int | None = field(default=None, metadata={
        "flag": "--batch-size", "min": 1, "help": "Sequences per forward pass."})
    chunk_size: int = field(default=64, metadata={
        "flag": "--chunk-size", "min": 1, "help": "Unique queries per atomic cache chunk."})
    device: str = field(default="auto", metadata={"flag": "--device", "help": "auto, cpu, cuda, cuda:1, ..."})
    device_map: str | None = field(default=None, metadata={
        "flag": "--device-map",
        "help": "transformers device_map (e.g. auto) for big models (default: none, one device)."})
    prefix_cache: bool | None = field(default=None, metadata={
        "flag": "--prefix-cache",
        "help": "Force shared image-prefix KV reuse on/off (Qwen-VL). Default: decided per run from image vs "
                "question tokens and questions per image; the decision is in manifest.json."})
    strict: bool = field(default=False, metadata={
        "flag": "--strict", "help": "Fail on any missing/corrupt image instead of recording it."})

    def __post_init__(self) -> None:
        at_least("--batch-size", self.batch_size, 1)
        at_least("--chunk-size", self.chunk_size, 1)

    def check_used(self, used: tuple[str, ...], command: str) -> None:
        """Refuse a field outside ``used`` (the ones ``command`` reads) that was set away from its default."""
        for f in fields(self):
            if f.name not in used and getattr(self, f.name) != f.default:
                raise InputError(f"{command} does not use {f.name}", field=str(f.metadata["flag"]))
