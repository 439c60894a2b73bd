"""The report's "Model comparison" section: what ``vlaudit compare vca`` wrote (``compare.json`` and the
pairwise PNGs beside it) and what ``vlaudit compare cycles`` wrote (``compare_cycles.json``, its PNGs).
Numbers and intervals are the comparison's own, read back as their typed results; nothing is recomputed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from vlaudit.report import html_plots as plots
from vlaudit.report.compare import METRIC_NAMES, noise_line
from vlaudit.report.html_page import Safe, data_uri, esc, note, num, section, table
from vlaudit.results.compare import (
    CompareCyclesResult,
    ComparedItems,
    CompareVcaResult,
    Comparison,
    CycleSkipped,
    LeaderboardRow,
    VcaBandComparison,
    VcaComparison,
    VcaLeaderboardRow,
    VcaSkipped,
)
from vlaudit.stats.clusters import cluster_phrase
from vlaudit.stats.formatting import format_p


def _survives(value: bool | None) -> Safe:
    if value is True:
        return Safe('<span class="badge pass">survives</span>')
    if value is False:
        return Safe('<span class="badge na">no</span>')
    return Safe('<span class="badge na">—</span>')


def _band(row: Comparison) -> str:
    band = row.noise_band if isinstance(row, VcaBandComparison) else None
    return "—" if band is None else f"[{band[0]:+.3f}, {band[1]:+.3f}]"


def _where(row: Comparison | LeaderboardRow) -> list[str | None]:
    """The cells that say where a row was compared: (dataset, interface) or (benchmark, split, family)."""
    if isinstance(row, (VcaComparison, VcaBandComparison, VcaLeaderboardRow)):
        return [row.dataset, row.interface]
    return [row.benchmark, row.split, row.family]


def _skipped_place(row: VcaSkipped | CycleSkipped) -> str:
    return f"{row.dataset}/{row.interface}" if isinstance(row, VcaSkipped) else f"{row.split}/{row.family}"


def _panels(rows: Sequence[Comparison], *, percent: bool) -> list[plots.PairPanel]:
    """The pairwise plot's panels: one per (where, A, B), a row per metric (and family for cycles)."""
    scale = 100.0 if percent else 1.0
    panels: dict[tuple[object, ...], list[tuple[str, float, object, bool | None]]] = {}
    for r in rows:
        if r.difference is None:
            continue
        key = (*_where(r)[:2], r.model_a, r.model_b)
        label = METRIC_NAMES.get(r.metric, r.metric) + ("" if percent else f" · {r.family}")
        ci = None if r.ci is None else (scale * r.ci[0], scale * r.ci[1])
        panels.setdefault(key, []).append((label, scale * r.difference, ci, r.survives))
    return [(f"{' / '.join(str(k) for k in key[:2])}: A = {key[2]}, B = {key[3]}", shown)
            for key, shown in panels.items()]


def _files_read(path: Path, result: CompareVcaResult | CompareCyclesResult) -> Safe:
    """The comparison file and, for each model, the run (or scores table) it was read from."""
    sources = [[model.model, model.source] for model in result.models]
    return table(["Model", "Read from"], sources, caption=f"Files read: {path.name} and, per model, its run")


def read_comparison(path: Path, data: Mapping[str, object]) -> CompareVcaResult | CompareCyclesResult:
    """A comparison file as its typed result: a cycle comparison's rows say where by split."""
    rows = data.get("comparisons")
    cycles = isinstance(rows, list) and any(isinstance(r, Mapping) and "split" in r for r in rows)
    if cycles or path.name == CompareCyclesResult.file_name:
        return CompareCyclesResult.from_dict(data, path=path)
    return CompareVcaResult.from_dict(data, path=path)


