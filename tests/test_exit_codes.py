"""One exit-code table for every command: 0 done, 1 an audit or known-answer check failed, 2 bad input
or nothing to do, 3 part of the work failed (resumable), 130 interrupted. Each command's bad-input path is run
through the real entry point in an empty temp folder: exit 2, an error line, and nothing left on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlaudit import errors
from vlaudit.commands._introspect import is_group, is_option, iter_commands, root_command
from vlaudit.scoring.run.shards import IncompleteRunError

REPO = Path(__file__).resolve().parents[1]
LEAVES = [(path[1:], command) for path, command in iter_commands(root_command()) if not is_group(command)]
# positional arguments that name something rather than a file
_NAMES = {"name": "no-such-reference", "spec": "no-such-spec"}


def _bad_input(command, root: Path) -> list[str]:
    """Every required parameter given a value that does not exist (an unknown input file or folder, an
    unknown name); ``--out`` a fresh path. A command that requires no input gets an option it does not have."""
    args: list[str] = []
    for param in command.params:
        if not param.required:
            continue
        if not is_option(param):
            args.append(_NAMES.get(param.name, str(root / "missing-input.jsonl")))
            continue
        name = param.opts[0]
        if name == "--out":
            value = str(root / ("out.json" if param.metavar == "FILE" else "out"))
        elif name == "--model":
            value = "ref:tiny-open-clip"  # never loaded: a missing input is refused first
        elif param.metavar in ("PATH", "FOLDER"):
            value = str(root / f"missing{name}")
        else:
            value = "no-such-value"
        args += [name, value]
    # nothing to get wrong but --out (or nothing at all): an option the command does not have
    return args if [a for a in args if a.startswith("--")] != ["--out"] and args else [*args, "--no-such-option"]


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=lambda value: " ".join(value)
                         if isinstance(value, tuple) else "")
def test_bad_input_exits_2_and_leaves_nothing(path, command, tmp_path, cli, monkeypatch) -> None:
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, out, err = cli(*path, *_bad_input(command, work))
    assert code == errors.EXIT_BAD_INPUT, (out, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err  # click's usage errors too: one line
    assert list(work.iterdir()) == [], "a failed command left files behind"


def _raising(exception: BaseException):
    def run(*args, **kwargs):
        raise exception

    return run


@pytest.mark.parametrize(("exception", "status", "line"), [
    (errors.InputError("bad row", path="items.jsonl", record=3, field="question"), 2,
     "error: items.jsonl, record 3, field 'question': bad row"),
    (IncompleteRunError(
        "1 of 4 shards failed; rerun the same command to score the rest"), 3,
     "error: 1 of 4 shards failed; rerun the same command to score the rest"),
    # `models list` keeps nothing to resume from: it does not claim so
    (KeyboardInterrupt(), 130, "error: interrupted; nothing half-written is left, and the same command starts "
                               "over when rerun"),
    # a library's multi-line exception text inside vlaudit's error: folded onto the one line
    (errors.InputError("cannot load hf:m: Error(s) in loading state_dict:\n\tsize mismatch for w\n\tand b"), 2,
     "error: cannot load hf:m: Error(s) in loading state_dict: size mismatch for w; and b"),
])
def test_each_kind_of_failure_has_its_exit_status(exception, status, line, cli, monkeypatch) -> None:
    import vlaudit

    monkeypatch.setattr(vlaudit, "ConsoleTable", _raising(exception))  # the facade name the command calls
    code, _, err = cli("models", "list")
    assert code == status and err.strip().splitlines() == [line], err


@pytest.mark.parametrize(("args", "line"), [
    (("models", "verbalizers", "nosuch:thing"), "error: unknown model spec 'nosuch:thing'; expected PREFIX:NAME "
     "with PREFIX one of hf:, hf-clip:, open_clip:, ref:, openai:, "
     "vllm: ('vlaudit models list' says what each serves)"),
    (("vca", "score", "--modl", "x"), "error: No such option: --modl (Possible options: --model, --model-name, "
     "--model-option) (see 'vlaudit vca score --help')"),
    (("vca", "reprt"), "error: No such command 'reprt'. Did you mean 'report'? (see 'vlaudit vca --help')"),
    (("vca", "report"), "error: Missing argument 'MARGINS'. (see 'vlaudit vca report --help')"),
])
def test_usage_and_spec_errors_are_one_line(args, line, cli) -> None:
    """An unknown model spec names the spec and the registered prefixes; click's usage errors (usage, hint and
    ``Error:`` on three lines) are one line that says where the options are listed."""
    code, out, err = cli(*args)
    assert code == errors.EXIT_BAD_INPUT and err.strip().splitlines() == [line], err


def test_a_failed_check_exits_1_with_its_results_written(tmp_path, cli, monkeypatch) -> None:
    """``cycles audit`` finding a violation: the audit JSON is written (it says what failed) and the exit is 1.
    (The audit itself is tested on tampered blocks in test_cycles_build_*; here only the status.)"""
    import json

    import vlaudit.api.cycle_files as audit  # the module whose audit the command's API twin calls

    result = {"cycles": "c.jsonl", "annotations": ["a.json"], "rules": {}, "rows": [], "validity_violations": 1,
              "max_abs_signed_degree": 0}
    monkeypatch.setattr(audit, "audit_cycles_file", lambda cycles, annotations: result)
    (tmp_path / "c.jsonl").write_text("")
    code, _, err = cli("cycles", "audit", tmp_path / "c.jsonl", "--annotations", tmp_path / "a.json", "--out",
                       tmp_path / "audit.json")
    assert code == errors.EXIT_CHECK_FAILED and "audit FAILED" in err
    assert json.loads((tmp_path / "audit.json").read_text())["validity_violations"] == 1


def test_the_table_is_in_the_commands_guide_and_the_cli_reference() -> None:
    """Written once, in the commands guide; the docs' CLI reference includes that section."""
    rows = [(errors.EXIT_DONE, "done"), (errors.EXIT_CHECK_FAILED, "check failed"),
            (errors.EXIT_BAD_INPUT, "bad input"), (errors.EXIT_INCOMPLETE, "incomplete"),
            (errors.EXIT_INTERRUPTED, "interrupted")]
    guide = (REPO / "docs" / "guide" / "commands.md").read_text()
    table = guide.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    for status, word in rows:
        assert f"| {status} | {word}" in table, status
    assert "<!-- guide: Exit codes -->" in (REPO / "docs" / "reference" / "cli.md").read_text()


