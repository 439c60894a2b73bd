"""The report's plots (matplotlib, Agg), each returned as an embedded PNG figure, or None without its data.

Quantities are read from the audit outputs, never recomputed here: Acc = D-CC + C-U and Dep (VCA §3), the
permutation calibration D-CC vs D-CC_perm with Δ_DCC^perm (VCA §18), G_img = r_o − max r_c per item (VCA §3),
exact CycleAcc with its bootstrap CI (cycle paper §2.1), the probe rank sweep and the factorial's
responsiveness (VCA §10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from vlaudit.figures import pyplot
from vlaudit.report.html_page import Safe, figure, interval, is_number

if TYPE_CHECKING:
    from vlaudit.report.html_data import VcaRun

PALETTE = {"dcc": "#3b8a5a", "cu": "#e3a13b", "dep": "#1d232b", "perm": "#8fb3d9", "chance": "#b3261e"}
SERIES = ("#2f5d8a", "#e3a13b", "#3b8a5a", "#9b5fb4", "#c2523c", "#5aa6a6", "#7a7a7a", "#b58b2a", "#d17fb0",
          "#4b4b8f", "#8c564b", "#17becf")


def _plt() -> Any:
    plt = pyplot()
    plt.rcParams.update({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
                         "axes.grid": True, "grid.color": "#e6e8eb", "grid.linewidth": 0.7,
                         "axes.axisbelow": True, "axes.edgecolor": "#9aa3ad", "legend.frameon": False})
    return plt


def _err(values: Sequence[float], cis: Sequence[Any]) -> list[list[float]]:
    lo, hi = [], []
    for value, ci in zip(values, cis, strict=True):
        bounds = interval(ci)
        lo.append(max(0.0, value - bounds[0]) if bounds else 0.0)
        hi.append(max(0.0, bounds[1] - value) if bounds else 0.0)
    return [lo, hi]


def _percent(ci: Any) -> tuple[float, float] | None:
    bounds = interval(ci)
    return None if bounds is None else (100.0 * bounds[0], 100.0 * bounds[1])


def _run_bars_frame(fig: Any, ax: Any, labels: Sequence[str], *, x_max: float, legend_columns: int) -> None:
    """The frame of a horizontal bar chart of runs: one run a row, the first on top, the x axis % of items
    from 0 to ``x_max``, the legend below the axes."""
    ax.set_yticks(list(range(len(labels))), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, x_max)
    ax.set_xlabel("% of items")
    fig.legend(loc="outside lower center", ncol=legend_columns, fontsize=8)


def decomposition(runs: Sequence[VcaRun]) -> Safe | None:
    """Stacked horizontal bars: D-CC + C-U = Acc per run, Acc's CI at the bar end, Dep as a tick."""
    runs = [r for r in runs if is_number(r.dcc) and is_number(r.cu)]
    if not runs:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9.5, 0.42 * len(runs) + 1.6), layout="constrained")
    y = list(range(len(runs)))
    # percent of items, the unit of every table in the report
    dcc = [100.0 * float(r.dcc or 0.0) for r in runs]
    cu = [100.0 * float(r.cu or 0.0) for r in runs]
    acc = [d + c for d, c in zip(dcc, cu, strict=True)]
    ax.barh(y, dcc, color=PALETTE["dcc"], height=0.62, label="D-CC (correct, image credited)")
    ax.barh(y, cu, left=dcc, color=PALETTE["cu"], height=0.62, label="C-U (correct, uncredited)")
    ax.errorbar(acc, y, xerr=_err(acc, [_percent(r.interval("acc")) for r in runs]), fmt="none",
                ecolor="#333", capsize=3, linewidth=1, label="Acc 95% CI")
    deps = [(i, 100.0 * float(r.dep)) for i, r in enumerate(runs) if r.dep is not None and is_number(r.dep)]
    if deps:
        ax.scatter([d for _, d in deps], [i for i, _ in deps], marker="|", s=260, color=PALETTE["dep"],
                   zorder=4, label="Dep (image credited, any answer)")
    _run_bars_frame(fig, ax, [r.label for r in runs], x_max=100, legend_columns=4)
    return figure(fig, "Accuracy split into credited (D-CC) and uncredited (C-U) correct answers; the bar's end is "
                  "Acc, with its bootstrap interval. Dep counts credited items whether right or wrong.",
                  alt="Acc = D-CC + C-U per run")


