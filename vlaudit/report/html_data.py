"""Normalise the discovered artifacts into the few long-form rows the report renders.

Two demo summary schemas are read: today's (``cycles.cycle_acc`` per ``"source / scorer"``, ``vca`` a list) and
the earlier one (``cycles.encoders[MODEL].scorers[SCORER].families[FAMILY][SPLIT] = {n, cycle_acc, ci,
tie_rate}``, ``cycles.rank_sweep[MODEL][FAMILY][RANK] = cycle_acc | {cycle_acc, ci}``, ``vca.runs``,
``known_answers``). ``cycles eval`` results are read flat (``families[FAMILY] = summary``, the split recovered
from the cycles table when it can be read) or split-aware (``families[FAMILY][SPLIT] = summary``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.report.html_discover import Artifacts
from vlaudit.report.html_page import interval, is_number
from vlaudit.results.missing import Missing
from vlaudit.results.vca.audit import (
    HeadlineIntervals,
    NamedRun,
    PermutationAxis,
    RunAudit,
    none_for_empty_intervals,
)
from vlaudit.results.vca.benchmark import BenchmarkFigures, upgrade_benchmark
from vlaudit.results.vca.run_sections import ErasureGeometry, RunNoise, read_noise, upgrade_run
from vlaudit.results.versioned import Interval, record_from_dict
from vlaudit.sources.cycle_tables import read_cycles


def scorer_rank(name: str) -> tuple[int, str]:
    """Column order: the additive control first, then zero-shot, then probes (by rank), then the rest."""
    low = name.lower()
    for position, key in enumerate(("additive", "zero", "probe")):
        if key in low:
            digits = "".join(ch for ch in low if ch.isdigit())
            return position, digits.zfill(6) if key == "probe" else low
    return 3, low


def probe_rank(scorer: str) -> int | None:
    """R of a probe scorer named like ``probe-rank-R`` or ``cycle-loss-rankR-probe``; None otherwise."""
    match = re.search(r"rank-?(\d+)", scorer) if "probe" in scorer.lower() else None
    return int(match.group(1)) if match else None


def headline_cells(cells: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The cells of the headline table: every scorer but probes below an encoder's largest probe rank
    (those are the rank sweep's)."""
    top: dict[str, int] = {}
    for c in cells:
        rank = probe_rank(c["scorer"])
        if rank is not None:
            top[c["encoder"]] = max(rank, top.get(c["encoder"], rank))
    return [c for c in cells if probe_rank(c["scorer"]) in (None, top.get(c["encoder"]))]


