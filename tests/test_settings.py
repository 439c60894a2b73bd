"""One source for the papers' settings.

The values are the papers' (a fixture per printed setting), and no default anywhere else in ``vlaudit/``
repeats one as a literal: option defaults, API signatures and dataclass fields read the names in
:mod:`vlaudit.settings`, so a setting changes in one place.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from vlaudit import settings

PACKAGE = Path(__file__).resolve().parents[1] / "vlaudit"


def test_the_papers_values() -> None:
    # VCA §19: "5,000 paired bootstrap resamples with seed 20260719"; "semantic H–L intervals use 2,000";
    # "Pooled intervals use 5,000 resamples of procedural stem ids with seed 20260724"; two-sided 95%.
    assert settings.BOOTSTRAP_RESAMPLES == 5000
    assert settings.BOOTSTRAP_SEED == 20260719
    assert settings.HL_RESAMPLES == 2000
    assert settings.FACTORIAL_BOOTSTRAP_SEED == settings.FACTORIAL_SEED == 20260724  # VCA §10, §19
    assert settings.CONFIDENCE_LEVEL == 0.95
    assert settings.PRIMARY_CONTROLS == ("text", "blank")  # VCA §3: the primary no-image controls
    assert settings.FACTORIAL_STEMS == 50  # VCA §10
    assert settings.FILTER_COVERAGES == (25.0, 50.0, 75.0) and settings.FILTER_PRIMARY_COVERAGE == 50.0  # §16
    # VCA §17: gap ≥ 0.05, IoU ≤ 0.20, 4-px padding, Telea radius 3, 3-px feather, 10% repeats
    assert (settings.EDIT_MIN_GAP, settings.EDIT_MAX_IOU, settings.EDIT_PAD_PX, settings.EDIT_INPAINT_RADIUS,
            settings.EDIT_FEATHER_PX, settings.EDIT_REPEAT_FRACTION) == (0.05, 0.20, 4, 3, 3, 0.10)
    # cycle paper: §D.5 minimum 30 validation cycles; §E.3 rank-64 probes, 8 epochs, batch 512, lr 1e-3,
    # weight decay 1e-4, seeds 0, 1, 2; §E.4 additive probes 5 epochs, shortcut probes 50 epochs at lr 1e-2;
    # §E.5 the synthetic rank control 40 epochs
    assert settings.MIN_CYCLES == 30
    assert (settings.PROBE_RANK, settings.PROBE_EPOCHS, settings.PROBE_BATCH_SIZE, settings.PROBE_LR,
            settings.PROBE_WEIGHT_DECAY) == (64, 8, 512, 1e-3, 1e-4)
    assert settings.CYCLE_SEEDS == (0, 1, 2)
    assert (settings.ADDITIVE_PROBE_EPOCHS, settings.SHORTCUT_PROBE_EPOCHS, settings.SHORTCUT_PROBE_LR) == (5, 50, 1e-2)
    assert settings.SYNTHETIC_RANK_EPOCHS == 40
    assert max(settings.SYNTHETIC_RANK_PEAK, key=settings.SYNTHETIC_RANK_PEAK.get) == 8  # Table 1
    assert settings.SYNTHETIC_RANKS == (1, 2, 4, 8, 16) and settings.RANK_SWEEP[-1] == settings.PROBE_RANK


def test_settings_is_a_leaf() -> None:
    tree = ast.parse((PACKAGE / "settings.py").read_text(encoding="utf-8"))
    imported = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert all(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in imported)


# Where a paper setting would hide as a literal default: (name pattern, values). A default whose name matches
# and whose value is one of these must read the constant from vlaudit.settings instead.
PAPER_LITERALS: list[tuple[str, set[object]]] = [
    (r"resamples", {5000, 2000, 1000}),
    (r"seed", {20260719, 20260724}),
    (r"seeds$", {(0, 1, 2)}),
    (r"min_cycles", {30}),
    (r"(^|_)tol$|tolerance", {1e-9}),
    (r"level", {0.95}),
    (r"coverage|primary", {25.0, 50.0, 75.0, (25.0, 50.0, 75.0)}),
    (r"stems|n_per_relation", {50}),
    (r"ranks$", {(1, 2, 4, 8, 16), (1, 2, 4, 8, 16, 32, 64)}),
    (r"min_gap|max_iou|(^|_)pad$|radius|feather|repeat", {0.05, 0.20, 4, 3, 0.10}),
    (r"controls", {("text", "blank"), "text,blank"}),
]
# Probe optimisation (cycle §E.3–§E.5) outside the reference models, whose own trainers are vlaudit's.
PROBE_LITERALS: list[tuple[str, set[object]]] = [
    (r"epochs", {8, 5, 50, 40}),
    (r"(^|_)lr$", {1e-3, 1e-2}),
    (r"(^|_)rank$", {64}),
    (r"batch", {512}),
    (r"weight_decay", {1e-4}),
]
# Values no other default may hold, whatever its name: only the papers use them.
ANYWHERE = {5000, 20260719, 20260724}


def _literal(node: ast.AST | None) -> object:
    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("Option", "Argument"):
        node = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "default"), None)
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None  # a name (the constant) or an expression: not a literal copy
    return tuple(value) if isinstance(value, list) else value


def _defaults(tree: ast.Module) -> Iterator[tuple[str, object, int]]:
    """(name, literal value, line) of every parameter default, class field and module constant."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True),
                     *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)]
            for arg, default in pairs:
                yield arg.arg, _literal(default), default.lineno
        elif isinstance(node, (ast.ClassDef, ast.Module)):
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    yield statement.target.id, _literal(statement.value), statement.lineno
                elif isinstance(statement, ast.Assign):
                    for target in statement.targets:
                        if isinstance(target, ast.Name):
                            yield target.id, _literal(statement.value), statement.lineno


