"""The benchmarks' own tables of a VCA run, as the console prints them and the HTML report shows them.

Each run's ``benchmark`` section (:mod:`vlaudit.analysis.vca.benchmark`) holds only its own benchmark's figures,
so each table here appears on that benchmark's runs only: MMStar's MG/ML and axes, POPE, MME (subtasks, the
official totals, vlaudit's pooled row), HallusionBench, CircularEval. Rates are percent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: MMStar's size: its evaluator divides by 1,500 whatever was scored (250 per capability)
MMSTAR_SIZE = 1500
GAIN_TITLE = "Multimodal gain and leakage (%, MMStar)"
GAIN_COLUMNS = ["run", "Acc", "Acc text", "MG", "ML"]
Table = tuple[str, list[str], list[list[Any]]]


def _pct(value: object) -> float | None:
    return 100.0 * value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def gain_rows(figures: Sequence[tuple[str, Any]]) -> list[list[Any]]:
    """MMStar's Acc, Acc text, MG and ML per (run name, benchmark section) of an MMStar run."""
    pct = _pct
    return [[n, pct(f["mmstar"]["acc_image"]), pct(f["mmstar"]["acc_text"]), pct(f["mmstar"]["mg"]),
             pct(f["mmstar"].get("ml"))] for n, f in figures if "mmstar" in f]


def gain_notes(runs: Sequence[tuple[str, int | None, Any]]) -> list[str]:
    """Why an MMStar run's ML is missing, and MMStar's fixed divisor when fewer items were scored; ``runs``:
    (name, n, benchmark section) of each run."""
    gains = [(name, n, f["mmstar"]) for name, n, f in runs if isinstance(f.get("mmstar"), dict)]
    notes = [f"ML — for {name}: {gain['ml_reason']}" for name, _, gain in gains if gain.get("ml_reason")]
    if any(n != MMSTAR_SIZE for _, n, _ in gains):
        notes.append(f"Acc is over the items scored (n); MMStar's evaluator divides by a fixed {MMSTAR_SIZE} "
                     f"(250 per capability), the same on the full release.")
    return notes


def benchmark_notes(f: Any) -> list[str]:
    """What a reader of one run's benchmark tables must know: MME questions outside acc+, CircularEval
    questions dropped."""
    notes = []
    if f.get("mme"):
        half = sum(r["n"] - 2 * r["n_pairs"] for r in f["mme"]["subtasks"])
        if half:
            notes.append(f"MME: {half} question(s) without their image's other question count in acc, not in acc+ "
                         f"(MME's calculation.py pairs consecutive lines and would pair the wrong ones).")
    circular = f.get("circular") or {}
    dropped = circular.get("n_dropped")
    if dropped:
        notes.append(f"CircularEval: {dropped} question(s) without their rotation-0 row are left out, as VLMEvalKit "
                     f"leaves them out: {_first_ids(circular.get('dropped') or [])}.")
    incomplete = circular.get("incomplete") or []
    if incomplete:
        shown = [f"{g['circular_id']} ({len(g['rotations'])} of {g['of']})" for g in incomplete]
        notes.append(f"CircularEval: {len(incomplete)} question(s) lack some of their rotations and count over "
                     f"those they have (as VLMEvalKit counts them), so 'every' is fewer rotations there: "
                     f"{_first_ids(shown)}.")
    return notes


def _first_ids(ids: list[str], shown: int = 5) -> str:
    """The first ``shown`` ids, then how many more (the JSON lists every one)."""
    more = f" and {len(ids) - shown} more (listed in vca.json)" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def benchmark_tables(f: Any) -> list[Table]:
    """One run's benchmark tables as (title, columns, rows), rates in percent: what the console prints and
    the HTML report shows (MMStar axes, POPE, MME, HallusionBench, CircularEval)."""
    pct = _pct
    out: list[Table] = []
    if f.get("mmstar_axes"):
        out.append(("MMStar accuracy per capability and l2 axis (%)", ["capability / axis", "n", "Acc"],
                    [[r["category"] if r["l2_category"] is None else f"  {r['l2_category']}", r["n"],
                      pct(r["acc"])] for r in f["mmstar_axes"]]))
    if f.get("pope"):
        out.append(("POPE figures (%)", ["category", "n", "Acc", "Prec", "Rec", "F1", "Yes"],
                    [[r["category"], r["n"], pct(r["accuracy"]), pct(r["precision"]), pct(r["recall"]),
                      pct(r["f1"]), pct(r["yes_ratio"])] for r in f["pope"]]))
    if f.get("mme"):
        m = f["mme"]
        out.append(("MME subtasks", ["subtask", "n", "pairs", "acc %", "acc+ %", "score"],
                    [[r["category"], r["n"], r["n_pairs"], pct(r["acc"]), pct(r["acc_plus"]), r["score"]]
                     for r in [*m["subtasks"], m["pooled"]]]))
        out.append(("MME totals (sums of subtask scores)", ["total", "score", "max", "subtasks"],
                    [[r["total"], r["score"], r["max"], f"{r['subtasks']} of {r['of']}"] for r in m["totals"]]))
    if f.get("hallusionbench"):
        out.append(("HallusionBench (%)", ["split", "n", "aAcc", "fAcc", "qAcc"],
                    [[r["split"], r["n"], pct(r["aacc"]), pct(r["facc"]), pct(r["qacc"])]
                     for r in f["hallusionbench"]]))
    if f.get("circular"):
        c = f["circular"]
        out.append(("CircularEval (%)", ["rotation", "n", "Acc", "D-CC"],
                    [[r["rotation"], r["n"], pct(r["acc"]), pct(r["dcc"])] for r in c["per_rotation"]]
                    + [["every", c["n_items"], pct(c["circular_acc"]), pct(c["credited_every_rotation"])]]))
        if c.get("per_category"):
            out.append(("CircularEval per category (%)", ["category", "questions", "Acc"],
                        [[r["category"], r["n_items"], pct(r["circular_acc"])] for r in c["per_category"]]))
    return out