def sweep_from_cells(cells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rank-sweep rows from the cells of encoders with at least two probe ranks (one split: test if any)."""
    probes = [c for c in cells if probe_rank(c["scorer"]) is not None and is_number(c.get("cycle_acc"))]
    splits = {c["split"] for c in probes}
    split = "test" if "test" in splits else (sorted(splits)[0] if splits else None)
    rows = [{"model": c["encoder"], "family": c["family"], "rank": probe_rank(c["scorer"]),
             "cycle_acc": float(c["cycle_acc"]), "ci": c.get("ci")} for c in probes if c["split"] == split]
    ranks: dict[str, set[int]] = {}
    for r in rows:
        ranks.setdefault(r["model"], set()).add(r["rank"])
    return sorted((r for r in rows if len(ranks[r["model"]]) > 1), key=lambda r: r["rank"])


def _split_entries(value: Any, default: str) -> list[tuple[str, Mapping[str, Any]]]:
    if not isinstance(value, Mapping):
        return [(default, {"cycle_acc": value})] if is_number(value) else []
    if "cycle_acc" in value:
        return [(default, value)]
    return [(str(split), v) for split, v in value.items() if isinstance(v, Mapping) and "cycle_acc" in v]


def _cell(encoder: str, scorer: str, family: str, split: str, v: Mapping[str, Any], source: str) -> dict[str, Any]:
    n = v.get("n")
    tie_rate = v.get("tie_rate")
    if tie_rate is None and is_number(v.get("ties")) and is_number(n) and n:
        tie_rate = v["ties"] / n
    return {"encoder": str(encoder), "scorer": str(scorer), "family": str(family), "split": split, "n": n,
            "cycle_acc": _number(v.get("cycle_acc")), "ci": _interval(v.get("ci")), "tie_rate": _number(tie_rate),
            "source": source}


def _number(value: Any) -> float | None:
    """A finite number, else None (shown as not computable): a hand-edited "0.9x" is never shown as a result."""
    return float(value) if is_number(value) and math.isfinite(value) else None


def _interval(value: Any) -> list[float] | None:
    bounds = [_number(b) for b in value] if isinstance(value, (list, tuple)) and len(value) == 2 else []
    return [b for b in bounds if b is not None] if len(bounds) == 2 and None not in bounds else None


def _eval_split(result: Mapping[str, Any]) -> str:
    """The split(s) a flat ``cycles eval`` result covers, from its cycles table when readable."""
    path = result.get("cycles")
    if isinstance(path, str) and Path(path).is_file():
        try:
            families = set(result.get("families", {}))
            splits = sorted({c.split or "unsplit" for c in read_cycles(path) if c.family in families})
            if splits:
                return splits[0] if len(splits) == 1 else "+".join(splits) + " (pooled)"
        except Exception:  # noqa: BLE001  (the label degrades; the numbers are still shown)
            pass
    return "not recorded"


def cycle_cells(art: Artifacts) -> list[dict[str, Any]]:
    """One row per (encoder, scorer, family, split): n, cycle_acc, ci, tie_rate, source."""
    summary = art.summary or {}
    cycles = summary["cycles"] if isinstance(summary.get("cycles"), Mapping) else {}
    cells: list[dict[str, Any]] = []
    encoders = cycles.get("encoders")
    if isinstance(encoders, Mapping):
        for encoder, entry in encoders.items():
            scorers = entry.get("scorers", {}) if isinstance(entry, Mapping) else {}
            for scorer, block in scorers.items():
                families = block.get("families", {}) if isinstance(block, Mapping) else {}
                for family, splits in families.items():
                    cells.extend(_cell(encoder, scorer, family, split, v, "summary.json")
                                 for split, v in _split_entries(splits, "not recorded"))
        if cells:
            return cells
    config = summary["config"] if isinstance(summary.get("config"), Mapping) else {}
    # today's demo evaluates the test split only and names the encoder in its config
    demo_split = "test" if "cycle_acc" in cycles else None
    for path, name, result in art.cycle_evals:
        if " / " in name:
            encoder, scorer = str(config.get("dual") or "encoder"), name.split(" / ", 1)[1]
        else:
            encoder, scorer = str(result.get("model") or name), str(result.get("scorer") or "CycleAcc")
        default = demo_split or _eval_split(result)
        for family, splits in result.get("families", {}).items():
            cells.extend(_cell(encoder, scorer, family, split, v, art.rel(path))
                         for split, v in _split_entries(splits, default))
    if not cells and isinstance(cycles.get("cycle_acc"), Mapping):
        encoder = str(config.get("dual") or "encoder")
        for name, families in cycles["cycle_acc"].items():
            for family, value in (families or {}).items():
                cells.extend(_cell(encoder, name.split(" / ", 1)[-1], family, split, v, "summary.json")
                             for split, v in _split_entries(value, "test"))
    return cells


@dataclass(frozen=True)
class VcaRun(NamedRun):
    """A VCA run as the report shows it: a ``vca.json`` run (``audit`` holds all of it) or a run a demo
    summary lists with its headline only (the axes it lacks are None or empty)."""

    model: str
    dataset: str
    interface: str
    n: int | None
    acc: float | None
    dep: float | None
    dcc: float | None
    cu: float | None
    ci: HeadlineIntervals | None
    perm: PermutationAxis | None
    noise: RunNoise | Missing
    erasure_geometry: ErasureGeometry | None
    benchmark: BenchmarkFigures
    source: str
    audit: RunAudit | None = None

    @property
    def label(self) -> str:
        """The run's :attr:`name`, as the report's tables and plots label it."""
        return self.name

    def rate(self, name: str) -> float | None:
        """``acc``, ``dep``, ``dcc`` or ``cu``."""
        value: float | None = getattr(self, name)
        return value

    def interval(self, name: str) -> Interval | None:
        """The bootstrap interval of ``acc``, ``dep``, ``dcc`` or ``cu`` (None when not recorded)."""
        return None if self.ci is None else self.ci_of(name)

    def ci_of(self, name: str) -> Interval | None:
        value: Interval | None = getattr(self.ci, name, None)
        return value

    @classmethod
    def of(cls, run: RunAudit, source: str) -> VcaRun:
        return cls(model=run.model, dataset=run.dataset, interface=run.interface, n=run.n, acc=run.acc,
                   dep=run.dep, dcc=run.dcc, cu=run.cu, ci=run.ci, perm=run.perm, noise=run.noise,
                   erasure_geometry=run.erasure_geometry, benchmark=run.benchmark, source=source, audit=run)

    @classmethod
    def listed(cls, run: Mapping[str, Any], source: str) -> VcaRun:
        """A run a demo summary lists: the whole audit when it holds one, else its headline numbers."""
        try:
            return cls.of(record_from_dict(RunAudit, none_for_empty_intervals(upgrade_run(run)), path=source),
                          source)
        except InputError:
            pass

        def number(key: str) -> float | None:
            value = run.get(key)
            return float(value) if is_number(value) else None

        ci = run.get("ci") if isinstance(run.get("ci"), Mapping) else {}
        intervals = HeadlineIntervals(**{k: interval(ci.get(k)) for k in (
            "acc", "dep", "dcc", "cu", "wrong_dep", "strict")}) if ci else None
        n = run.get("n")
        return cls(model=str(run.get("model") or run.get("spec")), dataset=str(run.get("dataset")),
                   interface=str(run.get("interface")), n=n if isinstance(n, int) else None, acc=number("acc"),
                   dep=number("dep"), dcc=number("dcc"), cu=number("cu"), ci=intervals, perm=None,
                   noise=read_noise(run.get("noise"), path=source), erasure_geometry=_geometry(run.get("erasure_geometry"), source),
                   benchmark=_benchmark(run.get("benchmark"), source), source=source)


def _benchmark(value: object, source: str) -> BenchmarkFigures:
    """A listed run's benchmark figures, when its summary holds them (in any version's shape)."""
    if not isinstance(value, Mapping):
        return BenchmarkFigures()
    return record_from_dict(BenchmarkFigures, upgrade_benchmark(value), path=source, name="benchmark")


def _geometry(value: object, source: str) -> ErasureGeometry | None:
    """A listed run's VCA Table 11, when its summary holds one."""
    if not isinstance(value, Mapping):
        return None
    return record_from_dict(ErasureGeometry, value, path=source, name="erasure_geometry")


