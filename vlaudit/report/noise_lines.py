"""The report's console lines about the backend's noise floor (``vca stability``; definitions in
:mod:`vlaudit.metrics.vca.noise`)."""

from __future__ import annotations

from collections.abc import Sequence

from vlaudit.results.missing import Missing
from vlaudit.results.vca.audit import RunAudit


def noise_lines(runs: Sequence[RunAudit]) -> list[str]:
    """One line per run: τ, the decisions and credits inside the noise and the noise band of Acc, Dep and
    D-CC beside the bootstrap interval (percent); the reason (noise floor not measured) without a floor."""
    lines = []
    for run in runs:
        noise = run.noise
        if isinstance(noise, Missing):
            lines.append(f"{run.name}: {noise.reason}")
            continue
        parts = []
        for key, label in (("acc", "Acc"), ("dep", "Dep"), ("dcc", "D-CC")):
            flagged = getattr(noise.band, key)
            value = run.rate_of(key)
            if isinstance(flagged, Missing) or value is None:
                continue
            ci = run.interval_of(key)
            interval = "" if ci is None else f", CI {100 * ci[0]:.1f}–{100 * ci[1]:.1f}"
            parts.append(f"{label} {100 * value:.1f} (noise {100 * flagged[0]:.1f}–{100 * flagged[1]:.1f}"
                         f"{interval})")
        lines.append(f"{run.name}: noise floor τ = {noise.tau:.3g}; {noise.n_decision} decisions (|m_o| ≤ τ) and "
                     f"{noise.n_credit} credits (|G_img| ≤ 2τ) inside the noise; " + "; ".join(parts))
    return lines
