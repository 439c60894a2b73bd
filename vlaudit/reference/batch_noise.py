"""``ref:batch-noise`` — a calibration instrument for the noise floor, not a stand-in for a real model.

Its margin is a fixed function of the request plus numerical noise of a known scale that depends on the
batch the request was scored in, the failure ``vca stability`` measures (batch size 1 vs the run's):

* the clean margin m₀ = 4·u − 2, with u ∈ [0, 1) read from sha256(question, interface, context image hash)
  (the image changes the margin, so G_img varies);
* scored alone (a batch of one) the margin is m₀ exactly; scored in a batch with other requests it is
  m₀ + s·(2v − 1), v ∈ [0, 1) read from sha256(the request's key), s = ``noise_scale``. The noise depends on
  the batch only through whether the request shares it, so a batch's order (the backend conformance check
  reverses one) changes nothing, while batch 1 against the run's batch does.

Batch 1 against a run scored in batches therefore differs by |Δ| = s·|2v − 1| ~ Uniform(0, s) on every
request that shared a batch: the planted p99 of |Δ margin| is 0.99·s. ``noise_scale=0`` is deterministic
(τ = 0). NLLs are those of a two-way softmax, NLL(yes) = log(1 + e^−m), NLL(no) = log(1 + e^m).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from vlaudit.backends.base import INTERFACES, BackendDescription, YesNoBackendBase, YesNoRequest, YesNoResult
from vlaudit.backends.dtypes import check_supported
from vlaudit.hashing import pixels_sha256, sha256_json, sha256_text

NOISE_SCALE = 0.25
VERBALIZER_IDS: dict[str, tuple[int, int]] = dict.fromkeys(INTERFACES, (0, 1))


def _unit(*parts: Any) -> float:
    """A number in [0, 1) read from the sha256 of ``parts``."""
    return int(sha256_json(list(parts))[:13], 16) / 16**13


class BatchNoiseModel(YesNoBackendBase):
    """The planted mechanism of the module docstring."""

    tokenizer_kind = "none (planted)"

    def __init__(self, spec: str, *, batch_size: int = 8, noise_scale: float = NOISE_SCALE) -> None:
        self.spec = spec
        self.batch_size = int(batch_size)
        self.noise_scale = float(noise_scale)
        self.verbalizer_ids = dict(VERBALIZER_IDS)
        self.n_scored = 0  # requests scored so far (the stability audit's cost is counted on it)

    def describe(self) -> BackendDescription:
        return BackendDescription.of({"spec": self.spec, "family": "batch-noise", "noise_scale": self.noise_scale, "dtype": "float64",
                "verbalizer_ids": {k: list(v) for k, v in self.verbalizer_ids.items()}})

    def prompt(self, question: str, interface: str, with_image: int) -> str:
        positive, negative = (v.strip() for v in INTERFACES[interface])
        return f"{'<image> ' if with_image else ''}{question} Answer {positive} or {negative}:"

    def clean_margin(self, request: YesNoRequest) -> float:
        """m₀ of a request (no noise)."""
        image = None if request.image is None else pixels_sha256(request.image)
        return 4.0 * _unit(request.question, request.interface, image) - 2.0

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        out = []
        for start in range(0, len(requests), self.batch_size):
            batch = requests[start:start + self.batch_size]
            for request in batch:
                m = self.clean_margin(request)
                if len(batch) > 1:
                    m += self.noise_scale * (2.0 * _unit(request.key) - 1.0)
                nll_yes, nll_no = math.log1p(math.exp(-m)), math.log1p(math.exp(m))
                prompt = self.prompt(request.question, request.interface, request.image is not None)
                out.append(YesNoResult(key=request.key, nll_yes=nll_yes, nll_no=nll_no, margin=nll_no - nll_yes,
                                       yes_token_id=0, no_token_id=1, prompt=prompt,
                                       prompt_hash=sha256_text(prompt), n_prompt_tokens=len(prompt.split())))
        self.n_scored += len(requests)
        return out


def load_backend(name: str, *, batch_size: int = 8, noise_scale: float = NOISE_SCALE, dtype: str = "auto",
                 **_ignored: Any) -> BatchNoiseModel:
    """``ref:batch-noise`` (options a yes/no loader takes are accepted; dtype must be auto or float64-free)."""
    check_supported(dtype, (), f"ref:{name}")
    return BatchNoiseModel(f"ref:{name}", batch_size=batch_size, noise_scale=noise_scale)
