"""The VCA report as files: flat CSV tables and a gap plot (VCA §12, §13, §18; the console: vca_console).

Every CSV row starts with ``model, dataset, interface`` (cross-interface rows: ``model, dataset``), a table with
bootstrap intervals then with their resampling ``unit`` and ``n_clusters``; rates are fractions in [0, 1];
``*_lo``/``*_hi`` are the bootstrap bounds (expanded percentile; the Wilson bounds where the column says so).
Numeric columns stay numeric: a value that is not computable is an empty cell, its reason in the text column
``<column>_missing`` beside it (``noise_missing`` for the noise floor's columns of ``headline.csv``;
:func:`vlaudit.results.cells.numeric_csv_rows`). Files written by :func:`write_report_files`:

=============================  ============================================================================
file                           rows
=============================  ============================================================================
vca.json                       ``{"runs": [...], "interfaces": [...], "macro": [...], "settings": {...},
                               "warnings": [...]}``
headline.csv                   one per run: n, n_excluded, acc, dep, dcc, cu, wrong_dep, strict with CIs, strict_ties,
                               records_asked, records_scored, scoring_coverage (lowest cell), below_min_coverage
coverage.csv                   per run and quantity (headline, relation groups, each optional context): n,
                               n_excluded and the missing contexts — every quantity uses the items it can
taxonomy.csv                   four cells (sum to 1) and credited precision (bootstrap and Wilson CIs)
stratified.csv                 by prediction / gold stratum: n, acc, dep, dcc, cu, strict
balanced.csv                   prediction- and gold-balanced acc, dcc, cu
survival.csv                   decision survival among credited items
gaps.csv                       raw-gap distribution (mean, quantiles, near-zero mass)
permutation.csv                runs with a mismatch context: n, D-CC and D-CC_perm on the mismatch items,
                               Δ_DCC^perm with CI, shares
sensitivity.csv                VCA Table 28: Dep, Strict T/B (headline items), Dep+M, Strict+M (mismatch items,
                               n_m) with CIs, headline Dep on the mismatch items, mean G_img
erasure.csv                    rele/irre views: n, decision survival, support drop r_o − r_c
erasure_geometry.csv           VCA Table 11 per run (the benchmark's items scored with rele/irre): RelE and
                               IrrE erased area, padded-union area (% of image), % IrrE views with zero
                               erased pixels inside the protected union, with n_rele / n_irre
stress.csv                     blur/patch-shuffle stress probes (never controls): the same columns
relation.csv                   runs with groups: Rel_c, PairCredit, PairD, Joint, mean H_c, mean G_int
robustness_controls.csv        alternate control sets against the headline, each on its own items (n)
robustness_aggregation.csv     control-aggregation variants against the headline
robustness_interfaces.csv      ensemble and pair-centred checks per (model, dataset)
macro.csv                      macro averages over models per (dataset, interface)
categories.csv                 runs with a category column: n, acc, dep, dcc, cu per category
items.csv, groups.csv          per-item and per-group events (see ``experiments.vca_report``)
gap_hist.png                   G_img histogram per run and D-CC/C-U bars
=============================  ============================================================================
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from vlaudit.figures import pyplot, save_png
from vlaudit.files import write_result, write_table
from vlaudit.results.cells import numeric_csv_rows
from vlaudit.results.missing import Missing
from vlaudit.results.vca.audit import RunAudit

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from vlaudit.analysis.vca.report import VcaReport

RUN_KEYS = ("model", "dataset", "interface")
HEADLINE_RATES = ("acc", "dep", "dcc", "cu", "wrong_dep", "strict")


def _head(run: RunAudit) -> dict[str, object]:
    return {"model": run.model, "dataset": run.dataset, "interface": run.interface}


def _interval_head(run: RunAudit) -> dict[str, object]:
    """The row head of a table with bootstrap intervals: the run, then the intervals' resampling unit and
    number of clusters (the run's one count matrix, :class:`~vlaudit.results.vca.audit.BootstrapPlan`)."""
    return _head(run) | {"unit": run.bootstrap.unit, "n_clusters": run.bootstrap.n_clusters}


def _with_ci(row: dict[str, object], name: str, ci: Sequence[float] | None) -> None:
    row[f"{name}_lo"], row[f"{name}_hi"] = (None, None) if ci is None else (ci[0], ci[1])


def headline_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    rows = []
    for run in runs:
        row = _interval_head(run) | {"n": run.n, "n_excluded": run.n_excluded}
        for k in HEADLINE_RATES:
            row[k] = run.rate_of(k)
            _with_ci(row, k, run.interval_of(k))
        # beside Strict: the items whose Strict a tie decides (none counted in files written before ties were)
        row["strict_ties"] = None if run.ties is None else run.ties.strict
        # the scoring run's records asked (applicable) and scored: empty when no summary.json recorded them
        scoring = run.scoring
        row["records_asked"] = None if scoring is None else scoring.asked - scoring.not_applicable
        row["records_scored"] = None if scoring is None else scoring.scored
        row["scoring_coverage"] = None if scoring is None else scoring.lowest
        row["below_min_coverage"] = run.below_coverage
        noise = run.noise
        if isinstance(noise, Missing):  # the noise columns are empty; one text column says why
            row |= dict.fromkeys(("noise_tau", "n_decision_in_noise", "n_credit_in_noise"))
            for k in ("acc", "dep", "dcc"):
                row[f"{k}_noise_lo"] = row[f"{k}_noise_hi"] = None
            row["noise_missing"] = noise.reason
        else:
            row |= {"noise_tau": noise.tau, "n_decision_in_noise": noise.n_decision,
                    "n_credit_in_noise": noise.n_credit}
            for k in ("acc", "dep", "dcc"):
                band = getattr(noise.band, k)
                if isinstance(band, Missing):
                    row[f"{k}_noise_lo"] = row[f"{k}_noise_hi"] = None
                    row[f"{k}_noise_missing"] = band.reason
                else:
                    _with_ci(row, f"{k}_noise", band)
        rows.append(row)
    return rows


def taxonomy_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    """Per run: the four correct/wrong × credited/uncredited counts and the credited precision with its
    bootstrap and Wilson intervals."""
    return [_taxonomy_row(run) for run in runs]


def _taxonomy_row(run: RunAudit) -> dict[str, object]:
    t = run.taxonomy
    row = _interval_head(run) | {"n": run.n, "correct_dep": t.correct_dep, "correct_nodep": t.correct_nodep,
                                 "wrong_dep": t.wrong_dep, "wrong_nodep": t.wrong_nodep,
                                 "credited_precision": t.credited_precision}
    _with_ci(row, "credited_precision", t.ci_credited_precision)
    _with_ci(row, "credited_precision_wilson", t.wilson_credited_precision)
    return row


def stratified_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    return [_head(run) | _fields(row) for run in runs for row in run.stratified]


def balanced_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    return [_head(run) | _fields(row) for run in runs for row in run.balanced]


def survival_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    """Per run: n_dep, ``<control>_same`` per control, both_same, any_changes (the Wilson intervals are in
    ``vca.json``)."""
    rows = []
    for run in runs:
        s = run.survival
        rows.append(_head(run) | {"n_dep": s.n_dep} | {f"{c.control}_same": c.same for c in s.controls}
                    | {"both_same": s.both_same, "any_changes": s.any_changes})
    return rows


def gap_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    """Per run: n, mean, min, max, ``qNN`` per quantile and ``near_zero_EPS`` per near-zero share of G_img."""
    return [_head(run) | {"n": run.n, "mean": run.gap.mean, "min": run.gap.min, "max": run.gap.max}
            | {f"q{int(round(q.q * 100)):02d}": q.value for q in run.gap.quantiles}
            | {f"near_zero_{z.eps:g}": z.share for z in run.gap.near_zero} for run in runs]


def permutation_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    rows = []
    for run in runs:
        p = run.perm
        if p is None:
            continue
        row = _interval_head(run) | {"n": p.n, "n_excluded": p.n_excluded, "dcc": p.dcc, "dep_perm": p.dep_perm,
                            "dcc_perm": p.dcc_perm, "delta_dcc": p.delta_dcc, "cu_perm": p.cu_perm,
                            "orig_only": p.orig_only, "perm_only": p.perm_only}
        _with_ci(row, "delta_dcc", p.ci_delta_dcc)
        rows.append(row)
    return rows


def sensitivity_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    """Table 28 columns: Dep, Strict T/B, Dep+M, Strict+M (with n_m), mean G_img."""
    return [_sensitivity_row(run) for run in runs]


def _sensitivity_row(run: RunAudit) -> dict[str, object]:
    s = run.sensitivity
    row = _interval_head(run) | {"n": s.n, "dep": s.dep, "strict": s.strict, "n_m": s.n_m,
                                 "n_m_excluded": s.n_m_excluded, "dep_m": s.dep_m, "strict_m": s.strict_m,
                                 "dep_on_m_items": s.dep_on_m_items, "gap_mean": s.gap_mean}
    for k, ci in (("dep", s.ci_dep), ("strict", s.ci_strict), ("dep_m", s.ci_dep_m), ("strict_m", s.ci_strict_m)):
        _with_ci(row, k, ci)
    return row


def coverage_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    return [_head(run) | _fields(entry) for run in runs for entry in run.coverage]


def _fields(record: object) -> dict[str, object]:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(typing.cast("DataclassInstance", record))}


