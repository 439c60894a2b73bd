"""Plots of the cycle-paper experiments (PNG via :func:`vlaudit.figures.save_png`).

Every plot shows mean ± sample sd across seeds and the chance line at ½ (where additive scores must sit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.figures import pyplot, save_png


def _cell(row: Mapping[str, Any], value: str = "cycle_acc") -> tuple[float, float]:
    cell = row[value]
    return (float("nan") if cell["mean"] is None else cell["mean"]), (cell["sd"] or 0.0)


def plot_family_bars(rows: Sequence[Mapping[str, Any]], path: str | Path, *, title: str) -> Path:
    """Grouped horizontal bars: CycleAcc per family (rows) and probe (colours), sd error bars, ½ line."""
    plt = pyplot()
    families = list(dict.fromkeys(r["family"] for r in rows))
    probes = list(dict.fromkeys(r["probe"] for r in rows))
    cells = {(r["family"], r["probe"]): r for r in rows}
    height = 0.8 / max(1, len(probes))
    fig, ax = plt.subplots(figsize=(8.5, 0.28 * max(1, len(families)) * len(probes) + 1.6))
    colours = plt.get_cmap("tab10")
    for k, probe in enumerate(probes):
        ys, means, sds = [], [], []
        for i, family in enumerate(families):
            if (family, probe) in cells:
                mean, sd = _cell(cells[(family, probe)])
                ys.append(i - 0.4 + height * (k + 0.5))
                means.append(mean)
                sds.append(sd)
        ax.barh(ys, means, height=height * 0.9, xerr=sds, color=colours(k % 10), ecolor="#333333", capsize=2,
                label=probe)
    ax.axvline(0.5, color="#c44e52", linestyle="--", linewidth=1, label="½ (additive scores: exactly)")
    ax.set_yticks(range(len(families)), families, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("exact CycleAcc on test cycles (mean ± sample sd across seeds)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=7, framealpha=0.9)
    fig.tight_layout()
    return save_png(fig, path)


def plot_rank_sweep(rows: Sequence[Mapping[str, Any]], path: str | Path, *, title: str) -> Path:
    """CycleAcc against rank (log₂ axis), one line per family with sd bars; the additive line at ½ (Fig. 2)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    families = list(dict.fromkeys(r["family"] for r in rows))
    for family in families:
        points = sorted((r["rank"], *_cell(r)) for r in rows if r["family"] == family)
        ax.errorbar([p[0] for p in points], [p[1] for p in points], yerr=[p[2] for p in points], marker="o",
                    capsize=2, label=family)
    ax.axhline(0.5, color="#c44e52", linestyle="--", linewidth=1, label="additive (exactly ½)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("rank r of the bilinear probe")
    ax.set_ylabel("exact CycleAcc (test, mean ± sd)")
    ax.set_ylim(0.3, 1.0)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, framealpha=0.9)
    fig.tight_layout()
    return save_png(fig, path)


def plot_oe(rows: Sequence[Mapping[str, Any]], path: str | Path, *, title: str) -> Path:
    """Two panels: validation metric and exact test CycleAcc per protocol (mean ± sd)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    names = [r["protocol"] for r in rows]
    for ax, value, label in ((axes[0], "val_value", "validation (AUROC or CycleAcc)"),
                             (axes[1], "test_cycle_acc", "exact test CycleAcc (unmarked)")):
        means, sds = zip(*(_cell(r, value) for r in rows), strict=True)
        ax.barh(range(len(rows)), means, xerr=sds, color="#4c72b0", ecolor="#333333", capsize=2)
        ax.axvline(0.5, color="#c44e52", linestyle="--", linewidth=1)
        ax.set_yticks(range(len(rows)), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel(label, fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)


def plot_transfer(families: Sequence[str], matrix: Sequence[Sequence[float | None]],
                  points: Sequence[tuple[float, float]], path: str | Path, *, title: str) -> Path:
    """Heatmap of mean transfer CycleAcc (train family i → test family j) and alignment-vs-transfer scatter."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), gridspec_kw={"width_ratios": [1.3, 1]})
    grid = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    image = axes[0].imshow(grid, vmin=0.0, vmax=1.0, cmap="RdBu_r")
    for i in range(len(families)):
        for j in range(len(families)):
            if not np.isnan(grid[i, j]):
                axes[0].text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=7)
    axes[0].set_xticks(range(len(families)), families, rotation=60, ha="right", fontsize=7)
    axes[0].set_yticks(range(len(families)), families, fontsize=7)
    axes[0].set_xlabel("test family j")
    axes[0].set_ylabel("train family i")
    fig.colorbar(image, ax=axes[0], fraction=0.046, label="exact CycleAcc (test)")
    if points:
        xs, ys = zip(*points, strict=True)
        axes[1].scatter(xs, ys, s=12, color="#4c72b0")
    axes[1].axhline(0.5, color="#c44e52", linestyle="--", linewidth=1)
    axes[1].set_xlabel("cycle-difference alignment (val cycles)")
    axes[1].set_ylabel("transfer CycleAcc (test cycles)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)
