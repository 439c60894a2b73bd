"""The compositionality suites in CSV: :func:`suite_csv_rows`, one flat row per figure or cell of a
:class:`SuiteResult`, for ``suite.csv``.

A suite result holds the suite's official figures (value, n items, coverage = n / the file's records read, the
tie rule), then per subset exact CycleAcc with its cycle count (within items + across items) and the marginal
audit's imbalance figures (TV of the image and text marginals between positives and negatives, the
signed-degree imbalance). The console tables of the same are the command line's (``commands/_console.py``).
"""

from __future__ import annotations

from typing import Any

from vlaudit.results.missing import Missing
from vlaudit.results.suites import SuiteResult


def _value(value: float | Missing) -> float | None:
    return None if isinstance(value, Missing) else value


def suite_csv_rows(result: SuiteResult) -> list[dict[str, Any]]:
    """``suite.csv``: one row per official figure (overall and per subset), then per CycleAcc/audit cell."""
    rows: list[dict[str, Any]] = []
    base = {"suite": result.suite, "model": result.model}
    for f in result.figures:
        rows.append({**base, "section": "official", "subset": "all", "key": f.key, "label": f.label,
                     "value": _value(f.value), "n": f.n, "coverage": result.coverage(f), "tie_rule": f.tie_rule,
                     "source": f.source})
        for subset, value in f.subsets.items():
            rows.append({**base, "section": "official", "subset": subset, "key": f.key, "label": f.label,
                         "value": value, "n": None, "coverage": None, "tie_rule": f.tie_rule, "source": f.source})
    for cell in result.cycles:
        rows.append({**base, "section": "cycles", "subset": cell.subset, "key": "cycle_acc", "label": "CycleAcc",
                     "value": cell.cell.cycle_acc, "n": cell.cell.n, "coverage": None,
                     "tie_rule": f"half credit for |Δ| ≤ {result.tol:g}", "source": "cycle paper §2.1"})
    for entry in result.audit:
        for key in ("tv_image", "tv_caption", "tv_caption_length", "degree_imbalance", "degree_imbalance_image",
                    "degree_imbalance_caption"):
            rows.append({**base, "section": "audit", "subset": entry.subset, "key": key, "label": key,
                         "value": getattr(entry, key), "n": entry.pairs, "coverage": None, "tie_rule": None,
                         "source": "cycle paper §2.2"})
    return rows
