"""The one small backend protocol (two capabilities) and the records it exchanges.

* :class:`YesNoBackend` — a multimodal chat LLM read through its literal verbalizers: for each request it
  returns the NLL of the "yes" and the "no" continuation from **one** forward pass, and the margin
  m = NLL(no) − NLL(yes) (VCA §3; the fixed answer interface of §3 and §9).
* :class:`FeatureBackend` — a dual encoder (CLIP, SigLIP, open_clip) returning image and text embeddings.

Every backend also reports ``describe()``: the facts that change its outputs (model id, revision, dtype,
pixel budget, template hash, ...) which go into run manifests and cache keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

# interface -> (positive answer word, negative answer word); how each backend writes the word after its prompt
# (leading space or not) is resolved per backend in vlaudit.backends.verbalizers (VCA §11)
ANSWER_WORDS: dict[str, tuple[str, str]] = {
    "yesno": ("yes", "no"),
    "truefalse": ("true", "false"),
}
# The words as the AutoProcessor backends continue their "Answer:" prefix (leading space).
INTERFACES: dict[str, tuple[str, str]] = {name: (f" {pos}", f" {neg}") for name, (pos, neg) in ANSWER_WORDS.items()}


@dataclass(frozen=True)
class YesNoRequest:
    """One query: a question under one context (``image`` is None for the text-only context)."""

    key: str
    question: str
    image: Image.Image | None
    interface: str = "yesno"


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


@runtime_checkable
class YesNoBackend(Protocol):
    """A model that scores literal yes/no continuations."""

    spec: str

    def describe(self) -> dict[str, Any]: ...

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]: ...


@runtime_checkable
class FeatureBackend(Protocol):
    """A dual encoder returning float32 embeddings, normalised as the model normalises them."""

    spec: str

    def describe(self) -> dict[str, Any]: ...

    def encode_images(self, images: Sequence[Image.Image]) -> np.ndarray: ...

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray: ...
