"""``hf:`` — literal yes/no margins of multimodal chat LLMs served by transformers (VCA §9, §11).

Protocol (VCA §11 "Matched context construction"): the family's native chat template renders one user turn
holding the image (none for the text-only context — no placeholder either) and the fixed question text
``QUESTION_TEMPLATES[interface]``; Qwen families get the explicit system message "You are a helpful
assistant.", the others none. Both are per-backend options with these defaults (``vca score --template`` /
``--system``, the wording diagnostics of VCA §18) and enter the model fingerprint, hence every cache key.
After the template's generation prompt comes the fixed generation prefix ``GENERATION_PREFIX``; the
continuation is a literal verbalizer from :data:`vlaudit.backends.base.ANSWER_WORDS` (" yes"/" no",
" true"/" false": leading space after the prefix, resolved in the prompt's context by
:mod:`vlaudit.backends.prompt.verbalizers`), each of which must be one token (checked at load, before any scoring).
Prompt tokens are masked, so the NLL of the one-token continuation is −log p(verbalizer | prompt), and both
verbalizers are read from the log-softmax at the last position of **one** forward pass;
margin m = NLL(no) − NLL(yes).

Several images (MMMU): the families of :data:`~vlaudit.backends.base.MULTI_IMAGE_FAMILIES` take an item's
images in one user turn, one placeholder each, in order, before the question text (``max_images``); every other
family takes one, and :func:`max_images_of` says which from the config alone, before any weights load.

Speed: batched full forwards with left padding; for the Qwen-VL families the KV cache of the shared
system+image prefix is computed once per image and reused for every question about it, with explicit mrope
position ids (see :mod:`vlaudit.backends.hf.prefix_cache`); other families fall back to full forwards.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
import transformers
from transformers.image_utils import SizeDict
from transformers.utils import logging as hf_logging

from vlaudit.backends.base import (
    ANSWER_WORDS,
    MAX_IMAGES,
    MULTI_IMAGE_FAMILIES,
    BackendDescription,
    PrefixCacheDecision,
    YesNoBackendBase,
    YesNoRequest,
    YesNoResult,
    config_context_length,
)
from vlaudit.backends.dtypes import resolve_dtype
from vlaudit.backends.hf.generate import GreedyGeneration
from vlaudit.backends.hf.model_source import check_model_source
from vlaudit.backends.hf.prefix_cache import prefix_cache_decision, score_shared_prefix, split_prompt
from vlaudit.backends.mistral.mllm import load_mistral_common, tekken_file
from vlaudit.backends.options import HfOptions, RunOptions
from vlaudit.backends.prompt.letters import (
    LETTER_INTERFACE,
    PROBE_OPTIONS,
    item_question,
    letter_question,
    resolve_letters,
    settle_letters,
)
from vlaudit.backends.prompt.verbalizers import (
    PROBE_QUESTION,
    QUESTION_TEMPLATES,
    Verbalizer,
    VerbalizerError,
    check_interface,
    merge_question_templates,
    resolve_verbalizers,
)
from vlaudit.backends.prompt.wording import (
    GENERATION_PREFIX,
    QWEN_FAMILIES,
    QWEN_SYSTEM,
    resolve_system,
    template_fingerprint,
    user_text,
)
from vlaudit.backends.torch_perturbations import TorchPerturbations
from vlaudit.backends.yesno_common import (
    check_interfaces,
    load_config,
    yes_no_results,
)
from vlaudit.errors import InputError, MissingDependencyError
from vlaudit.hashing import pixels_sha256, sha256_text
from vlaudit.settings import PROMPT_CHARS_PER_TOKEN_BOUND
from vlaudit.sources.images import ImageFailure, ImageStore

if TYPE_CHECKING:
    from PIL import Image

# mrope prefix reuse verified exact (to float rounding) against full forwards for these model types.
PREFIX_CACHE_FAMILIES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl")
# Placeholder the family's template emits for one image; the prefix ends right after it.
_IMAGE_BLOCK_END = {"qwen2_vl": "<|vision_end|>", "qwen2_5_vl": "<|vision_end|>", "qwen3_vl": "<|vision_end|>"}


def plain_size(size: Any) -> dict[str, Any] | None:
    """The image processor's size setting as a plain dict (transformers keeps a SizeDict dataclass)."""
    if size is None:
        return None
    items = dataclasses.asdict(size) if dataclasses.is_dataclass(size) and not isinstance(size, type) else dict(size)
    return {k: v for k, v in items.items() if v is not None}


