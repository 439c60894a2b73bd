"""The suite registry: every registered suite says what it reads and how its authors score it, cites the official
code (repo @ commit : path), has its own test file and a row in docs/reference/suites.md; `vlaudit suite list`
reads whole at 80 columns. Written over :data:`SUITES` as it is, so a suite added later is checked the same way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import vlaudit
from vlaudit.analysis.suites.registry import SUITES, suite_named
from vlaudit.errors import InputError

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
NAMES = sorted(SUITES)


def test_the_registry_is_not_empty_and_the_api_lists_it() -> None:
    assert "pairs-suite" in SUITES
    assert [row["name"] for row in vlaudit.suites()] == list(SUITES)


@pytest.mark.parametrize("name", NAMES)
def test_every_suite_states_its_layout_metric_tie_rule_and_source(name: str) -> None:
    suite = SUITES[name]
    assert suite.name == name and re.fullmatch(r"[a-z0-9][a-z0-9.+_-]*", name), name
    for field in ("title", "layout", "metric", "tie_rule", "official"):
        assert str(getattr(suite, field)).strip(), (name, field)
    assert "@" in suite.official and ":" in suite.official, (name, suite.official)  # repo @ commit : path
    assert suite.directions in ("i2t", "t2i", "both"), (name, suite.directions)
    assert callable(suite.read) and callable(suite.outcomes) and callable(suite.aggregate)
    for option, help_text in suite.options:
        assert option.isidentifier() and help_text.strip(), (name, option)


def _test_prefix(name: str) -> str:
    """The file-name prefix of a suite's tests: its name up to the first separator (``aro-vg-relation`` →
    ``aro``, ``vl-checklist`` → ``vl``, ``sugarcrepe++`` → ``sugarcrepe``)."""
    return re.split(r"[^a-z0-9]", name.lower())[0]


@pytest.mark.parametrize("name", NAMES)
def test_every_suite_has_its_own_test_file(name: str) -> None:
    prefix = _test_prefix(name)
    assert prefix, name
    files = sorted(TESTS.glob(f"test_suite_{prefix}*.py"))
    assert files, f"{name}: no tests/test_suite_{prefix}*.py"


@pytest.mark.parametrize("name", NAMES)
def test_every_suite_has_a_row_in_the_reference_table(name: str) -> None:
    page = (REPO / "docs" / "reference" / "suites.md").read_text(encoding="utf-8")
    assert "| suite | layout | official metric | tie rule | official source | test |" in page
    rows = [line for line in page.splitlines() if line.startswith("|")]
    assert any(re.match(rf"\|\s*`?{re.escape(name)}`?\s*\|", line) for line in rows), name


def test_an_unknown_suite_is_refused_with_a_suggestion() -> None:
    with pytest.raises(InputError, match="pairs-suite"):
        suite_named("pairs-suit")


def test_suite_list_reads_whole_at_80_columns(cli, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = cli("suite", "list")
    assert code == 0, err
    lines = out.splitlines()
    assert lines and max(len(line) for line in lines) <= 80
    for name in SUITES:  # every name whole, at the start of its row
        assert any(line.split() and line.split()[0] == name for line in lines), name


def test_reader_options_from_the_command_line_arrive_typed() -> None:
    from vlaudit.commands.suite import _options

    assert _options(["seed=1", "piece_folders=true", "corpus=corpus/v1/vg.yaml", "ratio=0.5"]) == {
        "seed": 1, "piece_folders": True, "corpus": "corpus/v1/vg.yaml", "ratio": 0.5}
    with pytest.raises(InputError, match="NAME=VALUE"):
        _options(["seed"])