def comparison(found: Sequence[tuple[Path, Mapping[str, object]]]) -> tuple[str, str, Safe] | None:
    """One block per ``compare.json``: the pairwise differences (family ``all``), the leaderboard with more
    than two models, the pairwise matrix PNGs, the dropped items and the skipped metrics."""
    if not found:
        return None
    body: list[Safe] = []
    for path, data in found:
        result = read_comparison(path, data)
        cycles = isinstance(result, CompareCyclesResult)
        body.append(Safe(f"<h3>{esc(path.parent.name)}: {esc(', '.join(m.model for m in result.models))}</h3>"))
        headings = ["Benchmark", "Split", "Family"] if cycles else ["Dataset", "Interface"]
        # a cycle comparison never pools splits or families: every row is shown; a VCA one shows family "all"
        rows: list[Comparison] = [r for r in result.comparisons if cycles or r.family == "all"]
        noisy = any(isinstance(r, VcaBandComparison) for r in rows)
        body.append(table(
            headings + ["Metric", "A", "B", "clusters", "value A", "value B", "A − B [unadjusted interval]"]
            + (["noise band"] if noisy else []) + ["test", "p (Holm)", "Holm"],
            [[*_where(r), METRIC_NAMES.get(r.metric, r.metric), r.model_a, r.model_b,
              cluster_phrase(r.n_clusters, r.unit), num(r.value_a, pct=not cycles), num(r.value_b, pct=not cycles),
              num(r.difference, r.ci, pct=not cycles)]
             + ([_band(r)] if noisy else [])
             + [r.test or "—", format_p(r.p_holm), _survives(r.survives)] for r in rows],
            numeric_from=len(headings) + 4))
        if len(result.models) > 2:
            board: list[LeaderboardRow] = [r for r in result.leaderboard if cycles or r.family == "all"]
            body.append(table(headings + ["Metric", "Model", "clusters", "value [interval]", "rank"],
                              [[*_where(r), METRIC_NAMES.get(r.metric, r.metric), r.model,
                                "—" if r.unit is None or r.n_clusters is None
                                else cluster_phrase(r.n_clusters, r.unit),
                                num(r.value, r.ci, pct=not cycles), "—" if r.rank is None else r.rank]
                               for r in board],
                              numeric_from=len(headings) + 3,
                              caption="Leaderboard: rank 1 is best; a model outranks another when their "
                                      "comparison survives the Holm adjustment with it ahead and the paired "
                                      "interval agrees; — is unranked (no value)"))
        if not cycles:
            body.append(note("Rates in percent of the shared items; A − B in percentage points, its paired "
                             "bootstrap interval below it."))
        plot = plots.paired_differences(_panels(rows, percent=not cycles),
                                        unit="percentage points" if not cycles else "CycleAcc")
        if plot is not None:
            body.append(plot)
        body.append(_files_read(path, result))
        for png in sorted(path.parent.glob("pairwise_*.png")):
            uri = data_uri(png.read_bytes(), "image/png")
            body.append(Safe(f'<figure class="plot"><img src="{uri}" alt="{esc(png.name)}"><figcaption>'
                             f"{esc(png.name)}: row − column, * where the Holm-adjusted p survives</figcaption>"
                             "</figure>"))
        if isinstance(result, CompareVcaResult):
            for model in result.models:
                for where, entry in model.datasets.items():
                    dropped = ", ".join(f"{n} {why}" for why, n in entry.dropped.items()) or "none"
                    body.append(note(f"{model.model} on {where}: {entry.n_compared} items compared; "
                                     f"dropped: {dropped}"))
                    if isinstance(entry, ComparedItems):
                        body.append(note(f"{model.model} on {where}: {noise_line(entry.noise)}"))
        skipped: list[VcaSkipped | CycleSkipped] = [*result.skipped]
        for row in skipped:
            body.append(note(f"skipped {row.metric} on {_skipped_place(row)}: {row.reason}", "warn"))
    return section("comparison", "Model comparison", body,
                   lead="Paired differences on the items the models share: one set of resampled clusters for "
                        "every model and metric (VCA §19), the clusters named per row; exact McNemar or "
                        "cluster permutation p-values, Holm-adjusted within each family (one dataset, relation "
                        "family and metric family); intervals unadjusted.")