def erasure_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    return [_head(run) | _fields(entry) for run in runs for entry in run.erasure]


def geometry_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    """Table 11 per run, the constants it rests on (vlaudit's) as their own columns."""
    rows = []
    for run in runs:
        if run.erasure_geometry is not None:
            row = _head(run) | _fields(run.erasure_geometry)
            constants = row.pop("constants")
            rows.append(row | ({} if constants is None else _fields(constants)))
    return rows


def stress_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    return [_head(run) | _fields(entry) for run in runs for entry in run.stress]


def relation_rows(runs: Sequence[RunAudit]) -> list[dict[str, object]]:
    """Per run with groups: groups, groups_excluded, ``rel_<c>`` per context, pair_credit, pair_d, joint,
    g_int_mean with its interval, ``h_<c>_mean`` per context and the gap's ranking of Rel_o (the columns of
    the earlier files)."""
    rows = []
    for run in runs:
        rel = run.relation
        if rel is None:
            continue
        row = _interval_head(run) | {"groups": rel.groups, "groups_excluded": rel.groups_excluded}
        row |= {f"rel_{c.short}": c.rel for c in rel.contexts}
        row |= {"pair_credit": rel.pair_credit, "pair_d": rel.pair_d, "joint": rel.joint,
                "g_int_mean": rel.g_int_mean}
        row |= {f"h_{c.short}_mean": c.h_mean for c in rel.contexts}
        _with_ci(row, "g_int_mean", rel.ci_g_int_mean)
        row |= {f"gap_ranks_rel_o_{k}": v for k, v in _fields(rel.gap_ranks_rel_o).items()}
        rows.append(row)
    return rows


