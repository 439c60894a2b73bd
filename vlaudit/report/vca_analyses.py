"""Files, printed tables and plots of ``vlaudit vca validity|filter|proxies`` (VCA §15, §16, §18).

Every command writes one JSON with everything (``validity.json``, ``filter.json``, ``proxies.json``), one CSV per
table (rows as in the JSON; ``*_lo``/``*_hi`` are percentile bounds; rates, AUROC and AUPRC are fractions) and
one PNG. Printed tables show percentages as the paper does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vlaudit.figures import pyplot, save_png
from vlaudit.files import write_result, write_table
from vlaudit.results.cells import csv_rows
from vlaudit.results.console import ConsolePart, ConsoleTable, ConsoleText, ConsoleView
from vlaudit.results.missing import Missing, shown
from vlaudit.results.vca.outputs import VcaFilterResult, VcaProxiesResult, VcaValidityResult
from vlaudit.results.versioned import VersionedResult
from vlaudit.stats.clusters import GROUP_UNIT, cluster_phrase

#: the typed result each analysis writes as ``<name>.json``
RESULT_TYPES: dict[str, type[VersionedResult]] = {"validity": VcaValidityResult, "filter": VcaFilterResult,
                                                  "proxies": VcaProxiesResult}


def write_tables(out: Path, name: str, result: VersionedResult, tables: Mapping[str, Sequence[object]]) -> list[Path]:
    """``out/<name>.json`` (the typed result: :data:`RESULT_TYPES`) and ``out/<table>.csv`` for every non-empty
    table."""
    paths = [write_result(out / f"{name}.json", result)]
    for table, rows in tables.items():
        if rows:
            paths.append(write_table(out / f"{table}.csv", csv_rows(rows)))
    return paths


def pct(value: Any) -> float | Missing | None:
    """A fraction in percent; a :class:`Missing` value as itself (the table prints its reason)."""
    return value if value is None or isinstance(value, Missing) else 100.0 * float(value)


def _get(row: object, key: str) -> Any:
    return row.get(key) if isinstance(row, Mapping) else getattr(row, key, None)


def pct_ci(row: object, key: str, signed: bool = False) -> str:
    """``value [lo, hi]`` in percent of the field ``key`` and its ``key_lo``/``key_hi``; the reason where the
    value is missing, the value alone where its interval is."""
    value = _get(row, key)
    if value is None or isinstance(value, Missing) or value != value:
        return shown(value)
    fmt = "{:+.2f}" if signed else "{:.2f}"
    text = fmt.format(100 * value)
    lo, hi = _get(row, f"{key}_lo"), _get(row, f"{key}_hi")
    if not isinstance(lo, float | int) or not isinstance(hi, float | int) or lo != lo:
        return text
    return f"{text} [{fmt.format(100 * lo)}, {fmt.format(100 * hi)}]"


def clusters_cell(row: object) -> str:
    """``"48 relation group"``: the number and unit of the clusters a row's intervals resample (the reason
    where an older file did not record them)."""
    n_clusters = _get(row, "n_clusters")
    if not isinstance(n_clusters, int):
        return shown(n_clusters)
    return f"{n_clusters} {_get(row, 'unit') or 'cluster'}"


def _range(values: Sequence[float] | Missing | None) -> str:
    if values is None or isinstance(values, Missing):
        return shown(values)
    return f"{100 * values[0]:.2f}–{100 * values[1]:.2f}%"


def validity_view(result: VcaValidityResult) -> ConsoleView:
    """The §15 tables in the paper's layout (percentages)."""
    parts: list[ConsolePart] = []
    add = parts.append
    add(ConsoleTable("Standalone predictive validity of the raw VCA gap (%; 95% cluster-bootstrap CI over the "
                     "clusters named)", ["check", "model", "N", "clusters", "base rate", "AUROC", "AUPRC", "H–L"],
                     [[r.check, r.model, r.n, clusters_cell(r), pct(r.base_rate), pct_ci(r, "auroc"),
                       pct_ci(r, "auprc"), pct_ci(r, "hl", signed=True)] for r in result.standalone], digits=2))
    d = result.discordance
    add(ConsoleTable(f"Confidence–VCA discordance ({d.n} records; %)",
                     ["source quadrant", "N", "share", "acc", "swap N", "flip+vis", "strict"],
                     [[r.quadrant, r.n, pct(r.share), pct(r.acc), r.swap_n, pct(r.flip_vis), pct(r.strict)]
                      for r in d.rows], digits=2))
    lo, hi = d.high_conf_uncredited_range
    add(ConsoleText(f"strata (confidence ≥ median within run): high n = {d.n_high}, low n = {d.n_low}"))
    add(ConsoleText(f"high-confidence uncredited share per (model, dataset): {100 * lo:.2f}–{100 * hi:.2f}%"))
    add(ConsoleTable("Direct shared-margin control (macro AUROC within model, %; CI over the clusters named)",
                     ["dataset", "target", "model", "N", "clusters", "true m.", "gap", "cond. gap", "CV Δ [95% CI]"],
                     [[r.dataset, r.target, r.model, r.n, clusters_cell(r), pct(r.true_margin_auroc), pct(r.gap_auroc),
                       pct(r.conditional_gap_auroc), pct_ci(r, "cv_delta", signed=True)]
                      for r in result.shared_margin], digits=2))
    if result.incremental:
        add(ConsoleTable("Edit-grouped incremental control (leave-one-edit-out AUROC, %)",
                         ["analysis", "target", "edits/records", "baseline", "+added", "Δ [95% CI]"],
                         [[r.analysis, r.target, f"{r.edits}/{r.records}", pct(r.baseline),
                           pct(r.augmented), pct_ci(r, "delta", signed=True)] for r in result.incremental],
                         digits=2))
        add(ConsoleText("+added: the baseline plus the within-model G_img rank; on the Pair D within Rel_o row, "
                        "plus the Pair D indicator instead (VCA §15)"))
        for r in result.incremental:
            if isinstance(r.delta, Missing):
                add(ConsoleText(f"{r.analysis}: not computable ({r.delta.reason})"))
    return ConsoleView(tuple(parts))


