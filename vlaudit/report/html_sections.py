"""The report's sections: known answers, cycles, Visual Credit Audit, factorial, galleries.

Each builder takes normalised rows (:mod:`vlaudit.report.html_data`) and returns one section, or None when it
has nothing to show. Numbers are the audits' own outputs; intervals are the ones they wrote.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vlaudit.report import benchmark_tables as tables
from vlaudit.report import html_plots as plots
from vlaudit.report.html_data import VcaRun, headline_cells, scorer_rank, sweep_from_cells
from vlaudit.report.html_page import Safe, badge, esc, interval, is_number, note, num, section, table
from vlaudit.results.missing import Missing
from vlaudit.results.vca.coverage import lowest_cell
from vlaudit.results.vca.run_sections import ErasureGeometry
from vlaudit.stats.clusters import cluster_phrase

Section = tuple[str, str, Safe]


def _value(value: Any) -> Any:
    if isinstance(value, Mapping) and set(value) == {"missing"}:  # a Missing value as its JSON holds it
        return str(Missing(str(value["missing"])))
    if is_number(value):
        return num(value, digits=3 if isinstance(value, float) else 0)
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(is_number(v) for v in value):
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    if isinstance(value, (dict, list)):
        return Safe(f"<code>{esc(json.dumps(value, default=str, ensure_ascii=False))}</code>")
    return value


def known_answers(rows: Sequence[Mapping[str, Any]]) -> Section | None:
    if not rows:
        return None
    passed = sum(r.get("passed") is True for r in rows)
    body = [Safe(f'<p class="tally">{badge(passed == len(rows))} <b>{passed} of {len(rows)}</b> checks '
                 "passed.</p>"),
            table(["Check", "Expected", "Observed", "Result"],
                  [[r.get("check"), _value(r.get("expected")), _value(r.get("observed")), badge(r.get("passed"))]
                   for r in rows])]
    return section("known-answers", "Known answers", body,
                   lead="Each row is an audit run on a model whose behaviour was planted by construction: the "
                        "audit passes when it recovers the planted answer.")


def _cycle_cell(cell: Mapping[str, Any] | None) -> Any:
    if cell is None:
        return Safe('<span class="na">—</span>')
    text = num(cell.get("cycle_acc"), cell.get("ci"))
    tie = cell.get("tie_rate")
    if is_number(tie) and tie > 0:
        text = Safe(f'{text}<span class="ci">ties {100 * tie:.0f}%</span>')
    unit, k = cell.get("unit", "cycle"), cell.get("n_clusters")
    if unit != "cycle" and is_number(k):  # a coarser unit than the cycle: its count, under the interval
        text = Safe(f'{text}<span class="ci">{esc(cluster_phrase(int(k), str(unit)))}</span>')
    return text


def _shade(cell: Mapping[str, Any] | None) -> str:
    bounds = interval(cell.get("ci")) if cell else None
    if bounds and bounds[0] > 0.5:
        return "good"
    if bounds and bounds[1] < 0.5:
        return "bad"
    return ""


def cycle_table(cells: Sequence[Mapping[str, Any]]) -> tuple[Safe, list[str]]:
    """Rows (family, split, n); one column group per encoder with its scorers, additive first."""
    encoders = list(dict.fromkeys(c["encoder"] for c in cells))
    scorers = sorted(dict.fromkeys(c["scorer"] for c in cells), key=scorer_rank)
    per_encoder = {e: [s for s in scorers if any(c["encoder"] == e and c["scorer"] == s for c in cells)]
                   for e in encoders}
    index = {(c["encoder"], c["scorer"], c["family"], c["split"]): c for c in cells}
    rows = list(dict.fromkeys((c["family"], c["split"]) for c in cells))
    out = ['<div class="scroll"><table><thead><tr><th colspan="3" class="group"></th>']
    out += [f'<th colspan="{len(per_encoder[e])}" class="group">{esc(e)}</th>' for e in encoders]
    out.append('</tr><tr><th>Family</th><th>Split</th><th class="num">n</th>')
    out += [f'<th class="num">{esc(s)}</th>' for e in encoders for s in per_encoder[e]]
    out.append("</tr></thead><tbody>")
    for family, split in rows:
        ns = [c["n"] for c in cells if c["family"] == family and c["split"] == split and is_number(c.get("n"))]
        out.append(f"<tr><td>{esc(family)}</td><td>{esc(split)}</td>"
                   f'<td class="num">{esc(int(ns[0]) if ns else None)}</td>')
        for e in encoders:
            for s in per_encoder[e]:
                cell = index.get((e, s, family, split))
                out.append(f'<td class="num {_shade(cell)}">{_cycle_cell(cell)}</td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return Safe("".join(out)), scorers


def cycles(cells: Sequence[Mapping[str, Any]], sweep: Sequence[Mapping[str, Any]],
           summary: Mapping[str, Any]) -> Section | None:
    sweep = list(sweep) or sweep_from_cells(cells)
    cells = headline_cells(cells)
    if not cells and not sweep:
        return None
    body: list[Any] = []
    if cells:
        table_html, scorers = cycle_table(cells)
        body += [table_html, note("Cell: exact CycleAcc, 95% bootstrap interval below it, resampling the n cycles "
                                  "(the cycle is the unit, n cycles = n clusters, unless a cell names a coarser "
                                  "one; cycles that share an image are resampled as independent, so where many do "
                                  "the interval is too narrow); green/red: the interval lies above/below ½. Ties "
                                  "count ½ (their share is shown when any). Probes of lower rank are in the rank "
                                  "sweep.")]
        body.append(plots.cycle_families(cells, scorers) or "")
    cyc = summary["cycles"] if isinstance(summary.get("cycles"), Mapping) else {}
    degree = cyc.get("audit_max_abs_signed_degree")
    if is_number(degree):
        body.append(note(f"Cycle audit: the largest |signed degree| of any image or caption is {degree:g} "
                         "(0 means every cycle is exact, so additive scores tie)."))
    if sweep:
        body += [Safe("<h3>Rank sweep</h3>"), plots.rank_sweep(sweep) or ""]
    return section("cycles", "Counterfactual pairing cycles", body,
                   lead="Does the encoder score a matched image–caption pair above its swaps? Δ = s(u1,v1) + "
                        "s(u2,v2) − s(u1,v2) − s(u2,v1); a cycle is credited when Δ > 0. Additive scorers "
                        "(image-only + text-only) are exactly at ½.")


def synthetic(summary: Mapping[str, Any]) -> Section | None:
    syn = summary.get("synthetic")
    rows = syn.get("rows") if isinstance(syn, Mapping) else None
    if not rows or not isinstance(syn, Mapping):
        return None
    body = [table(["Diagnostic", "Probe", "Metric", "Mean", "Expected"],
                  [[r.get("diagnostic"), r.get("probe"), r.get("metric"), _value(r.get("mean")),
                    _value(r.get("expected"))] for r in rows if isinstance(r, Mapping)], numeric_from=3)]
    checks = syn.get("checks")
    if isinstance(checks, Mapping) and checks:
        body.append(table(["Check", "Result"], [[k, badge(v) if isinstance(v, bool) else _value(v)]
                                                for k, v in checks.items()]))
    return section("synthetic", "Synthetic controls", body,
                   lead="Planted synthetic scorers with a known CycleAcc (cycle paper §5.1).")


def vca(runs: Sequence[VcaRun], gaps: Sequence[tuple[str, Sequence[float]]]) -> Section | None:
    if not runs and not gaps:
        return None
    body: list[Any] = run_warnings(runs)
    if runs:
        has_perm = any(r.perm is not None for r in runs)
        headers = ["Model", "Dataset", "Interface", "Resampled", "Scored", "n", "Acc", "Dep", "D-CC", "C-U"]
        headers += ["Δ D-CC perm"] if has_perm else []
        rows = []
        for r in runs:
            plan = None if r.audit is None else r.audit.bootstrap
            unit = "—" if plan is None else cluster_phrase(plan.n_clusters, plan.unit)
            row = [r.model, r.dataset, r.interface, unit, scored_cell(r), _value(r.n)]
            row += [num(r.rate(k), r.interval(k), pct=True) for k in ("acc", "dep", "dcc", "cu")]
            if has_perm:
                row.append(num(None) if r.perm is None else num(r.perm.delta_dcc, r.perm.ci_delta_dcc, pct=True))
            rows.append(row)
        body += [table(headers, rows, numeric_from=5),
                 note("Scored: the records the scoring run asked for and scored (lowest context and interface; "
                      "— when the margins carry no vca score summary). Percent of items; below each value its 95% paired cluster-bootstrap interval over the "
                      "clusters the Resampled column names (docs/concepts/statistics.md). "
                      "Acc = D-CC + C-U; Dep = share of items whose image raises the answer beyond the no-image "
                      "controls (G_img > 0).")]
        body += [plots.decomposition(runs) or "", plots.permutation(runs) or ""]
    noise = noise_table(runs)
    if noise is not None:
        body += [Safe("<h3>Decisions above the noise</h3>"), noise]
    geometry = erasure_geometry_table(runs)
    if geometry is not None:
        body += [Safe("<h3>Erasure geometry (VCA Table 11)</h3>"), geometry]
    credit = category_credit_table(runs)
    if credit is not None:
        body += [Safe("<h3>Credit per category</h3>"), credit]
    body += benchmark_figure_tables(runs)
    if gaps:
        body += [Safe("<h3>G_img per item</h3>"), plots.gap_histograms(gaps) or ""]
    return section("vca", "Visual Credit Audit", body,
                   lead="Is a correct answer credited to the image? G_img = r_o − max(r_text, r_blank) compares the "
                        "margin with the real image against no-image controls (VCA §3).")


def scored_cell(run: VcaRun) -> str:
    """``6 / 17558 (0.0%)`` of the run's scoring coverage, ``NOT A RESULT`` first when it is below the report's
    ``--min-coverage``; an em dash when not recorded."""
    scoring = None if run.audit is None else run.audit.scoring
    if scoring is None:
        return "—"
    low = lowest_cell(scoring)
    cell = low if low is not None else scoring
    text = f"{cell.scored} / {cell.asked - cell.not_applicable}"
    if cell.coverage is not None:
        text += f" ({100 * cell.coverage:.1f}%)"
    return f"NOT A RESULT: {text}" if run.audit is not None and run.audit.below_coverage else text


def run_warnings(runs: Sequence[VcaRun]) -> list[Any]:
    """The audit's warnings first (a run that gave no answer, items excluded for a missing control), as the
    console prints them: one highlighted line each."""
    lines = list(dict.fromkeys(w for r in runs if r.audit is not None for w in r.audit.warnings))
    ties = [(match, line) for line in lines if (match := _TIES.match(line)) is not None]
    if len(ties) < 2:
        return [note(f"warning: {line}", "warn") for line in lines]
    # the tie rule is the same sentence for every run: one box, one line per run, in the place of the first
    rules = list(dict.fromkeys(match["rule"] for match, _ in ties))
    box = Safe('<p class="note warn">' + esc(f"warning: ties decide metrics of {len(ties)} runs ({'; '.join(rules)}):")
               + "".join(f"<br>{esc(match['name'])}: {esc(match['what'])}" for match, _ in ties) + "</p>")
    tied = {line for _, line in ties}
    first = next(index for index, line in enumerate(lines) if line in tied)
    out = [note(f"warning: {line}", "warn") for line in lines if line not in tied]
    return [*out[:first], box, *out[first:]]


#: ``vlaudit.analysis.vca.report.tie_warning``'s line: what the ties decide, of which run, and the tie rule
_TIES = re.compile(r"^ties decide (?P<what>.+?) of (?P<name>run \(.*\)) \((?P<rule>\|margin\| <= .*)\)$")


def category_credit_table(runs: Sequence[VcaRun]) -> Safe | None:
    """n, Acc, Dep, D-CC and C-U per benchmark category of each run (VCA §12 within each category); None
    when no run has categories."""
    rows = [[r.model, r.dataset, r.interface, row[0], _value(row[1]), *(num(v, digits=1) for v in row[2:])]
            for r in runs for row in tables.category_rows(r.benchmark)]
    if not rows:
        return None
    return Safe(str(table(["Model", "Dataset", "Interface", "Category", "n", "Acc", "Dep", "D-CC", "C-U"], rows,
                          numeric_from=4))
                + str(note("Percent of the category's items; Acc = D-CC + C-U within each category.")))


def _figure(value: Any) -> Any:
    return num(value, digits=1) if isinstance(value, (float, Missing)) else _value(value)


def benchmark_figure_tables(runs: Sequence[VcaRun]) -> list[Any]:
    """The benchmarks' own tables as the console prints them (:mod:`vlaudit.report.benchmark_tables`), each
    on its own benchmark's runs: MMStar MG/ML and axes, POPE, MME, HallusionBench, CircularEval (percent)."""
    body: list[Any] = []
    gain = tables.gain_rows([(r.label, r.benchmark) for r in runs])
    if gain:
        body += [Safe(f"<h3>{esc(tables.GAIN_TITLE)}</h3>"),
                 table(tables.GAIN_COLUMNS, [[row[0], *map(_figure, row[1:])] for row in gain], numeric_from=1)]
        body += [note(line) for line in tables.gain_notes([(r.label, r.n, r.benchmark) for r in runs])]
    for r in runs:
        for title, columns, rows in tables.benchmark_tables(r.benchmark):
            body += [Safe(f"<h3>{esc(title)} — {esc(r.label)}</h3>"),
                     table(columns, [[row[0], *map(_figure, row[1:])] for row in rows], numeric_from=1)]
        body += [note(f"warning: {line}", "warn") for line in tables.benchmark_warnings(r.benchmark)]
        body += [note(line) for line in tables.benchmark_notes(r.benchmark)]
    return body


