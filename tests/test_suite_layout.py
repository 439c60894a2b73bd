"""How the test suite itself is laid out: shared fixtures live in conftest.py, no test module
imports another, and the ``slow`` marker is what ``make test-fast`` leaves out."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def test_no_test_module_imports_another() -> None:
    """A helper several test modules need is a conftest fixture, not an import of another test module."""
    test_modules = {p.stem for p in TESTS.glob("test_*.py")} | {"conftest"}
    offending = {}
    for path in sorted(TESTS.glob("*.py")):
        bad = sorted(m for m in _imported_modules(path)
                     if m.split(".")[0] in test_modules or m == "tests" or m.startswith("tests."))
        if bad:
            offending[path.name] = bad
    assert not offending, offending


def _markers() -> dict[str, str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(m.split(":", 1) for m in config["tool"]["pytest"]["ini_options"]["markers"])


def test_the_slow_marker_is_registered_used_and_skipped_by_the_fast_target() -> None:
    assert "slow" in _markers()
    marked = [p.name for p in TESTS.glob("test_*.py") if re.search(r"pytest\.mark\.slow\b", p.read_text("utf-8"))]
    assert len(marked) >= 3, marked
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^test-fast:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert target is not None and '-m "not slow"' in target.group(1)
