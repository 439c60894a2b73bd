"""The base of every typed result: a frozen dataclass that writes and reads its JSON with a ``schema_version``.

A result type declares, as dataclass fields, the top-level keys its JSON file always holds (in the order they
are written). A field may be a JSON leaf (``str``, ``int``, ``float``, ``bool``, ``None``), a nested frozen
dataclass (a *record*: a rate, an interval, a per-run or per-family row), or a ``list``/``tuple``/``dict`` of
them; ``to_dict()`` writes a record as the JSON object of its fields, so the file's keys are the field names.
Any further key a producer adds (optional sections, provenance) is kept in :attr:`extra` and written after the
declared ones. ``from_dict`` checks the version and rebuilds every declared field down to its leaves,
reporting a bad file as one :class:`~vlaudit.errors.InputError` line naming the file and the field path
(``runs[2].credit.value``).

"Not computable" is :class:`~vlaudit.results.missing.Missing` (``{"missing": reason}``) in a field typed
``float | Missing``, never NaN (a JSON file is strict JSON); an older file's ``null`` there reads as
``Missing(UNRECORDED)``. Some older records still hold ``None`` beside a ``reason`` field.

A file written before results were versioned has no ``schema_version``; it reads as version 1 (the first
versioned shape added the key and changed nothing else). A version newer than the type's is refused: its
meaning is unknown to this vlaudit.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, TypeVar, Union

from vlaudit.errors import InputError
from vlaudit.results.missing import Missing

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

SCHEMA_VERSION_KEY = "schema_version"
#: the reason a ``null`` of a file written before its field said why reads as
UNRECORDED = "not computed; no reason recorded (an older file)"

#: any JSON value (what an open-ended section of a result holds: provenance, a producer's extra keys)
JsonValue = Union[str, int, float, bool, None, list["JsonValue"], dict[str, "JsonValue"]]  # noqa: UP007
#: a JSON object
JsonObject = dict[str, JsonValue]
#: a two-sided interval [low, high] (a bootstrap percentile or Wilson interval), written as a JSON list
Interval = tuple[float, float]


def json_key(name: str) -> dict[str, str]:
    """Field metadata for a record field whose JSON key is not a Python name:
    ``g_img: float = field(metadata=json_key("G_img"))``."""
    return {"json": name}


def omitted_when_none() -> dict[str, bool]:
    """Field metadata for an optional section of a record that the JSON leaves out when it is None (a
    benchmark's figures on another benchmark's run); the reader reads an absent key as the field's default."""
    return {"omit_none": True}


def reason_key(name: str) -> dict[str, str]:
    """Field metadata for a ``float | Missing`` field whose file writes Missing as the key ``name`` holding
    the reason, the field's own key absent (a file shape older than :class:`Missing`, kept for its readers:
    MMStar's ``ml``/``ml_reason``)."""
    return {"reason_key": name}


def _key(f: dataclasses.Field[object]) -> str:
    return str(f.metadata.get("json", f.name))


def check_schema_version(data: Mapping[str, object], newest: int, *, path: str | Path, what: str,
                         oldest: int = 1) -> int:
    """The ``schema_version`` of a JSON object written by vlaudit (``oldest`` when it has none: written before
    versions existed); :class:`InputError` naming the file and the field when it is not an integer or is newer
    than this vlaudit reads (a file from a later vlaudit read as if current would show wrong fields as results)."""
    version = data.get(SCHEMA_VERSION_KEY, oldest)
    if isinstance(version, bool) or not isinstance(version, int) or version < oldest:
        kind = "a positive integer" if oldest == 1 else f"an integer of at least {oldest}"
        raise InputError(f"schema_version must be {kind}, not {version!r}", path=path, field=SCHEMA_VERSION_KEY)
    if version > newest:
        raise InputError(f"schema_version {version} is newer than this vlaudit reads for {what} ({newest}); "
                         "upgrade vlaudit", path=path, field=SCHEMA_VERSION_KEY)
    return version

R = TypeVar("R", bound="VersionedResult")
D = TypeVar("D")