def noise_table(runs: Sequence[VcaRun]) -> Safe | None:
    """Per run: the noise floor τ of ``vca stability``, the decisions and credits inside it and the noise
    band of Acc, Dep and D-CC (every flagged decision set both ways); "not measured" without a floor."""
    if not runs:
        return None
    rows = []
    reasons: dict[str, int] = {}
    for r in runs:
        n = r.noise
        if isinstance(n, Missing):  # "not measured" where τ would be, the reason once under the table
            reasons[n.reason] = reasons.get(n.reason, 0) + 1
            rows.append([r.model, r.dataset, r.interface, "not measured", "—", "—", "—", "—", "—"])
            continue
        bands = {k: getattr(n.band, k) for k in ("acc", "dep", "dcc")}
        rows.append([r.model, r.dataset, r.interface, num(n.tau, digits=4), _value(n.n_decision),
                     _value(n.n_credit)]
                    + [num(r.rate(k), None if isinstance(bands[k], Missing) else list(bands[k]), pct=True)
                       for k in ("acc", "dep", "dcc")])
    # each reason as a missing value reads everywhere: "— (reason)"
    why = "; ".join(f"τ in {count} of {len(runs)} runs: {Missing(reason)}" for reason, count in reasons.items())
    if len(reasons) and sum(reasons.values()) == len(runs):  # no floor anywhere: a line, not a table of dashes
        return note(why)
    missing = str(note(why)) if reasons else ""
    # the column headings wrap (they are long beside numbers), so the table fits the page
    return Safe(str(table(["Model", "Dataset", "Interface", "τ", "Decisions |m_o| ≤ τ", "Credits |G_img| ≤ 2τ",
                           "Acc (noise band)", "Dep (noise band)", "D-CC (noise band)"], rows, numeric_from=3,
                          cls="wrap-heads"))
                + missing + str(note("τ: the backend's noise floor from vca stability (p99 |Δ margin| under math-preserving "
                           "perturbations); below each value the range with every flagged decision set both "
                           "ways. Without stability.json in the run folder the floor is not measured.")))


