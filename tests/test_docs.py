"""Documentation that cannot drift: every documented command line names real commands and options, the
offline examples run, every Python example runs, and the generated CLI reference covers every command."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vlaudit.commands._introspect import iter_commands, parse_example, render_markdown, shell_commands

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)
OFFLINE = "# offline"
SAMPLES = Path("docs") / "samples"  # small releases the offline examples read, as from the repository root


def _blocks(language: str) -> list[tuple[str, str]]:
    """(``file:line``, code) of every fenced block of ``language`` in the README and docs/."""
    found = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                line = text[: match.start()].count("\n") + 1
                found.append((f"{path.relative_to(REPO)}:{line}", match.group(2)))
    return found


SHELL_BLOCKS = _blocks("bash")
PYTHON_BLOCKS = _blocks("python")


def test_docs_have_examples() -> None:
    assert len(SHELL_BLOCKS) >= 10 and PYTHON_BLOCKS


@pytest.mark.parametrize(("where", "code"), SHELL_BLOCKS, ids=[w for w, _ in SHELL_BLOCKS])
def test_shell_examples_name_real_commands_and_options(where: str, code: str) -> None:
    for line in shell_commands(code):
        try:
            parse_example(line)
        except ValueError as error:
            pytest.fail(f"{where}: {error}\n  {line}")


def test_a_misspelled_example_is_caught() -> None:
    with pytest.raises(ValueError, match="no option --outt"):
        parse_example("vlaudit cycles eval --cycles c.jsonl --scores s.csv --outt x.json")
    with pytest.raises(ValueError, match="no command 'evaluate'"):
        parse_example("vlaudit cycles evaluate --cycles c.jsonl")
    joined = shell_commands("vlaudit cycles eval --cycles c.jsonl \\\n    --scores s.csv --out e.json  # note\n")
    assert joined == ["vlaudit cycles eval --cycles c.jsonl      --scores s.csv --out e.json  # note"]
    assert parse_example(joined[0]).options == ("--cycles", "--scores", "--out")


#: the question tutorials that tests/test_tutorials.py runs whole (its PAGES), every command in page order from
#: an empty folder: their offline blocks are among those commands (compare.md's is its first block; the
#: others write folders no earlier command of their page reads), so they are not run a second time here
RUN_WHOLE_BY_TEST_TUTORIALS = ("mmstar-credit.md", "compare.md", "decisions-above-the-noise.md",
                               "compositionality-suites.md", "audit-your-negatives.md", "hf-datasets.md",
                               "vca-qwen-vsr.md")
OFFLINE_BLOCKS = [(w, c) for w, c in SHELL_BLOCKS if c.lstrip().startswith(OFFLINE)
                  and not any(w.startswith(f"docs/tutorials/{page}:") for page in RUN_WHOLE_BY_TEST_TUTORIALS)]


def test_the_tutorials_left_out_here_are_the_ones_run_whole() -> None:
    """The pages whose offline blocks this module leaves out are exactly the keys of test_tutorials.PAGES (read
    from its source: no test module imports another)."""
    tree = ast.parse((REPO / "tests" / "test_tutorials.py").read_text(encoding="utf-8"))
    pages = next(node.value for node in tree.body if isinstance(node, ast.AnnAssign)
                 and isinstance(node.target, ast.Name) and node.target.id == "PAGES")
    assert isinstance(pages, ast.Dict)
    assert sorted(ast.literal_eval(key) for key in pages.keys if key is not None) == sorted(RUN_WHOLE_BY_TEST_TUTORIALS)


@pytest.mark.slow
@pytest.mark.parametrize(("where", "code"), OFFLINE_BLOCKS, ids=[w for w, _ in OFFLINE_BLOCKS])
def test_offline_shell_examples_run(where: str, code: str, tmp_path: Path) -> None:
    env = os.environ | {"VLAUDIT_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    shutil.copytree(REPO / SAMPLES, tmp_path / SAMPLES)
    for line in shell_commands(code):
        argv = [sys.executable, "-m", "vlaudit", *shlex.split(line, comments=True)[1:]]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{where}: `{line}` failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize(("where", "code"), PYTHON_BLOCKS, ids=[w for w, _ in PYTHON_BLOCKS])
def test_python_examples_run(where: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    exec(compile(code, where, "exec"), {"__name__": "__docs__"})  # noqa: S102 (the docs' own examples)


def test_cli_reference_covers_every_command() -> None:
    text = render_markdown()
    for path, _ in iter_commands():
        if len(path) > 1:
            assert f"`{' '.join(path)}`" in text, path


def test_one_definition_of_high_confidence() -> None:
    """High confidence is confidence ≥ the run's median (VCA §15) wherever the docs define it."""
    for path in DOC_FILES:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for wrong in ("high = above", "above the median", "above its median", "> median"):
            assert wrong not in text, f"{path.relative_to(REPO)} defines high confidence as '{wrong}'"
    assert "high = confidence ≥ median" in (REPO / "docs" / "guide" / "vca.md").read_text(encoding="utf-8")


def test_naturalbench_docs_cite_the_scorer_that_exists_upstream() -> None:
    """``get_scores`` lives in NaturalBench's ``naturalbench_vqa.py`` (``example.py`` is gone); the family is a
    slug; the figures are the yes/no subset's."""
    tutorial = " ".join((REPO / "docs" / "tutorials" / "two-by-two-benchmarks.md").read_text(encoding="utf-8").split())
    assert "example.py`)" not in tutorial and "`get_scores` in `naturalbench_vqa.py`" in tutorial
    assert "naturalbench-{Source}" not in tutorial and "lower-cased and slugged" in tutorial
    assert "the yes/no subset's" in tutorial
    for module in ("sources/two_by_two.py", "metrics/two_by_two.py", "settings.py"):
        assert "example.py" not in (REPO / "vlaudit" / module).read_text(encoding="utf-8"), module
