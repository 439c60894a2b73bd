"""Files and console tables of ``vlaudit compare vca``: ``compare.json``, ``comparisons.csv``,
``leaderboard.csv`` and, with more than two models, a pairwise matrix PNG per (dataset, interface); and of
``vlaudit compare cycles``: ``compare_cycles.json`` and the same two tables."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vlaudit.figures import pyplot, save_png
from vlaudit.files import write_result, write_table
from vlaudit.metrics.cycles import CYCLE_UNIT_CAVEAT
from vlaudit.results.compare import (
    CompareCyclesResult,
    ComparedItems,
    CompareVcaResult,
    Comparison,
    CycleComparison,
    LeaderboardRow,
    NoiseFloor,
    NoNoiseFloor,
    VcaBandComparison,
)
from vlaudit.results.console import ConsolePart, ConsoleTable, ConsoleTables, ConsoleText, ConsoleView
from vlaudit.results.versioned import Interval, JsonValue, to_json
from vlaudit.stats.clusters import cluster_phrase
from vlaudit.stats.formatting import degenerate, format_interval, format_p

METRIC_NAMES = {"acc": "Acc", "dep": "Dep", "dcc": "D-CC", "cu": "C-U", "strict": "Strict", "rel_o": "Rel_o",
                "pair_credit": "PairCredit", "pair_d": "PairD", "joint": "Joint", "g_int_mean": "mean G_int",
                "cycle_acc": "CycleAcc", "dep_perm": "Dep_perm", "dcc_perm": "D-CC_perm", "dep_m": "Dep+M",
                "strict_m": "Strict+M", "q_acc": "Q-Acc", "i_acc": "I-Acc", "g_acc": "G-Acc"}


#: the interval fields of a comparison or leaderboard row, written to CSV as NAME_lo / NAME_hi
INTERVAL_FIELDS = ("ci", "noise_band")


def _flat(rows: Sequence[Comparison | LeaderboardRow]) -> list[dict[str, JsonValue]]:
    """CSV rows: the record's fields, each interval (``ci``, and ``noise_band`` where a row has one) as
    ``NAME_lo`` / ``NAME_hi`` after the others (a CSV cell holds no list). Every row gets the columns any row
    has, empty where it has no value, so that a table mixing rows with and without a band is one table."""
    out = []
    present = [name for name in INTERVAL_FIELDS if any(hasattr(row, name) for row in rows)]
    for row in rows:
        written = to_json(row)
        assert isinstance(written, dict)
        flat = {k: v for k, v in written.items() if k not in INTERVAL_FIELDS}
        for name in present:
            value = getattr(row, name, None)
            flat[f"{name}_lo"], flat[f"{name}_hi"] = (None, None) if value is None else value
        out.append(flat)
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


def pairwise_png(path: Path, rows: Sequence[Comparison], title: str) -> Path:
    """One panel per metric: the matrix of A − B (row A, column B), ``*`` where the Holm-adjusted p survives."""
    plt = pyplot()
    metrics = list(dict.fromkeys(r.metric for r in rows))
    models = list(dict.fromkeys([r.model_a for r in rows] + [r.model_b for r in rows]))
    cols = min(3, len(metrics))
    lines = (len(metrics) + cols - 1) // cols
    fig, axes = plt.subplots(lines, cols, figsize=(4.2 * cols, 3.8 * lines), squeeze=False)
    for ax in axes.ravel()[len(metrics):]:
        ax.axis("off")
    for ax, metric in zip(axes.ravel(), metrics, strict=False):
        matrix = np.zeros((len(models), len(models)))
        marks = np.zeros_like(matrix, dtype=bool)
        for r in rows:
            if r.metric != metric or r.difference is None:
                continue
            a, b = models.index(r.model_a), models.index(r.model_b)
            matrix[a, b], matrix[b, a] = r.difference, -r.difference
            marks[a, b] = marks[b, a] = bool(r.survives)
        limit = float(np.abs(matrix).max()) or 1.0
        ax.imshow(matrix, cmap="RdBu", vmin=-limit, vmax=limit)
        for a in range(len(models)):
            for b in range(len(models)):
                if a != b:
                    ax.text(b, a, f"{matrix[a, b]:+.3f}{'*' if marks[a, b] else ''}", ha="center", va="center",
                            fontsize=7)
        ax.set_xticks(range(len(models)), models, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(models)), models, fontsize=7)
        ax.set_title(f"{METRIC_NAMES.get(metric, metric)}: row − column", fontsize=9)
    fig.suptitle(f"{title} (* Holm-adjusted p survives)", fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)


def _write_record_and_tables(out: Path, name: str, result: CompareVcaResult | CompareCyclesResult) -> list[Path]:
    """Write the comparison's JSON record ``name`` and, where it has rows, ``comparisons.csv`` and
    ``leaderboard.csv`` into ``out`` (made if absent); the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = [write_result(out / name, result)]
    if result.comparisons:
        written.append(write_table(out / "comparisons.csv", _flat(result.comparisons)))
    if result.leaderboard:
        written.append(write_table(out / "leaderboard.csv", _flat(result.leaderboard)))
    return written