def generation_table(checks: Sequence[Mapping[str, Any]]) -> Safe | None:
    """Per run, context and prompt form: agreement of the margin's decision with greedy generation."""
    rows = []
    for check in checks:
        for row in check.get("checks") or []:
            if isinstance(row, Mapping):
                rows.append([check.get("model"), row.get("context"), row.get("prompt"), _value(row.get("n")),
                             num(row.get("agreement"), pct=True), num(row.get("unparseable_rate"), pct=True),
                             _value(len(row.get("disagreements") or []))])
    if not rows:
        return None
    return Safe(str(table(["Model", "Context", "Prompt", "n", "Agreement", "Unparseable", "Disagreements"], rows,
                          numeric_from=3)))


def generation(checks: Sequence[Mapping[str, Any]]) -> Section | None:
    """The ``vca generate-check`` results: agreement of the margin's decision with greedy generation."""
    body = generation_table(checks)
    if body is None:
        return None
    return section("generation", "Likelihood vs generation", [body, note(
        "Greedy decoding under the scoring prompt, with and without the \"Answer:\" prefix; the first answer word "
        "against the margin's decision (yes iff m_o ≥ 0). Agreement is over the parsed answers.")],
        lead="Does the answer the margin reads match the answer the model writes?")


def erasure_geometry_table(runs: Sequence[VcaRun]) -> Safe | None:
    """Table 11 per benchmark (the geometry does not depend on the model); None without geometry."""
    seen: dict[str, ErasureGeometry] = {}
    for r in runs:
        g = r.erasure_geometry
        if g is not None and (g.n_rele or g.n_irre):
            seen.setdefault(r.dataset, g)
    if not seen:
        return None
    rows = [[dataset, _value(g.n_rele), _value(g.n_irre)]
            + [num(v, digits=2) for v in (g.rele_erased_pct, g.union_pct, g.irre_erased_pct, g.irre_zero_overlap_pct)]
            for dataset, g in seen.items()]
    return Safe(str(table(["Benchmark", "RelE n", "IrrE n", "RelE erased", "Padded union", "IrrE erased",
                           "IrrE zero overlap"], rows, numeric_from=1))
                + str(note("Percent of image area, averaged over the views each erasure has; zero overlap is "
                           "the percent of IrrE views with no erased pixel inside the protected union.")))


