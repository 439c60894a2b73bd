"""The type-checking rules of ``make lint``, checked without running mypy (``make lint`` runs it).

The commands call the library as ``vlaudit.NAME(...)``; mypy sees those names only through the
``if TYPE_CHECKING:`` imports of the facade (vlaudit/__init__.py), so each public name needs its import there,
naming the module and attribute the facade resolves at run time; a missing or different one would leave those
calls unchecked without any error. Each ``# type: ignore`` names its error code and says why, and the
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


def type_checking_imports(source: str) -> dict[str, str]:
    """Names bound by the ``if TYPE_CHECKING:`` imports of a module → ``module:attribute``."""
    typed: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for statement in node.body:
            if isinstance(statement, ast.ImportFrom) and statement.module:
                for alias in statement.names:
                    typed[alias.asname or alias.name] = f"{statement.module}:{alias.name}"
    return typed


def test_the_type_checking_scan_reads_a_planted_block() -> None:
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from vlaudit.files import write_json\n"
              "    from vlaudit.report.console import print_table as show\nfrom vlaudit.errors import InputError\n")
    assert type_checking_imports(source) == {"write_json": "vlaudit.files:write_json",
                                             "show": "vlaudit.report.console:print_table"}


def test_every_facade_name_has_the_type_checking_import_it_resolves_to() -> None:
    """The list of public names is the ``if TYPE_CHECKING:`` block of vlaudit/api/__init__.py, read at run time
    too; the facade's own block imports that list whole, so mypy sees each ``vlaudit.NAME`` the facade serves."""
    import vlaudit
    import vlaudit.api

    typed = type_checking_imports((PACKAGE / "api" / "__init__.py").read_text(encoding="utf-8"))
    assert typed == vlaudit.api._EXPORTS
    assert list(typed) == vlaudit.__all__
    facade = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    blocks = [node.body for node in facade.body if isinstance(node, ast.If) and _is_type_checking(node.test)]
    assert [[ast.unparse(statement) for statement in body] for body in blocks] == [["from vlaudit.api import *"]]
    # mypy reads a module-level __all__ it cannot evaluate as "exports nothing": the star import would then bring
    # no name, and every vlaudit.NAME would fall to the facade's __getattr__ (Any), unchecked
    for module in (facade, ast.parse((PACKAGE / "api" / "__init__.py").read_text(encoding="utf-8"))):
        assigned = [node for node in module.body if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
                    and "__all__" in ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target)]
        assert assigned == []


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
    stricter = {"disallow_any_explicit", "disallow_any_generics"}
    for override in config.get("overrides", []):
        assert "ignore_errors" not in override
        # only third-party modules may be marked untyped; vlaudit's own may only be held to stricter rules
        if any(module.startswith("vlaudit") for module in override["module"]):
            assert set(override) - {"module"} <= stricter and all(override[key] is True for key in stricter)


def test_the_public_door_and_the_results_are_held_to_no_explicit_any() -> None:
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    strict = [o for o in config.get("overrides", []) if o.get("disallow_any_explicit")]
    assert {m for o in strict for m in o["module"]} >= {"vlaudit.api.*", "vlaudit.results.*"}
    assert all(o.get("disallow_any_generics") for o in strict)