def robustness_rows(runs: Sequence[RunAudit], part: str) -> list[dict[str, object]]:
    return [_head(run) | _fields(entry) for run in runs
            for entry in (run.robustness.control_sets if part == "control_sets" else run.robustness.aggregation)]


def write_report_files(out_dir: str | Path, report: VcaReport, *, plot: bool = True) -> list[Path]:
    """Write ``vca.json``, every CSV table, ``items.csv``, ``groups.csv`` and (optionally) the plot."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs = report.runs
    written = [write_result(out / "vca.json", report.result)]
    tables: dict[str, Sequence[object]] = {
        "headline.csv": headline_rows(runs), "coverage.csv": coverage_rows(runs),
        "sensitivity.csv": sensitivity_rows(runs), "erasure.csv": erasure_rows(runs),
        "stress.csv": stress_rows(runs), "erasure_geometry.csv": geometry_rows(runs),
        "taxonomy.csv": taxonomy_rows(runs),
        "stratified.csv": stratified_rows(runs), "balanced.csv": balanced_rows(runs),
        "survival.csv": survival_rows(runs), "gaps.csv": gap_rows(runs),
        "permutation.csv": permutation_rows(runs), "relation.csv": relation_rows(runs),
        "robustness_controls.csv": robustness_rows(runs, "control_sets"),
        "robustness_aggregation.csv": robustness_rows(runs, "aggregation"),
        "robustness_interfaces.csv": report.interfaces, "macro.csv": [_fields(m) for m in report.macro],
        "items.csv": report.items, "groups.csv": report.groups,
        "categories.csv": [_head(run) | _fields(row) for run in runs
                           for row in run.benchmark.categories or []],
    }
    empty_columns = {
        "items.csv": ["model", "dataset", "interface", "item_id", "group_id", "label", "pred", "correct", "g_img",
                      "dep", "dcc", "cu", "wrong_dep"],
        "groups.csv": ["model", "dataset", "interface", "group_id", "h_o", "h_t", "h_b", "g_int", "rel_o",
                       "pair_credit", "pair_d", "joint"],
    }
    for name, rows in tables.items():
        if rows:
            written.append(write_table(out / name, numeric_csv_rows(rows)))
        elif name in empty_columns:
            # a header-only file, so readers of items/groups never have to special-case a missing file
            written.append(write_table(out / name, pa.table({c: pa.array([], pa.string())
                                                             for c in empty_columns[name]})))
    if plot:
        written.append(plot_gaps(out / "gap_hist.png", report))
    return written


def plot_gaps(path: str | Path, report: VcaReport) -> Path:
    """G_img histogram per run (left) and stacked D-CC / C-U bars per run (right); Agg backend."""
    plt = pyplot()

    runs = report.runs
    labels = [f"{r.model}/{r.dataset}/{r.interface}" for r in runs]
    fig, (ax_hist, ax_bar) = plt.subplots(1, 2, figsize=(12, 4.5))
    gaps = [np.asarray(report.gaps[r.key], dtype=float) for r in runs]
    # one set of bin edges for every run, so the step outlines are comparable; densities, so runs of
    # different sizes share one scale
    edges = np.histogram_bin_edges(np.concatenate(gaps), bins=40)
    for label, gap in zip(labels, gaps, strict=True):
        ax_hist.hist(gap, bins=edges, histtype="step", density=True, label=label)
    ax_hist.axvline(0.0, color="black", linewidth=0.8)
    controls = "+".join(report.settings.controls)
    ax_hist.set_xlabel(f"G_img = r_o − max r_c over controls {controls} (Dep: G_img > 0)")
    ax_hist.set_ylabel("density of items")
    ax_hist.set_title("Raw image gap per run")
    ax_hist.legend(fontsize=7)
    x = np.arange(len(runs))
    dcc = np.array([r.dcc if r.dcc is not None else np.nan for r in runs], dtype=float)
    cu = np.array([r.cu if r.cu is not None else np.nan for r in runs], dtype=float)
    dep = np.array([r.dep if r.dep is not None else np.nan for r in runs], dtype=float)
    if np.isnan(dcc).all():
        ax_bar.bar(x, dep, color="tab:blue", label="Dep (no labels)")
    else:
        ax_bar.bar(x, dcc, color="tab:green", label="D-CC")
        ax_bar.bar(x, cu, bottom=dcc, color="tab:orange", label="C-U (bar top = Acc)")
        ax_bar.scatter(x, dep, marker="_", s=400, color="black", label="Dep", zorder=3)
    ax_bar.set_xticks(x, labels, rotation=30, ha="right", fontsize=7)
    ax_bar.set_ylim(0, 1.05)
    ax_bar.set_ylabel("fraction of items")
    ax_bar.set_title("Accuracy split into D-CC and C-U")
    ax_bar.legend(fontsize=7)
    fig.tight_layout()
    return save_png(fig, path)