def write_validity(out: Path, result: VcaValidityResult, *, plot: bool = True) -> list[Path]:
    paths = write_tables(out, "validity", result, {
        "standalone": result.standalone, "discordance": result.discordance.rows,
        "discordance_runs": result.discordance.per_run, "shared_margin": result.shared_margin,
        "incremental": result.incremental})
    if plot and result.standalone:
        paths.append(interval_plot(out / "validity.png", result.standalone, "auroc", "check",
                                   "Raw VCA gap: AUROC per model (95% CI)"))
    return paths


def interval_plot(path: Path, rows: Sequence[object], key: str, panel: str, title: str,
                  label: str = "model") -> Path:
    """One horizontal point-and-interval panel per value of ``panel``; a dashed line at chance (½). Rows
    whose ``key`` is missing are left out (their reason is in the table)."""
    plt = pyplot()

    panels = list(dict.fromkeys(str(_get(r, panel)) for r in rows))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 0.45 * max(
        sum(str(_get(r, panel)) == p for r in rows) for p in panels) + 1.4), squeeze=False)
    for ax, name in zip(axes[0], panels, strict=True):
        sub = [r for r in rows if str(_get(r, panel)) == name and isinstance(_get(r, key), float | int)]
        for y, r in enumerate(sub):
            lo, hi = _get(r, f"{key}_lo"), _get(r, f"{key}_hi")
            ax.plot([_get(r, key)], [y], "o", color="C0")
            if isinstance(lo, float | int) and isinstance(hi, float | int) and lo == lo:
                ax.plot([lo, hi], [y, y], "-", color="C0")
        ax.set_yticks(range(len(sub)), [str(_get(r, label)) for r in sub], fontsize=8)
        ax.axvline(0.5 if key in ("auroc",) else 0.0, color="grey", linestyle="--", linewidth=0.8)
        ax.set_title(name, fontsize=9)
        ax.invert_yaxis()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)