class HfMllmBackend(TorchPerturbations, GreedyGeneration, YesNoBackendBase):
    """A transformers image-text-to-text model read through its literal yes/no verbalizers."""

    prefix_cache_families = PREFIX_CACHE_FAMILIES
    generation_prefix = GENERATION_PREFIX

    def __init__(self, spec: str, model: Any, processor: Any, *, options: dict[str, Any],
                 config: Any = None) -> None:
        """``model=None`` (with its ``config``) serves prompts and verbalizers only, without weights."""
        self.spec = spec
        self.model = model
        self.processor = processor
        self.tokenizer = getattr(processor, "tokenizer", processor)
        self.tokenizer.padding_side = "left"  # the last position is then every row's prompt end
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.options = options
        self.family = str(getattr(model.config if model is not None else config, "model_type", "unknown"))
        # several images in one user turn, in order, where the family's template and processor take them
        self.max_images = MAX_IMAGES if self.family in MULTI_IMAGE_FAMILIES else 1
        self.batch_size = int(options.get("batch_size", 8))
        # None: decided per run by :meth:`prepare` from the run's shape; True/False: the user's override.
        self.prefix_override: bool | None = options.get("prefix_cache")
        self.prefix_cache = self.prefix_override is not False and self.family in PREFIX_CACHE_FAMILIES
        self.prefix_decision: PrefixCacheDecision | None = None
        first = next(model.parameters()) if model is not None else None
        self.device = first.device if first is not None else None
        self.model_dtype = first.dtype if first is not None else None
        self._logits_to_keep = True
        self._prompts: dict[tuple[Any, ...], str] = {}
        # wording diagnostics (VCA §18): per-backend question templates and system message (default: the built-in ones)
        self._template_overrides = dict(options.get("question_templates") or {})
        merge_question_templates(self._template_overrides)
        self.system_override: str | None = resolve_system(options.get("system"))
        self.system = self.system_override if self.system_override is not None else (
            QWEN_SYSTEM if self.family in QWEN_FAMILIES else None)
        self.verbalizers: dict[str, tuple[Verbalizer, ...]] = {}
        self.verbalizer_ids = {name: self._single_token_ids(name) for name in options["interfaces"]
                               if name != LETTER_INTERFACE}
        self.refused_letters: dict[str, str] = {}
        if LETTER_INTERFACE in options["interfaces"]:
            self.letter_ids = self._letter_ids()

    # ------------------------------------------------------------------------------------------ prompts

    def _single_token_ids(self, interface: str) -> tuple[int, int]:
        """Both verbalizer ids of ``interface``, read from how they continue the real scoring prompt."""
        positive, negative = self._verbalizers(interface)
        return positive.token_id, negative.token_id

    def _after_text(self, prompts: Sequence[str]) -> bool:
        """After "Answer:" the word is written text; after a bare turn opening it would start the turn."""
        specials = tuple(t for t in self.tokenizer.all_special_tokens if t)
        return not any(p[-1:].isspace() or p.endswith(specials) for p in prompts)

    def _tokenizer_of(self, prompt: str) -> Any:
        def tokenize(continuation: str) -> tuple[list[int], list[int]]:
            add = self._add_special_tokens(prompt)
            return (self.tokenizer.encode(prompt, add_special_tokens=add),
                    self.tokenizer.encode(prompt + continuation, add_special_tokens=add))

        return tokenize

    def _letter_ids(self) -> tuple[int, ...]:
        """The option letters' ids, read from how each continues the real letter prompt (with and without the
        image, which must agree); letters that are not one token are kept in ``refused_letters``."""
        question = letter_question(PROBE_QUESTION, PROBE_OPTIONS)
        prompts = [self.prompt(question, LETTER_INTERFACE, with_image) for with_image in (False, True)]
        after_text = self._after_text(prompts)
        found = [resolve_letters(self.spec, after_text=after_text, tokenize=self._tokenizer_of(prompt),
                                 pieces=self.tokenizer.convert_ids_to_tokens) for prompt in prompts]
        self.refused_letters, ids, self.verbalizers[LETTER_INTERFACE] = settle_letters(self.spec, found)
        return ids

    def _verbalizers(self, interface: str) -> tuple[Verbalizer, Verbalizer]:
        check_interface(interface)
        prompts = [self.prompt(PROBE_QUESTION, interface, with_image) for with_image in (False, True)]
        after_text = self._after_text(prompts)
        found = []
        for prompt in prompts:  # both prompt forms (with and without the image) must agree
            found.append(resolve_verbalizers(self.spec, interface, after_text=after_text,
                                             tokenize=self._tokenizer_of(prompt),
                                             pieces=self.tokenizer.convert_ids_to_tokens))
        if found[0] != found[1]:
            raise VerbalizerError(f"model {self.spec}: interface {interface!r} resolves to different tokens with "
                                  f"and without the image ({found[0]} vs {found[1]})", field="interface")
        self.verbalizers[interface] = found[0]
        return found[0]

    @property
    def question_templates(self) -> dict[str, str]:
        """The module defaults (read live) with this backend's ``--template`` overrides on top."""
        return {**QUESTION_TEMPLATES, **self._template_overrides}

    def messages(self, question: str, interface: str, with_image: int) -> list[dict[str, Any]]:
        """The chat turns: the user turn holds ``with_image`` image placeholders (0, 1 or several, in the
        item's order) and then the question text, whose ``<image k>`` references stay as written: the images
        are listed before the text, not interleaved at those references (docs/reference/benchmarks.md)."""
        text = user_text(question, interface, self.question_templates)
        content: list[dict[str, Any]] = [{"type": "image"} for _ in range(int(with_image))]
        content.append({"type": "text", "text": text})
        messages: list[dict[str, Any]] = []
        if self.system:  # an empty --system sends no system turn
            messages.append({"role": "system", "content": [{"type": "text", "text": self.system}]})
        messages.append({"role": "user", "content": content})
        return messages

    def context_length(self) -> int | None:
        """The most positions the language model was built for (its config), None when it does not say."""
        return config_context_length(self.model)

    def prompt_too_long(self, prompt: str) -> str | None:
        """Why ``prompt`` cannot fit the model's context (None when it fits), before any tensor is allocated:
        a 10 MB question would otherwise ask torch for terabytes. A prompt of at most ``limit`` bytes always
        fits (a token spans at least one byte), so only long ones are tokenised."""
        limit = self.context_length()
        if limit is None or len(prompt.encode("utf-8")) <= limit:
            return None
        if len(prompt) > PROMPT_CHARS_PER_TOKEN_BOUND * limit:
            n_tokens = f"{len(prompt)} characters"
        else:
            count = len(self.tokenizer(prompt, add_special_tokens=False)["input_ids"])
            if count <= limit:
                return None
            n_tokens = f"{count} tokens"
        return f"input too long: the prompt has {n_tokens}, more than the model's context of {limit} tokens"

    def prompt(self, question: str, interface: str, with_image: int) -> str:
        """The exact serialized prompt (``with_image`` image placeholders, before the processor expands them)."""
        # Rendering the jinja chat template costs more than a tiny model's forward; the memo key holds every
        # module-level prompt piece too, so a changed template is never served a stale prompt.
        memo_key = (question, interface, int(with_image),
                    self._template_overrides.get(interface, QUESTION_TEMPLATES.get(interface)), GENERATION_PREFIX,
                    self.system)
        cached = self._prompts.get(memo_key)
        if cached is None:
            rendered = self.processor.apply_chat_template(
                self.messages(question, interface, with_image), add_generation_prompt=True, tokenize=False)
            if len(self._prompts) >= 65536:  # bounded: a benchmark's prompts are revisited close together
                self._prompts.clear()
            cached = self._prompts[memo_key] = rendered + GENERATION_PREFIX
        return cached

    def _add_special_tokens(self, prompt: str) -> bool:
        bos = self.tokenizer.bos_token
        return not (bos and prompt.startswith(bos))  # the template already wrote BOS

    def describe(self) -> BackendDescription:
        """Facts that change outputs: they go into the manifest and every cache key."""
        image_processor = getattr(self.processor, "image_processor", None)
        size = getattr(image_processor, "size", None)
        return BackendDescription.of({
            "spec": self.spec,
            "family": self.family,
            "model_class": type(self.model).__name__,
            "revision": self.options.get("revision"),
            "commit_hash": getattr(self.model.config, "_commit_hash", None),
            "dtype": str(self.model.dtype).replace("torch.", ""),
            "device": str(self.device),
            "pixel_budget": {"min_pixels": self.options.get("min_pixels"),
                             "max_pixels": self.options.get("max_pixels"),
                             "image_processor_size": plain_size(size)},
            "chat_template_sha256": sha256_text(str(getattr(self.processor, "chat_template", "") or "")),
            "template": template_fingerprint(self.question_templates, self.system_override),
            "verbalizer_ids": {k: list(v) for k, v in self.verbalizer_ids.items()},
            **({"letter_ids": list(self.letter_ids)} if self.letter_ids else {}),
            "prefix_cache": self.prefix_cache,
            "prefix_cache_decision": self.prefix_decision,
        })

    def prepare(self, items: Sequence[Any], images_dir: Any, interfaces: Sequence[str]) -> PrefixCacheDecision:
        """Decide shared-prefix reuse for this run from its shape (see
        :func:`vlaudit.backends.hf.prefix_cache.prefix_cache_decision`): image-prefix and question-suffix
        token counts of the first item with a readable image, and queries per image = items per image file ×
        interfaces. Called by the runner before planning, which records the decision returned (``describe()``
        holds it too)."""
        supported = self.family in PREFIX_CACHE_FAMILIES
        per_image: dict[str, int] = {}
        for item in items:
            if len(item.images) == 1:  # several images are scored by full forwards (no shared prefix)
                per_image[item.image] = per_image.get(item.image, 0) + 1
        prefix_tokens = suffix_tokens = 0
        if supported and per_image:
            store = ImageStore(images_dir)
            for item in items:
                if len(item.images) != 1:
                    continue
                try:
                    image, _ = store.load(item.image)
                except ImageFailure:
                    continue
                prefix, suffix = split_prompt(self.prompt(item_question(item, interfaces[0]), interfaces[0], True),
                                              _IMAGE_BLOCK_END[self.family])
                prefix_tokens = int(self.encode([prefix], [image])["input_ids"].shape[1])
                suffix_tokens = len(self.tokenizer.encode(suffix, add_special_tokens=False))
                break
        queries = len(interfaces) * (sum(per_image.values()) / len(per_image)) if per_image else 0.0
        self.prefix_decision = prefix_cache_decision(
            prefix_tokens=prefix_tokens, suffix_tokens=suffix_tokens, queries_per_image=queries,
            batch_size=self.batch_size, override=self.prefix_override, supported=supported)
        self.prefix_cache = self.prefix_decision.enabled
        return self.prefix_decision

    # ------------------------------------------------------------------------------------------ scoring

    def encode(self, prompts: Sequence[str],
               images: Sequence[Image.Image | Sequence[Image.Image]] | None) -> dict[str, Any]:
        """Processor inputs for a left-padded batch (``images`` aligned with ``prompts``: each prompt's image,
        or its images in order; None for text-only prompts)."""
        kwargs: dict[str, Any] = {"text": list(prompts), "return_tensors": "pt", "padding": True,
                                  "add_special_tokens": self._add_special_tokens(prompts[0])}
        if images:
            per_prompt = [list(im) if isinstance(im, (list, tuple)) else [im] for im in images]
            # the Qwen processors take one flat list, filling the placeholders in order; the others one per prompt
            kwargs["images"] = [im for ims in per_prompt for im in ims] if self.family in QWEN_FAMILIES else per_prompt
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            batch = self.processor(**kwargs)
        # Pixel tensors come out float32; a bf16/fp16 model's vision tower needs its own dtype (ids stay ints).
        dtype = self.model_dtype
        return {k: (v.to(self.device, dtype=dtype) if v.is_floating_point() else v.to(self.device))
                if hasattr(v, "is_floating_point") else v for k, v in batch.items()}

    def _results(self, requests: Sequence[YesNoRequest], prompts: Sequence[str], logprobs: Any,
                 n_tokens: Sequence[int]) -> list[YesNoResult]:
        return yes_no_results(requests, prompts, logprobs, n_tokens, self.verbalizer_ids, self.letter_ids)

    def score_full(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        """One batched full forward per ``batch_size`` requests (all with images, or all without)."""
        results: list[YesNoResult] = []
        for start in range(0, len(requests), self.batch_size):
            chunk = requests[start:start + self.batch_size]
            prompts = [self.prompt(r.question, r.interface, len(r.images)) for r in chunk]
            # a chunk is all with images or all without (the runner groups requests by context)
            images = [r.images for r in chunk] if chunk[0].image is not None else None
            batch = self.encode(prompts, images)
            with torch.inference_mode():
                logits = self._last_logits(batch)
            logprobs = torch.log_softmax(logits.double(), dim=-1).cpu()
            n_tokens = batch["attention_mask"].sum(dim=1).tolist()
            results.extend(self._results(chunk, prompts, logprobs, n_tokens))
        return results

    def _last_logits(self, batch: dict[str, Any]) -> Any:
        """Logits at each row's prompt end: the last position with left padding, the last real token with
        right padding (the ``padding-right`` perturbation of :mod:`vlaudit.backends.torch_perturbations`)."""
        if self.tokenizer.padding_side == "right":
            logits = self.model(**batch, use_cache=False).logits
            last = batch["attention_mask"].sum(dim=1) - 1
            return logits[torch.arange(logits.shape[0], device=logits.device), last.to(logits.device)]
        if self._logits_to_keep:
            try:
                return self.model(**batch, use_cache=False, logits_to_keep=1).logits[:, -1, :]
            except TypeError:  # a family whose forward has no logits_to_keep: compute all positions
                self._logits_to_keep = False
        return self.model(**batch, use_cache=False).logits[:, -1, :]

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        """Score requests in the given order; results are a deterministic function of the request list."""
        check_interfaces(requests, self.verbalizer_ids, self.letter_ids)
        by_key: dict[str, YesNoResult] = {}
        text_only = [r for r in requests if r.image is None]
        with_image = [r for r in requests if r.image is not None]
        if text_only:
            for result in self.score_full(text_only):
                by_key[result.key] = result
        groups: dict[str, list[YesNoRequest]] = {}
        singles: list[YesNoRequest] = [r for r in with_image if r.more_images]  # several images: no shared prefix
        for request in with_image:
            if request.more_images:
                continue
            # with_image: every request here has an image, so a hash
            groups.setdefault(pixels_sha256(request.image), []).append(request)  # type: ignore[arg-type]
        for group in groups.values():
            if self.prefix_cache and len(group) > 1:
                for result in score_shared_prefix(self, group, _IMAGE_BLOCK_END[self.family]):
                    by_key[result.key] = result
            else:
                singles.extend(group)
        if singles:
            for result in self.score_full(singles):
                by_key[result.key] = result
        return [by_key[r.key] for r in requests]


def _set_pixel_budget(processor: Any, min_pixels: int | None, max_pixels: int | None) -> None:
    """Set the Qwen-VL style pixel budget (shortest_edge/longest_edge are pixel counts there)."""
    image_processor = getattr(processor, "image_processor", None)
    current = plain_size(getattr(image_processor, "size", None)) or {}
    if image_processor is None or "longest_edge" not in current or "shortest_edge" not in current:
        raise InputError(f"--min-pixels/--max-pixels apply to Qwen-VL style image processors; "
                         f"{type(image_processor).__name__} has size {current}", field="max_pixels")
    image_processor.size = SizeDict(
        shortest_edge=int(min_pixels) if min_pixels is not None else current["shortest_edge"],
        longest_edge=int(max_pixels) if max_pixels is not None else current["longest_edge"])


def _load_processor(name: str, kwargs: dict[str, Any]) -> Any:
    try:
        return transformers.AutoProcessor.from_pretrained(name, **kwargs)
    except ImportError as exc:
        raise MissingDependencyError(f"loading {name!r} needs an optional package: {exc}") from exc
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot load hf:{name}: {exc}", field="model") from exc


def max_images_of(name: str, options: HfOptions = HfOptions()) -> int:
    """How many images one query of ``hf:<name>`` may hold, from its config alone (no weights): several for
    :data:`~vlaudit.backends.base.MULTI_IMAGE_FAMILIES`, one for any other family and for a Ministral folder
    (served through mistral-common, one image per query)."""
    check_model_source("hf", name, options.revision)
    if tekken_file(name, options.revision) is not None:
        return 1
    config = load_config(name, {"revision": options.revision, "trust_remote_code": options.trust_remote_code})
    return MAX_IMAGES if str(getattr(config, "model_type", "")) in MULTI_IMAGE_FAMILIES else 1


def load_backend(name: str, options: HfOptions = HfOptions(), run: RunOptions = RunOptions(), *,
                 interfaces: Sequence[str] = tuple(ANSWER_WORDS), question_templates: dict[str, str] | None = None,
                 weights: bool = True) -> Any:
    """Load ``hf:<id or path>`` with its typed options and how it runs (see :func:`_load` for each)."""
    return _load(name, dtype=options.dtype, device=run.device, device_map=run.device_map,
                 batch_size=run.batch_size or 8, revision=options.revision, min_pixels=options.min_pixels,
                 max_pixels=options.max_pixels, trust_remote_code=options.trust_remote_code, interfaces=interfaces,
                 prefix_cache=run.prefix_cache, attn_implementation=options.attn_implementation, weights=weights,
                 question_templates=question_templates, system=options.system)


def _load(name: str, *, dtype: str = "auto", device: str = "auto", device_map: str | None = None,
          batch_size: int = 8, revision: str | None = None, min_pixels: int | None = None,
          max_pixels: int | None = None, trust_remote_code: bool = False,
          interfaces: Sequence[str] = tuple(ANSWER_WORDS), prefix_cache: bool | None = None,
          attn_implementation: str | None = None, weights: bool = True,
          question_templates: dict[str, str] | None = None, system: str | None = None) -> Any:
    """Load ``hf:<id or path>``: AutoProcessor + AutoModelForImageTextToText, eval mode, no remote code.

    ``dtype``: a spelling of :mod:`vlaudit.backends.dtypes` (auto: bf16 on a GPU, fp32 on the CPU); ``min_pixels``/``max_pixels`` set the image
    processor's pixel budget (Qwen-VL families) and are recorded in :meth:`HfMllmBackend.describe`.
    Verbalizers of every interface in ``interfaces`` are checked to be single tokens before returning.
    A model folder with a ``tekken.json`` (Ministral) is served by
    :class:`vlaudit.backends.mistral.mllm.MistralCommonBackend` (mistral-common prompts, VCA §11).
    ``weights=False`` loads config + tokenizer only: prompts and verbalizers, no scoring.
    ``prefix_cache``: None decides shared image-prefix reuse per run (:meth:`HfMllmBackend.prepare`);
    True/False force it on/off. ``question_templates`` (interface → template, merged over
    :data:`QUESTION_TEMPLATES`) and ``system`` (the system message of every family; "" for none) replace the
    default wording.
    """
    merge_question_templates(question_templates)  # a bad template fails before the model loads
    check_model_source("hf", name, revision)  # a missing folder or uncached offline hub id: say so at once
    hf_logging.disable_progress_bar()
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    torch_dtype = getattr(torch, resolve_dtype(dtype, device))
    processor_kwargs: dict[str, Any] = {"revision": revision, "trust_remote_code": trust_remote_code}
    model_kwargs: dict[str, Any] = {"revision": revision, "trust_remote_code": trust_remote_code,
                                    "dtype": torch_dtype}
    if device_map:
        model_kwargs["device_map"] = device_map
    if attn_implementation:
        model_kwargs["attn_implementation"] = attn_implementation
    options = {"dtype": str(torch_dtype).replace("torch.", ""), "device": device, "device_map": device_map,
               "batch_size": batch_size, "revision": revision, "min_pixels": min_pixels,
               "max_pixels": max_pixels, "trust_remote_code": trust_remote_code,
               "interfaces": list(interfaces), "prefix_cache": prefix_cache,
               "question_templates": question_templates, "system": system}
    tekken = tekken_file(name, revision)
    if tekken is not None:  # Ministral: prompts and verbalizers through mistral-common (VCA §11)
        return load_mistral_common(name, tekken, model_kwargs=model_kwargs, device=device, device_map=device_map,
                                   options=options, weights=weights)
    if not weights:
        return HfMllmBackend(f"hf:{name}", None, _load_processor(name, processor_kwargs), options=options,
                             config=load_config(name, processor_kwargs))
    try:
        processor = transformers.AutoProcessor.from_pretrained(name, **processor_kwargs)
        model = transformers.AutoModelForImageTextToText.from_pretrained(name, **model_kwargs)
    except ImportError as exc:
        raise MissingDependencyError(f"loading {name!r} needs an optional package: {exc}") from exc
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot load hf:{name}: {exc}", field="model") from exc
    if min_pixels is not None or max_pixels is not None:
        _set_pixel_budget(processor, min_pixels, max_pixels)
    if not device_map:
        # functools.wraps on PreTrainedModel.to hides its bound self from mypy
        model = model.to(device)  # type: ignore[arg-type]
    model.eval()
    return HfMllmBackend(f"hf:{name}", model, processor, options=options)
