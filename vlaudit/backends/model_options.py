"""A model spec and its backend's options by name: the one way a flag, a ``-o KEY=VALUE`` or an API mapping
becomes a :class:`~vlaudit.backends.registry.ModelRef`.

Each backend's options record (:mod:`vlaudit.backends.options`) is the single place an option is declared;
this module picks the record the spec's backend takes (:func:`~vlaudit.backends.registry.options_classes`, the
first that holds every option given), converts ``KEY=VALUE`` text to the field's type and refuses, in one
line naming the backend and its options, a key the backend does not take — as simonw/llm's
``model.Options(**options)`` for ``llm -o KEY VALUE`` and inspect_ai's ``-M key=value`` do. An option of
another backend given at that backend's default is no setting (a command passes every flag it shows).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import Field, fields
from typing import Any, TypeVar

from vlaudit.backends.options import (
    VLLM_ENGINE_FIELDS,
    BackendOptions,
    DualOptions,
    EndpointOptions,
    HfOptions,
    PlantedOptions,
    VllmOptions,
)
from vlaudit.backends.registry import ModelRef, options_classes, parse_spec
from vlaudit.errors import InputError

__all__ = ["field_type", "model_ref", "options_record", "text_value"]

_ALL_CLASSES: tuple[type[BackendOptions], ...] = (HfOptions, PlantedOptions, VllmOptions, DualOptions,
                                                   EndpointOptions)
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
_Record = TypeVar("_Record")


def field_type(kind: type, name: str) -> tuple[type, bool]:
    """The type of field ``name`` of options class ``kind`` and whether it may be None (``int | None`` →
    ``(int, True)``; ``tuple[str, ...]`` → ``(tuple, False)``)."""
    hint = typing.get_type_hints(kind)[name]
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return (typing.get_origin(rest[0]) or rest[0]), len(rest) < len(args)
    return (typing.get_origin(hint) or hint), False


def text_value(kind: type, name: str, text: str, *, field: str) -> object:
    """``text`` as the value of field ``name`` of ``kind``: an int, a float, a bool (true/false, 1/0, yes/no,
    on/off), a string; ``none`` for a field that may be None. A value that does not convert is one line naming
    ``field``."""
    base, optional = field_type(kind, name)
    if optional and base is not str and text.strip().lower() == "none":
        return None
    try:
        if base is bool:
            if text.strip().lower() not in (*_TRUE, *_FALSE):
                raise ValueError
            return text.strip().lower() in _TRUE
        if base in (int, float):
            return base(text)
    except ValueError:
        raise InputError(f"expected {'true or false' if base is bool else base.__name__}, got {text!r}",
                         field=field) from None
    return text


def _flag(name: str) -> str:
    """The flag of option ``name`` in whichever backend's record declares it (``-o NAME`` for an API-only one)."""
    for kind in _ALL_CLASSES:
        for f in fields(kind):
            if f.name == name:
                return str(f.metadata.get("flag") or f"-o {name}")
    return f"-o {name}"


def _declared(name: str) -> Field[Any] | None:
    return next((f for kind in _ALL_CLASSES for f in fields(kind) if f.name == name), None)


