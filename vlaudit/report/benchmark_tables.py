"""The benchmarks' own tables of a VCA run, as the console prints them and the HTML report shows them.

Each run's ``benchmark`` section (:mod:`vlaudit.analysis.vca.benchmark`) holds only its own benchmark's figures,
so each table here appears on that benchmark's runs only: MMStar's MG/ML and axes, POPE, MME (subtasks, the
official totals, vlaudit's pooled row), HallusionBench, CircularEval. Rates are percent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vlaudit.results.missing import Missing
from vlaudit.results.vca.benchmark import BenchmarkFigures, MmstarGain

#: MMStar's size: its evaluator divides by 1,500 whatever was scored (250 per capability)
MMSTAR_SIZE = 1500
GAIN_TITLE = "Multimodal gain and leakage (%, MMStar)"
GAIN_COLUMNS = ["run", "Acc", "Acc text", "MG", "ML"]
CATEGORY_COLUMNS = ["category", "n", "Acc", "Dep", "D-CC", "C-U"]
Table = tuple[str, list[str], list[list[Any]]]


def pct(value: float | Missing | None) -> float | Missing | None:
    """A fraction as percent; Missing (its reason printed) and None as they are."""
    return value if value is None or isinstance(value, Missing) else 100.0 * value


def gain_rows(figures: Sequence[tuple[str, BenchmarkFigures]]) -> list[list[Any]]:
    """MMStar's Acc, Acc text, MG and ML per (run name, benchmark figures) of an MMStar run; a missing ML is a
    bare ``—`` whose reason :func:`gain_notes` prints under the table (``ML — for RUN: reason``: too long for
    a cell of an 80-column table)."""
    return [[n, pct(g.acc_image), pct(g.acc_text), pct(g.mg), None if isinstance(g.ml, Missing) else pct(g.ml)]
            for n, f in figures if (g := f.mmstar) is not None]


def gain_notes(runs: Sequence[tuple[str, int | None, BenchmarkFigures]]) -> list[str]:
    """Why an MMStar run's ML is missing, and MMStar's fixed divisor when fewer items were scored; ``runs``:
    (name, n, benchmark figures) of each run."""
    gains: list[tuple[str, int | None, MmstarGain]] = [(name, n, f.mmstar) for name, n, f in runs
                                                        if f.mmstar is not None]
    notes = [f"ML — for {name}: {gain.ml.reason}" for name, _, gain in gains if isinstance(gain.ml, Missing)]
    if any(n != MMSTAR_SIZE for _, n, _ in gains):
        notes.append(f"Acc is over the items scored (n); MMStar's evaluator divides by a fixed {MMSTAR_SIZE} "
                     f"(250 per capability), the same on the full release.")
    return notes


def benchmark_notes(f: BenchmarkFigures) -> list[str]:
    """What a reader of one run's benchmark tables must know: MME questions outside acc+ (CircularEval's
    dropped or incomplete questions: :func:`benchmark_warnings`)."""
    notes = []
    if f.mme is not None:
        half = sum(r.n - 2 * r.n_pairs for r in f.mme.subtasks)
        if half:
            notes.append(f"MME: {half} question(s) without their image's other question count in acc, not in acc+ "
                         f"(MME's calculation.py pairs consecutive lines and would pair the wrong ones).")
    return notes


def benchmark_warnings(f: BenchmarkFigures) -> list[str]:
    """What changes what one run's CircularEval figures are over (printed as ``warning:``, as every other
    warning): questions dropped for a missing rotation-0 row, questions short of some rotations."""
    notes: list[str] = []
    circular = f.circular
    if circular is None:
        return notes
    if isinstance(circular.dropped, Missing):
        notes.append(f"CircularEval: questions without their rotation-0 row: {circular.dropped}.")
    elif circular.dropped:
        notes.append(f"CircularEval: {len(circular.dropped)} question(s) without their rotation-0 row are left out, "
                     f"as VLMEvalKit leaves them out: {_first_ids(circular.dropped)}.")
    if isinstance(circular.incomplete, Missing):
        notes.append(f"CircularEval: questions short of some rotations: {circular.incomplete}.")
    elif circular.incomplete:
        shown = [f"{g.circular_id} ({len(g.rotations)} of {g.of})" for g in circular.incomplete]
        notes.append(f"CircularEval: {len(shown)} question(s) lack some of their rotations and count over "
                     f"those they have (as VLMEvalKit counts them), so 'every' is fewer rotations there: "
                     f"{_first_ids(shown)}.")
    return notes


def _first_ids(ids: list[str], shown: int = 5) -> str:
    """The first ``shown`` ids, then how many more (the JSON lists every one)."""
    more = f" and {len(ids) - shown} more (listed in vca.json)" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def category_rows(f: BenchmarkFigures) -> list[list[Any]]:
    """n, Acc, Dep, D-CC and C-U (percent) per benchmark category of one run (VCA §12 within each)."""
    return [[r.category, r.n, pct(r.acc), pct(r.dep), pct(r.dcc), pct(r.cu)] for r in f.categories or []]


def benchmark_tables(f: BenchmarkFigures) -> list[Table]:
    """One run's benchmark tables as (title, columns, rows), rates in percent: what the console prints and
    the HTML report shows (MMStar axes, POPE, MME, HallusionBench, CircularEval)."""
    out: list[Table] = []
    if f.mmstar_axes:
        out.append(("MMStar accuracy per capability and l2 axis (%)", ["capability / axis", "n", "Acc"],
                    [[r.category if r.l2_category is None else f"  {r.l2_category}", r.n, pct(r.acc)]
                     for r in f.mmstar_axes]))
    if f.pope:
        out.append(("POPE figures (%)", ["category", "n", "Acc", "Prec", "Rec", "F1", "Yes"],
                    [[r.category, r.n, pct(r.accuracy), pct(r.precision), pct(r.recall), pct(r.f1),
                      pct(r.yes_ratio)] for r in f.pope]))
    if f.mme is not None:
        m = f.mme
        out.append(("MME subtasks", ["subtask", "n", "pairs", "acc %", "acc+ %", "score"],
                    [[r.category, r.n, r.n_pairs, pct(r.acc), pct(r.acc_plus), r.score]
                     for r in [*m.subtasks, m.pooled]]))
        out.append(("MME totals (sums of subtask scores)", ["total", "score", "max", "subtasks"],
                    [["—", m.totals, None, None]] if isinstance(m.totals, Missing) else
                    [[r.total, r.score, r.max, f"{r.subtasks} of {r.of}"] for r in m.totals]))
    if f.hallusionbench:
        out.append(("HallusionBench (%)", ["split", "n", "aAcc", "fAcc", "qAcc"],
                    [[r.split, r.n, pct(r.aacc), pct(r.facc), pct(r.qacc)] for r in f.hallusionbench]))
    if f.circular is not None:
        c = f.circular
        out.append(("CircularEval (%)", ["rotation", "n", "Acc", "D-CC"],
                    [[r.rotation, r.n, pct(r.acc), pct(r.dcc)] for r in c.per_rotation]
                    + [["every", c.n_items, pct(c.circular_acc), pct(c.credited_every_rotation)]]))
        if c.per_category:
            out.append(("CircularEval per category (%)", ["category", "questions", "Acc"],
                        [[r.category, r.n_items, pct(r.circular_acc)] for r in c.per_category]))
    return out
