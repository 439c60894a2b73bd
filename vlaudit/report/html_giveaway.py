"""The report's "Benchmark giveaway" section (``vlaudit giveaway`` output, ``giveaway.json``): per benchmark the
lints, the order-blind ceiling and the blind baselines, and the flagged items to browse (caption, negative,
why flagged), folded per benchmark so a long list does not bury the rest of the report (no script)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from vlaudit.report.giveaway import benchmark_rows, rate_text
from vlaudit.report.html_page import Safe, esc, note, section, table
from vlaudit.results.giveaway import GiveawayResult


def giveaway(found: Sequence[tuple[Path, Mapping[str, object]]]) -> tuple[str, str, Safe] | None:
    """One block per benchmark of every ``giveaway.json`` found (None when there is none)."""
    if not found:
        return None
    body: list[Safe] = []
    for path, data in found:
        result = GiveawayResult.from_dict(data, path=path)
        for bench in result.benchmarks:
            body.append(Safe(f"<h3>{esc(Path(bench.file).name)}</h3>"))
            body.append(table(["Quantity", "Value"], benchmark_rows(bench), numeric_from=1,
                              caption=f"metric: {bench.metric} ({bench.tie_rule})"))
            if bench.filtered is not None:
                body.append(note(f"Blind-filtered subset: {bench.filtered.items} items kept in "
                                 f"{bench.filtered.path} (no item solved by {', '.join(bench.filtered.baselines)})."))
            if bench.flagged:
                shown = len(bench.flagged)
                rows = [[f.item_id, f.subset, f.positive or "—", f.negative or "—", f.why] for f in bench.flagged]
                summary = (f"{bench.flagged_total} flagged item(s)" + ("" if shown == bench.flagged_total
                                                                      else f", the first {shown} shown"))
                body.append(Safe(f'<details class="flagged"><summary>{esc(summary)}</summary>'
                                 f'{table(["Item", "Subset", "Caption", "Negative", "Why flagged"], rows)}'
                                 "</details>"))
            for line in bench.notes:
                body.append(note(line))
        if result.vca:
            body.append(table(["Run", "original", "text only (no image)", "solved blind"],
                              [[f"{r.model} / {r.dataset} ({r.interface})", rate_text(r.original), rate_text(r.text_only),
                                f"{r.solved_blind} / {r.items}"] for r in result.vca], numeric_from=1,
                              caption="VCA text-only context: the blind reading of MLLM runs"))
    return section("giveaway", "Benchmark giveaway", body,
                   lead="What each benchmark gives away without the image: text lints, the best order-blind "
                        "scorer, blind baselines under the benchmark's own metric (95% bootstrap intervals over "
                        "items), and the items no blind baseline solves.")
