"""The demo's one view of the results it reads from the stages: a typed record (or a plain object) as the JSON
object of its fields, keyed as the file writes them, so a check reads the same keys the outputs hold."""

from __future__ import annotations

from typing import Any

from vlaudit.results.versioned import to_json


def json_object(value: object) -> dict[str, Any]:
    """``value`` (a record, a result or a mapping) as the JSON object :func:`~vlaudit.results.versioned.to_json`
    writes for it; TypeError for anything that is not written as an object."""
    written = to_json(value)
    if not isinstance(written, dict):
        raise TypeError(f"{type(value).__name__} is not written as a JSON object")
    return written
