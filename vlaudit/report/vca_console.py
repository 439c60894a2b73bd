"""The VCA report at the console (80 columns): the headline per (model, dataset), the n of every quantity,
the noise floor, VCA Table 11, the Table 28 stricter definitions and the benchmarks' own figures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vlaudit.analysis.vca.axes import erasure_constants_line
from vlaudit.report import benchmark_tables as tables
from vlaudit.report.noise_lines import noise_lines
from vlaudit.results.console import (
    ConsoleHeadline,
    ConsolePart,
    ConsoleTable,
    ConsoleText,
    ConsoleView,
    HeadlineCell,
)
from vlaudit.results.vca.audit import RunAudit
from vlaudit.results.vca.run_sections import ErasureGeometry
from vlaudit.stats.clusters import cluster_phrase
from vlaudit.stats.formatting import degenerate

if TYPE_CHECKING:
    from vlaudit.analysis.vca.report import VcaReport


def _pct_cell(value: float | None, ci: Sequence[float] | None = None) -> HeadlineCell:
    """``12.3`` over a ``10.1–14.6`` CI line (percent); an em dash for a missing value, and for an interval
    that is missing or zero-width (an artefact of the bootstrap, :func:`degenerate`)."""
    if value is None or value != value:
        return HeadlineCell("—")
    if ci is not None and ci[0] is not None and not degenerate(ci):
        return HeadlineCell(f"{100 * value:.1f}", f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}")
    return HeadlineCell(f"{100 * value:.1f}", None if ci is None else "—")


def credit_sentence(run: RunAudit) -> str | None:
    """The headline in plain words: of the accuracy points, how many the image is credited with
    (D-CC, with its interval) and how many are answered without it (C-U = Acc − D-CC, VCA §12)."""
    acc, dcc, cu = run.rate_of("acc"), run.rate_of("dcc"), run.rate_of("cu")
    if acc is None or dcc is None or cu is None or acc != acc or dcc != dcc or cu != cu:
        return None
    ci = run.interval_of("dcc")
    where = "" if ci is None or ci[0] is None or ci[0] != ci[0] else f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    return (f"of {100 * acc:.1f} accuracy points, {100 * dcc:.1f} are credited to the image{where}; "
            f"{100 * cu:.1f} are answered without it")


def run_groups(runs: Sequence[RunAudit]) -> list[tuple[tuple[str, str], list[RunAudit]]]:
    """Runs grouped by (model, dataset) in first-seen order; each group's rows are its interfaces."""
    groups: dict[tuple[str, str], list[RunAudit]] = {}
    for run in runs:
        groups.setdefault((run.model, run.dataset), []).append(run)
    return list(groups.items())


def vca_report_view(report: VcaReport, title: str = "Visual Credit Audit") -> ConsoleView:
    """What ``vlaudit vca report`` prints: the headline (:func:`headline_view`), then the warnings, the n of
    every quantity, the noise floor, VCA Table 11, the Table 28 stricter definitions and the benchmarks' own
    figures (:func:`axes_view`)."""
    return headline_view(report.runs, title) + axes_view(report)


def headline_view(runs: Sequence[RunAudit], title: str = "Visual Credit Audit") -> ConsoleView:
    """The headline: n, Acc, Dep, D-CC, C-U (percent over a CI line) and Δ_DCC^perm when present.

    One small table per (model, dataset) titled with the full names, one row per interface, so long model
    names are never truncated in an 80-column terminal; under each, the scoring coverage and the headline in
    plain words (:func:`credit_sentence`).
    """
    parts: list[ConsolePart] = []
    add = parts.append
    level = runs[0].bootstrap.level if runs else 0.95
    method = "/".join(dict.fromkeys(run.bootstrap.method for run in runs)) or "percentile"
    add(ConsoleText(title, "heading"))
    add(ConsoleText(f"percent of items; second line: {100 * level:g}% paired bootstrap {method} CI over "
                    f"the clusters each table names (— where it is zero-width)", "caption"))
    has_perm = any(run.perm is not None for run in runs)
    metrics = ("Acc", "Dep", "D-CC", "C-U") + (("Δ D-CC perm",) if has_perm else ())
    for number, ((model, dataset), members) in enumerate(run_groups(runs)):
        units = "; ".join(dict.fromkeys(cluster_phrase(r.bootstrap.n_clusters, r.bootstrap.unit) for r in members))
        verdict = " · NOT A RESULT (coverage below --min-coverage)" if any(r.below_coverage for r in members) else ""
        rows: list[tuple[str | HeadlineCell, ...]] = []
        for run in members:
            cells = [_pct_cell(run.rate_of(k), run.interval_of(k)) for k in ("acc", "dep", "dcc", "cu")]
            if has_perm:
                cells.append(HeadlineCell("—") if run.perm is None
                             else _pct_cell(run.perm.delta_dcc, run.perm.ci_delta_dcc))
            rows.append((run.interface, str(run.n), *cells))
        add(ConsoleHeadline(f"{model} · {dataset} · {units}{verdict}", ("interface", "n", *metrics), tuple(rows),
                            header=number == 0))
        for run in members:
            if run.scoring is not None:  # scored / asked: a run that lost its records says so before anything
                where = f" ({run.interface})" if len(members) > 1 else ""
                head = "NOT A RESULT — coverage" if run.below_coverage else "coverage"
                add(ConsoleText(f"{head}{where}: {run.scoring.line()}", "alert" if run.below_coverage else "caption"))
            said = None if run.below_coverage else credit_sentence(run)
            if said:
                add(ConsoleText(f"{run.interface}: {said}" if len(members) > 1 else said, "plain"))
    return ConsoleView(tuple(parts))


