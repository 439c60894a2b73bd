"""The record a text-only scorer returns per caption (light: no torch), shared by the backend and the cache."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TextLogProb:
    """log p(caption) (natural log, float64) over ``tokens`` scored tokens."""

    logprob: float
    tokens: int
