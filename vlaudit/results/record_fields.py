"""Readers of a manifest record's JSON fields, shared by the typed records of results/
(:mod:`vlaudit.results.scoring_record`, :mod:`vlaudit.results.run_records`): each returns the field's value
or raises one :class:`~vlaudit.errors.InputError` naming the file and the field (a leaf module)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.results.backend_description import FrozenJson, FrozenMap, JsonMap, freeze
from vlaudit.results.versioned import JsonObject, JsonValue


def frozen_object(value: Mapping[str, object], name: str) -> JsonMap:
    frozen: FrozenJson = freeze(value, name)
    if not isinstance(frozen, FrozenMap):  # a mapping freezes to one; a caller outside the types may pass else
        raise TypeError(f"{name}: {type(value).__name__}, not an object")
    return frozen


def object_field(data: Mapping[str, JsonValue], key: str, path: str | Path) -> JsonObject:
    value = data.get(key)
    if not isinstance(value, dict):
        raise InputError("must be a JSON object", path=path, field=key)
    return value


def text_field(data: Mapping[str, JsonValue], key: str, path: str | Path) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise InputError("must be text", path=path, field=key)
    return value


def texts_field(data: Mapping[str, JsonValue], key: str, path: str | Path) -> dict[str, str]:
    value = object_field(data, key, path)
    for name, item in value.items():
        if not isinstance(item, str):
            raise InputError("must be text", path=path, field=f"{key}.{name}")
    return {name: str(item) for name, item in value.items()}


def names_field(data: Mapping[str, JsonValue], key: str, path: str | Path) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputError("must be a list of names", path=path, field=key)
    return tuple(str(item) for item in value)


def count_field(data: Mapping[str, JsonValue], key: str, path: str | Path) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError("must be a whole number", path=path, field=key)
    return value