def vca_runs(art: Artifacts) -> list[VcaRun]:
    """VCA runs: every ``vca.json`` run (with CIs, perm, …), then summary-only runs; one per key."""
    runs: dict[tuple[str, str, str], VcaRun] = {}
    for path, report in art.vca_reports:
        for run in report.runs:
            runs.setdefault(run.key, VcaRun.of(run, art.rel(path)))
    summary = art.summary or {}
    vca = summary.get("vca")
    listed = vca.get("runs") if isinstance(vca, Mapping) else vca
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, Mapping):
            view = VcaRun.listed(entry, "summary.json")
            runs.setdefault(view.key, view)
    return list(runs.values())


def rank_sweep(art: Artifacts) -> list[dict[str, Any]]:
    """Rows {model, family, rank, cycle_acc, ci} from ``cycles.rank_sweep`` (nested mapping or row list)."""
    cycles = (art.summary or {}).get("cycles")
    sweep = cycles.get("rank_sweep") if isinstance(cycles, Mapping) else None
    rows: list[dict[str, Any]] = []
    if isinstance(sweep, list):
        rows = [dict(r) for r in sweep if isinstance(r, Mapping) and "rank" in r]
    elif isinstance(sweep, Mapping):
        for model, families in sweep.items():
            for family, by_rank in (families or {}).items():
                for rank, value in (by_rank or {}).items():
                    entry = value if isinstance(value, Mapping) else {"cycle_acc": value}
                    rows.append({"model": model, "family": family, "rank": rank, **entry})
    out = []
    for row in rows:
        try:
            rank = int(row["rank"])
        except (TypeError, ValueError):
            continue
        if is_number(row.get("cycle_acc")):
            out.append({"model": str(row.get("model", "model")), "family": str(row.get("family", "family")),
                        "rank": rank, "cycle_acc": float(row["cycle_acc"]), "ci": row.get("ci")})
    return sorted(out, key=lambda r: r["rank"])  # stable: models and families keep their order


def factorial_models(art: Artifacts) -> list[dict[str, Any]]:
    """Per-model factorial rows: from ``factorial.json`` files, else from the summary's ``factorial``."""
    rows = [dict(m) | {"source": art.rel(path)} for path, result in art.factorials
            for m in result.get("models", []) if isinstance(m, Mapping)]
    if rows:
        return rows
    fact = (art.summary or {}).get("factorial")
    listed = fact.get("models") if isinstance(fact, Mapping) else fact
    return [dict(m) | {"source": "summary.json"} for m in (listed or []) if isinstance(m, Mapping)]


def known_answers(art: Artifacts) -> list[dict[str, Any]]:
    """Known-answer rows, each once (the summary's and any ``known_answers.json``)."""
    seen: set[str] = set()
    out = []
    for row in art.known_answers:
        key = repr(sorted((str(k), repr(v)) for k, v in row.items()))
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out
