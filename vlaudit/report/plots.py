"""Plots users can look at (PNG, matplotlib's Agg backend; matplotlib is imported only when plotting)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.tables import atomic_write


def plot_cycle_acc(evaluations: Mapping[str, Mapping[str, Any]], path: str | Path) -> Path:
    """Horizontal bars of CycleAcc per family for each scorer, with bootstrap CIs and the ½ chance line.

    ``evaluations`` maps a scorer name to a ``cycles eval`` result (``{"families": {family: summary}}``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, values, lows, highs = [], [], [], []
    for scorer, result in evaluations.items():
        for family, summary in result["families"].items():
            labels.append(f"{scorer} · {family} (n={summary['n']})")
            values.append(summary["cycle_acc"])
            lows.append(summary["cycle_acc"] - summary["ci"][0])
            highs.append(summary["ci"][1] - summary["cycle_acc"])
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(labels) + 1.2))
    positions = range(len(labels))
    ax.barh(list(positions), values, xerr=[lows, highs], color="#4c72b0", ecolor="#333333", capsize=2)
    ax.axvline(0.5, color="#c44e52", linestyle="--", linewidth=1, label="chance (additive scores: exactly ½)")
    ax.set_yticks(list(positions), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("exact CycleAcc (95% bootstrap CI)")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    path = Path(path)
    with atomic_write(path, "wb") as handle:
        fig.savefig(handle, format="png", dpi=110)
    plt.close(fig)
    return path
