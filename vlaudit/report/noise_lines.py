"""The report's console lines about the backend's noise floor (``vca stability``; definitions in
:mod:`vlaudit.metrics.vca.noise`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def noise_lines(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per run: τ, the decisions and credits inside the noise and the noise band of Acc, Dep and
    D-CC beside the bootstrap interval (percent); "noise floor not measured" without a floor."""
    lines = []
    for run in runs:
        noise = run.get("noise") or {}
        name = f"{run['model']} · {run['dataset']} · {run['interface']}"
        if not noise.get("measured"):
            lines.append(f"{name}: {noise.get('note', 'noise floor not measured')}")
            continue
        band = noise["band"]
        parts = []
        for key, label in (("acc", "Acc"), ("dep", "Dep"), ("dcc", "D-CC")):
            if band.get(key) is None or run.get(key) is None:
                continue
            ci = run["ci"].get(key)
            interval = "" if ci is None else f", CI {100 * ci[0]:.1f}–{100 * ci[1]:.1f}"
            parts.append(f"{label} {100 * run[key]:.1f} (noise {100 * band[key][0]:.1f}–{100 * band[key][1]:.1f}"
                         f"{interval})")
        lines.append(f"{name}: noise floor τ = {noise['tau']:.3g}; {noise['n_decision']} decisions "
                     f"(|m_o| ≤ τ) and {noise['n_credit']} credits (|G_img| ≤ 2τ) inside the noise; "
                     + "; ".join(parts))
    return lines