def _same(value: object, wanted: set[object]) -> bool:
    try:
        return not isinstance(value, bool) and value in wanted  # 30 == 30.0; a flag's True is not a 1
    except TypeError:  # an unhashable default (a dict): no paper setting is one
        return False


def literal_copies(package: Path = PACKAGE) -> list[str]:
    """``path:line: name = value`` for every default in ``package`` that repeats a paper setting."""
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent)
        if path.name == "settings.py" and path.parent == package:
            continue
        rules = PAPER_LITERALS + ([] if "reference" in path.parts else PROBE_LITERALS)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, value, line in _defaults(tree):
            if value is None:
                continue
            lowered = name.lower()
            if any(re.search(pattern, lowered) and _same(value, values) for pattern, values in rules):
                found.append(f"{relative}:{line}: {name} = {value!r}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and type(node.value) is int and node.value in ANYWHERE:
                found.append(f"{relative}:{node.lineno}: literal {node.value}")
    return found


def test_no_paper_setting_is_copied_as_a_literal() -> None:
    copies = literal_copies()
    assert not copies, "read these from vlaudit.settings:\n" + "\n".join(copies)


def test_the_scan_finds_a_planted_copy(tmp_path: Path) -> None:
    """The scan itself: a planted copy in each place a default can hide is found; the named constant is not."""
    package = tmp_path / "vlaudit"
    package.mkdir()
    (package / "planted.py").write_text(
        "import typer\n"
        "from vlaudit.settings import BOOTSTRAP_RESAMPLES\n"
        "LEVEL = 0.95\n"
        "def report(*, n_resamples: int = 5000, seed: int = 20260719, ok: int = BOOTSTRAP_RESAMPLES): ...\n"
        "class Config:\n    min_cycles: int = 30\n    probe_lr: float = 1e-3\n"
        "def cli(tol: float = typer.Option(1e-9, '--tol')): ...\n"
        "x = [20260724]\n", encoding="utf-8")
    found = literal_copies(package)
    assert sorted(f.split(": ", 1)[1] for f in found) == sorted([
        "LEVEL = 0.95", "n_resamples = 5000", "seed = 20260719", "tol = 1e-09", "min_cycles = 30",
        "probe_lr = 0.001", "literal 5000", "literal 20260719", "literal 20260724"]), found


@pytest.mark.parametrize(("command", "option", "setting"), [
    (("cycles", "eval"), "--min-cycles", settings.MIN_CYCLES),
    (("cycles", "eval"), "--resamples", settings.BOOTSTRAP_RESAMPLES),
    (("vca", "report"), "--seed", settings.BOOTSTRAP_SEED),
    (("vca", "factorial"), "--seed", settings.FACTORIAL_BOOTSTRAP_SEED),
    (("vca", "validity"), "--hl-resamples", settings.HL_RESAMPLES),
    (("experiment", "oe"), "--epochs", settings.PROBE_EPOCHS),
    (("vca", "report"), "--controls", ",".join(settings.PRIMARY_CONTROLS)),
    (("vca", "filter"), "--coverage", "25,50,75"),
])
def test_option_defaults_read_the_settings(command: tuple[str, ...], option: str, setting: object) -> None:
    import typer.main

    from vlaudit.cli import app

    group = typer.main.get_command(app)
    for word in command:
        group = group.commands[word]
    [param] = [p for p in group.params if option in p.opts]
    assert param.default == setting
