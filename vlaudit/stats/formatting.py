"""How p-values and intervals are printed: one place for every console table and HTML page.

* :func:`format_p`: ``"< 0.001"`` below 0.001 (never ``0.0000``: a permutation or Monte Carlo p-value is
  never zero, and printing digits a test cannot resolve claims a precision it lacks), three decimals
  otherwise, ``"—"`` where no test applies.
* :func:`degenerate` / :func:`format_interval`: a zero-width percentile interval ([1, 1] with one cluster,
  [0, 0] when two models agree on every cluster) is an artefact of the bootstrap — every resample equals the
  sample, whatever the truth — so it prints as ``"—"``, like an interval that cannot be computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

P_FLOOR = 0.001  # below it a p-value prints as "< 0.001"
NOT_COMPUTED = "—"


def format_p(p: float | None) -> str:
    """``"< 0.001"``, ``"0.034"``, ``"1.000"``; ``"—"`` for None or NaN."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return NOT_COMPUTED
    if p < P_FLOOR:
        return f"< {P_FLOOR:g}"
    return f"{p:.3f}"


def degenerate(interval: Sequence[float] | None) -> bool:
    """True for a missing interval, one with a non-finite end, or a zero-width one (an artefact)."""
    if interval is None:
        return True
    lo, hi = float(interval[0]), float(interval[1])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return True
    return hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi))


def format_interval(interval: Sequence[float] | None, *, signed: bool = True, digits: int = 3,
                    scale: float = 1.0) -> str:
    """``"[+0.031, +0.250]"`` (``signed``) or ``"[0.031, 0.250]"``; ``"—"`` where :func:`degenerate`."""
    if interval is None or degenerate(interval):
        return NOT_COMPUTED
    sign = "+" if signed else ""
    # rounded before the sign is printed, so that a bound of -1e-17 reads +0.000, not -0.000
    lo, hi = (round(scale * float(bound), digits) + 0.0 for bound in interval[:2])
    return f"[{lo:{sign}.{digits}f}, {hi:{sign}.{digits}f}]"
