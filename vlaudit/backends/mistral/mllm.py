"""Ministral (Mistral3) scored through **MistralCommon**, as the VCA paper does (§11).

``hf:DIR`` or ``hf:mistralai/...`` whose folder holds a ``tekken.json`` loads here instead of through
AutoProcessor: mistral-common's own ``MistralTokenizer`` builds every prompt from a ``ChatCompletionRequest``
— one user message, **no system message**; with an image, the image chunk comes first and mistral-common
writes its ``[IMG]``/``[IMG_BREAK]``/``[IMG_END]`` block and its pixel array (Mistral's format); the
text-only context sends the text alone, so no visual placeholder remains. The prompt ends at ``[/INST]`` and
the verbalizers are Mistral's *native continuation* tokens, which open the assistant turn with no space:
on tekken "yes"/"no"/"true"/"false" are 13059/2649/5876/11339 (" yes" would be 14842). They are read, like
every backend's, from how the continuation tokenizes after the real prompt (mistral-common encodes the
request with the word as the assistant's continued final message; :mod:`vlaudit.backends.prompt.verbalizers`).

Scoring is the hf: backend's: left-padded batched forwards of ``Mistral3ForConditionalGeneration``, both
verbalizers read from one log-softmax at the last position, margin m = NLL(no) − NLL(yes), same runner,
cache and margins schema.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import transformers
from PIL import Image
from transformers.utils import cached_file

from vlaudit.backends.base import ANSWER_WORDS, YesNoBackendBase, YesNoRequest, YesNoResult
from vlaudit.backends.mistral.generate import MistralGreedyGeneration
from vlaudit.backends.prompt.letters import (
    LETTER_INTERFACE,
    PROBE_OPTIONS,
    letter_question,
    resolve_letters,
    settle_letters,
)
from vlaudit.backends.prompt.verbalizers import PROBE_QUESTION, Verbalizer, resolve_verbalizers
from vlaudit.backends.prompt.wording import question_text
from vlaudit.backends.torch_perturbations import TorchPerturbations
from vlaudit.backends.yesno_common import check_interfaces, load_config, yes_no_results
from vlaudit.errors import InputError, MissingDependencyError
from vlaudit.hashing import sha256_text
from vlaudit.results.backend_description import BackendDescription

TEKKEN_FILE = "tekken.json"


def _mistral_common() -> Any:
    try:
        import mistral_common  # optional extra [ministral]: a clear error without it
    except ImportError as exc:
        raise MissingDependencyError("Ministral models are scored through mistral-common: "
                                     "pip install 'vlaudit[ministral]' (or pip install mistral-common)") from exc
    return mistral_common


def tekken_file(name: str, revision: str | None = None) -> Path | None:
    """The model's ``tekken.json`` (local folder or hub cache), or None when it has none."""
    local = Path(name)
    if local.is_dir():
        return local / TEKKEN_FILE if (local / TEKKEN_FILE).is_file() else None
    try:
        found = cached_file(name, TEKKEN_FILE, revision=revision, _raise_exceptions_for_missing_entries=False,
                            _raise_exceptions_for_connection_errors=False)
    except (OSError, ValueError):  # not a repo id either: the ordinary loader reports the bad name
        return None
    return Path(found) if found else None


