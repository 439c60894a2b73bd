"""``vlaudit giveaway`` at 80 columns: one table per benchmark (lints, the order-blind ceiling, blind baselines,
the filtered subset), and the one-row-per-benchmark CSV."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlaudit.results.console import ConsolePart, ConsoleTable, ConsoleText, ConsoleView
from vlaudit.results.giveaway import BenchmarkGiveaway, GiveawayRate, GiveawayResult
from vlaudit.results.missing import Missing
from vlaudit.stats.formatting import format_interval


def _num(value: float | Missing | None, digits: int = 3) -> str:
    if value is None or isinstance(value, Missing):
        return "—"
    return f"{value:.{digits}f}"


def rate_text(rate: GiveawayRate) -> str:
    """``0.750 [0.500, 1.000]`` (— without a value or an interval)."""
    return _rate(rate)


def _rate(rate: GiveawayRate) -> str:
    if isinstance(rate.value, Missing):
        return "—"
    interval = None if isinstance(rate.interval, Missing) else rate.interval
    return f"{rate.value:.3f} {format_interval(interval, signed=False)}"


def benchmark_rows(bench: BenchmarkGiveaway) -> list[list[str]]:
    """The quantity / value rows of one benchmark's table."""
    lints = bench.lints
    tokens = ", ".join(f"{t.token}({'+' if t.side == 'positive' else '−'}{t.pairs})" for t in lints.side_tokens[:3])
    rows = [
        ["items / pairs (+ / −)", f"{bench.items} / {bench.pairs} ({bench.positives} / {bench.negatives})"],
        ["BoW-identical negatives", f"{lints.bow_flagged} flagged / {lints.negatives} (design: {lints.bow_design})"],
        ["unigram TV (+ vs −)", _num(lints.unigram_tv)],
        ["length + minus −, words", f"mean {_num(lints.length_mean, 2)}; longer {_num(lints.length_longer, 2)}, "
                                    f"shorter {_num(lints.length_shorter, 2)}"],
        ["one-side tokens", tokens or "none"],
        ["rule: one-side tokens", _rate(lints.side_token_rule) if lints.side_tokens else "—"],
        ["rule: longer / shorter", f"{_num(lints.longer_wins.value)} / {_num(lints.shorter_wins.value)}"],
        ["duplicates / identical / both", f"{lints.duplicate_items} / {lints.identical_positive_negative} / "
                                          f"{lints.labelled_both_ways}"],
    ]
    for baseline in bench.baselines:
        official = "" if baseline.official is None else f" (official {baseline.official:.3f})"
        rows.append([baseline.name, _rate(baseline.accuracy) + official])
    if bench.filtered is not None:
        rows.append(["blind-filtered subset", f"{bench.filtered.items} kept, {bench.filtered.removed} removed"])
    if bench.model is not None:
        rows += [["model: full", _rate(bench.model.full)], ["model: filtered", _rate(bench.model.filtered)],
                 ["model: filtered − full", _rate(bench.model.difference)]]
    return rows


def giveaway_view(result: GiveawayResult) -> ConsoleView:
    """What ``vlaudit giveaway`` prints: one quantity / value table per benchmark (:func:`benchmark_rows`) with
    its metric and notes, the VCA text-only table when runs were given, then what the rows mean."""
    parts: list[ConsolePart] = []
    for bench in result.benchmarks:
        parts.append(ConsoleTable(f"{Path(bench.file).name}: what it gives away", ["quantity", "value"],
                                  benchmark_rows(bench)))
        parts.append(ConsoleText(f"metric: {bench.metric} ({bench.tie_rule})"))
        parts += [ConsoleText(note, "note") for note in bench.notes]
    if result.vca:
        parts.append(ConsoleTable("VCA text-only context: the blind reading of MLLM runs",
                                  ["run", "original", "text only", "solved blind"],
                                  [[f"{r.model} / {r.dataset}", _rate(r.original), _rate(r.text_only),
                                    f"{r.solved_blind} / {r.items}"] for r in result.vca]))
    parts.append(ConsoleText(
        "Accuracies are item means under the benchmark's metric with 95% bootstrap intervals over items. "
        "BoW-identical: a negative with its positive's bag of words that is never a positive (design: "
        "one that is another image's positive). Rules are in-sample; the ceiling is the best "
        "order-blind scorer; the filtered subset drops every item a blind baseline solves."))
    return ConsoleView(tuple(parts))


def csv_rows(result: GiveawayResult) -> list[dict[str, Any]]:
    """One flat row per benchmark (the CSV beside giveaway.json)."""
    out = []
    for bench in result.benchmarks:
        lints = bench.lints
        row: dict[str, Any] = {
            "file": bench.file, "format": bench.format, "metric": bench.metric, "items": bench.items,
            "pairs": bench.pairs, "bow_flagged": lints.bow_flagged, "bow_design": lints.bow_design,
            "unigram_tv": lints.unigram_tv, "length_mean": _plain(lints.length_mean),
            "side_tokens": " ".join(f"{t.token}:{t.side}" for t in lints.side_tokens),
            "side_token_rule": _plain(lints.side_token_rule.value), "longer_wins": _plain(lints.longer_wins.value),
            "shorter_wins": _plain(lints.shorter_wins.value), "duplicate_items": lints.duplicate_items,
            "identical_positive_negative": lints.identical_positive_negative,
            "labelled_both_ways": lints.labelled_both_ways}
        for baseline in bench.baselines:
            key = baseline.name.replace(" ", "_").replace("-", "_")
            row[key] = _plain(baseline.accuracy.value)
            interval = baseline.accuracy.interval
            row[f"{key}_low"], row[f"{key}_high"] = (None, None) if isinstance(interval, Missing) else interval
        row["filtered_items"] = bench.filtered.items if bench.filtered else None
        row["model_full"] = _plain(bench.model.full.value) if bench.model else None
        row["model_filtered"] = _plain(bench.model.filtered.value) if bench.model else None
        out.append(row)
    return out


def _plain(value: float | Missing | None) -> float | None:
    return None if value is None or isinstance(value, Missing) else float(value)
