"""The base of every typed result: a frozen dataclass that writes and reads its JSON with a ``schema_version``.

A result type declares, as dataclass fields, the top-level keys its JSON file always holds (in the order they
are written); any further key a producer adds (optional sections, provenance) is kept in :attr:`extra` and
written after them, so ``to_dict()`` returns the keys that readers and the HTML report use today plus
``schema_version`` first. ``from_dict`` checks the version and the declared fields' types and reports a bad
file as one :class:`~vlaudit.errors.InputError` line naming the file and the field.

A file written before results were versioned has no ``schema_version``; it reads as version 1 (the first
versioned shape added the key and changed nothing else). A version newer than the type's is refused: its
meaning is unknown to this vlaudit.
"""

from __future__ import annotations

import numbers
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from vlaudit.errors import InputError

SCHEMA_VERSION_KEY = "schema_version"


def check_schema_version(data: Mapping[str, Any], newest: int, *, path: str | Path, what: str,
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


@dataclass(frozen=True, kw_only=True)
class VersionedResult(Mapping[str, Any]):
    """A JSON result: declared top-level fields, ``extra`` keys, and the class's ``schema_version``.

    It reads as the read-only mapping ``to_dict()`` (``result["rows"]``, ``result.get(...)``, ``in``,
    ``items()``), so code written for the plain dicts the API used to return keeps working; ``==`` compares
    two results of one type field by field."""

    #: bumped whenever a declared field is renamed, removed or changes meaning (adding one is not a bump)
    schema_version: ClassVar[int] = 1
    #: the file name this result is written to (for the docs' "Output schemas")
    file_name: ClassVar[str] = ""
    #: the commands and API functions that write it
    written_by: ClassVar[str] = ""

    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: ``schema_version`` first, the declared fields in order, then :attr:`extra`."""
        out: dict[str, Any] = {SCHEMA_VERSION_KEY: self.schema_version}
        for name in declared_fields(type(self)):
            out[name] = getattr(self, name)
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @classmethod
    def from_dict(cls: type[R], data: Any, *, path: str | Path | None = None) -> R:
        """Validate a JSON object (as :meth:`to_dict` writes it, or an unversioned older file) into the type."""
        where = path if path is not None else f"<{cls.__name__}>"
        if not isinstance(data, Mapping):
            raise InputError(f"a {cls.__name__} must be a JSON object, not {type(data).__name__}", path=where)
        check_schema_version(data, cls.schema_version, path=where, what=cls.__name__)
        hints = _field_types(cls)
        values: dict[str, Any] = {}
        for name in declared_fields(cls):
            if name not in data:
                raise InputError("missing field", path=where, field=name)
            if not _matches(data[name], hints[name]):
                raise InputError(f"expected {_type_name(hints[name])}, found {type(data[name]).__name__}",
                                 path=where, field=name)
            values[name] = data[name]
        declared = set(values) | {SCHEMA_VERSION_KEY}
        return cls(**values, extra={k: v for k, v in data.items() if k not in declared})

    def __getitem__(self, key: str) -> Any:
        """``result["counts"]``: read access by JSON key, so code written for the plain dict keeps working."""
        if key in declared_fields(type(self)):
            return getattr(self, key)
        if key == SCHEMA_VERSION_KEY:
            return self.schema_version
        return self.extra[key]

    def __iter__(self) -> Iterator[str]:
        """The JSON keys in the order :meth:`to_dict` writes them."""
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())


def declared_fields(cls: type[VersionedResult]) -> tuple[str, ...]:
    """The JSON keys a result type always writes, in order (every dataclass field but ``extra``)."""
    return tuple(f.name for f in fields(cls) if f.name != "extra")


_TYPES: dict[type, dict[str, Any]] = {}  # resolved annotations per result type (get_type_hints is slow)


def _field_types(cls: type[VersionedResult]) -> dict[str, Any]:
    if cls not in _TYPES:
        _TYPES[cls] = typing.get_type_hints(cls)
    return _TYPES[cls]


def field_types(cls: type[VersionedResult]) -> dict[str, str]:
    """Each declared field's type as text (``dict``, ``list``, ``int | None``, ...), for the docs."""
    hints = _field_types(cls)
    return {name: _type_name(hints[name]) for name in declared_fields(cls)}


def _type_name(hint: Any) -> str:
    if hint is Any:
        return "any"
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return " | ".join(_type_name(a) for a in args)
    origin = typing.get_origin(hint) or hint
    if origin is type(None):
        return "null"
    return getattr(origin, "__name__", str(origin))


def _matches(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a field's annotation (outer type only: nested shapes are the reader's)."""
    if hint is Any:
        return True
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return any(_matches(value, arg) for arg in typing.get_args(hint))
    origin = typing.get_origin(hint) or hint
    if origin is type(None):
        return value is None
    # an int is a valid float (JSON may write 1.0 as 1); numpy scalars count as numbers; a bool is not one
    if origin is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if origin is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if origin in (list, tuple):
        return isinstance(value, (list, tuple))
    if origin in (dict, Mapping):
        return isinstance(value, Mapping)
    return isinstance(value, origin)
