"""What the commands print reads whole at 80 columns: warnings wrap between words in a terminal (one line each
when piped), a benchmark's per-tag table has no stray "—" lines, and the tables of one comparison (train, val)
share one layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

WORDS = ("5 cell(s) (coco-box-relation/test 8, coco-object-coarse/test 12, gqa-relation-object/test 9): only a "
         "few cycle clusters (< 20): 95% bootstrap intervals are approximate; read them as rough")


def test_a_warning_wraps_between_words_in_a_terminal_and_is_one_line_when_piped(capsys, monkeypatch) -> None:
    from vlaudit.commands import _say

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(_say, "_terminal", lambda err: True)
    _say.warn(WORDS)
    _say.say(f"warning: {WORDS}")
    err, out = capsys.readouterr().err, capsys.readouterr().out
    for text in (err, out) if out else (err,):
        lines = text.splitlines()
        assert len(lines) > 1 and max(map(len, lines)) <= 80
        assert lines[0].startswith("warning: ") and all(line.startswith("  ") for line in lines[1:])
        assert " ".join(text.split()) == " ".join(f"warning: {WORDS}".split())  # no word cut in two
    monkeypatch.setattr(_say, "_terminal", lambda err: False)
    _say.warn(WORDS)
    assert capsys.readouterr().err == f"warning: {WORDS}\n"


def test_a_commands_warning_wraps_in_a_terminal(cli, tmp_path: Path, monkeypatch) -> None:
    """``cycles audit-pairs`` on an all-positive table warns through the wrapping printer (no typer.secho of a
    whole line that a terminal would break mid-word)."""
    from vlaudit.commands import _say

    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setattr(_say, "_terminal", lambda err: True)
    monkeypatch.chdir(tmp_path)  # relative paths: no temp folder wider than the terminal
    table = Path("pos.jsonl")
    table.write_text("".join(json.dumps({"image_id": f"u{k}", "caption": f"a dog {k}", "label": 1}) + "\n"
                             for k in range(4)))
    code, out, err = cli("cycles", "audit-pairs", str(table), "--out", "audit")
    assert code == 0, err
    warning = [line for line in err.splitlines() if line.strip()]
    assert warning[0].startswith("warning: ") and len(warning) > 1 and max(map(len, warning)) <= 40, err
    assert "no negatives" in " ".join(err.split())


def test_no_command_prints_a_warning_line_around_the_wrapping_printer() -> None:
    for path in (Path(__file__).resolve().parents[1] / "vlaudit" / "commands").glob("*.py"):
        if path.name != "_say.py":
            assert "typer.secho(" not in path.read_text(encoding="utf-8"), path.name


def test_a_benchmark_table_in_blocks_writes_each_tag_once_and_no_dash_lines(capsys, monkeypatch) -> None:
    """Winoground's per-tag table: the tag heads its metrics' rows; printed as blocks (too wide for the
    terminal) the metric rows go under their tag, with no "—" line for the blank tag cell."""
    from vlaudit.commands._render import print_table

    monkeypatch.setenv("COLUMNS", "50")
    metrics = ("CycleAcc", "text", "image", "group")
    rows = [[tag if k == 0 else "", metric, 100, 100, 0.5, "[0.4000, 0.6000]", 3]
            for tag in ("winoground-object", "winoground-relation") for k, metric in enumerate(metrics)]
    print_table("winoground — split test (strict >, a tie loses; unit: cycle)",
                ["tag", "metric", "n", "clusters", "value", "95% CI", "ties"], rows)
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 50
    assert not [line for line in lines if line.strip() == "—"]
    assert [line for line in lines if line.startswith("winoground-")] == ["winoground-object", "winoground-relation"]
    assert sum(line.lstrip().startswith("metric ") for line in lines) == 8


def test_a_benchmark_table_leaves_out_the_cluster_count_that_equals_n_before_printing_blocks(capsys,
                                                                                           monkeypatch) -> None:
    from vlaudit.commands._render import show
    from vlaudit.report.console import benchmark_tables_view
    from vlaudit.results.cycles import BenchmarkEntry
    from vlaudit.results.versioned import record_from_dict

    monkeypatch.setenv("COLUMNS", "80")
    cell = {"n": 400, "n_clusters": 400, "unit": "cycle"}
    for metric in ("cycle_acc", "text", "image", "group"):
        cell |= {metric: 0.5, f"{metric}_ci": [0.4512, 0.5488], f"{metric}_ties": 12}
    entry = record_from_dict(BenchmarkEntry, {"benchmark": "winoground", "metrics": "winoground",
                                              "splits": {"test": {"winoground-relation": cell, "winoground-object": cell}}},
                             path="<entry>")
    show(benchmark_tables_view({"winoground": entry}))
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80
    header = next(line for line in lines if line.split()[:2] == ["tag", "metric"])
    # a table, not blocks: the release's tags and 400 blocks fit once the cluster count (= n) goes
    assert "clusters" not in header and len([line for line in lines if "0.5000" in line]) == 8
    assert not [line for line in lines if line.strip() == "—"]


@pytest.mark.parametrize("columns", ["80", "120"])
def test_compare_cycles_prints_train_and_val_in_one_layout(cli, tmp_path: Path, monkeypatch, columns: str) -> None:
    """A family only in train (a longer name) once made train's table blocks beside val's table; every table
    of a comparison now has the same columns and the same form, and both tie-rate columns go (or stay)
    together."""
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.chdir(tmp_path)
    rows, k = [], 0
    for split, families in (("train", ["coco-same-pair-relation", "gqa-relation-object"]), ("val", ["above"])):
        for family in families:
            for _ in range(32):
                rows.append({"cycle_id": f"c{k}", "family": family, "split": split, "image_1": f"u{2 * k}",
                             "caption_1": f"v{2 * k}", "image_2": f"u{2 * k + 1}", "caption_2": f"v{2 * k + 1}"})
                k += 1
    Path("cycles.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for name, strength in (("scene-clip-spatial", 0.9), ("scene-clip-bag", 0.2)):
        lines = ["image_id,caption_id,score"]
        for q in range(k):
            bump = strength if q % 3 else -strength
            lines += [f"u{i},v{j},{(bump if i == j else 0.0) + 0.01 * ((i * 7 + j) % 5)}"
                      for i in (2 * q, 2 * q + 1) for j in (2 * q, 2 * q + 1)]
        Path(f"{name}.csv").write_text("\n".join(lines) + "\n")
    code, out, err = cli("compare", "cycles", "--cycles", "cycles.jsonl", "--scores",
                         "scene-clip-spatial=scene-clip-spatial.csv", "--scores", "scene-clip-bag=scene-clip-bag.csv",
                         "--out", "cc", "--resamples", "50", "--permutations", "50", "--no-plot")
    assert code == 0, err
    lines = out.splitlines()
    assert max(map(len, lines)) <= int(columns)
    headers = [line.split() for line in lines if line.split()[:1] == ["family"]]
    blocks = [line for line in lines if line.lstrip().startswith("A ")]
    assert bool(headers) != bool(blocks), out  # tables everywhere, or blocks everywhere
    if headers:
        assert len(headers) == 2 and headers[0] == headers[1], out
        assert ("ties" in headers[0]) == (headers[0].count("ties") == 2)
    else:
        assert len(blocks) == len([line for line in lines if line.split()[:1] in (["all"], ["above"])
                                   or line.strip() in ("coco-same-pair-relation", "gqa-relation-object")])


def test_python_and_library_warnings_wrap_in_a_terminal_and_stay_one_line_piped(capsys, monkeypatch) -> None:
    """The CLI's own handlers (a Python warning, a record a library logs) wrap between words at the terminal's
    width, as vlaudit's own warnings do; captured (not a terminal) each is one line, as before."""
    import logging
    import re
    import warnings

    from rich.console import Console

    from vlaudit.cli import _library_logs_as_warnings, _warnings_as_one_line

    message = " ".join(f"word{k}" for k in range(30))
    before = warnings.showwarning
    try:
        _warnings_as_one_line()
        for terminal in (True, False):
            monkeypatch.setattr(Console, "is_terminal", property(lambda self, t=terminal: t))
            monkeypatch.setenv("COLUMNS", "40")
            monkeypatch.setenv("NO_COLOR", "1")
            warnings.showwarning(UserWarning(message), UserWarning, "f.py", 1)
            with _library_logs_as_warnings():
                logging.getLogger("open_clip.factory").warning(message)
            err = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().err)
            lines = err.splitlines()
            if terminal:
                assert len(lines) > 2 and max(map(len, lines)) <= 40, lines
                assert " ".join(err.split()) == f"warning: {message} warning: open_clip.factory: {message}"
            else:
                assert lines == [f"warning: {message}", f"warning: open_clip.factory: {message}"]
    finally:
        warnings.showwarning = before
