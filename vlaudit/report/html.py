"""``vlaudit report RUN_DIR``: one self-contained ``RUN_DIR/report.html`` from whatever the run folder holds.

The folder is scanned (:mod:`vlaudit.report.html_discover`): the demo's ``summary.json``, ``vca report`` and
``vca score`` outputs, ``cycles eval`` results, cycles/scores tables, factorial results and manifests. Each
section appears when its data is there; a section that fails to render is replaced by a one-line note, so a
missing or odd piece never blocks the report. Plots and thumbnails are embedded as base64 PNG/JPEG, the
stylesheet is inline, there is no script: the file opens offline in any browser.
"""

from __future__ import annotations

import datetime as _dt
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vlaudit.analysis.vca.report import ReportSettings, compute_report
from vlaudit.errors import InputError
from vlaudit.files import atomic_write
from vlaudit.report import html_compare, html_giveaway, html_suites
from vlaudit.report import html_data as data
from vlaudit.report import html_gallery as gallery
from vlaudit.report import html_sections as sections
from vlaudit.report.html_discover import Artifacts, discover
from vlaudit.report.html_page import Safe, esc, note, page, section, table
from vlaudit.settings import REPORT_PREVIEW_RESAMPLES
from vlaudit.sources.margins import read_margins
from vlaudit.sources.noise_floor import read_floors
from vlaudit.sources.scoring_coverage import read_coverages
from vlaudit.version import __version__

REPORT_NAME = "report.html"


def _computed_vca(art: Artifacts) -> list[dict[str, Any]]:
    """With margins but no ``vca report`` output, compute the report here (same code as ``vca report``).

    Returns its per-item rows; the runs join ``art.vca_reports`` under the margins file's path.
    """
    if art.vca_reports or not art.margins or data.vca_runs(art):
        return []
    items: list[dict[str, Any]] = []
    for path in art.margins:
        try:
            runs = read_margins(path)
            report = compute_report(runs, ReportSettings(n_resamples=REPORT_PREVIEW_RESAMPLES), read_floors(runs),
                                    read_coverages(runs))
        except Exception as exc:  # noqa: BLE001  (e.g. a run without the control contexts)
            art.problems.append(f"{art.rel(path)}: no VCA report computed: {exc}")
            continue
        art.vca_reports.append((path, report.result))
        items.extend(report.items)
    return items


def _kv(pairs: Mapping[str, Any]) -> Safe:
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{sections._value(v)}</dd>" for k, v in pairs.items())
    return Safe(f'<dl class="kv">{rows}</dl>')


def _manifest_row(art: Artifacts, path: Path, m: Mapping[str, Any]) -> list[Any]:
    backend = m["backend"] if isinstance(m.get("backend"), Mapping) else {}
    provenance = m["provenance"] if isinstance(m.get("provenance"), Mapping) else {}
    model = m.get("model") or m.get("spec") or provenance.get("model")
    revision = m.get("revision") or backend.get("revision")
    commit = backend.get("commit_hash") or m.get("commit_hash")
    contexts = ", ".join(map(str, m.get("contexts") or []))
    interfaces = ", ".join(map(str, m.get("interfaces") or []))
    return [art.rel(path.parent), model, revision, commit, m.get("dtype") or backend.get("dtype"), m.get("seed"),
            contexts or None, interfaces or None, m.get("n_items"), m.get("git_commit")]


def manifest(art: Artifacts) -> tuple[str, str, Safe]:
    """Models, revisions, seeds, versions, commits, timings, the files read and any unreadable file."""
    summary = art.summary or {}
    body: list[Any] = []
    if art.manifests:
        body.append(Safe("<h3>Scoring and feature runs</h3>"))
        body.append(table(["Folder", "Model", "Revision", "Commit hash", "dtype", "Seed", "Contexts", "Interfaces",
                           "Items", "vlaudit commit"], [_manifest_row(art, p, m) for p, m in art.manifests]))
    packages: dict[str, Any] = {}
    for _, m in art.manifests:
        if isinstance(m.get("packages"), Mapping):
            packages.update(m["packages"])
    versions = summary.get("versions")
    if isinstance(versions, Mapping):
        packages.update(versions)
    if packages:
        body += [Safe("<h3>Versions</h3>"), _kv(packages)]
    for key, title in (("config", "Demo configuration (seeds and sizes)"), ("models", "Models")):
        if isinstance(summary.get(key), Mapping) and summary[key]:
            body += [Safe(f"<h3>{esc(title)}</h3>"), _kv(summary[key])]
    timings = summary.get("timings") or summary.get("seconds")
    if isinstance(timings, Mapping) and timings:
        body += [Safe("<h3>Timings</h3>"),
                 table(["Stage", "Seconds"], [[k, sections._value(v)] for k, v in timings.items()], numeric_from=1)]
    found = {"summary.json": int(bool(art.summary)), "vca report (vca.json)": len(art.vca_reports),
             "per-item VCA tables": len(art.vca_items), "margins tables": len(art.margins),
             "cycles eval results": len(art.cycle_evals), "cycles tables": len(art.cycle_tables),
             "scores tables": len(art.score_tables), "factorial results": len(art.factorials),
             "benchmark items tables": len(art.benchmarks), "manifests": len(art.manifests),
             "generate-check results": len(art.generate_checks), "comparisons (compare.json)": len(art.comparisons),
             "suite results (suite.json)": len(art.suites),
             "giveaways (giveaway.json)": len(art.giveaways)}
    body += [Safe("<h3>Files read</h3>"), _kv({k: v for k, v in found.items() if v})]
    if art.problems:
        body += [Safe("<h3>Files skipped</h3>"),
                 Safe("<ul>" + "".join(f"<li>{esc(p)}</li>" for p in art.problems[:50]) + "</ul>")]
    return section("manifest", "Run manifest", body, lead=f"Run folder: {art.root}")