class MistralCommonBackend(TorchPerturbations, MistralGreedyGeneration, YesNoBackendBase):
    """A Mistral3 model whose prompts, image arrays and verbalizers come from mistral-common."""

    pads_by_side = False  # its own left padding (:meth:`encode`), no tokenizer padding side

    generation_prefix = ""  # the answer opens the assistant turn right after [/INST]
    tokenizer_kind = "mistral-common"

    def __init__(self, spec: str, model: Any, tokenizer: Any, tekken: Path, *, options: dict[str, Any],
                 config: Any = None) -> None:
        """``model=None`` (with its ``config``) serves prompts and verbalizers only, without weights."""
        self.spec = spec
        self.model = model
        self.mistral = tokenizer
        self.tekken_path = tekken
        self.options = options
        self.family = str(getattr(model.config if model is not None else config, "model_type", "mistral3"))
        self.batch_size = int(options.get("batch_size", 8))
        first = next(model.parameters()) if model is not None else None
        self.device = first.device if first is not None else None
        self.model_dtype = first.dtype if first is not None else None
        self.pad_id = int(tokenizer.instruct_tokenizer.tokenizer.pad_id)
        self._prompts: dict[tuple[str, str, int], str] = {}
        self.verbalizers: dict[str, tuple[Verbalizer, ...]] = {}
        self.verbalizer_ids = {name: self._single_token_ids(name) for name in options["interfaces"]
                               if name != LETTER_INTERFACE}
        self.refused_letters: dict[str, str] = {}
        if LETTER_INTERFACE in options["interfaces"]:
            self.letter_ids = self._letter_ids()

    # ------------------------------------------------------------------------------------------ prompts

    def _request(self, question: str, interface: str, image: Image.Image | None, answer: str | None = None) -> Any:
        from mistral_common.protocol.instruct.chunk import ImageChunk, TextChunk  # optional extra [ministral]
        from mistral_common.protocol.instruct.messages import AssistantMessage, UserMessage  # optional extra
        from mistral_common.protocol.instruct.request import ChatCompletionRequest  # optional extra

        text = question_text(question, interface)
        content: Any = text if image is None else [ImageChunk(image=image), TextChunk(text=text)]
        messages: list[Any] = [UserMessage(content=content)]
        if answer is not None:  # the answer word as the assistant's continued (unterminated) message
            messages.append(AssistantMessage(content=answer))
        return ChatCompletionRequest(messages=messages, continue_final_message=answer is not None)

    def tokenize(self, question: str, interface: str, image: Image.Image | None,
                 answer: str | None = None) -> tuple[list[int], list[Any], str]:
        """mistral-common's tokens, image arrays (C, H, W) and rendered text of one query."""
        encoded = self.mistral.encode_chat_completion(self._request(question, interface, image, answer))
        return list(encoded.tokens), list(encoded.images), str(encoded.text)

    def prompt(self, question: str, interface: str, with_image: int) -> str:
        """The serialized prompt; the image block is shown for a one-patch image (its size varies per image)."""
        key = (question, interface, with_image)
        if key not in self._prompts:
            image = Image.new("RGB", (1, 1)) if with_image else None
            self._prompts[key] = self.tokenize(question, interface, image)[2]
        return self._prompts[key]

    def _single_token_ids(self, interface: str) -> tuple[int, int]:
        found = []
        for image in (None, _probe_image()):

            def tokenize(continuation: str, image: Any = image) -> tuple[list[int], list[int]]:
                return (self.tokenize(PROBE_QUESTION, interface, image)[0],
                        self.tokenize(PROBE_QUESTION, interface, image, continuation)[0])

            found.append(resolve_verbalizers(self.spec, interface, after_text=False, tokenize=tokenize,
                                             pieces=self._pieces))
        if found[0] != found[1]:
            raise InputError(f"model {self.spec}: interface {interface!r} resolves to different tokens with and "
                             f"without the image ({found[0]} vs {found[1]})", field="interface")
        self.verbalizers[interface] = found[0]
        return found[0][0].token_id, found[0][1].token_id

    def _letter_ids(self) -> tuple[int, ...]:
        """The option letters as native continuations right after ``[/INST]`` (no space), with and without
        the image; letters that are not one token are kept in ``refused_letters``."""
        question = letter_question(PROBE_QUESTION, PROBE_OPTIONS)
        found = []
        for image in (None, _probe_image()):

            def tokenize(continuation: str, image: Any = image) -> tuple[list[int], list[int]]:
                return (self.tokenize(question, LETTER_INTERFACE, image)[0],
                        self.tokenize(question, LETTER_INTERFACE, image, continuation)[0])

            found.append(resolve_letters(self.spec, after_text=False, tokenize=tokenize, pieces=self._pieces))
        self.refused_letters, ids, self.verbalizers[LETTER_INTERFACE] = settle_letters(self.spec, found)
        return ids

    def _pieces(self, ids: Sequence[int]) -> list[str]:
        tekken = self.mistral.instruct_tokenizer.tokenizer
        return [tekken.id_to_piece(int(i)) for i in ids]

    def describe(self) -> BackendDescription:
        """Facts that change outputs: they go into the manifest and every cache key."""
        mistral_common = _mistral_common()
        tekken = self.mistral.instruct_tokenizer.tokenizer
        image = getattr(tekken, "image", None)
        return BackendDescription.of({
            "spec": self.spec,
            "family": self.family,
            "model_class": type(self.model).__name__,
            "tokenizer": "mistral-common",
            "mistral_common_version": mistral_common.__version__,
            "tekken_sha256": sha256_text(self.tekken_path.read_text(encoding="utf-8")),
            "tokenizer_version": str(getattr(tekken, "version", "")),
            "revision": self.options.get("revision"),
            "commit_hash": getattr(self.model.config, "_commit_hash", None),
            "dtype": str(self.model.dtype).replace("torch.", ""),
            "device": str(self.device),
            "image_config": None if image is None else {k: getattr(image, k) for k in (
                "image_patch_size", "max_image_size", "spatial_merge_size")},
            "template": {"format": "mistral-common ChatCompletionRequest", "system": None,
                         "generation_prefix": self.generation_prefix, "verbalizers": ANSWER_WORDS},
            "verbalizer_ids": {k: list(v) for k, v in self.verbalizer_ids.items()},
            **({"letter_ids": list(self.letter_ids)} if self.letter_ids else {}),
            "prefix_cache": False,
        })

    # ------------------------------------------------------------------------------------------ scoring

    def encode(self, tokens: Sequence[Sequence[int]], images: Sequence[Any]) -> dict[str, Any]:
        """Left-padded ids + mask, and (when there are images) zero-padded pixels with their true sizes."""
        width = max(len(t) for t in tokens)
        input_ids = torch.full((len(tokens), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(tokens), width), dtype=torch.long)
        for row, ids in enumerate(tokens):
            input_ids[row, width - len(ids):] = torch.tensor(ids, dtype=torch.long)
            mask[row, width - len(ids):] = 1
        batch: dict[str, Any] = {"input_ids": input_ids.to(self.device), "attention_mask": mask.to(self.device)}
        if images:
            height = max(a.shape[1] for a in images)
            breadth = max(a.shape[2] for a in images)
            pixels = torch.zeros((len(images), 3, height, breadth), dtype=torch.float32)
            for index, array in enumerate(images):
                pixels[index, :, :array.shape[1], :array.shape[2]] = torch.from_numpy(array)
            batch["pixel_values"] = pixels.to(self.device, dtype=self.model_dtype)
            batch["image_sizes"] = torch.tensor([list(a.shape[1:]) for a in images], dtype=torch.long,
                                                device=self.device)
        return batch

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        """Score requests in the given order (batches of ``batch_size``, images and text-only apart)."""
        check_interfaces(requests, self.verbalizer_ids, self.letter_ids)
        by_key: dict[str, YesNoResult] = {}
        for with_image in (False, True):
            todo = [r for r in requests if (r.image is not None) == with_image]
            for start in range(0, len(todo), self.batch_size):
                chunk = todo[start:start + self.batch_size]
                encoded = [self.tokenize(r.question, r.interface, r.image) for r in chunk]
                batch = self.encode([e[0] for e in encoded], [a for e in encoded for a in e[1]])
                with torch.inference_mode(), warnings.catch_warnings():
                    warnings.simplefilter("ignore", FutureWarning)
                    logits = self.model(**batch, use_cache=False, logits_to_keep=1).logits[:, -1, :]
                logprobs = torch.log_softmax(logits.double(), dim=-1).cpu()
                prompts = [self.prompt(r.question, r.interface, with_image) for r in chunk]
                for result in yes_no_results(chunk, prompts, logprobs, [len(e[0]) for e in encoded],
                                             self.verbalizer_ids, self.letter_ids):
                    by_key[result.key] = result
        return [by_key[r.key] for r in requests]