def permutation(runs: Sequence[VcaRun]) -> Safe | None:
    """D-CC under the headline controls against D-CC_perm (a mismatched image as a control), Δ with CI."""
    shown = [(r.label, 100.0 * r.dcc, r.perm) for r in runs
             if r.perm is not None and r.perm.dcc_perm is not None and r.dcc is not None]
    if not shown:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9.5, 0.55 * len(shown) + 1.5), layout="constrained")
    y = list(range(len(shown)))
    ax.barh([i - 0.18 for i in y], [dcc for _, dcc, _ in shown], height=0.34, color=PALETTE["dcc"],
            label="D-CC (controls: text, blank)")
    ax.barh([i + 0.18 for i in y], [100.0 * (perm.dcc_perm or 0.0) for _, _, perm in shown], height=0.34,
            color=PALETTE["perm"], label="D-CC_perm (a mismatched image also a control)")
    for i, (_, dcc, perm) in enumerate(shown):
        delta, ci = perm.delta_dcc, perm.ci_delta_dcc
        if perm.dcc_perm is not None and delta is not None and is_number(delta):
            text = f"Δ = {100 * delta:+.1f}" + (f"  [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]" if ci else "")
            ax.text(max(dcc, 100.0 * perm.dcc_perm) + 1.0, i, text, va="center", fontsize=8)
    _run_bars_frame(fig, ax, [label for label, _, _ in shown], x_max=125, legend_columns=2)
    return figure(fig, "Permutation calibration: credit that survives when a mismatched image is one more control. "
                  "A large Δ means the credit was earned by any image, not by this one.",
                  alt="permutation calibration")


#: one compared pair: (panel title, [(row label, A − B, its interval, survives Holm)])
PairPanel = tuple[str, Sequence[tuple[str, float, Any, bool | None]]]


def paired_differences(panels: Sequence[PairPanel], *, unit: str) -> Safe | None:
    """One panel per compared pair: A − B per metric with its paired interval; a filled marker where the
    Holm-adjusted test survives, the dashed line at 0 (no difference)."""
    panels = [(title, [r for r in rows if is_number(r[1])]) for title, rows in panels]
    panels = [(title, rows) for title, rows in panels if rows]
    if not panels:
        return None
    plt = _plt()
    cols = min(2, len(panels))
    lines = -(-len(panels) // cols)
    tallest = max(len(rows) for _, rows in panels)
    fig, axes = plt.subplots(lines, cols, figsize=(5.6 * cols, (0.32 * tallest + 1.3) * lines), squeeze=False,
                             layout="constrained")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    for ax, (title, rows) in zip(axes.flat, panels, strict=False):
        y = list(range(len(rows)))
        values = [float(r[1]) for r in rows]
        ax.errorbar(values, y, xerr=_err(values, [r[2] for r in rows]), fmt="none", ecolor="#444",
                    capsize=3, linewidth=1)
        for i, (_, value, _, survives) in enumerate(rows):
            ax.scatter([value], [i], s=36, zorder=3, color=SERIES[0],
                       facecolors=SERIES[0] if survives else "white", linewidths=1.4)
        ax.axvline(0, color="#333", linestyle="--", linewidth=0.8)
        ax.set_yticks(y, [r[0] for r in rows], fontsize=8)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=8.5)
        ax.set_xlabel(f"A − B ({unit})")
    return figure(fig, "Paired differences A − B with their bootstrap intervals on the shared items; a filled "
                  "marker: the Holm-adjusted test survives; an open one: it does not.", alt="paired differences")