@dataclass(frozen=True, kw_only=True)
class VersionedResult:
    """A JSON result: declared top-level fields (leaves or nested records), ``extra`` keys, and the class's
    ``schema_version``. Read it by attribute (``result.rows``); ``==`` compares two results field by field."""

    #: bumped whenever a declared field is renamed, removed or changes meaning (adding one is not a bump)
    schema_version: ClassVar[int] = 1
    #: the file name this result is written to (for the docs' "Output schemas")
    file_name: ClassVar[str] = ""
    #: the commands and API functions that write it
    written_by: ClassVar[str] = ""

    extra: Mapping[str, JsonValue] = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """The JSON object: ``schema_version`` first, the declared fields in order (records as objects),
        then :attr:`extra`."""
        out: JsonObject = {SCHEMA_VERSION_KEY: self.schema_version}
        for f in _declared(type(self)):
            out[_key(f)] = to_json(getattr(self, f.name))
        for key, value in self.extra.items():
            out.setdefault(key, to_json(value))
        return out

    @classmethod
    def from_dict(cls: type[R], data: object, *, path: str | Path | None = None) -> R:
        """Validate a JSON object (as :meth:`to_dict` writes it, or an unversioned older file) into the type."""
        where = path if path is not None else f"<{cls.__name__}>"
        if not isinstance(data, Mapping):
            raise InputError(f"a {cls.__name__} must be a JSON object, not {type(data).__name__}", path=where)
        check_schema_version(data, cls.schema_version, path=where, what=cls.__name__)
        hints = _field_types(cls)
        values: dict[str, object] = {}
        for f in _declared(cls):
            if _key(f) not in data:
                # a field added later has a default (no schema bump): a file written before it still reads
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise InputError("missing field", path=where, field=_key(f))
                continue
            values[f.name] = _decode(data[_key(f)], hints[f.name], where, _key(f))
        declared = {_key(f) for f in _declared(cls)} | {SCHEMA_VERSION_KEY}
        return cls(**values, extra={k: v for k, v in data.items() if k not in declared})


def _declared(cls: type) -> tuple[dataclasses.Field[object], ...]:
    return tuple(f for f in fields(cls) if f.name != "extra")


def declared_fields(cls: type) -> tuple[str, ...]:
    """The JSON keys a result type always writes, in order (every dataclass field but ``extra``)."""
    return tuple(_key(f) for f in _declared(cls))


def to_json(value: object) -> JsonValue:
    """A value as JSON: a record (dataclass) as the object of its fields, tuples as lists, a Path as text,
    numpy scalars as Python numbers, a non-finite float as None (strict JSON has no NaN)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, VersionedResult):
            return value.to_dict()
        return _record_json(value)
    if value is None or isinstance(value, (str, bool)):
        return value
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):  # a numpy scalar (numpy stays unimported)
        return to_json(value.item())
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, Mapping):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist"):  # a numpy array
        return to_json(value.tolist())
    if isinstance(value, (Sequence, set, frozenset)):
        return [to_json(item) for item in value]
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _record_json(record: DataclassInstance) -> JsonObject:
    out: JsonObject = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if value is None and f.metadata.get("omit_none"):
            continue
        if isinstance(value, Missing) and "reason_key" in f.metadata:
            out[str(f.metadata["reason_key"])] = value.reason
            continue
        out[_key(f)] = to_json(value)
    return out


def record_from_dict(cls: type[D], data: object, *, path: str | Path, name: str = "") -> D:
    """Rebuild the record (dataclass) ``cls`` from its JSON object, checking every leaf; one InputError line
    naming the file and the field path on a mismatch."""
    return typing.cast(D, _decode(data, cls, path, name or cls.__name__))


_TYPES: dict[type, dict[str, object]] = {}  # resolved annotations per record type (get_type_hints is slow)


def _field_types(cls: type) -> dict[str, object]:
    if cls not in _TYPES:
        _TYPES[cls] = typing.get_type_hints(cls)
    return _TYPES[cls]


def field_types(cls: type) -> dict[str, str]:
    """Each declared field's type as text (``dict``, ``list[RateRecord]``, ``int | None``, ...), for the docs."""
    hints = _field_types(cls)
    return {_key(f): type_name(hints[f.name]) for f in _declared(cls)}


def nested_records(cls: type) -> list[type]:
    """Every record type (dataclass) a result's fields hold, depth first, each once (for the docs)."""
    seen: list[type] = []

    def visit(hint: object) -> None:
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if hint in seen:
                return
            seen.append(hint)
            for name, sub in _field_types(hint).items():
                if name != "extra":
                    visit(sub)
            return
        for arg in typing.get_args(hint):
            visit(arg)

    for name, hint in _field_types(cls).items():
        if name != "extra":
            visit(hint)
    return seen