def write_compare_files(out_dir: str | Path, result: CompareVcaResult, *, plot: bool = True) -> list[Path]:
    """Write ``compare.json``, the two CSV tables and (more than two models) the pairwise PNGs."""
    out = Path(out_dir)
    written = _write_record_and_tables(out, "compare.json", result)
    if plot and len(result.models) > 2:
        for key in dict.fromkeys((r.dataset, r.interface) for r in result.comparisons):
            rows = [r for r in result.comparisons if (r.dataset, r.interface) == key and r.family == "all"]
            name = f"pairwise_{_slug(key[0])}_{_slug(key[1])}.png"
            written.append(pairwise_png(out / name, rows, f"{key[0]} / {key[1]}"))
    return written


def _rank(rank: int | None) -> str | int:
    return "—" if rank is None else rank


def _interval(ci: Interval | None) -> str:
    return format_interval(ci)


#: what every comparison table says of its intervals and p-values (docs/concepts/statistics.md); ``{interval}``
#: is the interval's method as the result records it (``settings.interval``)
MULTIPLICITY_NOTE = ("CI: unadjusted 95% paired cluster-bootstrap interval ({interval}); p (Holm): adjusted "
                     "within its Holm family (one dataset, relation family and metric family; every pair of "
                     "models)")


def _units(rows: Sequence[Comparison | LeaderboardRow]) -> str:
    """``"16 stem clusters"`` for the rows of one table (each distinct unit once; a leaderboard row read from
    a file written before rows named their unit has none)."""
    return "; ".join(dict.fromkeys(cluster_phrase(r.n_clusters, r.unit) for r in rows
                                   if r.unit is not None and r.n_clusters is not None)) or "unit not recorded"


def _pct(value: float | None) -> str | None:
    """A rate in percent with one decimal, the unit of every VCA table (the files keep fractions)."""
    return None if value is None else f"{100.0 * value:.1f}"


def _pct_interval(ci: Interval | None) -> str:
    """An interval in percent; — when missing or zero-width (a bootstrap artefact, not certainty)."""
    return "—" if ci is None or degenerate(ci) else f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def noise_line(noise: NoiseFloor | NoNoiseFloor) -> str:
    """One model's compared decisions inside its noise floor, or why there is no floor."""
    if isinstance(noise, NoNoiseFloor):
        return noise.note or "noise floor not measured"
    return (f"noise floor tau = {noise.tau:.3g}: {noise.n_decision} of {noise.n_items} decisions "
            f"(|m_o| <= tau) and {noise.n_credit} credits (|G_img| <= 2 tau) inside the noise")