def filter_view(result: VcaFilterResult) -> ConsoleView:
    """The §16 table (macro leave-one-model-out), Jaccard overlaps and bootstrap differences (percent)."""
    parts: list[ConsolePart] = []
    add = parts.append
    for res in result.datasets:
        add(ConsoleTable(f"Held-out filtering — {res.dataset} ({len(res.models)} models, {res.groups} groups; "
                         "macro over held-out models, %)", ["keep", "filter", "Acc", "Blind gap", "Visual gain", "Dep"],
                         [[f"{r.coverage:g}%", r.panel, pct(r.acc), pct(r.blind_gap), pct(r.visual_gain), pct(r.dep)]
                          for r in res.rows], digits=2))
        add(ConsoleTable("Jaccard overlap of kept groups with the VCA panel (macro, %)", ["keep", "panel", "Jaccard"],
                         [[f"{r.coverage:g}%", r.panel, pct(r.jaccard_with_vca)] for r in res.jaccard], digits=2))
        add(ConsoleTable(f"Relation-group bootstrap differences at the primary coverage (points, 95% CI over "
                         f"{cluster_phrase(res.groups, GROUP_UNIT)})",
                         ["contrast", "Acc", "Blind gap", "Visual gain"],
                         [[r.contrast, pct_ci(r, "acc", True), pct_ci(r, "blind_gap", True),
                           pct_ci(r, "visual_gain", True)] for r in res.bootstrap], digits=2))
    return ConsoleView(tuple(parts))


def write_filter(out: Path, result: VcaFilterResult, *, plot: bool = True) -> list[Path]:
    def tagged(key: str) -> list[dict[str, Any]]:
        return [row for res in result.datasets for row in csv_rows(getattr(res, key), dataset=res.dataset)]

    paths = write_tables(out, "filter", result, {
        "filter": tagged("rows"), "filter_held_out": tagged("per_held_out"), "filter_jaccard": tagged("jaccard"),
        "filter_bootstrap": tagged("bootstrap"), "filter_selections": tagged("selections")})
    if plot:
        paths.append(_coverage_plot(out / "filter.png", result))
    return paths


def _coverage_plot(path: Path, result: VcaFilterResult) -> Path:
    """Visual Gain and Acc against coverage, one line per panel (macro over held-out models)."""
    plt = pyplot()

    datasets = result.datasets
    fig, axes = plt.subplots(len(datasets), 2, figsize=(9, 3.2 * len(datasets)), squeeze=False)
    for row_axes, res in zip(axes, datasets, strict=True):
        panels = [p for p in dict.fromkeys(r.panel for r in res.rows) if p != "Full benchmark"]
        for ax, metric in zip(row_axes, ("visual_gain", "acc"), strict=True):
            for panel in panels:
                pts = sorted((r.coverage, getattr(r, metric)) for r in res.rows if r.panel == panel)
                ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], "o-", label=panel)
            full = [r for r in res.rows if r.panel == "Full benchmark"][0]
            ax.axhline(100 * getattr(full, metric), color="grey", linestyle="--", linewidth=0.8)
            ax.set_xlabel("coverage (%)")
            ax.set_title(f"{res.dataset}: {metric.replace('_', ' ')} (%)", fontsize=9)
        row_axes[0].legend(fontsize=7)
    fig.tight_layout()
    return save_png(fig, path)