def type_name(hint: object) -> str:
    """A field's annotation as short text (``list[CreditRate]``, ``float | null``)."""
    if hint is typing.Any:
        return "any"
    if _is_json_value(hint):
        return "json"
    args = typing.get_args(hint)
    if _is_union(hint):
        return " | ".join(type_name(a) for a in args)
    origin = typing.get_origin(hint)
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if origin is type(None) or hint is type(None):
        return "null"
    name = getattr(origin or hint, "__name__", str(origin or hint))
    if origin is not None and args:
        shown = [type_name(a) for a in args if a is not Ellipsis]
        return f"{name}[{', '.join(shown)}]"
    return name


def _is_union(hint: object) -> bool:
    return isinstance(hint, types.UnionType) or typing.get_origin(hint) is Union


_JSON_LEAVES = {str, int, float, bool, type(None)}


def _is_json_value(hint: object) -> bool:
    """``JsonValue`` itself, or as ``get_type_hints`` resolves it inside ``dict[str, JsonValue]`` (one level of
    its forward references evaluated, so no longer ``==`` the alias)."""
    if hint == JsonValue:
        return True
    if not _is_union(hint):
        return False
    args = typing.get_args(hint)
    origins = {typing.get_origin(a) for a in args}
    return len(args) == 7 and _JSON_LEAVES <= set(args) and {list, dict} <= origins


def _fail(message: str, path: str | Path, name: str) -> InputError:
    return InputError(message, path=path, field=name)


def _decode(value: object, hint: object, path: str | Path, name: str) -> object:
    """``value`` (parsed JSON) as the annotation ``hint``: records rebuilt, lists kept as lists, tuples as
    tuples; an InputError naming the field path when a leaf does not fit."""
    if hint is typing.Any or hint is object or _is_json_value(hint):
        return value
    if _is_union(hint):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        if value is None and Missing in args:
            # a file written before the field said why it was not computed: read it, saying so
            return Missing(UNRECORDED)
        errors: list[InputError] = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _decode(value, arg, path, name)
            except InputError as error:
                errors.append(error)
        if len(errors) == 1:
            raise errors[0]
        raise _fail(f"expected {type_name(hint)}, found {_json_type(value)}", path, name)
    origin = typing.get_origin(hint)
    if origin is Literal:
        if value in typing.get_args(hint):
            return value
        raise _fail(f"expected one of {type_name(hint)}, found {value!r}", path, name)
    if hint is type(None):
        if value is None:
            return None
        raise _fail(f"expected null, found {_json_type(value)}", path, name)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if issubclass(hint, VersionedResult):
            return hint.from_dict(value, path=path)
        if not isinstance(value, Mapping):
            raise _fail(f"expected an object ({hint.__name__}), found {_json_type(value)}", path, name)
        hints = _field_types(hint)
        values: dict[str, object] = {}
        for f in fields(hint):
            if _key(f) in value:
                values[f.name] = _decode(value[_key(f)], hints[f.name], path, f"{name}.{_key(f)}")
            elif f.metadata.get("reason_key") in value:
                values[f.name] = Missing(str(value[str(f.metadata["reason_key"])]))
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise _fail("missing field", path, f"{name}.{_key(f)}")
        return hint(**values)
    base = origin or hint
    args = typing.get_args(hint)
    if base in (list, tuple, Sequence) or (isinstance(base, type) and base is not str
                                           and issubclass(base, (list, tuple))):
        if not isinstance(value, (list, tuple)):
            raise _fail(f"expected a list, found {_json_type(value)}", path, name)
        if base is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(value):
                raise _fail(f"expected {len(args)} values, found {len(value)}", path, name)
            return tuple(_decode(v, a, path, f"{name}[{i}]") for i, (v, a) in enumerate(zip(value, args, strict=True)))
        item = args[0] if args else object
        decoded = [_decode(v, item, path, f"{name}[{i}]") for i, v in enumerate(value)]
        return tuple(decoded) if base is tuple else decoded
    if base in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise _fail(f"expected an object, found {_json_type(value)}", path, name)
        item = args[1] if len(args) == 2 else object
        return {key: _decode(v, item, path, f"{name}.{key}") for key, v in value.items()}
    if base is float:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
        raise _fail(f"expected a number, found {_json_type(value)}", path, name)
    if base is int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
        raise _fail(f"expected an integer, found {_json_type(value)}", path, name)
    if base is Path:
        if isinstance(value, str):
            return Path(value)
        raise _fail(f"expected a path (text), found {_json_type(value)}", path, name)
    if isinstance(base, type) and isinstance(value, base):
        return value
    raise _fail(f"expected {type_name(hint)}, found {_json_type(value)}", path, name)


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
