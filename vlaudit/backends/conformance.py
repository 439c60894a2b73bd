"""Conformance checks every backend must pass, in the manner of scikit-learn's ``check_estimator``.

A backend is checked on a tiny batch it is handed (a few images, questions or texts): each check is a named
function that raises :class:`ConformanceError` saying which backend failed which property, so a new backend
(or a user's own) learns exactly what the scoring runner and the executors rely on:

* ``protocol`` — it satisfies :class:`~vlaudit.backends.base.YesNoBackend` or
  :class:`~vlaudit.backends.base.FeatureBackend` (every member the runner and executors call);
* ``describe`` — ``describe()`` is a :class:`~vlaudit.backends.base.BackendDescription` (or a plain dict that
  reads as one) whose JSON object goes into manifests and cache keys;
* ``shapes_dtypes`` — yes/no: one result per request, in order, with float64 NLLs, m = NLL(no) − NLL(yes)
  (VCA §3), the verbalizer ids of its interface and the hash of its exact prompt; encoders: float32
  embeddings ``(n, dim)`` with one ``dim`` for images and texts, finite, whose cosine scores are float64;
* ``deterministic`` — the same input twice gives the same output, bit for bit;
* ``batch_order`` — reversing the batch reverses the output: a request's result does not depend on where
  it sits in the batch (within :data:`BATCH_ORDER_TOL`; batched kernels may round differently).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PIL import Image

from vlaudit.backends.base import (
    BackendDescription,
    FeatureBackend,
    YesNoBackend,
    YesNoRequest,
    YesNoResult,
    protocol_gaps,
)
from vlaudit.errors import InputError, VlauditError
from vlaudit.hashing import sha256_text

#: absolute tolerance of the batch-order check (margins in nats, embeddings in unit-norm coordinates)
BATCH_ORDER_TOL = 1e-6


class ConformanceError(VlauditError, AssertionError):
    """A backend that breaks one named property of its protocol."""


def _fail(backend: Any, check: str, message: str) -> ConformanceError:
    return ConformanceError(f"{getattr(backend, 'spec', type(backend).__name__)}: check {check!r}: {message}")


def _check_protocol(backend: Any, protocol: type) -> None:
    missing = protocol_gaps(backend, protocol)
    if missing or not isinstance(backend, protocol):
        raise _fail(backend, "protocol", f"not a {protocol.__name__}; lacks {', '.join(missing) or '?'}")


def _check_describe(backend: Any) -> None:
    facts = backend.describe()
    if isinstance(facts, BackendDescription):
        facts = facts.to_dict()
    elif isinstance(facts, dict):  # a user's backend that still returns the plain dict: read as one
        try:
            BackendDescription.of(facts)
        except (TypeError, InputError) as exc:
            raise _fail(backend, "describe", f"describe() does not make a BackendDescription: {exc}") from None
    else:
        raise _fail(backend, "describe", f"describe() returned {type(facts).__name__}, not a BackendDescription")
    try:
        json.dumps(facts, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise _fail(backend, "describe", f"describe() is not JSON: {exc}") from None


# ---------------------------------------------------------------------------------------------- yes/no


def yes_no_requests(images: Sequence[Image.Image], questions: Sequence[str],
                    interfaces: Sequence[str]) -> list[YesNoRequest]:
    """Every question with every image and without one, under each interface (keys unique)."""
    contexts: list[tuple[str, Image.Image | None]] = [("text", None)]
    contexts += [(f"image{i}", image) for i, image in enumerate(images)]
    return [YesNoRequest(f"q{q}/{name}/{interface}", question, image, interface)
            for q, question in enumerate(questions) for name, image in contexts for interface in interfaces]


def _yes_no_shapes(backend: YesNoBackend, requests: Sequence[YesNoRequest]) -> None:
    results = backend.score(requests)
    if [r.key for r in results] != [r.key for r in requests]:
        raise _fail(backend, "shapes_dtypes", "results are not one per request in request order")
    for request, result in zip(requests, results, strict=True):
        where = f"request {request.key!r}"
        values = (result.nll_yes, result.nll_no, result.margin)
        if not all(type(v) is float and math.isfinite(v) for v in values):  # Python float = float64
            raise _fail(backend, "shapes_dtypes", f"{where}: NLLs and margin must be finite float64, got {values}")
        if result.margin != result.nll_no - result.nll_yes:
            raise _fail(backend, "shapes_dtypes", f"{where}: margin {result.margin} ≠ NLL(no) − NLL(yes)")
        ids = (result.yes_token_id, result.no_token_id)
        if ids != tuple(backend.verbalizer_ids[request.interface]):
            raise _fail(backend, "shapes_dtypes", f"{where}: token ids {ids} are not the verbalizer ids "
                                                  f"{backend.verbalizer_ids[request.interface]}")
        prompt = backend.prompt(request.question, request.interface, request.image is not None)
        if result.prompt != prompt or result.prompt_hash != sha256_text(prompt):
            raise _fail(backend, "shapes_dtypes", f"{where}: the result's prompt is not prompt()'s, or its hash")
        if not (isinstance(result.n_prompt_tokens, int) and result.n_prompt_tokens > 0):
            raise _fail(backend, "shapes_dtypes", f"{where}: n_prompt_tokens {result.n_prompt_tokens!r}")


def _yes_no_deterministic(backend: YesNoBackend, requests: Sequence[YesNoRequest]) -> None:
    first, second = backend.score(requests), backend.score(requests)
    changed = [a.key for a, b in zip(first, second, strict=True) if a != b]
    if changed:
        raise _fail(backend, "deterministic", f"scoring the same batch twice changed {changed[:3]}")


def _yes_no_batch_order(backend: YesNoBackend, requests: Sequence[YesNoRequest]) -> None:
    forward = {r.key: r for r in backend.score(requests)}
    backward: list[YesNoResult] = backend.score(list(reversed(requests)))
    if [r.key for r in backward] != [r.key for r in reversed(requests)]:
        raise _fail(backend, "batch_order", "results of the reversed batch are not in its order")
    for result in backward:
        margin = forward[result.key].margin
        if abs(result.margin - margin) > BATCH_ORDER_TOL:
            raise _fail(backend, "batch_order", f"request {result.key!r}: margin {margin} in order, "
                                                f"{result.margin} reversed")


#: check name → check(backend, requests)
YES_NO_CHECKS: dict[str, Callable[[Any, Sequence[YesNoRequest]], None]] = {
    "protocol": lambda backend, _: _check_protocol(backend, YesNoBackend),
    "describe": lambda backend, _: _check_describe(backend),
    "shapes_dtypes": _yes_no_shapes,
    "deterministic": _yes_no_deterministic,
    "batch_order": _yes_no_batch_order,
}


# ---------------------------------------------------------------------------------------------- encoders


def _encode(backend: FeatureBackend, images: Sequence[Image.Image], texts: Sequence[str]
            ) -> tuple[np.ndarray, np.ndarray]:
    return backend.encode_images(list(images)), backend.encode_texts(list(texts))


def _feature_shapes(backend: FeatureBackend, images: Sequence[Image.Image], texts: Sequence[str]) -> None:
    if not (isinstance(backend.batch_size, int) and backend.batch_size > 0):
        raise _fail(backend, "shapes_dtypes", f"batch_size {backend.batch_size!r} is not a positive int")
    image_rows, text_rows = _encode(backend, images, texts)
    for name, rows, n in (("images", image_rows, len(images)), ("texts", text_rows, len(texts))):
        if not isinstance(rows, np.ndarray) or rows.dtype != np.float32 or rows.ndim != 2 or rows.shape[0] != n:
            raise _fail(backend, "shapes_dtypes", f"encode_{name} must return float32 (n={n}, dim), got "
                                                  f"{getattr(rows, 'dtype', type(rows))} {getattr(rows, 'shape', '')}")
        if not np.isfinite(rows).all():
            raise _fail(backend, "shapes_dtypes", f"encode_{name} returned non-finite values")
    if image_rows.shape[1] != text_rows.shape[1]:
        raise _fail(backend, "shapes_dtypes", f"image dim {image_rows.shape[1]} ≠ text dim {text_rows.shape[1]}")
    scores = image_rows.astype(np.float64) @ text_rows.astype(np.float64).T
    if scores.dtype != np.float64:
        raise _fail(backend, "shapes_dtypes", "cosine scores are not float64")


def _feature_deterministic(backend: FeatureBackend, images: Sequence[Image.Image], texts: Sequence[str]) -> None:
    (i1, t1), (i2, t2) = _encode(backend, images, texts), _encode(backend, images, texts)
    if not (np.array_equal(i1, i2) and np.array_equal(t1, t2)):
        raise _fail(backend, "deterministic", "encoding the same inputs twice changed the embeddings")


def _feature_batch_order(backend: FeatureBackend, images: Sequence[Image.Image], texts: Sequence[str]) -> None:
    forward = _encode(backend, images, texts)
    backward = _encode(backend, list(reversed(images)), list(reversed(texts)))
    for name, rows, reversed_rows in zip(("images", "texts"), forward, backward, strict=True):
        gap = float(np.max(np.abs(rows - reversed_rows[::-1]))) if rows.size else 0.0
        if gap > BATCH_ORDER_TOL:
            raise _fail(backend, "batch_order", f"encode_{name}: reversing the batch moved an embedding by {gap}")


#: check name → check(backend, images, texts)
FEATURE_CHECKS: dict[str, Callable[[Any, Sequence[Image.Image], Sequence[str]], None]] = {
    "protocol": lambda backend, *_: _check_protocol(backend, FeatureBackend),
    "describe": lambda backend, *_: _check_describe(backend),
    "shapes_dtypes": _feature_shapes,
    "deterministic": _feature_deterministic,
    "batch_order": _feature_batch_order,
}


def check_backend(backend: Any, images: Sequence[Image.Image], *, questions: Sequence[str] = (),
                  texts: Sequence[str] = (), interfaces: Sequence[str] = ("yesno",)) -> list[str]:
    """Run every check of the backend's kind; returns the names passed, raises :class:`ConformanceError`.

    A yes/no backend is scored on ``questions`` × (no image, each of ``images``) × ``interfaces``; a dual
    encoder encodes ``images`` and ``texts``.
    """
    if isinstance(backend, FeatureBackend) and not isinstance(backend, YesNoBackend):
        for feature_check in FEATURE_CHECKS.values():
            feature_check(backend, images, texts)
        return list(FEATURE_CHECKS)
    requests = yes_no_requests(images, questions, interfaces)
    for yes_no_check in YES_NO_CHECKS.values():
        yes_no_check(backend, requests)
    return list(YES_NO_CHECKS)