def axes_view(report: VcaReport) -> ConsoleView:
    """After the headline: warnings (items excluded for a missing headline control); the n and excluded
    count of every quantity whenever a run has an exclusion or an optional context (each quantity on the items
    that have its contexts); VCA Table 11 for runs with erasure geometry; the Table 28 sensitivity columns for
    runs with a mismatch context; the benchmarks' own figures."""
    parts: list[ConsolePart] = []
    add = parts.append
    small = [run.bootstrap.small_sample for run in report.runs if run.bootstrap.small_sample]
    for warning in [*report.warnings, *small]:
        add(ConsoleText(warning, "warning"))
    for note in dict.fromkeys(n for run in report.runs for n in run.bootstrap.notes):
        add(ConsoleText(note, "note"))

    for run in report.runs:
        if len(run.coverage) > 1 or run.n_excluded:
            quantities = [f"{e.quantity} ({e.contexts}) n={e.n}"
                          + (f", {e.n_excluded} excluded ({e.missing} missing)" if e.n_excluded else "")
                          for e in run.coverage]
            add(ConsoleText(f"{run.name}: " + " · ".join(quantities), "plain", lead="n per quantity"))

    parts += [ConsoleText(line) for line in noise_lines(report.runs)]
    parts += geometry_view(report.runs).parts
    pct = tables.pct
    rows = [[run.name, s.n, pct(s.dep), pct(s.strict), None if run.ties is None else run.ties.strict, s.n_m,
             pct(s.dep_m), pct(s.strict_m), s.gap_mean]
            for run in report.runs if (s := run.sensitivity).n_m]
    if rows:
        add(ConsoleTable("Stricter definitions (%, VCA Table 28; not headline scores; ties: items whose Strict a "
                         "tie decides)", ["run", "n", "Dep", "Strict T/B", "ties", "n_M", "Dep+M", "Strict+M",
                                          "mean G"], rows, digits=2))
    parts += benchmark_figures_view(report.runs).parts
    return ConsoleView(tuple(parts))


def benchmark_figures_view(runs: Sequence[RunAudit]) -> ConsoleView:
    """The benchmarks' own figures beside the audit, each benchmark's tables on its own runs only (percent):
    MMStar's MG/ML and axes, POPE, MME (subtasks and the official totals), HallusionBench, CircularEval; and
    the per-category credit of every run with categories."""
    parts: list[ConsolePart] = []
    add = parts.append
    gain = tables.gain_rows([(run.name, run.benchmark) for run in runs])
    if gain:
        add(ConsoleTable(tables.GAIN_TITLE, tables.GAIN_COLUMNS, gain, digits=1))
        parts += [ConsoleText(line) for line in tables.gain_notes([(run.name, run.n, run.benchmark) for run in runs])]
    for run in runs:
        f = run.benchmark
        if f.categories:
            add(ConsoleTable(f"Credit per category (%) — {run.name}", tables.CATEGORY_COLUMNS,
                             tables.category_rows(f), digits=1))
        for title, columns, rows in tables.benchmark_tables(f):
            add(ConsoleTable(f"{title} — {run.name}", columns, rows, digits=1))
        parts += [ConsoleText(line, "warning") for line in tables.benchmark_warnings(f)]
        parts += [ConsoleText(line) for line in tables.benchmark_notes(f)]
    return ConsoleView(tuple(parts))


def geometry_view(runs: Sequence[RunAudit]) -> ConsoleView:
    """VCA Table 11, one row per benchmark (the geometry does not depend on the model); a benchmark without an
    erasure view (no object boxes, or no erasure context scored) has no row."""
    seen: dict[str, ErasureGeometry] = {}
    for run in runs:
        g = run.erasure_geometry
        if g is not None and (g.n_rele or g.n_irre):
            seen.setdefault(run.dataset, g)
    if not seen:
        return ConsoleView()
    table = ConsoleTable("Erasure geometry (% of image area, VCA Table 11)",
                         ["benchmark", "RelE n", "RelE", "union", "IrrE n", "IrrE", "zero overlap"],
                         [[dataset, g.n_rele, g.rele_erased_pct, g.union_pct, g.n_irre, g.irre_erased_pct,
                           g.irre_zero_overlap_pct] for dataset, g in seen.items()], digits=2)
    lines = [ConsoleText(erasure_constants_line(constants))
             for constants in dict.fromkeys(g.constants for g in seen.values() if g.constants is not None)]
    return ConsoleView((table, *lines))
