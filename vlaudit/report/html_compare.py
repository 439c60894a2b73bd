"""The report's "Model comparison" section: what ``vlaudit compare vca`` wrote (``compare.json`` and the
pairwise PNGs beside it) and what ``vlaudit compare cycles`` wrote (``compare_cycles.json``, its PNGs).
Numbers and intervals are the comparison's own; nothing is recomputed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vlaudit.report.compare import METRIC_NAMES, noise_line
from vlaudit.report.html_page import Safe, data_uri, esc, note, num, section, table


def _survives(value: Any) -> Safe:
    if value is True:
        return Safe('<span class="badge pass">survives</span>')
    if value is False:
        return Safe('<span class="badge na">no</span>')
    return Safe('<span class="badge na">—</span>')


def _p(value: Any) -> Safe:
    return num(value, digits=4)


def _where(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(heading, key) of the columns that say where a row was compared: a VCA or a cycle comparison."""
    if any("split" in r for r in rows):
        return [("Benchmark", "benchmark"), ("Split", "split"), ("Family", "family")]
    return [("Dataset", "dataset"), ("Interface", "interface")]


def _band(row: Mapping[str, Any]) -> Any:
    band = row.get("noise_band")
    if band is None:
        return "—"
    return f"[{band[0]:+.3f}, {band[1]:+.3f}]"


def comparison(found: Sequence[tuple[Path, Mapping[str, Any]]]) -> tuple[str, str, Safe] | None:
    """One block per ``compare.json``: the pairwise differences (family ``all``), the leaderboard with more
    than two models, the pairwise matrix PNGs, the dropped items and the skipped metrics."""
    if not found:
        return None
    body: list[Any] = []
    for path, data in found:
        models = data.get("models") or []
        body.append(Safe(f"<h3>{esc(path.parent.name)}: {esc(', '.join(str(m.get('model')) for m in models))}"
                         "</h3>"))
        everything = data.get("comparisons") or []
        columns = _where(everything)
        cycles = len(columns) == 3
        # a cycle comparison never pools splits or families: every row is shown; a VCA one shows family "all"
        rows = [r for r in everything if cycles or r.get("family") == "all"]
        noisy = any("noise_band" in r for r in rows)
        body.append(table(
            [h for h, _ in columns] + ["Metric", "A", "B", "value A", "value B", "A − B [interval]"]
            + (["noise band"] if noisy else []) + ["test", "p (Holm)", "Holm"],
            [[r.get(k) for _, k in columns] + [METRIC_NAMES.get(str(r.get("metric")), r.get("metric")),
              r.get("model_a"), r.get("model_b"), num(r.get("value_a")), num(r.get("value_b")),
              num(r.get("difference"), r.get("ci"))] + ([_band(r)] if noisy else [])
             + [r.get("test") or "—", _p(r.get("p_holm")), _survives(r.get("survives"))] for r in rows],
            numeric_from=len(columns) + 3))
        if len(models) > 2:
            board = [r for r in data.get("leaderboard") or [] if cycles or r.get("family") == "all"]
            body.append(table([h for h, _ in columns] + ["Metric", "Model", "value [interval]", "rank"],
                              [[r.get(k) for _, k in columns] + [
                                  METRIC_NAMES.get(str(r.get("metric")), r.get("metric")), r.get("model"),
                                  num(r.get("value"), r.get("ci")), r.get("rank")] for r in board],
                              numeric_from=len(columns) + 2,
                              caption="Leaderboard: rank 1 is the highest value; ranks tie where intervals "
                                      "overlap"))
        for png in sorted(path.parent.glob("pairwise_*.png")):
            uri = data_uri(png.read_bytes(), "image/png")
            body.append(Safe(f'<figure class="plot"><img src="{uri}" alt="{esc(png.name)}"><figcaption>'
                             f"{esc(png.name)}: row − column, * where the Holm-adjusted p survives</figcaption>"
                             "</figure>"))
        for model in models:
            for where, entry in (model.get("datasets") or {}).items():
                dropped = ", ".join(f"{n} {why}" for why, n in (entry.get("dropped") or {}).items()) or "none"
                body.append(note(f"{model.get('model')} on {where}: {entry.get('n_compared')} items compared; "
                                 f"dropped: {dropped}"))
                if "noise" in entry:
                    body.append(note(f"{model.get('model')} on {where}: {noise_line(entry['noise'])}"))
        for row in data.get("skipped") or []:
            place = "/".join(str(row.get(k)) for k in ("dataset", "interface", "split", "family") if k in row)
            body.append(note(f"skipped {row.get('metric')} on {place}: {row.get('reason')}", "warn"))
    return section("comparison", "Model comparison", body,
                   lead="Paired differences on the items the models share: one set of resampled clusters for "
                        "every model and metric (VCA §19); exact McNemar or cluster permutation p-values, "
                        "Holm-adjusted across each table.")