def proxies_view(result: VcaProxiesResult) -> ConsoleView:
    """The §18 tables (percentages)."""
    parts: list[ConsolePart] = []
    add = parts.append
    checks = list(dict.fromkeys(r.check for r in result.proxies if r.check != "unavailable"))
    by = {(r.signal, r.check): r for r in result.proxies}
    signals = list(dict.fromkeys(r.signal for r in result.proxies))

    def cell(signal: str, check: str, metric: str) -> object:
        row = by.get((signal, check)) or by.get((signal, "unavailable"))
        return None if row is None else pct(getattr(row, metric))

    add(ConsoleTable("Cached-context proxies: macro-within-model AUROC / AUPRC (%)",
                     ["signal", *[f"{c} {m}" for c in checks for m in ("AUROC", "AUPRC")]],
                     [[s, *[cell(s, c, m) for c in checks for m in ("auroc", "auprc")]] for s in signals], digits=2))
    add(ConsoleTable("Per run: Perceptual Score = acc(o) − acc(perm); Visual Dependence = (acc_o − mean(acc_t, acc_b))"
                     " / acc_o (%)", ["model", "dataset", "N", "Acc", "Perceptual", "VD"],
                     [[r.model, r.dataset, r.n, pct(r.acc), pct(r.perceptual_score), pct(r.visual_dependence)]
                      for r in result.aggregates], digits=2))
    if result.model_rankings:
        add(ConsoleTable("Cross-model ranking: Spearman ρ of each per-run proxy with D-CC, per dataset",
                         ["dataset", "proxy", "models", "ρ"],
                         [[r.dataset, r.proxy, len(r.models), r.rho] for r in result.model_rankings], digits=3))
    agg = result.aggregation
    ext = list(dict.fromkeys(a.check for r in agg for a in r.aurocs))
    add(ConsoleTable("Control aggregation against the headline gap (%; ρ mean over runs)",
                     ["signal", "mean agr.", "min agr.", "ρ", *ext],
                     [[r.variant, pct(r.mean_agreement), pct(r.min_agreement), r.spearman,
                       *[pct(next((a.auroc for a in r.aurocs if a.check == check), None)) for check in ext]]
                      for r in agg], digits=2))
    cs = result.control_sets
    if cs.sets:
        add(ConsoleTable(f"Micro-pooled control-set stability over {cs.n} records (%)",
                         ["control set", "credit", "C-U", "agr.", "C-U Jacc."],
                         [[r.control_set, pct(r.credit), pct(r.cu), pct(r.agreement), pct(r.cu_jaccard)]
                          for r in cs.sets], digits=2))
        add(ConsoleText(f"stable across all sets: {cs.stable_n}/{cs.n} ({shown(pct(cs.stable), '{:.2f}')}%); C-U "
                        f"intersection {cs.cu_intersection}, union {cs.cu_union}; headline C-U in the intersection: "
                        f"{shown(pct(cs.headline_cu_retained), '{:.2f}%')}; per-run stable "
                        f"{_range(cs.stable_range)}, C-U retention {_range(cs.cu_retention_range)}"))
    else:
        add(ConsoleText(f"control-set stability: {shown(cs.stable)}"))
    if cs.unavailable_sets:
        add(ConsoleText(f"control sets without their contexts: {', '.join(cs.unavailable_sets)}"))
    if result.families:
        add(ConsoleTable("Per relation family (Table 19 layout; % except N and mean gap)",
                         ["model", "dataset", "family", "N", "Acc", "Dep", "D-CC", "C-U", "strict", "mean gap"],
                         [[r.model, r.dataset, r.family, r.n, pct(r.acc), pct(r.dep), pct(r.dcc), pct(r.cu),
                           pct(r.strict), r.mean_gap] for r in result.families], digits=2))
    return ConsoleView(tuple(parts))


def write_proxies(out: Path, result: VcaProxiesResult, *, plot: bool = True) -> list[Path]:
    cs = result.control_sets
    aggregation = [{"variant": r.variant, "runs": r.runs, "mean_agreement": r.mean_agreement,
                    "min_agreement": r.min_agreement, "spearman": r.spearman}
                   | {f"{a.check}_auroc": a.auroc for a in r.aurocs} for r in result.aggregation]
    paths = write_tables(out, "proxies", result, {
        "proxies": result.proxies, "proxy_aggregates": result.aggregates, "control_aggregation": aggregation,
        "control_sets": cs.sets, "control_sets_runs": cs.per_run, "families": result.families,
        "proxy_model_rankings": [{"dataset": r.dataset, "proxy": r.proxy, "against": r.against,
                                  "models": ";".join(r.models), "rho": r.rho} for r in result.model_rankings]})
    rows = [r for r in result.proxies if isinstance(r.auroc, float)]
    if plot and rows:
        paths.append(interval_plot(out / "proxies.png", rows, "auroc", "check",
                                   "Cached-context proxies: macro AUROC (95% CI)", label="signal"))
    return paths
