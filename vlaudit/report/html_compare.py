"""The report's "Model comparison" section: what ``vlaudit compare vca`` wrote (``compare.json`` and the
pairwise PNGs beside it). Numbers and intervals are the comparison's own; nothing is recomputed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vlaudit.report.compare import METRIC_NAMES
from vlaudit.report.html_page import Safe, data_uri, esc, note, num, section, table


def _survives(value: Any) -> Safe:
    if value is True:
        return Safe('<span class="badge pass">survives</span>')
    if value is False:
        return Safe('<span class="badge na">no</span>')
    return Safe('<span class="badge na">—</span>')


def _p(value: Any) -> Safe:
    return num(value, digits=4)


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
        rows = [r for r in data.get("comparisons") or [] if r.get("family") == "all"]
        body.append(table(
            ["Dataset", "Interface", "Metric", "A", "B", "value A", "value B", "A − B [interval]", "test",
             "p (Holm)", "Holm"],
            [[r.get("dataset"), r.get("interface"), METRIC_NAMES.get(str(r.get("metric")), r.get("metric")),
              r.get("model_a"), r.get("model_b"), num(r.get("value_a")), num(r.get("value_b")),
              num(r.get("difference"), r.get("ci")), r.get("test") or "—", _p(r.get("p_holm")),
              _survives(r.get("survives"))] for r in rows], numeric_from=5))
        if len(models) > 2:
            board = [r for r in data.get("leaderboard") or [] if r.get("family") == "all"]
            body.append(table(["Dataset", "Interface", "Metric", "Model", "value [interval]", "rank"],
                              [[r.get("dataset"), r.get("interface"),
                                METRIC_NAMES.get(str(r.get("metric")), r.get("metric")), r.get("model"),
                                num(r.get("value"), r.get("ci")), r.get("rank")] for r in board], numeric_from=4,
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
        for row in data.get("skipped") or []:
            body.append(note(f"skipped {row.get('metric')} on {row.get('dataset')}/{row.get('interface')}: "
                             f"{row.get('reason')}", "warn"))
    return section("comparison", "Model comparison", body,
                   lead="Paired differences on the items the models share: one set of resampled clusters for "
                        "every model and metric (VCA §19); exact McNemar or cluster permutation p-values, "
                        "Holm-adjusted across each table.")