def gap_histograms(groups: Sequence[tuple[str, Sequence[float]]]) -> Safe | None:
    """G_img per item, one panel per run; bars right of 0 are credited (Dep)."""
    arrays = [(name, np.asarray(values, dtype=float)) for name, values in groups if len(values)]
    if not arrays:
        return None
    plt = _plt()
    cols = min(3, len(arrays))
    rows = -(-len(arrays) // cols)
    height = 2.5 * rows + 0.7
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols + 0.6, height), squeeze=False)
    for ax, (name, gap) in zip(axes.flat, arrays, strict=False):
        gap = gap[np.isfinite(gap)]
        edges = np.histogram_bin_edges(gap, bins=min(30, max(8, gap.size // 3))) if gap.size else [0, 1]
        ax.hist(gap[gap <= 0], bins=edges, color=PALETTE["cu"], label="G_img ≤ 0")
        ax.hist(gap[gap > 0], bins=edges, color=PALETTE["dcc"], label="G_img > 0 (Dep)")
        ax.axvline(0, color="#333", linewidth=0.8)
        share = float((gap > 0).mean()) if gap.size else float("nan")
        ax.set_title(f"{name}\nDep = {share:.1%} of {gap.size}", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(arrays):]:
        ax.axis("off")
    # the legend sits below the panels: inside one it covered the bars at 0, where C-U items pile up
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7)
    fig.tight_layout(rect=(0, 0.3 / height, 1, 1))
    return figure(fig, "G_img = r_o − max(r_text, r_blank) per item (VCA §3): how much the real image moves the "
                  "margin toward the prediction beyond the no-image controls.", alt="G_img histograms")


def cycle_families(cells: Sequence[Mapping[str, Any]], scorers: Sequence[str]) -> Safe | None:
    """CycleAcc per family (rows) and scorer (colours), one panel per encoder, with CIs and the ½ line."""
    cells = [c for c in cells if is_number(c.get("cycle_acc"))]
    if not cells:
        return None
    plt = _plt()
    encoders = list(dict.fromkeys(c["encoder"] for c in cells))
    rows = list(dict.fromkeys((c["family"], c["split"]) for c in cells))
    multi_split = len({s for _, s in rows}) > 1
    height = 0.8 / max(1, len(scorers))
    fig, axes = plt.subplots(1, len(encoders), figsize=(4.6 * len(encoders) + 2.6,
                                                         0.17 * len(rows) * max(1, len(scorers)) + 1.4),
                             squeeze=False, sharey=True)
    index = {(c["encoder"], c["scorer"], c["family"], c["split"]): c for c in cells}
    for ax, encoder in zip(axes[0], encoders, strict=True):
        for k, scorer in enumerate(scorers):
            found = [(i, index[(encoder, scorer, f, s)]) for i, (f, s) in enumerate(rows)
                     if (encoder, scorer, f, s) in index]
            if not found:
                continue
            values = [float(c["cycle_acc"]) for _, c in found]
            ax.barh([i - 0.4 + height * (k + 0.5) for i, _ in found], values, height=height * 0.9,
                    xerr=_err(values, [c.get("ci") for _, c in found]), color=SERIES[k % len(SERIES)],
                    ecolor="#444", capsize=1.5, error_kw={"linewidth": 0.7}, label=scorer)
        ax.axvline(0.5, color=PALETTE["chance"], linestyle="--", linewidth=1)
        ax.set_xlim(0, 1)
        ax.set_title(encoder, fontsize=9)
        ax.set_xlabel("exact CycleAcc")
    labels = [f"{f} · {s}" if multi_split else f for f, s in rows]
    axes[0][0].set_yticks(range(len(rows)), labels, fontsize=8)
    axes[0][0].invert_yaxis()
    axes[0][-1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    fig.tight_layout()
    return figure(fig, "Exact CycleAcc per family with 95% bootstrap intervals over cycles; the dashed line is ½, "
                  "where every additive (image-only + text-only) scorer lies exactly (Proposition 1).",
                  alt="CycleAcc per family")


def rank_sweep(rows: Sequence[Mapping[str, Any]]) -> Safe | None:
    """CycleAcc against probe rank, one line per family, one panel per model."""
    if not rows:
        return None
    plt = _plt()
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(1, len(models), figsize=(4.8 * len(models) + 2.4, 3.4), squeeze=False, sharey=True)
    for ax, model in zip(axes[0], models, strict=True):
        families = list(dict.fromkeys(r["family"] for r in rows if r["model"] == model))
        for k, family in enumerate(families):
            pts = sorted((r["rank"], r["cycle_acc"], r.get("ci")) for r in rows
                         if r["model"] == model and r["family"] == family)
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            ax.plot(xs, ys, marker="os^D"[k // len(SERIES) % 4], markersize=3.5, color=SERIES[k % len(SERIES)],
                    label=family)
            bounds = [b for p in pts if (b := interval(p[2])) is not None]
            if len(bounds) == len(pts):
                ax.fill_between(xs, [b[0] for b in bounds], [b[1] for b in bounds], color=SERIES[k % len(SERIES)],
                                alpha=0.12, linewidth=0)
        ax.axhline(0.5, color=PALETTE["chance"], linestyle="--", linewidth=1)
        ax.set_xscale("log", base=2)
        ranks = sorted({r["rank"] for r in rows if r["model"] == model})
        ax.set_xticks(ranks, [str(r) for r in ranks])
        ax.minorticks_off()
        ax.set_ylim(0, 1)
        ax.set_title(model, fontsize=9)
        ax.set_xlabel("probe rank")
    axes[0][0].set_ylabel("exact CycleAcc (test)")
    axes[0][-1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    fig.tight_layout()
    return figure(fig, "Rank sweep: CycleAcc of the cycle-loss probe by rank. A relation absent from the frozen "
                  "features stays at ½ at every rank.", alt="rank sweep")


FACTORIAL_BARS = (("cu_rate", "C-U among correct"), ("responsive_rate", "responsive among C-U"),
                  ("responsive_rate_all_correct", "responsive among correct"))


def factorial(models: Sequence[Mapping[str, Any]]) -> Safe | None:
    """Per model: C-U rate and relation-reversal responsiveness (Wilson CIs); Δ_V per text state when present."""
    models = [m for m in models if any(is_number(m.get(k)) for k, _ in FACTORIAL_BARS)]
    if not models:
        return None
    plt = _plt()
    with_effects = [m for m in models if isinstance(m.get("effects"), Mapping)]
    ncols = 2 if with_effects else 1
    fig, axes = plt.subplots(1, ncols, figsize=(5.2 * ncols + 1.5, 0.5 * len(models) + 2.4), squeeze=False,
                             layout="constrained")
    ax = axes[0][0]
    width = 0.8 / len(FACTORIAL_BARS)
    for k, (key, label) in enumerate(FACTORIAL_BARS):
        pts = [(i, 100.0 * float(m[key]), _percent(m.get(f"{key}_ci"))) for i, m in enumerate(models)
               if is_number(m.get(key))]
        if pts:
            ax.barh([i - 0.4 + width * (k + 0.5) for i, _, _ in pts], [v for _, v, _ in pts], height=width * 0.9,
                    xerr=_err([v for _, v, _ in pts], [c for _, _, c in pts]), color=SERIES[k], ecolor="#444",
                    capsize=2, error_kw={"linewidth": 0.7}, label=label)
    ax.set_yticks(range(len(models)), [str(m.get("model")) for m in models])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% (Wilson 95% CI)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3)
    if with_effects:
        ax = axes[0][1]
        keys = [k for k in ("delta_v_pos", "delta_v_neg", "delta_v_none") if k in with_effects[0]["effects"]]
        for k, key in enumerate(keys):
            vals = [(i, m["effects"][key]) for i, m in enumerate(with_effects) if key in m["effects"]]
            means = [float(v["mean"]) for _, v in vals]
            ax.barh([i - 0.4 + (0.8 / len(keys)) * (k + 0.5) for i, _ in vals], means, height=0.8 / len(keys) * 0.9,
                    xerr=_err(means, [v.get("ci") for _, v in vals]), color=SERIES[k + 3], ecolor="#444",
                    capsize=2, error_kw={"linewidth": 0.7}, label=key.replace("delta_v_", "Δ_V, text "))
        ax.axvline(0, color="#333", linewidth=0.8)
        ax.set_yticks(range(len(with_effects)), [str(m.get("model")) for m in with_effects])
        ax.invert_yaxis()
        ax.set_xlabel("mean margin change from reversing the image relation")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3)
    return figure(fig, "Evidence-source factorial (VCA §10): does reversing the relation in the image move the "
                  "answer? A grounded model is responsive; a text-prior model is not.", alt="factorial")
