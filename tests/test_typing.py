"""The type-checking rules of ``make lint``, checked without running mypy (``make lint`` runs it).

mypy sees a command module's library calls only through the ``if TYPE_CHECKING:`` import that stands beside
each lazy handle (commands/_lazy.py); a handle without its twin, or a twin naming another module, would leave
those calls unchecked without any error. Each ``# type: ignore`` names its error code and says why, and the
configuration silences no module wholesale.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "vlaudit"
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[a-z-, ]+\])?(?P<rest>.*)$")


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def handle_pairs(source: str) -> tuple[dict[str, str], dict[str, str]]:
    """(names bound by ``if TYPE_CHECKING:`` imports → module, lazy handles in its ``else:`` → module)."""
    typed: dict[str, str] = {}
    lazy: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for statement in node.body:
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    typed[alias.asname or alias.name] = alias.name
            elif isinstance(statement, ast.ImportFrom) and statement.module:
                for alias in statement.names:
                    typed[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
        for statement in node.orelse:
            if (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
                    and isinstance(statement.value.func, ast.Name) and statement.value.func.id == "lazy_module"):
                target = statement.targets[0]
                assert isinstance(target, ast.Name)
                argument = statement.value.args[0]
                assert isinstance(argument, ast.Constant)
                lazy[target.id] = str(argument.value)
    return typed, lazy


def stray_handles(source: str) -> list[str]:
    """``lazy_module`` calls outside an ``if TYPE_CHECKING: … else:`` pair (mypy would see only ModuleType)."""
    tree = ast.parse(source)
    paired = {id(statement.value) for node in tree.body
              if isinstance(node, ast.If) and _is_type_checking(node.test)
              for statement in node.orelse if isinstance(statement, ast.Assign)}
    return [ast.unparse(node) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "lazy_module"
            and id(node) not in paired]


def test_the_handle_scan_finds_a_planted_mismatch() -> None:
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import vlaudit.tables as tables\n"
              "    from vlaudit.report import console\nelse:\n    tables = lazy_module('vlaudit.tables')\n"
              "    console = lazy_module('vlaudit.report.html')\nloose = lazy_module('numpy')\n")
    typed, lazy = handle_pairs(source)
    assert typed == {"tables": "vlaudit.tables", "console": "vlaudit.report.console"}
    assert lazy == {"tables": "vlaudit.tables", "console": "vlaudit.report.html"}
    assert stray_handles(source) == ["lazy_module('numpy')"]


def test_every_lazy_handle_has_its_type_checking_twin() -> None:
    checked = 0
    for path in sorted((PACKAGE / "commands").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        typed, lazy = handle_pairs(source)
        assert stray_handles(source) == [], path.name
        assert typed == lazy, path.name
        checked += len(lazy)
    assert checked > 0


def ignores(root: Path = PACKAGE) -> Iterator[tuple[str, int, str, str]]:
    """(file, line, the ignore comment, the line above) of every ``# type: ignore`` in the package."""
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            found = IGNORE.search(line)
            if found:
                above = lines[number - 2].strip() if number > 1 else ""
                yield str(path.relative_to(root.parent)), number, found.group(0), above


def unexplained(found: Iterator[tuple[str, int, str, str]]) -> list[tuple[str, int]]:
    """Ignores without an error code, or without a reason (a comment after it or on the line above)."""
    bad = []
    for path, number, comment, above in found:
        match = IGNORE.search(comment)
        assert match is not None
        reason = match.group("rest").strip().startswith("#") or above.startswith("#")
        if match.group("codes") is None or not reason:
            bad.append((path, number))
    return bad


def test_the_ignore_scan_sees_planted_ones(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text("a = 1  # type: ignore\nb = 2  # type: ignore[misc]\n"
                                  "c = 3  # type: ignore[misc]  # why\n# why\nd = 4  # type: ignore[misc]\n")
    assert unexplained(ignores(package)) == [("pkg/m.py", 1), ("pkg/m.py", 2)]


def test_every_type_ignore_names_its_code_and_says_why() -> None:
    assert unexplained(ignores()) == []


def test_mypy_silences_no_module_wholesale() -> None:
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["packages"] == ["vlaudit"]
    assert "ignore_errors" not in config and "ignore_missing_imports" not in config
    for override in config.get("overrides", []):
        assert "ignore_errors" not in override
        # only third-party modules may be marked untyped, never vlaudit's own
        assert not any(module.startswith("vlaudit") for module in override["module"])