def compare_view(result: CompareVcaResult) -> ConsoleView:
    """Per model the items dropped, then per (dataset, interface) the comparisons of the ``all`` family
    (and the leaderboard with more than two models), and what was skipped; whole at 80 columns."""
    parts: list[ConsolePart] = []
    add = parts.append
    for model in result.models:
        for where, entry in model.datasets.items():
            dropped = ", ".join(f"{n} {why}" for why, n in entry.dropped.items()) or "none"
            add(ConsoleText(f"{model.model} on {where}: {entry.n_compared} items compared; dropped: {dropped}"))
            if isinstance(entry, ComparedItems):
                add(ConsoleText(f"  {noise_line(entry.noise)}"))
    keys = list(dict.fromkeys((r.dataset, r.interface) for r in result.comparisons))
    for dataset, interface in keys:
        rows = [r for r in result.comparisons if (r.dataset, r.interface, r.family) == (dataset, interface, "all")]
        for pair in dict.fromkeys((r.model_a, r.model_b) for r in rows):
            own = [r for r in rows if (r.model_a, r.model_b) == pair]
            add(ConsoleTable(f"{dataset} / {interface}: A = {pair[0]}, B = {pair[1]} (shared items, %, "
                             f"{_units(own)})",
                             ["metric", "A", "B", "A − B", "CI (unadj.)", "p (Holm)", "survives"],
                             [[METRIC_NAMES.get(r.metric, r.metric), _pct(r.value_a), _pct(r.value_b),
                               _pct(r.difference), _pct_interval(r.ci), format_p(r.p_holm),
                               "yes" if r.survives else "no"] for r in own],
                             identifiers=1, droppable=["A", "B"]))
            banded = [r for r in rows if (r.model_a, r.model_b) == pair and isinstance(r, VcaBandComparison)]
            bands = [f"{METRIC_NAMES[r.metric]} {_pct_interval(r.noise_band)}" for r in banded
                     if r.noise_band is not None]
            if bands:
                add(ConsoleText(f"noise band of A − B (%, flagged decisions set both ways): {'; '.join(bands)}"))
            elif banded:
                add(ConsoleText("noise band of A − B: none (the noise floor of A or B is not measured)"))
        if len(result.models) > 2:
            board = [r for r in result.leaderboard
                     if (r.dataset, r.interface, r.family) == (dataset, interface, "all")]
            add(ConsoleTable(f"{dataset} / {interface}: leaderboard (%; {_units(board)}; rank 1 = best; a model "
                             "outranks another when their paired difference says so)",
                             ["metric", "model", "value", "95% CI", "rank"],
                             [[METRIC_NAMES.get(r.metric, r.metric), r.model, _pct(r.value), _pct_interval(r.ci),
                               _rank(r.rank)]
                              for r in board], identifiers=2))
    if result.comparisons:
        add(ConsoleText(MULTIPLICITY_NOTE.format(interval=result.settings.interval)))
    for row in result.skipped:
        add(ConsoleText(f"skipped {METRIC_NAMES.get(row.metric, row.metric)} on {row.dataset}/"
                        f"{row.interface}: {row.reason}"))
    for warning in result.warnings:
        add(ConsoleText(warning, "warning"))
    return ConsoleView(tuple(parts))


def write_compare_cycles_files(out_dir: str | Path, result: CompareCyclesResult, *, plot: bool = True
                               ) -> list[Path]:
    """Write ``compare_cycles.json``, ``comparisons.csv``, ``leaderboard.csv`` and, with more than two
    models, a pairwise matrix PNG per (benchmark, split): its first family, the pooled ``all`` when the
    split has several (splits are never pooled)."""
    out = Path(out_dir)
    written = _write_record_and_tables(out, "compare_cycles.json", result)
    if plot and len(result.models) > 2:
        first_family = dict.fromkeys((r.benchmark, r.split, r.family) for r in result.comparisons)
        for benchmark, split in dict.fromkeys((b, s) for b, s, _ in first_family):
            family = next(f for b, s, f in first_family if (b, s) == (benchmark, split))
            rows = [r for r in result.comparisons if (r.benchmark, r.split, r.family) == (benchmark, split, family)]
            what = "cycles" if benchmark is None else str(benchmark)
            name = f"pairwise_{_slug(what)}_{_slug(str(split))}.png"
            title = f"{'CycleAcc' if benchmark is None else benchmark} / {split} / {family}"
            written.append(pairwise_png(out / name, rows, title))
    return written