def _parse_text(pairs: Iterable[str]) -> dict[str, str | list[str]]:
    """``KEY=VALUE`` strings by key (dashes read as underscores; a repeated key keeps every value)."""
    given: dict[str, str | list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InputError(f"expected KEY=VALUE, got {pair!r}", field="--model-option")
        before = given.get(key)
        given[key] = value if before is None else [*([before] if isinstance(before, str) else before), value]
    return given


def _refusal(spec: str, name: str, takes: type[BackendOptions], *, text: bool) -> InputError:
    """The one line refusing option ``name`` for ``spec`` (whose first options class is ``takes``), naming it
    as given: by its flag, or as ``-o NAME`` when given as text."""
    prefix = parse_spec(spec).prefix
    flag = f"-o {name}" if text else _flag(name)
    if name in VLLM_ENGINE_FIELDS and prefix != "vllm":
        return InputError(f"is a setting of vllm: models, not of {spec!r}", field=flag)
    if takes is EndpointOptions and _declared(name) is not None:
        return InputError(f"{prefix}: models do not take {flag}", field=flag)
    what = f"takes no {flag}" if _declared(name) is not None else f"has no option {name!r}"
    return InputError(f"the {prefix}: backend of {spec!r} {what} (its options: "
                      f"{', '.join(sorted(f.name for f in fields(takes)))})", field=flag)


def _at_default(name: str, value: object) -> bool:
    declared = _declared(name)
    return declared is not None and value == declared.default


def _choose(spec: str, names: Sequence[str], text: Collection[str]) -> type[BackendOptions]:
    """The first options class of ``spec``'s backend holding every option in ``names``; else a refusal of
    the first option none holds (``text``: the names given as ``-o`` text)."""
    allowed = options_classes(spec)
    for kind in allowed:
        if set(names) <= {f.name for f in fields(kind)}:
            return kind
    held = {f.name for kind in allowed for f in fields(kind)}
    name = next((n for n in names if n not in held), names[0])  # else each is held, but by different classes
    raise _refusal(spec, name, allowed[0], text=name in text)


def model_ref(model: str | ModelRef, options: Mapping[str, object] | None = None, *,
              text: Iterable[str] = ()) -> ModelRef:
    """``model`` with its backend's options: ``options`` by field name (typed values, as an API caller or a
    command's flags give them) and ``text`` as ``KEY=VALUE`` strings (``-o``/``--model-option``; a value is
    converted to its field's type, a repeated key of a tuple field adds one value each time).

    An option the spec's backend does not take is refused naming the backend and the options it takes,
    unless it sits at the default of the backend that declares it (no setting). A ModelRef keeps its own
    options: any option given beside it is refused. Example::

        model_ref("vllm:Qwen/Qwen2-VL-2B-Instruct", text=["tensor_parallel_size=2"]).options.tensor_parallel_size
    """
    raw = _parse_text(text)
    typed = {k: tuple(v) if isinstance(v, list) else v for k, v in (options or {}).items()}
    if isinstance(model, ModelRef):
        if typed or raw:
            raise InputError("give the model's options in its ModelRef, not beside it", field="model")
        return model
    both = sorted(set(raw) & {k for k, v in typed.items() if not _at_default(k, v)})
    if both:
        raise InputError(f"is given twice (by {_flag(both[0])} and by -o {both[0]})", field=_flag(both[0]))
    values: dict[str, object] = {k: v for k, v in typed.items() if k not in raw}
    names = [k for k, v in values.items() if not _at_default(k, v)] + list(raw)
    kind = _choose(model, names, raw)
    own = {f.name for f in fields(kind)}
    kept: dict[str, Any] = {k: v for k, v in values.items() if k in own}  # each class checks its own values
    for key, given in raw.items():
        base, _ = field_type(kind, key)
        items = [given] if isinstance(given, str) else given
        converted = [text_value(kind, key, item, field=f"-o {key}") for item in items]
        kept[key] = tuple(converted) if base is tuple else converted[-1]
    return ModelRef(model, kind(**kept))


def options_record(kind: type[_Record], options: Mapping[str, object] | None = None, *, text: Iterable[str] = (),
                   names: Collection[str] | None = None) -> _Record:
    """One record of options class ``kind`` from ``options`` by field name (typed values, as a command's flags
    give them) and ``text`` as ``KEY=VALUE`` strings (``-o``, converted as by :func:`model_ref`), when the
    options are a setting of no model spec (``vca stability``'s second engine). ``names``: the field names
    that may be set (default: every field of ``kind``); another key, or one given both by its flag (away from
    its default) and by ``-o``, is refused in one line. Example::

        options_record(VllmOptions, {"tensor_parallel_size": 2}, text=["enforce-eager=true"]).enforce_eager
    """
    declared = {f.name: f for f in fields(kind)}  # type: ignore[arg-type]  # kind is a dataclass
    allowed = set(declared) if names is None else set(names) & set(declared)

    def flag(name: str) -> str:
        return str(declared[name].metadata.get("flag") or f"-o {name}") if name in declared else _flag(name)

    raw = _parse_text(text)
    typed = {k: tuple(v) if isinstance(v, list) else v for k, v in (options or {}).items()}
    for key in [*typed, *raw]:
        if key not in allowed:
            raise InputError(f"is not an option taken here (its options: {', '.join(sorted(allowed))})",
                             field=f"-o {key}" if key in raw else flag(key))
    both = sorted(k for k in raw if k in typed and typed[k] != declared[k].default)
    if both:
        raise InputError(f"is given twice (by {flag(both[0])} and by -o {both[0]})", field=flag(both[0]))
    kept: dict[str, Any] = {k: v for k, v in typed.items() if k not in raw}
    for key, given in raw.items():
        base, _ = field_type(kind, key)
        items = [given] if isinstance(given, str) else given
        converted = [text_value(kind, key, item, field=f"-o {key}") for item in items]
        kept[key] = tuple(converted) if base is tuple else converted[-1]
    return kind(**kept)
