"""Model helpers: tiny offline models built from config, the answer tokens a yes/no backend reads (VCA §11),
and retraining a planted reference model (the registry of names: :mod:`vlaudit.api.model_registry`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

from vlaudit.backends.base import YesNoBackendBase, as_yes_no
from vlaudit.backends.options import RunOptions
from vlaudit.backends.registry import load_backend, parse_spec, require_kind
from vlaudit.backends.tiny.dual import build_tiny_dual
from vlaudit.backends.tiny.families import DUAL_FAMILIES, MLLM_FAMILIES, TINY_FAMILIES
from vlaudit.backends.tiny.mllm import build_tiny_mllm
from vlaudit.errors import InputError
from vlaudit.reference.catalogue import TRAINED_MODELS, WEIGHTS_DIR, resolve
from vlaudit.results.versioned import JsonObject

#: one verbalizer token: interface, word, continuation (repr), token id, piece (None where not resolved)
VerbalizerRow = tuple[str, str | None, str | None, int, str | None]


@dataclass(frozen=True)
class TinyModel:
    """A tiny random model written to ``path``; ``spec`` loads it (``hf:DIR``, ``hf-clip:DIR``, ...)."""

    family: str
    path: Path
    spec: str


def build_tiny_model(family: str, *, out: str | Path, seed: int = 0, tokenizer: str | None = None,
                     head_dim: int | None = None) -> TinyModel:
    """Write a tiny random model of ``family`` built from config (no network) with its processor into ``out``.

    ``head_dim``: the attention head size of a tiny MLLM (16 by default; 32 for ``qwen2-vl`` and
    ``qwen2.5-vl``: a model vLLM's CPU attention also serves, :func:`vlaudit.backends.tiny.mllm.build_tiny_mllm`)."""
    if head_dim is not None and family not in MLLM_FAMILIES:
        raise InputError(f"head_dim is a setting of the tiny MLLMs ({', '.join(MLLM_FAMILIES)}), not of {family}",
                         field="head_dim")
    if family in DUAL_FAMILIES:
        path = build_tiny_dual(family, out, seed=seed, tokenizer=tokenizer)
        prefix = "open_clip:local-dir:" if family == "open_clip" else "hf-clip:"
    elif family in MLLM_FAMILIES:
        path = build_tiny_mllm(family, out, seed=seed, tokenizer=tokenizer, head_dim=head_dim or 16)
        prefix = "hf:"
    else:
        raise InputError(f"unknown family {family!r}; available: {', '.join(TINY_FAMILIES)}", field="family")
    return TinyModel(family, Path(path), f"{prefix}{path}")


@dataclass(frozen=True)
class Verbalizers:
    """The answer tokens a yes/no backend reads: ``rows`` (interface, word, continuation, token id, piece; word,
    continuation and piece are None for a backend without resolution details) and ``ids`` per interface."""

    spec: str
    tokenizer_kind: str
    rows: list[VerbalizerRow]
    ids: dict[str, list[int]]


class _AnswerTokens(Protocol):
    """What a loaded yes/no backend says about its answer tokens (:class:`vlaudit.backends.base.YesNoBackendBase`)."""

    @property
    def verbalizer_ids(self) -> Mapping[str, tuple[int, int]]: ...

    @property
    def letter_ids(self) -> Sequence[int]: ...


def verbalizers(spec: str, interfaces: Sequence[str] = ("yesno", "truefalse")) -> Verbalizers:
    """The verbalizer token ids of a yes/no model (VCA §11), or its option letters' (``letter``); for ``hf:`` specs only the model's config and
    tokenizer/processor are loaded, not its weights."""
    interfaces = list(interfaces)
    require_kind(spec, "yesno", field="SPEC")
    # hf: and vllm: specs load config + tokenizer only; other yes/no backends (ref:, tiny) load as they are
    loaded = load_backend(spec, RunOptions(device="cpu"), interfaces=interfaces,
                          weights=not parse_spec(spec).entry.config_only)
    # every yes/no loader returns a YesNoBackendBase: it holds the resolution details and tokenizer kind
    backend = cast(YesNoBackendBase, as_yes_no(loaded))
    resolved = backend.verbalizers  # empty for a backend without resolution details: ids only
    rows: list[VerbalizerRow] = []
    for name in interfaces:
        if name in resolved:
            rows.extend((name, v.word, repr(v.text), v.token_id, v.piece) for v in resolved[name])
        else:
            rows.extend((name, None, None, token_id, None) for token_id in _answer_ids(backend, name))
    return Verbalizers(spec=backend.spec, tokenizer_kind=backend.tokenizer_kind, rows=rows,
                       ids={name: list(_answer_ids(backend, name)) for name in interfaces})


def _answer_ids(backend: _AnswerTokens, interface: str) -> tuple[int, ...]:
    """The answer token ids of ``interface``: the yes/no pair, or the option letters A, B, ..."""
    return tuple(backend.letter_ids) if interface == "letter" else tuple(backend.verbalizer_ids[interface])


@dataclass(frozen=True)
class TrainedReference:
    """A retrained reference model: its ``curve`` (one row per logged step: step or epoch, loss, ...) and the
    ``files`` written (weights and their JSON)."""

    name: str
    curve: list[JsonObject]
    files: list[Path]


def train_reference(name: str, *, out: str | Path | None = None, short: bool = False,
                    log: Callable[[str], None] = print) -> TrainedReference:
    """Retrain the trained reference model ``name`` into ``out`` (default: the shipped weights folder);
    ``short`` is a seconds-long smoke-test retrain. Returns the training curve and the files written."""
    if name not in TRAINED_MODELS:
        raise InputError(f"unknown trained reference model {name!r}; available: {', '.join(TRAINED_MODELS)}",
                         field="NAME")
    if TRAINED_MODELS[name].trainer is None:
        raise InputError(f"ref:{name} is a constructed mechanism with nothing to train", field="NAME")
    result = resolve(str(TRAINED_MODELS[name].trainer))(name, out or WEIGHTS_DIR, log=log, short=short)
    return TrainedReference(name=name, curve=[dict(row) for row in result.get("curve", [])],
                            files=[Path(path) for path in result.get("files", [])])
