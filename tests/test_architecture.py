"""The package's structure, checked: no import circles, imports at the top of modules, one front door for the CLI.

The layering rule itself (each package imports only from the layers below it) is import-linter's contract in
pyproject.toml, run by ``make lint``; docs/architecture.md explains both.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

import vlaudit

PACKAGE = Path(__file__).resolve().parents[1] / "vlaudit"
# Imported inside a function body only: optional extras (a clear error when missing) and heavy libraries that
# a module needs for one rarely used function. Everything else is imported at the top of its module.
DEFERRABLE = {"torch", "transformers", "open_clip", "ray", "playwright", "cv2", "matplotlib", "sklearn",
              "mistral_common", "datasets", "httpx", "vllm", "spacy", "nltk"}
MAX_IN_FUNCTION_IMPORTS = 40


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """Every import of the package, function bodies included (``if TYPE_CHECKING:`` blocks never run)."""
    return grimp.build_graph("vlaudit", cache_dir=None, exclude_type_checking_imports=True)


@pytest.fixture(scope="module")
def typed_graph() -> grimp.ImportGraph:
    """Every import of the package, ``if TYPE_CHECKING:`` blocks too: a name imported only for its type is
    still a dependency, and a circle hidden behind the guard is a circle all the same."""
    return grimp.build_graph("vlaudit", cache_dir=None, exclude_type_checking_imports=False)


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one member: the import circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return circles


def test_circle_finder_finds_a_planted_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(edges) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_circles_between_modules(graph: grimp.ImportGraph) -> None:
    edges = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    assert strongly_connected(edges) == []


def test_no_import_circles_hidden_behind_type_checking(typed_graph: grimp.ImportGraph) -> None:
    """Two modules that need each other's names share a lower module holding them (the report's
    ``RunEvents`` in ``analysis/vca/events.py``, the demo's ``DemoConfig`` in ``demo/config.py``); an
    ``if TYPE_CHECKING:`` import does not make the circle go away."""
    edges = {module: set(typed_graph.find_modules_directly_imported_by(module)) for module in typed_graph.modules}
    assert strongly_connected(edges) == []


def test_the_type_checking_circle_scan_sees_a_planted_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "planted_circle"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from planted_circle.b import B\n\n\nclass A:\n    b: B\n")
    (package / "b.py").write_text("from __future__ import annotations\n\nfrom typing import TYPE_CHECKING\n\n"
                                  "if TYPE_CHECKING:\n    from planted_circle.a import A\n\n\nclass B:\n"
                                  "    a: A\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    hidden = grimp.build_graph("planted_circle", cache_dir=None, exclude_type_checking_imports=True)
    seen = grimp.build_graph("planted_circle", cache_dir=None, exclude_type_checking_imports=False)

    def circles(g: grimp.ImportGraph) -> list[list[str]]:
        return strongly_connected({m: set(g.find_modules_directly_imported_by(m)) for m in g.modules})

    assert circles(hidden) == []
    assert circles(seen) == [["planted_circle.a", "planted_circle.b"]]


def test_only_the_commands_import_the_package_root(graph: grimp.ImportGraph) -> None:
    """``vlaudit/__init__.py`` is the public facade: the command layer goes through it; below it, modules import
    each other directly (a library module importing the facade would import every layer lazily, upward too)."""
    importers = graph.find_modules_that_directly_import("vlaudit")
    assert {m for m in importers if not m.startswith("vlaudit.commands.")} == set()
    assert "vlaudit.commands.vca_score" in importers


def test_every_top_level_module_has_a_layer() -> None:
    """A new package or leaf module must be placed in the layers contract, or import-linter would not see it."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    placed = {name.strip() for layer in layers for name in re.split(r"[|:]", layer)}
    top_level = {f"vlaudit.{path.stem}" for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    top_level |= {f"vlaudit.{path.parent.name}" for path in PACKAGE.glob("*/__init__.py")}
    assert top_level - placed == set()
    assert placed - top_level == set()


def in_function_imports(root: Path = PACKAGE) -> Iterator[tuple[str, int, str, str]]:
    """(file, line, imported module, source line) of every import statement inside a function body."""
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        lines = source.splitlines()
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = ["." * node.level + (node.module or "")]
                else:
                    continue
                for name in names:
                    yield str(path.relative_to(root.parent)), node.lineno, name, lines[node.lineno - 1]


def test_imports_inside_functions_are_few_deferrable_and_explained() -> None:
    found = list(in_function_imports())
    # a nested function is walked twice (as itself and inside its parent): count each statement once
    statements = {(path, line) for path, line, _, _ in found}
    assert len(statements) <= MAX_IN_FUNCTION_IMPORTS, sorted(statements)
    not_deferrable = [(path, line, name) for path, line, name, _ in found if name.split(".")[0] not in DEFERRABLE]
    assert not_deferrable == []
    unexplained = [(path, line) for path, line, _, text in found if "#" not in text]
    assert unexplained == []


def test_the_in_function_import_scan_sees_a_planted_one(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text("import os\n\n\ndef f():\n    import torch  # heavy\n\n    def g():\n"
                                  "        from .sibling import x\n        return x\n    return torch, g\n")
    found = sorted({(path, line, name) for path, line, name, _ in in_function_imports(package)})
    assert found == [("pkg/m.py", 5, "torch"), ("pkg/m.py", 8, ".sibling")]


def facade_names_used() -> Iterator[tuple[str, str]]:
    """(command module, name) of every ``vlaudit.NAME`` a command module reads from the facade."""
    for path in sorted((PACKAGE / "commands").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "vlaudit":
                yield path.name, node.attr


def test_every_facade_name_a_command_uses_is_exported() -> None:
    used = list(facade_names_used())
    assert len({name for _, name in used}) > 20, "the commands reach the library through the facade"
    assert [(command, name) for command, name in used if name not in vlaudit.__all__] == []


def front_door_contract() -> dict[str, object]:
    contracts = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return next(c for c in contracts["contracts"] if "vlaudit.commands" in c.get("source_modules", ()))


def test_the_front_door_contract_forbids_every_module_but_the_facade_errors_and_settings() -> None:
    # a package added later is forbidden to the commands too: the contract must name it
    modules = {p.stem for p in PACKAGE.glob("*.py")} | {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    allowed = {"__init__", "__main__", "cli", "commands", "errors", "settings", "version"}
    contract = front_door_contract()
    assert contract["type"] == "forbidden"
    # the whole command layer: the entry points and the commands with their helpers (commands/_logs.py among them)
    assert sorted(contract["source_modules"]) == ["vlaudit.__main__", "vlaudit.cli", "vlaudit.commands"]
    assert sorted(contract["forbidden_modules"]) == sorted(f"vlaudit.{m}" for m in modules - allowed)


def test_command_modules_import_only_the_facade_errors_settings_and_each_other() -> None:
    """The commands, cli.py and ``python -m vlaudit`` (which runs cli.py), ``TYPE_CHECKING`` imports included."""
    allowed = ("vlaudit", "vlaudit.errors", "vlaudit.settings", "vlaudit.commands", "vlaudit.cli")
    found = []
    for path in [*sorted((PACKAGE / "commands").glob("*.py")), PACKAGE / "cli.py", PACKAGE / "__main__.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            for name in names:
                if name.startswith("vlaudit") and not (name in allowed or name.startswith("vlaudit.commands.")):
                    if not (name == "vlaudit" and isinstance(node, ast.ImportFrom)
                            and all(a.name in ("settings", "errors") for a in node.names)):
                        found.append((path.name, node.lineno, name))
    assert found == []


def keyword_bags(root: Path) -> Iterator[tuple[str, int, str]]:
    """(file, line, what) of every ``**name`` parameter and every ``f(**mapping)`` call under ``root``."""
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and node.args.kwarg:
                yield str(path.relative_to(root.parent)), node.lineno, f"**{node.args.kwarg.arg}"
            elif isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg is None:
                        yield str(path.relative_to(root.parent)), node.lineno, f"**{ast.unparse(keyword.value)}"


def test_the_public_door_passes_no_untyped_keyword_bags() -> None:
    """No ``**options`` in ``vlaudit/api/``: a backend's options travel as its typed record (``ModelRef(spec,
    options)``, ``RunOptions``), every public function names each keyword it takes, and every call names what
    it passes, so a misspelt option is a type error, not a silently ignored key."""
    assert list(keyword_bags(PACKAGE / "api")) == []


def test_the_keyword_bag_scan_sees_planted_ones(tmp_path: Path) -> None:
    package = tmp_path / "api"
    package.mkdir()
    (package / "m.py").write_text("def f(a, **options):\n    return g(a, **options)\n\n\n"
                                  "def h(x):\n    return {**x, 'k': 1}\n")
    assert list(keyword_bags(package)) == [("api/m.py", 1, "**options"), ("api/m.py", 2, "**options")]
