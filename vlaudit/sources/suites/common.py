"""What every suite reader shares: typed field access that names file, record and field; one look-alike refusal."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import read_json


def refuse(path: str | Path, suite: str, expected: str, found: str) -> InputError:
    """The one-line refusal of a file that is not ``suite``'s layout: what was expected, what was found."""
    return InputError(f"not a {suite} file: expected {expected}; found {found}", path=path)


def read_layout(path: Path, looks_like: Callable[[Any], bool], suite: str, expected: str) -> Any:
    """The parsed JSON of ``path`` when ``looks_like`` accepts it; else :func:`refuse` naming what it holds."""
    data = read_json(path)
    if not looks_like(data):
        raise refuse(path, suite, expected, shape_of(data))
    return data


def shape_of(value: Any) -> str:
    """A few words on what a parsed JSON value looks like (for :func:`refuse`)."""
    if isinstance(value, Mapping):
        keys = list(value)[:6]
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(value, list):
        if not value:
            return "an empty list"
        first = value[0]
        if isinstance(first, list):
            return f"a list of {len(first)}-lists"
        if isinstance(first, Mapping):
            return f"a list of objects with keys {list(first)[:6]}"
        return f"a list of {type(first).__name__}"
    return type(value).__name__


def text_field(row: Mapping[str, Any], name: str, *, path: str | Path, record: str) -> str:
    """A non-empty text field, stripped; anything else names file, record and field."""
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError("missing or empty text" if value is None or isinstance(value, str)
                         else f"expected text, got {type(value).__name__}", path=path, record=record, field=name)
    return value.strip()


def image_path(value: object, *, path: str | Path, record: str, name: str) -> str:
    """An image file name relative to the images folder; an absolute path or one with ``..`` is refused."""
    if not isinstance(value, str) or not value.strip():
        raise InputError("missing or empty image path", path=path, record=record, field=name)
    text = value.strip().replace("\\", "/")
    parts = PurePosixPath(text)
    if parts.is_absolute() or ".." in parts.parts or (len(text) > 1 and text[1] == ":"):
        raise InputError(f"image path {value!r} leaves the images folder", path=path, record=record, field=name)
    return text


def counts(read: int, kept: int, left_out: Mapping[str, int] | None = None) -> dict[str, int]:
    """``{"read": read, "kept": kept, reason: n, ...}`` with the zero reasons dropped; checks they add up."""
    reasons = dict(left_out or {})
    out = {"read": read, "kept": kept, **{reason: n for reason, n in reasons.items() if n}}
    if read != kept + sum(reasons.values()):
        raise ValueError(f"counts do not add up: {out}")
    return out
