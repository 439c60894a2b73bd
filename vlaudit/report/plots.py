"""Plots users can look at (PNG through :mod:`vlaudit.figures`: matplotlib's Agg backend, loaded when drawing)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.figures import pyplot, save_png


def plot_cycle_acc(evaluations: Mapping[str, Mapping[str, Any]], path: str | Path) -> Path:
    """Grouped horizontal bars: CycleAcc per (family, split) row, one colour per scorer, 95% CIs, the ½ line.

    ``evaluations`` maps a scorer name to an ``evaluate_cycles`` result
    (``{"families": {family: {split: summary}}}``); a name of the form ``"source / scorer"`` groups the same
    scorer across sources under one colour. Every row label names its split; splits are never pooled.
    """
    plt = pyplot()

    scorers: list[str] = []
    cells: dict[tuple[str, str], Mapping[str, Any]] = {}
    row_names: list[str] = []
    for name, result in evaluations.items():
        scorer = name.split(" / ", 1)[-1]
        if scorer not in scorers:
            scorers.append(scorer)
        for family, splits in result["families"].items():
            for split, summary in splits.items():
                row = f"{family} [{split}]"
                if row not in row_names:
                    row_names.append(row)
                cells[(row, scorer)] = summary
    height = 0.8 / max(1, len(scorers))
    fig, ax = plt.subplots(figsize=(8.5, 0.3 * len(row_names) * len(scorers) + 1.6))
    colours = plt.get_cmap("tab10")
    for k, scorer in enumerate(scorers):
        rows = [(i, cells[(r, scorer)]) for i, r in enumerate(row_names) if (r, scorer) in cells]
        ys = [i - 0.4 + height * (k + 0.5) for i, _ in rows]
        values = [c["cycle_acc"] for _, c in rows]
        errors = [[c["cycle_acc"] - c["ci"][0] for _, c in rows], [c["ci"][1] - c["cycle_acc"] for _, c in rows]]
        ax.barh(ys, values, height=height * 0.9, xerr=errors, color=colours(k % 10), ecolor="#333333",
                capsize=2, label=scorer)
    ax.axvline(0.5, color="#c44e52", linestyle="--", linewidth=1, label="chance (additive scores: exactly ½)")
    labels = [f"{r} (n={next(c['n'] for (g, _), c in cells.items() if g == r)})" for r in row_names]
    ax.set_yticks(range(len(row_names)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("exact CycleAcc per family [split] (95% bootstrap CI over cycles)")
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    fig.tight_layout()
    return save_png(fig, path)