def _guard(name: str, build: Callable[[], Any]) -> Any:
    """Run one section builder; on failure, a section that says so instead of no report."""
    try:
        return build()
    except Exception as exc:  # noqa: BLE001  (a missing piece never blocks the report)
        anchor = name.lower().replace(" ", "-")
        return section(anchor, name, [note(f"This section could not be rendered: {type(exc).__name__}: {exc}",
                                           "warn")])


def build_html(run_dir: str | Path) -> str:
    """The report document for ``run_dir`` (see the module docstring)."""
    art = discover(run_dir)
    summary = art.summary or {}
    computed_items = _guard("Visual Credit Audit", lambda: _computed_vca(art))
    item_rows = gallery.vca_item_rows(art) + (computed_items if isinstance(computed_items, list) else [])
    runs = data.vca_runs(art)
    built: list[Any] = [
        _guard("Known answers", lambda: sections.known_answers(data.known_answers(art))),
        _guard("Cycles", lambda: sections.cycles(data.cycle_cells(art), data.rank_sweep(art), summary)),
        _guard("Visual Credit Audit", lambda: sections.vca(runs, gallery.gap_groups(item_rows))),
        _guard("Likelihood vs generation", lambda: sections.generation([c for _, c in art.generate_checks])),
        _guard("Factorial", lambda: sections.factorial(data.factorial_models(art))),
        _guard("Model comparison", lambda: html_compare.comparison(art.comparisons)),
        _guard("Compositionality suites", lambda: html_suites.suites(art.suites)),
        _guard("Benchmark giveaway", lambda: html_giveaway.giveaway(art.giveaways)),
        _guard("Galleries", lambda: sections.galleries(gallery.cu_gallery(art, item_rows),
                                                       gallery.failed_cycles(art))),
        _guard("Synthetic controls", lambda: sections.synthetic(summary)),
    ]
    found: list[tuple[str, str, Safe]] = [s for s in built if isinstance(s, tuple)]
    if art.empty:
        found.insert(0, section("empty", "Nothing to report", [note(
            "No audit output was found in this folder. The report reads a demo summary.json, `vlaudit vca "
            "report` or `vca score` outputs, `cycles eval` JSON, cycles and scores tables and factorial.json.")]))
    found.append(_guard("Run manifest", lambda: manifest(art)))
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = "vlaudit report"
    subtitle = f"{art.root.name} · {_headline(summary, runs)}"
    footer = f"Generated by vlaudit {__version__} on {stamp} from {art.root}. Self-contained: no network needed."
    return page(title, subtitle, found, footer)


def _headline(summary: Mapping[str, Any], runs: Sequence[data.VcaRun]) -> str:
    rows = summary["known_answers"] if isinstance(summary.get("known_answers"), list) else []
    parts = []
    if rows:
        parts.append(f"{sum(r.get('passed') is True for r in rows if isinstance(r, Mapping))}/{len(rows)} "
                     "known answers pass")
    if runs:
        parts.append(f"{len(runs)} VCA run{'' if len(runs) == 1 else 's'}")
    return " · ".join(parts) or "audit outputs found in this folder"


#: what ``vlaudit report`` reads, as its refusals name it
READS = ("a `vca report --out` folder, a `vca score` run folder, a `vlaudit demo --out` folder, `cycles eval` "
         "output, or a folder holding them")


def _quietly_empty(root: Path) -> bool:
    """Whether ``root`` holds no audit output; the files it skips are warned of once, by :func:`build_html`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return discover(root).empty


def write_report(run_dir: str | Path, *, require_results: bool = False) -> Path:
    """Write ``RUN_DIR/report.html`` (atomically) and return its path. ``require_results``: refuse (one
    :class:`InputError`, nothing written) a folder holding no audit output, as ``vlaudit report`` does; without
    it such a folder gets a page that says "Nothing to report"."""
    root = Path(run_dir)
    if root.is_file():
        folder = root.parent
        hint = (f"give its run folder: vlaudit report {folder} (or vca report {root} --out REPORT, then "
                "vlaudit report REPORT)" if root.suffix.lower() in (".parquet", ".csv", ".jsonl")
                else f"give the folder that holds it: vlaudit report {folder}")
        raise InputError(f"is a file; vlaudit report reads a folder ({READS}): {hint}", path=root)
    if not root.is_dir():
        raise InputError("run folder not found (expected a folder of audit outputs)", path=root)
    if require_results and _quietly_empty(root):
        raise InputError(f"no audit output found here, so there is nothing to report; give {READS}", path=root)
    document = build_html(root)
    out = root / REPORT_NAME
    with atomic_write(out, "w") as handle:
        handle.write(document)
    return out
