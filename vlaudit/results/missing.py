"""A value that could not be computed, and why: :class:`Missing` (a leaf of the results package).

A result field that may not be computable is typed ``float | Missing`` (or ``Interval | Missing``, a record
``| Missing``): where the number exists it is the number, where it does not it is ``Missing(reason)`` — "one
cluster", "no discordant items", "no control run" — never a bare ``None`` or NaN. Every renderer prints the
reason where the number would stand: the console, CSV and HTML as ``— (one cluster)`` (:func:`shown`), the
JSON as the object ``{"missing": "one cluster"}`` (a reader rebuilds it as ``Missing("one cluster")``).

Docs: docs/architecture.md ("Not computable carries its reason").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

#: what a renderer prints where no value stands (followed by the reason in parentheses)
DASH = "—"

T = TypeVar("T")


@dataclass(frozen=True)
class Missing:
    """A value that could not be computed; ``reason`` says why in a few words ("one cluster", "no items").
    Written to JSON as ``{"missing": reason}``."""

    reason: str = field(metadata={"json": "missing"})

    def __str__(self) -> str:
        return f"{DASH} ({self.reason})"


def is_missing(value: object) -> bool:
    """Whether ``value`` is :class:`Missing` (or None, an untyped "not computed" of an older record)."""
    return value is None or isinstance(value, Missing)


def shown(value: object, fmt: str = "{}") -> str:
    """``value`` as printed text: ``fmt.format(value)`` for a value, ``— (reason)`` for :class:`Missing`,
    ``—`` for None. The one spelling the console, CSV and HTML share."""
    if isinstance(value, Missing):
        return str(value)
    if value is None:
        return DASH
    return fmt.format(value)


def known(value: float | None, reason: str) -> float | Missing:
    """``value`` as a float where it is a finite number, else ``Missing(reason)`` (NaN, ±inf and None are not
    numbers a reader can use)."""
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return Missing(reason)
    return float(value)


def value_or(value: T | Missing | None, default: T) -> T:
    """``value`` where computed, else ``default`` (for arithmetic and sorting that skip what is missing)."""
    return default if value is None or isinstance(value, Missing) else value


def reason_of(value: object) -> str | None:
    """The reason of a :class:`Missing` value, else None."""
    return value.reason if isinstance(value, Missing) else None