def _probe_image() -> Any:
    return Image.new("RGB", (32, 24), (128, 128, 128))


@functools.lru_cache(maxsize=4)
def _tokenizer(path: str, mtime_ns: int) -> Any:
    """mistral-common's tokenizer of one tekken file (cached per process: building it takes seconds)."""
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer  # optional extra [ministral]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return MistralTokenizer.from_file(path)


def load_mistral_common(name: str, tekken: Path, *, model_kwargs: dict[str, Any], device: str,
                        device_map: str | None, options: dict[str, Any], weights: bool = True) -> MistralCommonBackend:
    """Load the tekken tokenizer with mistral-common and the model with AutoModelForImageTextToText
    (``weights=False``: its config only — prompts and verbalizers, no scoring)."""
    _mistral_common()
    if options.get("min_pixels") is not None or options.get("max_pixels") is not None:
        raise InputError("--min-pixels/--max-pixels do not apply to Ministral: mistral-common sizes images by "
                         "the tokenizer's image config", field="max_pixels")
    tokenizer = _tokenizer(str(tekken), tekken.stat().st_mtime_ns)
    if not weights:
        config = load_config(name, {k: v for k, v in model_kwargs.items() if k in ("revision", "trust_remote_code")})
        return MistralCommonBackend(f"hf:{name}", None, tokenizer, tekken, options=options, config=config)
    try:
        model = transformers.AutoModelForImageTextToText.from_pretrained(name, **model_kwargs)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot load hf:{name}: {exc}", field="model") from exc
    if not device_map:
        # functools.wraps on PreTrainedModel.to hides its bound self from mypy
        model = model.to(device)  # type: ignore[arg-type]
    model.eval()
    return MistralCommonBackend(f"hf:{name}", model, tokenizer, tekken, options=options)