def _toy_margins(path: Path, model: str, ids: range) -> Path:
    """A MARGINS file of ``model`` on the items ``q{k}`` for k in ``ids`` (three contexts, alternating labels)."""
    import json

    rows = [{"model": model, "dataset": "toy", "item_id": f"q{k}", "context": context,
             "margin": (1.0 if k % 2 else -1.0) * (2.0 if context == "original" else 0.5),
             "label": "yes" if k % 2 else "no", "source_sha256": f"img{k}"}
            for k in ids for context in ("original", "text", "blank")]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_compare_vca_with_nothing_shared_exits_2_with_the_reason(cli, tmp_path, one_error_line) -> None:
    """Runs with no shared item are "nothing to do" (exit 2), not two warnings and "wrote
    compare.json and CSV tables" with no CSV; the line says why and what to give instead, and nothing is left."""
    a = _toy_margins(tmp_path / "a" / "margins.jsonl", "a", range(0, 10))
    b = _toy_margins(tmp_path / "b" / "margins.jsonl", "b", range(10, 20))
    line = one_error_line(*cli("compare", "vca", a, b, "--out", tmp_path / "cmp", "--resamples", "20",
                               "--permutations", "20"))
    assert "nothing was compared" in line and "share no" in line and "same ITEMS" in line
    assert not (tmp_path / "cmp").exists()


def test_compare_cycles_under_the_minimum_exits_2_and_names_min_cycles(cli, tmp_path, one_error_line) -> None:
    """Every family under --min-cycles is exit 2 naming --min-cycles and the count that
    would compare; that rerun then works."""
    import json

    cycles = tmp_path / "cycles.jsonl"
    cycles.write_text("".join(json.dumps(
        {"cycle_id": f"c{k}", "family": "f", "image_1": f"u{2 * k - 1}", "caption_1": f"v{2 * k - 1}",
         "image_2": f"u{2 * k}", "caption_2": f"v{2 * k}"}) + "\n" for k in (1, 2, 3)))
    for name, high in (("a", 0.5), ("b", 0.3)):
        (tmp_path / f"{name}.csv").write_text("image_id,caption_id,score\n" + "".join(
            f"u{i},v{j},{high if i == j else 0.25 + 0.01 * i}\n" for i in range(1, 7) for j in range(1, 7)))
    args = ["compare", "cycles", "--cycles", cycles, "--scores", f"a={tmp_path / 'a.csv'}",
            "--scores", f"b={tmp_path / 'b.csv'}", "--out", tmp_path / "cmp", "--resamples", "20"]
    line = one_error_line(*cli(*args))
    assert "nothing was compared" in line and "--min-cycles 3" in line
    assert not (tmp_path / "cmp").exists()
    code, out, err = cli(*args, "--min-cycles", "3")
    assert code == 0 and (tmp_path / "cmp" / "comparisons.csv").is_file(), err
    # each model's CycleAcc beside A − B, whole at 80 columns
    (header,) = [line.split() for line in out.splitlines() if "A − B" in line]
    assert header[:4] == ["family", "A", "B", "A"] and "survives" in header
    assert max(len(line) for line in out.split("wrote")[0].splitlines()) <= 80
