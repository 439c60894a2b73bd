"""What a console shows is a typed view the library returns; how rich prints it lives in the command layer.

The view builders of the door (``vlaudit.cycle_table_view``, ``vlaudit.giveaway_view``, ...) return a
:class:`vlaudit.ConsoleView` of tables and lines; ``vlaudit/commands/_render.py`` (``show``) is the one rich
renderer; the door exports no ``print_*`` function and no library module below the command layer imports rich.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import vlaudit
from vlaudit.results.cycles import CycleAccCell, CycleEvaluationResult

ROOT = Path(__file__).resolve().parents[1] / "vlaudit"


def _evaluation(unit: str = "cycle", n_clusters: int = 10) -> CycleEvaluationResult:
    cell = CycleAccCell(n=10, cycle_acc=0.75, ties=1, tie_rate=0.1, ci=(0.5, 0.9), unit=unit, n_clusters=n_clusters)
    return CycleEvaluationResult(families={"coco-box-relation": {"test": cell}}, unavailable={}, splits=["test"],
                                 min_cycles=1, tol=0.0, n_resamples=100, seed=0, warnings=[])


def test_the_cycle_table_view_is_one_typed_table_and_the_units_line() -> None:
    view = vlaudit.cycle_table_view(_evaluation(), title="CycleAcc — c.jsonl")
    assert view == vlaudit.ConsoleView((
        vlaudit.ConsoleTable("CycleAcc — c.jsonl (split: test; unit: cycle)",
                             ["family", "split", "n", "clusters", "CycleAcc", "ties", "tie rate", "95% CI"],
                             [["coco-box-relation", "test", 10, 10, 0.75, 1, 0.1, "[0.500, 0.900]"]],
                             identifiers=2, droppable=("clusters", "ties")),
        vlaudit.ConsoleText("resampling unit: the cycle (n cycles = n clusters); cycles that share an image are "
                            "resampled as independent, so where many do the intervals are too narrow "
                            "(--cluster image joins them)")))
    (table,) = view.tables
    # values stay values; cells() is the text they print as (4 decimals by default)
    assert table.rows[0][4] == 0.75
    assert table.cells() == [["coco-box-relation", "test", "10", "10", "0.7500", "1", "0.1000", "[0.500, 0.900]"]]
    clustered = vlaudit.cycle_table_view(_evaluation(unit="image", n_clusters=4))
    assert clustered.tables[0].droppable == ("ties",)
    assert clustered.lines == ["resampling unit: image (cycles that share an image, directly or through others, "
                               "resampled together); each row names its number of clusters"]


def test_cells_and_lines_read_as_printed() -> None:
    table = vlaudit.ConsoleTable("t", ["a", "b", "c", "d"], [[None, float("nan"), 1 / 3, "x [y]"]], digits=2)
    assert table.cells() == [["—", "nan", "0.33", "x [y]"]]
    assert [vlaudit.ConsoleText("t", kind).line for kind in ("line", "warning", "note")] == \
        ["t", "warning: t", "note: t"]
    assert vlaudit.ConsoleText("m: n=3", "plain", lead="n per quantity").line == "n per quantity m: n=3"
    pair = vlaudit.ConsoleTables([("train", [["f", 1]]), ("val", [["g", 2]])], ["family", "n"])
    assert [(t.title, t.rows) for t in vlaudit.ConsoleView((pair,)).tables] == [("train", (("f", 1),)),
                                                                                 ("val", (("g", 2),))]


def test_show_prints_a_view_at_the_terminal_width(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from vlaudit.commands._render import show

    monkeypatch.setenv("COLUMNS", "80")
    show(vlaudit.cycle_table_view(_evaluation(), title="CycleAcc — c.jsonl"))
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        "                CycleAcc — c.jsonl (split: test; unit: cycle)",
        "",
        " family              split    n   CycleAcc   ties   tie rate           95% CI",
        " ────────────────────────────────────────────────────────────────────────────",
        " coco-box-relation   test    10     0.7500      1     0.1000   [0.500, 0.900]",
        "",
        "resampling unit: the cycle (n cycles = n clusters); cycles that share an image",
        "  are resampled as independent, so where many do the intervals are too narrow",
        "  (--cluster image joins them)"]
    show(vlaudit.ConsoleText("[bold]kept[/bold] as written", "warning"))
    assert capsys.readouterr().out == "warning: [bold]kept[/bold] as written\n"


def test_the_door_exports_view_builders_and_no_printer() -> None:
    assert not [name for name in vlaudit.__all__ if name.startswith("print_")]
    builders = [name for name in vlaudit.__all__ if name.endswith("_view")]
    assert {"cycle_table_view", "benchmark_tables_view", "giveaway_view", "validity_view", "filter_view",
            "proxies_view", "compare_view", "compare_cycles_view", "vca_report_view"} <= set(builders)
    for name in builders:
        assert inspect.signature(getattr(vlaudit, name)).return_annotation == "ConsoleView", name


def test_rich_is_imported_only_by_the_command_line() -> None:
    """The library says what a console shows; only cli.py and commands/ print with rich."""
    printing = sorted(str(path.relative_to(ROOT)) for path in ROOT.rglob("*.py")
                      if path.parts[len(ROOT.parts)] not in ("commands", "cli.py")
                      and any(line.startswith(("from rich", "import rich"))
                              for line in path.read_text(encoding="utf-8").splitlines()))
    assert printing == []
