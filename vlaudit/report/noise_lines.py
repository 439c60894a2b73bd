"""The report's console lines about the backend's noise floor (``vca stability``; definitions in
:mod:`vlaudit.metrics.vca.noise`)."""

from __future__ import annotations

from collections.abc import Sequence

from vlaudit.results.vca_audit import RunAudit
from vlaudit.results.versioned import JsonValue


def _band(value: JsonValue) -> tuple[float, float] | None:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        low, high = value
        assert isinstance(low, (int, float)) and isinstance(high, (int, float))
        return float(low), float(high)
    return None


def noise_lines(runs: Sequence[RunAudit]) -> list[str]:
    """One line per run: τ, the decisions and credits inside the noise and the noise band of Acc, Dep and
    D-CC beside the bootstrap interval (percent); "noise floor not measured" without a floor."""
    lines = []
    for run in runs:
        noise = run.noise
        if not noise.get("measured"):
            lines.append(f"{run.name}: {noise.get('note', 'noise floor not measured')}")
            continue
        band = noise.get("band")
        parts = []
        for key, label in (("acc", "Acc"), ("dep", "Dep"), ("dcc", "D-CC")):
            flagged = _band(band.get(key)) if isinstance(band, dict) else None
            value = run.rate_of(key)
            if flagged is None or value is None:
                continue
            ci = run.interval_of(key)
            interval = "" if ci is None else f", CI {100 * ci[0]:.1f}–{100 * ci[1]:.1f}"
            parts.append(f"{label} {100 * value:.1f} (noise {100 * flagged[0]:.1f}–{100 * flagged[1]:.1f}"
                         f"{interval})")
        tau = noise.get("tau")
        floor = f"{tau:.3g}" if isinstance(tau, (int, float)) else "—"
        lines.append(f"{run.name}: noise floor τ = {floor}; {noise.get('n_decision')} decisions (|m_o| ≤ τ) and "
                     f"{noise.get('n_credit')} credits (|G_img| ≤ 2τ) inside the noise; " + "; ".join(parts))
    return lines
