"""A statistics option is declared once, in :class:`vlaudit.StatsOptions`, and every command that resamples builds
its flags from it (``@stats_options``, vlaudit/commands/_stats_options.py).

The known-answer check adds a dummy field to the record (in a fresh interpreter, before the commands are built)
and finds it in the ``--help`` of every resampling command and in the record each command receives — with no
other line of vlaudit changed. Then: ``--cluster`` (and every other statistics flag) has one help text across
the CLI; each flag's help and default are the record's (or the command's own default, listed here); a bad value
is one error line naming the flag; the flags' names are written nowhere else in the command layer; the record
checks itself and the API takes it (``stats=``) beside the loose keywords.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from vca_fixtures import SUPPORT_LABELS, SUPPORT_MARGINS, rows_from_arrays

import vlaudit
from vlaudit import settings
from vlaudit.commands._introspect import is_option, iter_commands, root_command
from vlaudit.errors import InputError

REPO = Path(__file__).resolve().parents[1]
FIELDS = {f.name: f for f in dataclasses.fields(vlaudit.StatsOptions)}

#: every command that resamples, with the record's fields it takes beyond those every one takes
#: (--resamples, --seed); a command added to the CLI that resamples belongs here
RESAMPLING: dict[str, set[str]] = {
    "vca report": {"controls", "level", "cluster"},
    "compare vca": {"controls", "level", "permutations", "cluster"},
    "compare cycles": {"level", "permutations", "cluster"},
    "cycles eval": {"cluster"},
    "suite eval": set(),
    "giveaway": set(),
    "vca factorial": set(),
    "data edits build": set(),
    "data edits analyze": set(),
    "vca validity": {"controls"},
    "vca filter": {"controls"},
    "vca proxies": {"controls"},
}
#: a command's own default of a field, where its setting is not the record's (VCA §19's)
OWN_DEFAULTS: dict[tuple[str, str], object] = {
    ("cycles eval", "seed"): settings.CYCLE_BOOTSTRAP_SEED, ("suite eval", "seed"): settings.CYCLE_BOOTSTRAP_SEED,
    ("vca factorial", "seed"): settings.FACTORIAL_BOOTSTRAP_SEED, ("data edits build", "seed"): settings.EDIT_SEED,
    ("data edits analyze", "seed"): settings.EDIT_SEED,
}
#: a command's own lower bound of a field
OWN_MINIMUMS: dict[tuple[str, str], float] = {("giveaway", "resamples"): 10}
#: the one sentence a command adds to a field's help, where the flag means more there
MORE_HELP: dict[tuple[str, str], str] = {
    ("data edits build", "seed"): "Here also the seed of the shuffle of positive groups."}
EVERY = {name for name, f in FIELDS.items() if not f.metadata.get("some")}


def _commands() -> dict[str, object]:
    return {" ".join(path[1:]): command for path, command in iter_commands(root_command())}


COMMANDS = _commands()


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_resampling_commands_are_the_ones_listed() -> None:
    built = {name: set(command.callback.__stats_options__) for name, command in COMMANDS.items()
             if getattr(getattr(command, "callback", None), "__stats_options__", None)}
    assert built == {name: EVERY | some for name, some in RESAMPLING.items()}
    assert EVERY == {"resamples", "seed"}


# ------------------------------------------------------------------- (a) a field added once reaches every command


_DUMMY = textwrap.dedent('''
    import dataclasses, json, sys

    import vlaudit.analysis.stats_options as stats_options

    seen = []
    Original = stats_options.StatsOptions

    def post_init(self):
        Original.__post_init__(self)
        seen.append(self.dummy_knob)

    # one new field in the record: what a new statistics option is
    Dummy = dataclasses.make_dataclass("StatsOptions", [("dummy_knob", int, dataclasses.field(default=0, metadata={
        "flag": "--dummy-knob", "min": 0, "help": "A dummy statistics knob, declared once (test only)."}))],
        bases=(Original,), frozen=True, namespace={"__post_init__": post_init})
    stats_options.StatsOptions = Dummy

    from typer.testing import CliRunner

    from vlaudit.commands import _all  # registers every command
    from vlaudit.commands._apps import app

    runner = CliRunner()
    found = {}
    for name, args in json.loads(sys.argv[1]).items():
        helped = runner.invoke(app, [*name.split(), "--help"], terminal_width=200).output
        seen.clear()
        runner.invoke(app, [*name.split(), *args, "--dummy-knob", "7"])  # the record is built before any work
        found[name] = {"help": " ".join(helped.split()), "seen": list(seen)}
    print(json.dumps(found))
''')


def _minimal_args(tmp_path: Path) -> dict[str, list[str]]:
    """Arguments each resampling command parses (the files need not hold anything: the record is built, and
    captured, before the command reads them)."""
    table = tmp_path / "margins.csv"
    table.write_text("model\n")
    out = str(tmp_path / "out")
    folder = str(tmp_path)
    return {
        "vca report": [str(table), "--out", out],
        "compare vca": [str(table), str(table), "--out", out],
        "compare cycles": ["--cycles", str(table), "--scores", f"a={table}", "--scores", f"b={table}", "--out", out],
        "cycles eval": ["--cycles", str(table), "--scores", str(table), "--out", str(tmp_path / "out" / "e.json")],
        "suite eval": ["aro-vgr", str(table), "--images", folder, "--model", "ref:tiny-open-clip", "--out", out],
        "giveaway": [str(table), "--out", out],
        "vca factorial": [str(table), "--out", out],
        "data edits build": [str(table), "--images", folder, "--out", out],
        "data edits analyze": [folder, "--consensus", str(table), "--report", folder, "--out", out],
        "vca validity": [str(table), "--out", out],
        "vca filter": [str(table), "--out", out],
        "vca proxies": [str(table), "--out", out],
    }


def test_a_field_added_to_the_record_reaches_every_resampling_commands_help_and_record(tmp_path) -> None:
    args = _minimal_args(tmp_path)
    assert set(args) == set(RESAMPLING)
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-c", _DUMMY, json.dumps(args)], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for name, seen in found.items():
        assert "--dummy-knob" in seen["help"], name
        assert "A dummy statistics knob, declared once (test only)." in seen["help"], name
        assert seen["seen"] == [7], name  # the command received one record, holding the flag's value


# -------------------------------------------------------------- (b, c) one help text per flag; the record's defaults


def _statistics_params() -> list[tuple[str, str, object]]:
    """(command, field, click option) of every statistics flag of every resampling command."""
    out = []
    for name in RESAMPLING:
        for param in COMMANDS[name].params:
            field = next((f for f, meta in FIELDS.items() if meta.metadata["flag"] in param.opts), None)
            if is_option(param) and field is not None:
                out.append((name, field, param))
    return out


def test_every_statistics_flag_has_one_help_text_across_the_cli() -> None:
    """``--cluster`` had two help texts (the margins' and the cycles'); now each flag has the record's one, in
    every command of the CLI that shows it (a command's own sentence, where listed, comes after it)."""
    helps: dict[str, set[str]] = {}
    for path, command in iter_commands(root_command()):
        for param in getattr(command, "params", []):
            for field, meta in FIELDS.items():
                if is_option(param) and meta.metadata["flag"] in param.opts:
                    own = MORE_HELP.get((" ".join(path[1:]), field), "")
                    text = (param.help or "").split(" Paper setting:")[0]
                    helps.setdefault(field, set()).add(text.removesuffix(f" {own}") if own else text)
    assert helps["cluster"] == {FIELDS["cluster"].metadata["help"]}
    for field, texts in helps.items():
        if field != "seed":  # --seed is also the seed of non-statistical draws (scenes, derangements, samples)
            assert texts == {FIELDS[field].metadata["help"]}, field


def test_each_flags_help_default_and_range_are_the_records() -> None:
    params = _statistics_params()
    assert {(name, field) for name, field, _ in params} == {(n, f) for n, some in RESAMPLING.items()
                                                              for f in EVERY | some}
    for name, field, param in params:
        meta = FIELDS[field].metadata
        default = OWN_DEFAULTS.get((name, field), FIELDS[field].default)
        expected = ",".join(default) if isinstance(default, tuple) else default
        assert param.default == expected, (name, field)
        own = MORE_HELP.get((name, field))
        assert param.help.startswith(meta["help"] if own is None else f"{meta['help']} {own}"), (name, field)
        assert param.min == OWN_MINIMUMS.get((name, field), meta.get("min")), (name, field)
        assert param.max == meta.get("max"), (name, field)
        if "metavar" in meta:
            assert param.metavar == meta["metavar"], (name, field)


@pytest.mark.parametrize("name", sorted(RESAMPLING))
def test_the_rendered_help_shows_the_records_text(name, cli) -> None:
    code, out, _ = cli(*name.split(), "--help")
    assert code == 0
    for field in EVERY | RESAMPLING[name]:
        assert _flat(FIELDS[field].metadata["help"]) in _flat(out), (name, field)


# ---------------------------------------------------------------------------------- (d) a bad value, one line

BAD = [("--level", "1.5", "--level"), ("--level", "nan", "--level"), ("--controls", "original", "--controls"),
       ("--controls", "txt", "--controls"), ("--controls", ",", "--controls"), ("--resamples", "0", "--resamples"),
       ("--seed", "-1", "--seed"), ("--cluster", " ", "--cluster"), ("--permutations", "0", "--permutations")]
CASES = [(name, flag, value, named) for name, some in sorted(RESAMPLING.items()) for flag, value, named in BAD
         if next(f for f, m in FIELDS.items() if m.metadata["flag"] == flag) in EVERY | some]


@pytest.mark.parametrize(("name", "flag", "value", "named"), CASES,
                         ids=[f"{n} {f} {v}" for n, f, v, _ in CASES])
def test_a_bad_value_is_one_error_line_naming_the_flag(name, flag, value, named, cli, one_error_line, tmp_path,
                                                        monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = _minimal_args(tmp_path)[name]
    line = one_error_line(*cli(*name.split(), *args, f"{flag}={value}"))
    assert f"Invalid value for '{named}'" in line or f"Invalid value for {named}:" in line, line
    assert not (tmp_path / "out").exists()


def test_the_controls_refusals_say_what_is_wrong(cli, one_error_line, tmp_path) -> None:
    args = _minimal_args(tmp_path)["vca report"]
    line = one_error_line(*cli("vca", "report", *args, "--controls", "text,original"))
    assert line.startswith("error: Invalid value for --controls: give one or more control contexts other than "
                           "'original'"), line
    line = one_error_line(*cli("vca", "report", *args, "--controls", "text,sideways"))
    assert "Invalid value for --controls: unknown context 'sideways' (expected one of original, text" in line


# ------------------------------------------------------------------ (e) the flags are written once, in the record

#: command modules that keep a ``--seed`` of their own: a seed of something that is not resampled (scenes,
#: mismatch derangements, item samples, splits, random weights, annotator shuffles, the demo) — by file
OWN_SEEDS = {"cycles_build.py", "data_mcq.py", "data_scenes.py", "demo.py", "edits.py", "experiment.py",
             "models.py", "vca_generate_check.py", "vca_score.py", "vca_score_dual.py", "vca_stability.py",
             "wording.py"}


def test_the_statistics_flags_are_written_only_in_the_record() -> None:
    modules = {p.name: p.read_text(encoding="utf-8") for p in sorted((REPO / "vlaudit" / "commands").glob("*.py"))}
    for field, meta in FIELDS.items():
        flag = meta.metadata["flag"]
        holding = {name for name, text in modules.items() if re.search(f"[\"']{flag}[\"']", text)}
        if field == "seed":
            assert holding <= OWN_SEEDS, sorted(holding - OWN_SEEDS)
        else:
            assert holding == set(), (flag, sorted(holding))


# --------------------------------------------------------------------------- the record and the API's stats=


def test_the_record_checks_itself_in_one_line_naming_the_flag() -> None:
    for given, line in [({"level": 1.0}, "field '--level': must be a number strictly between 0 and 1, got 1.0"),
                        ({"level": float("nan")}, "field '--level': must be a number strictly between 0 and 1, "
                                                  "got nan"),
                        ({"resamples": 0}, "field '--resamples': must be at least 1, got 0"),
                        ({"seed": 1.5}, "field '--seed': must be a whole number, got 1.5"),
                        ({"permutations": True}, "field '--permutations': must be a whole number, got True"),
                        ({"cluster": ""}, "field '--cluster': give a column or unit name, got ''"),
                        ({"controls": ("text", "original")},
                         "field '--controls': give one or more control contexts other than 'original'"),
                        ({"controls": ()}, "field '--controls': give one or more control contexts other than "
                                           "'original'"),
                        ({"controls": ("sideways",)}, "field '--controls': unknown context 'sideways' (expected "
                                                      "one of original, text, blank, mean, mismatch, rele, irre, "
                                                      "irre-disjoint, blur, patch-shuffle)")]:
        with pytest.raises(InputError) as refused:
            vlaudit.StatsOptions(**given)
        assert str(refused.value).splitlines() == [line], given


def test_the_record_holds_the_papers_settings_and_normal_names() -> None:
    stats = vlaudit.StatsOptions()
    assert (stats.resamples, stats.seed, stats.level) == (5000, 20260719, 0.95)  # VCA §19
    assert stats.controls == ("text", "blank") == settings.PRIMARY_CONTROLS  # VCA §3
    assert (stats.permutations, stats.cluster) == (settings.COMPARE_PERMUTATIONS, None)
    assert vlaudit.StatsOptions(controls=("Text", "grey")).controls == ("text", "blank")
    assert vlaudit.StatsOptions(controls="text, mean").controls == ("text", "mean")  # a comma list too
    assert vlaudit.StatsOptions(level=1 / 2).level == 0.5
    assert "StatsOptions" in vlaudit.__all__ and vlaudit.__all__ is vlaudit.api.__all__


def test_the_api_takes_the_record_as_it_takes_the_keywords(tmp_path) -> None:
    rows = rows_from_arrays(SUPPORT_MARGINS, model="alpha", dataset="vsr", labels=SUPPORT_LABELS)
    loose = vlaudit.vca_report(rows, controls=("text",), n_resamples=60, seed=3, level=0.9, cluster="item_id")
    stats = vlaudit.StatsOptions(controls=("text",), resamples=60, seed=3, level=0.9, cluster="item_id")
    assert vlaudit.vca_report(rows, stats=stats).data == loose.data
    with pytest.raises(InputError, match=r"field 'stats': given in stats= and as seed=: give each option once"):
        vlaudit.vca_report(rows, stats=stats, seed=4)
    with pytest.raises(InputError, match=r"field 'stats': vca_report takes no permutations \(set in stats=\)"):
        vlaudit.vca_report(rows, stats=vlaudit.StatsOptions(permutations=99))


def test_the_decorator_stacks_with_model_options_in_either_order() -> None:
    """``suite eval`` has @model_options outside; the other order builds the same flags and records."""
    import typer
    from typer.testing import CliRunner

    from vlaudit.commands._model_options import model_options
    from vlaudit.commands._stats_options import STATS, stats_options

    seen = []

    def body(*, model: vlaudit.ModelRef, run: vlaudit.RunOptions = vlaudit.RunOptions(),
             stats: vlaudit.StatsOptions = STATS) -> None:
        seen.append((model.spec, run.device, stats))

    with_model = model_options(vlaudit.DualOptions, flags=("dtype",), model_help="A model.", run=("device",))
    with_stats = stats_options("cluster", defaults={"seed": 3})
    app = typer.Typer()
    app.command("inner")(with_model(with_stats(body)))
    app.command("outer")(with_stats(with_model(body)))
    for name in ("inner", "outer"):
        done = CliRunner().invoke(app, [name, "--model", "ref:tiny-open-clip", "--cluster", "image", "--device", "cpu"])
        assert done.exit_code == 0, done.output
    assert seen == [("ref:tiny-open-clip", "cpu", vlaudit.StatsOptions(seed=3, cluster="image"))] * 2