def factorial(models: Sequence[Mapping[str, Any]]) -> Section | None:
    if not models:
        return None
    keys = [("cu_rate", "C-U / correct"), ("responsive_rate", "responsive / C-U"),
            ("responsive_rate_all_correct", "responsive / correct"), ("flip_rate", "flip / C-U")]
    headers = ["Model", "Stems", "Correct", "C-U"] + [label for _, label in keys]
    rows = [[m.get("model"), _value(m.get("stems")), _value(m.get("correct")), _value(m.get("cu"))]
            + [num(m.get(k), m.get(f"{k}_ci"), pct=True) for k, _ in keys] for m in models]
    body = [table(headers, rows, numeric_from=1),
            note("Below each rate its 95% Wilson interval, design-effect corrected over the stems (a stem's "
                 "decisions are not independent; factorial.json's definitions.intervals says so, and a file "
                 "written before the correction holds item-level intervals); the pooled rates and the source "
                 "effects in factorial.json resample the stems."),
            plots.factorial(models) or ""]
    return section("factorial", "Evidence-source factorial", body,
                   lead="Relation image × relation text, each supporting, opposing or neutral (VCA §10). "
                        "Responsive: reversing the relation in the image moves the margin the right way.")


def galleries(cu: Sequence[tuple[str, Safe]], failed: Sequence[tuple[str, Safe]]) -> Section | None:
    if not cu and not failed:
        return None
    body: list[Any] = []
    if cu:
        body.append(Safe("<h3>Correct but uncredited (C-U)</h3>"))
        letters = any(label.endswith(" · letter") for label, _ in cu)
        yes_no = any(not label.endswith(" · letter") for label, _ in cu)
        reads = ([" Yes/no cards: the margin m = NLL(no) − NLL(yes) under each context."] if yes_no else []) + (
            [" Multiple-choice cards: the options, log p(letter) of each under each context (the chosen option "
             "shaded); r_c = ℓ_c(chosen) − max of the others, G_img = r_o − max(r_text, r_blank)."]
            if letters else [])
        body.append(note("Answered correctly, yet the real image supported the answer no more than a no-image "
                         "control did (G_img ≤ 0): lowest G_img first." + "".join(reads)))
        for label, cards in cu:
            body += [Safe(f'<p class="meta"><b>{esc(label)}</b></p>'), cards]
    if failed:
        body.append(Safe("<h3>Failed strict cycles</h3>"))
        body.append(note("Strict-family cycles whose matched pairs scored below their swaps (Δ < 0), most "
                         "negative first. Caption 1 belongs to image 1, caption 2 to image 2."))
        for heading, cards in failed:
            body += [Safe(f'<p class="meta"><b>{esc(heading)}</b></p>'), cards]
    return section("galleries", "Galleries", body)