def compare_cycles_view(result: CompareCyclesResult) -> ConsoleView:
    """One table per (benchmark, split) and pair of models: each family's and metric's difference."""
    parts: list[ConsolePart] = []
    add = parts.append
    keys = list(dict.fromkeys((r.benchmark, r.split, r.model_a, r.model_b) for r in result.comparisons))
    # one layout for every table of a benchmark (train, val, test; every pair): never blocks beside a table
    for benchmark in dict.fromkeys(key[0] for key in keys):
        tables = []
        for _, split, a, b in [key for key in keys if key[0] == benchmark]:
            rows = [r for r in result.comparisons if (r.benchmark, r.split, r.model_a, r.model_b)
                    == (benchmark, split, a, b)]
            what = "CycleAcc" if benchmark is None else benchmark
            counts = sorted({r.n_clusters for r in rows})
            span = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
            unit = "/".join(dict.fromkeys(r.unit for r in rows))
            tables.append((f"{what} / {split}: A = {a}, B = {b} ({span} {unit} clusters)",
                           [[r.family, *([METRIC_NAMES.get(r.metric, r.metric)] if benchmark is not None else []),
                             r.value_a, r.value_b, r.difference, _interval(r.ci), format_p(r.p_holm),
                             "yes" if r.survives else "no", *_tie_rates(r)] for r in rows]))
        # each model's value beside A − B; under CycleAcc the title names the one metric
        metric = [] if benchmark is None else ["metric"]
        add(ConsoleTables(tables, ["family", *metric, "A", "B", "A − B", "CI (unadj.)", "p (Holm)", "survives",
                                   "ties A", "ties B"], identifiers=1, droppable=[("ties A", "ties B")], digits=3))
    if result.comparisons and CYCLE_UNIT_CAVEAT not in result.warnings:  # a file written before it was a warning
        add(ConsoleText(CYCLE_UNIT_CAVEAT))
        add(ConsoleText(MULTIPLICITY_NOTE.format(interval=result.settings.interval).replace(
            "one dataset, relation family and metric family", "one benchmark, split and family")))
    if len(result.models) > 2:
        for benchmark, split in dict.fromkeys((r.benchmark, r.split) for r in result.leaderboard):
            board = [r for r in result.leaderboard if (r.benchmark, r.split) == (benchmark, split)]
            what = "CycleAcc" if benchmark is None else benchmark
            add(ConsoleTable(f"{what} / {split}: leaderboard ({_units(board)}; rank 1 = best; a model outranks "
                             "another when their paired difference says so)",
                             ["family", "metric", "model", "value", "95% CI", "rank"],
                             [[r.family, METRIC_NAMES.get(r.metric, r.metric), r.model, r.value, _interval(r.ci),
                               _rank(r.rank)]
                              for r in board], identifiers=3))
    for row in result.skipped:
        add(ConsoleText(f"skipped {row.family} on {row.split}: {row.reason}"))
    for warning in result.warnings:
        add(ConsoleText(warning, "warning"))
    return ConsoleView(tuple(parts))


def _tie_rates(row: Comparison) -> tuple[float | None, float | None]:
    """Both models' tie rates of a CycleAcc comparison (None for a 2×2 benchmark metric: no ties there)."""
    return (row.tie_rate_a, row.tie_rate_b) if isinstance(row, CycleComparison) else (None, None)
