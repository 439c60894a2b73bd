"""``--help`` of every command reads whole in an 80-column terminal: every flag name whole, no typer ``<str>``
tags, brackets shown as written, every option's default said; and it loads no numpy, pyarrow or torch."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vlaudit.commands._introspect import is_group, is_option, iter_commands, root_command

ROOT = root_command()
COMMANDS = list(iter_commands(ROOT))
TYPER_TAG = re.compile(r"<(str|int|float|bool|path|file|directory|[a-z]+ range|list\[[a-z]+\])>")


def _help(path: tuple[str, ...], cli, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = cli(*path[1:], "--help")
    assert code == 0 and not err, err
    return out


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=lambda value: " ".join(value) if
                         isinstance(value, tuple) else "")
def test_help_reads_whole_at_80_columns(path, command, cli, monkeypatch) -> None:
    text = _help(path, cli, monkeypatch)
    too_wide = [line for line in text.splitlines() if len(line) > 80]
    assert not too_wide, too_wide
    # wrapped between words only: no line ends inside a hyphenated name ("patch-/shuffle")
    cut = [line for line in text.splitlines() if re.search(r"[\w/]-$", line)]
    assert not cut, cut
    assert not TYPER_TAG.search(text) and "\\[" not in text, text
    words = set(text.split())
    for param in command.params:
        if not is_option(param):
            continue
        for name in (*param.opts, *param.secondary_opts):
            assert name in words or f"{name}," in words, f"{name} not whole in:\n{text}"
    flat = " ".join(text.split())
    for param in command.params:
        # brackets in a help string reach the terminal as written (no rich markup swallows "[ray]")
        for bracketed in re.findall(r"\[[^\]\s]+\]", param.help or ""):
            assert bracketed in flat, (param.opts, bracketed)
    if is_group(command):
        for name in command.commands:
            assert name in words


def test_executor_help_shows_the_ray_extra(cli, monkeypatch) -> None:
    flat = " ".join(_help(("vlaudit", "vca", "score"), cli, monkeypatch).split())
    assert "pip install 'vlaudit[ray]'" in flat


LEAVES = [(path, command) for path, command in COMMANDS if not is_group(command)]


def test_every_option_says_its_default() -> None:
    """Shown by click (``[default: …]``), stated in the help text, or the option is required."""
    silent = []
    for path, command in LEAVES:
        ctx = type(command).context_class(command, info_name=path[-1])
        for param in command.params:
            if not is_option(param) or "--help" in param.opts:
                continue
            record = " ".join(param.get_help_record(ctx) or ())
            if "default" not in record.lower() and "[required" not in record:
                silent.append(f"{' '.join(path[1:])} {param.opts[0]}")
    assert not silent, silent


def test_paper_settings_name_their_paper(cli, monkeypatch) -> None:
    flat = " ".join(_help(("vlaudit", "cycles", "eval"), cli, monkeypatch).split())
    assert "Paper setting: the cycle paper's minimum, §D.5. [default: 30; x>=0]" in flat
    # 5,000 resamples are the VCA paper's (§19); the cycle paper has no bootstrap
    assert ("Paper setting: the VCA paper's bootstrap count, VCA §19 (the cycle paper states no bootstrap). "
            "[default: 5000; x>=1]") in flat
    assert "cycle §D.5" not in flat.split("--resamples")[1].split("--")[0]
    flat = " ".join(_help(("vlaudit", "vca", "report"), cli, monkeypatch).split())
    assert "Paper setting: VCA §19. [default: 20260719; x>=0]" in flat
    flat = " ".join(_help(("vlaudit", "data", "factorial"), cli, monkeypatch).split())
    assert "Paper setting: VCA §10. [default: 20260724; x>=0]" in flat  # the factorial's seed, not another's
    flat = " ".join(_help(("vlaudit", "vca", "factorial"), cli, monkeypatch).split())
    # the stem bootstrap's seed (its help is vlaudit.StatsOptions' one --seed text)
    assert "(same seed, same numbers). Paper setting: VCA §19. [default: 20260724; x>=0]" in flat
    flat = " ".join(_help(("vlaudit", "vca", "score"), cli, monkeypatch).split())
    assert "--strict Fail on any missing/corrupt image instead of recording it. [default: off]" in flat
    assert "--workers INTEGER" in flat and "--model TEXT" in flat and "--benchmark PATH" in flat


def test_brackets_escaped_for_rich_show_plainly() -> None:
    """A help string written for rich markup (``\\[@SPLIT]``) shows its brackets without the backslash."""
    import typer

    from vlaudit.commands._help import polish

    demo = typer.Typer(rich_markup_mode=None)

    @demo.command()
    def read(source: str = typer.Argument(..., help=r"hf-dataset:NAME\[:CONFIG]\[@SPLIT]"),
             extra: str = typer.Option("x", "--extra", help=r"pip install 'vlaudit\[ray]'")) -> None:
        """Read \\[it]."""

    command = polish(typer.main.get_command(demo))
    ctx = type(command).context_class(command, info_name="read")
    text = command.get_help(ctx)
    assert "hf-dataset:NAME[:CONFIG][@SPLIT]" in text and "'vlaudit[ray]'" in text and "Read [it]." in text
    assert "\\[" not in text


def test_no_help_imports_numpy_pyarrow_or_torch() -> None:
    """The commands reach the library through the lazy facade, so ``vlaudit --help`` and every ``vlaudit COMMAND
    --help`` render from the command signatures alone. One fresh interpreter renders them all in turn: modules
    only accumulate, so none loaded at the end means none loaded by any one help."""
    code = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from vlaudit.cli import app\n"
        "for path in [[]] + json.loads(sys.argv[1]):\n"
        "    r = CliRunner().invoke(app, [*path, '--help'])\n"
        "    assert r.exit_code == 0, (path, r.output)\n"
        "print(','.join(m for m in ('numpy', 'pyarrow', 'torch', 'pandas', 'transformers') if m in sys.modules))\n"
    )
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    paths = json.dumps([list(path[1:]) for path, _ in COMMANDS])
    done = subprocess.run([sys.executable, "-c", code, paths], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "", f"--help imported heavy modules: {done.stdout.strip()}"
