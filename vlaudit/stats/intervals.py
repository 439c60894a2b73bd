"""Closed-form intervals for proportions (VCA §19)."""

from __future__ import annotations

import math

from scipy.stats import norm

from vlaudit.settings import CONFIDENCE_LEVEL


def wilson_interval(successes: int, n: int, level: float = CONFIDENCE_LEVEL) -> tuple[float, float]:
    """Two-sided Wilson score interval for a binomial proportion successes/n (NaNs when n = 0).

    centre = (p̂ + z²/2n) / (1 + z²/n), half-width = z·sqrt(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n).
    """
    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= successes <= n:
        raise ValueError(f"successes={successes} must lie in [0, n={n}]")
    z = float(norm.ppf(0.5 + level / 2.0))
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
