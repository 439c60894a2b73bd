"""The backend protocols (two capabilities), their base classes and the records they exchange.

* :class:`YesNoBackend` — a multimodal chat LLM read through its literal verbalizers: for each request it
  returns the NLL of the "yes" and the "no" continuation from **one** forward pass, and the margin
  m = NLL(no) − NLL(yes) (VCA §3; the fixed answer interface of §3 and §9).
* :class:`FeatureBackend` — a dual encoder (CLIP, SigLIP, open_clip) returning image and text embeddings.

Each protocol lists every member the scoring runner, the executors and the commands use, so a caller never
probes with ``hasattr``. :class:`YesNoBackendBase` supplies the optional steps as no-ops (``prepare``,
``prefetch_prompts``); a yes/no backend subclasses it and overrides what it needs.

Every backend also reports ``describe()``: a :class:`~vlaudit.results.backend_description.BackendDescription`
of the facts that change its outputs (model id, revision, dtype, pixel budget, template hash, ...), which go
into run manifests and cache keys; a yes/no backend's ``prepare()`` returns its run's
:class:`~vlaudit.results.backend_description.PrefixCacheDecision` (or None), which the runner records.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

from vlaudit.errors import InputError
from vlaudit.results.backend_description import BackendDescription, PrefixCacheDecision

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from PIL import Image

    from vlaudit.sources.items import BenchmarkItem

__all__ = ["BackendDescription", "PrefixCacheDecision"]  # the seam's records, defined in the results leaf

# interface -> (positive answer word, negative answer word); how each backend writes the word after its prompt
# (leading space or not) is resolved per backend in vlaudit.backends.prompt.verbalizers (VCA §11)
ANSWER_WORDS: dict[str, tuple[str, str]] = {
    "yesno": ("yes", "no"),
    "truefalse": ("true", "false"),
}
# The words as the AutoProcessor backends continue their "Answer:" prefix (leading space).
INTERFACES: dict[str, tuple[str, str]] = {name: (f" {pos}", f" {neg}") for name, (pos, neg) in ANSWER_WORDS.items()}


@dataclass(frozen=True)
class YesNoRequest:
    """One query: a question under one context (``image`` is None for the text-only context).

    An item with several images (MMMU's ``image_1`` … ``image_7``) holds the first in ``image`` and the rest,
    in order, in ``more_images``; only a backend whose ``max_images`` allows it is given such a request."""

    key: str
    question: str
    image: Image.Image | None
    interface: str = "yesno"
    #: under the letter interface: how many option letters (A, B, ...) to read
    n_options: int = 0
    #: the item's second, third, ... image under this context (empty for a single-image or text-only query)
    more_images: tuple[Image.Image, ...] = ()

    @property
    def images(self) -> tuple[Image.Image, ...]:
        """Every image of the query in order (empty for the text-only context)."""
        return () if self.image is None else (self.image, *self.more_images)


@dataclass(frozen=True)
class YesNoResult:
    """Both verbalizer NLLs of one request and their margin m = NLL(no) − NLL(yes) (VCA §3)."""

    key: str
    nll_yes: float
    nll_no: float
    margin: float
    yes_token_id: int
    no_token_id: int
    prompt: str
    prompt_hash: str
    n_prompt_tokens: int
    #: under the letter interface: log p(letter | prompt) of A, B, ... from the same forward, and their ids
    #: (the yes/no fields are then NaN and −1)
    logp_options: tuple[float, ...] = ()
    option_token_ids: tuple[int, ...] = ()
    #: the answer words (or option letters) whose log-prob the backend could only bound: outside a served
    #: model's top-k log-probs, each is at most the k-th value, which its field then holds (an endpoint
    #: backend without ``logprob_token_ids``); empty when every value is exact
    censored: tuple[str, ...] = ()


@runtime_checkable
class YesNoBackend(Protocol):
    """A model that scores literal yes/no continuations (VCA §3, §9, §11).

    ``verbalizer_ids``: interface → (yes id, no id), resolved at load for every interface the backend
    accepts; ``letter_ids``: the ids of the option letters A, B, ... that are one token after the prompt
    (the letter interface; empty when the backend was not loaded for it); ``models verbalizers`` prints them and every :class:`YesNoResult` carries them.
    ``prompt(question, interface, with_image)``: the exact serialized prompt (hashed into the cache keys);
    ``with_image`` is how many images it holds (False/0 none, True/1 one, n several, in order).
    ``prepare(items, images_dir, interfaces)``: run-shape decisions taken before planning: the run's
    :class:`PrefixCacheDecision` (shared image-prefix reuse), which the runner records from this return
    value, or None when the backend decides nothing. ``prefetch_prompts(items,
    interfaces)``: render every prompt the run needs at once (a remote backend's one round trip).
    ``score(requests)``: one result per request, in request order.
    """

    spec: str
    batch_size: int
    verbalizer_ids: dict[str, tuple[int, int]]

    def describe(self) -> BackendDescription: ...

    def prompt(self, question: str, interface: str, with_image: int) -> str: ...

    def prepare(self, items: Sequence[BenchmarkItem], images_dir: str | Path,
                interfaces: Sequence[str]) -> PrefixCacheDecision | None: ...

    def prefetch_prompts(self, items: Sequence[BenchmarkItem], interfaces: Sequence[str]) -> None: ...

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]: ...


class ResolvedWord(Protocol):
    """One resolved answer word (:class:`vlaudit.backends.prompt.verbalizers.Verbalizer` is one): its word, the
    continuation text after the prompt, its single token id and that token's piece."""

    @property
    def word(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def token_id(self) -> int: ...

    @property
    def piece(self) -> str: ...


class YesNoBackendBase:
    """The optional steps of :class:`YesNoBackend` as no-ops, and the defaults of what a backend may omit.

    ``verbalizers`` holds the resolution details (word, continuation, piece) where a backend resolved them
    from a tokenizer; ``tokenizer_kind`` names how its prompts are tokenized (``models verbalizers``).
    """

    spec: str
    batch_size: int = 1
    verbalizer_ids: dict[str, tuple[int, int]]
    letter_ids: tuple[int, ...] = ()
    verbalizers: Mapping[str, Sequence[ResolvedWord]] = MappingProxyType({})
    tokenizer_kind: str = "AutoProcessor"
    #: how many images one query may hold (:func:`images_per_query`); a backend that reads several says so
    max_images: int = 1

    def prepare(self, items: Sequence[BenchmarkItem], images_dir: str | Path,
                interfaces: Sequence[str]) -> PrefixCacheDecision | None:
        """No run-shape decision to take."""
        return None

    def prefetch_prompts(self, items: Sequence[BenchmarkItem], interfaces: Sequence[str]) -> None:
        """Prompts are rendered locally on demand; nothing to fetch."""
        return None

    def perturbations(self) -> dict[str, str]:
        """The math-preserving perturbations this backend re-scores under (name → what changes), the
        capability of :class:`PerturbableBackend`. Every backend that batches can score one request per
        forward; a backend adds what else it can change without changing the mathematics."""
        return batch_one(self.batch_size)

    @contextlib.contextmanager
    def perturbed(self, name: str) -> Iterator[YesNoBackend]:
        """The backend to score with under perturbation ``name`` (restored on exit)."""
        if name not in batch_one(self.batch_size):  # the one perturbation this method applies
            raise unsupported_perturbation(type(self).__name__, name, self.perturbations())
        with attribute_set(self, "batch_size", 1):
            yield self  # type: ignore[misc]  # a subclass that scores is a YesNoBackend


#: the transformers model types whose chat template and processor take several images in one user turn, in
#: order (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, LLaVA-OneVision, InternVL, Gemma 3); every other family gets one
MULTI_IMAGE_FAMILIES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "llava_onevision", "internvl", "gemma3")
#: the most images one query of such a family holds (MMMU's image_1 … image_7)
MAX_IMAGES = 7


def images_per_query(backend: object) -> int:
    """How many images ``backend`` takes in one query: its ``max_images`` (1 for a backend that does not say;
    every backend reads one image, the ``hf:`` families of :data:`MULTI_IMAGE_FAMILIES` several)."""
    value = getattr(backend, "max_images", 1)
    return value if isinstance(value, int) and value > 0 else 1


#: the perturbation every batching backend supports: one request per forward pass
BATCH_ONE = "batch-1"
#: what torch backends can change besides (``backends/torch_perturbations.py``, ``backends/dual/perturbations.py``)
PADDING_RIGHT = "padding-right"
DTYPE = "dtype"
ATTENTION = "attention"
PREFIX_CACHE = "prefix-cache"
#: the same weights and prompts scored by the other engine, hf: ↔ vllm: (``backends/vllm/engine_twin.py``)
ENGINE = "engine"
#: every perturbation name ``vca stability`` knows, so that a typo is refused before any model loads
PERTURBATION_NAMES = (BATCH_ONE, PADDING_RIGHT, DTYPE, ATTENTION, PREFIX_CACHE, ENGINE)


def batch_one(batch_size: int) -> dict[str, str]:
    """The batch-1 perturbation of a backend that batches ``batch_size`` requests (none when it scores one)."""
    return {BATCH_ONE: f"batch size 1 instead of {batch_size}"} if batch_size > 1 else {}


def unsupported_perturbation(who: str, name: str, supported: Mapping[str, str]) -> InputError:
    """The one-line refusal of a perturbation ``who`` does not support, naming what it supports."""
    return InputError(f"{who} does not support perturbation {name!r}; it supports "
                      f"{', '.join(supported) or 'none'}", field="perturbations")


@contextlib.contextmanager
def attribute_set(target: object, attribute: str, value: object) -> Iterator[None]:
    """``target.attribute = value`` for the block, the old value restored after it (a perturbation's switch)."""
    saved = getattr(target, attribute)
    setattr(target, attribute, value)
    try:
        yield
    finally:
        setattr(target, attribute, saved)


@runtime_checkable
class PerturbableBackend(Protocol):
    """A yes/no backend that can re-score under perturbations leaving the mathematics unchanged (batch
    size, padding side, dtype, attention kernel, prefix cache): the noise-floor measurement's capability."""

    def perturbations(self) -> dict[str, str]: ...

    def perturbed(self, name: str) -> contextlib.AbstractContextManager[YesNoBackend]: ...


def with_finished(error: BaseException, results: Sequence[YesNoResult]) -> BaseException:
    """``error`` carrying the results of the requests that finished before it stopped ``score`` (a backend whose
    requests are independent of one another, as the ``openai:`` backend's are): the executor records them,
    so the rerun scores only what is left (:func:`finished_results`)."""
    error.finished_results = tuple(results)  # type: ignore[attr-defined]  # on any exception: read back by name
    return error


def finished_results(error: BaseException) -> tuple[YesNoResult, ...]:
    """The results :func:`with_finished` attached to ``error`` (none for any other error)."""
    return tuple(getattr(error, "finished_results", ()))


@dataclass(frozen=True)
class GenerationResult:
    """Greedy decoding of one request: the generated text (special tokens removed) and its token count."""

    key: str
    text: str
    n_new_tokens: int


@runtime_checkable
class GeneratingBackend(Protocol):
    """A yes/no backend that can also decode greedily under the same prompt (``generate-check``).

    ``generate(requests, max_new_tokens, answer_prefix)``: one result per request, in order; with
    ``answer_prefix`` False the prompt ends at the chat template's generation prompt, without the scoring
    prefix ("Answer:"). ``context_length()``: the model's window (None when unknown)."""

    def generate(self, requests: Sequence[YesNoRequest], max_new_tokens: int,
                 answer_prefix: bool = True) -> list[GenerationResult]: ...

    def context_length(self) -> int | None: ...


def config_context_length(model: object) -> int | None:
    """The most positions a transformers model was built for (its text config first), None when it does not
    say: the bound of ``generate-check``'s ``max_new_tokens``."""
    config = getattr(model, "config", None)
    for part in (getattr(config, "text_config", None), config):
        limit = getattr(part, "max_position_embeddings", None)
        if isinstance(limit, int) and limit > 0:
            return limit
    return None


@runtime_checkable
class FeatureBackend(Protocol):
    """A dual encoder returning float32 embeddings ``(n, dim)``, normalised as the model normalises them.

    ``batch_size`` is how many inputs one forward pass takes (the feature extractor's default chunk).
    """

    spec: str
    batch_size: int

    def describe(self) -> BackendDescription: ...

    def encode_images(self, images: Sequence[Image.Image]) -> NDArray[np.float32]: ...

    def encode_texts(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


#: a loaded model of either capability (:func:`vlaudit.backends.registry.load_backend` returns one)
Backend = YesNoBackend | FeatureBackend


def description_of(backend: YesNoBackend | FeatureBackend) -> BackendDescription:
    """``backend.describe()`` as a :class:`BackendDescription` (a user's backend that still returns a plain
    dict is read into one: the same JSON, the same hashes)."""
    facts: object = backend.describe()
    if isinstance(facts, BackendDescription):
        return facts
    if not isinstance(facts, Mapping):
        raise InputError(f"{type(backend).__name__}.describe() returned {type(facts).__name__}, not a "
                         "BackendDescription", field="model")
    return BackendDescription.of(facts)


def decision_of(value: object) -> PrefixCacheDecision | None:
    """What ``prepare()`` returned as a :class:`PrefixCacheDecision` (None stays None; a user's backend that
    returns the decision as a plain dict is read into one)."""
    if value is None or isinstance(value, PrefixCacheDecision):
        return value
    return PrefixCacheDecision.from_dict(value, name="prepare()")


def protocol_gaps(backend: object, protocol: type) -> list[str]:
    """The members of ``protocol`` that ``backend`` lacks (empty when it conforms)."""
    members = {*protocol.__annotations__,
               *(name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_"))}
    return sorted(name for name in members if not hasattr(backend, name))


def as_yes_no(backend: Backend, *, field: str = "model") -> YesNoBackend:
    """``backend`` as the yes/no model it must be (one-line error naming what it lacks otherwise)."""
    require_protocol(backend, YesNoBackend, field=field)
    return cast(YesNoBackend, backend)


def as_features(backend: Backend, *, field: str = "model") -> FeatureBackend:
    """``backend`` as the dual encoder it must be (one-line error naming what it lacks otherwise)."""
    require_protocol(backend, FeatureBackend, field=field)
    return cast(FeatureBackend, backend)


def require_protocol(backend: object, protocol: type, *, field: str = "model") -> None:
    """Raise a one-line error naming the missing members when ``backend`` does not satisfy ``protocol``."""
    missing = protocol_gaps(backend, protocol)
    if missing:
        hint = " (subclass vlaudit.backends.base.YesNoBackendBase for the no-op defaults)" \
            if protocol is YesNoBackend else ""
        raise InputError(f"{type(backend).__name__} is not a {protocol.__name__}: it lacks "
                         f"{', '.join(missing)}{hint}", field=field)
