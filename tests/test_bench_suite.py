"""``make bench`` (benchmarks/suite.py): figures read from a benchmark's last line and judged against goals."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "suite.py"


def _suite():
    spec = importlib.util.spec_from_file_location("bench_suite", SUITE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_goals_and_last_line() -> None:
    suite = _suite()
    assert suite.last_line_figures("warm-up 3 s\nratio=1.50 peak_gb=1.68 note\n\n") == {"ratio": "1.50",
                                                                                     "peak_gb": "1.68"}
    assert suite.Goal("ratio", "<= 2").check("2") is True and suite.Goal("ratio", "<= 2").check("2.01") is False
    assert suite.Goal("large_s", "< 10").check("10") is False  # a strict bound fails at equality
    assert suite.Goal("max_ci_diff", "<= 1e-12").check("1.11e-16") is True
    assert suite.Goal("identical", "== True").check("True") and not suite.Goal("identical", "== True").check("False")
    assert suite.Goal("threads").check("2") is None  # shown, no goal


def test_every_benchmark_is_in_the_suite_and_the_table_fits_80_columns() -> None:
    suite = _suite()
    scripts = {p.name for p in SUITE.parent.glob("*.py")} - {"suite.py", "peak_memory.py"}
    assert {b.script for b in suite.BENCHMARKS} == scripts
    table = suite.table([("cycle_build_scale", "max_ci_diff=1.11e-16", "<= 1e-12", "yes")])
    assert max(len(line) for line in table.splitlines()) <= 80
