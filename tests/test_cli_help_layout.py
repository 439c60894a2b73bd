"""What a newcomer reads first: ``vlaudit --help`` lists every command with its whole first sentence (never cut
with "..."), ``--version`` answers, ``vca score --help`` lists each backend's options under its own heading and
its ``--model`` names every yes/no prefix, and a misspelt ``ref:`` name says "did you mean" among the models
of the kind the command takes."""

from __future__ import annotations

import re

import pytest

from vlaudit.backends.registry import backend_entries
from vlaudit.commands._help import OPTION_PANELS, short_help
from vlaudit.commands._introspect import is_group, iter_commands, root_command
from vlaudit.version import __version__


def _help(cli, monkeypatch, *path: str) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = cli(*path, "--help")
    assert code == 0 and not err, err
    return out


def _listed(text: str) -> dict[str, str]:
    """The subcommands of a group's help: name -> its description, its wrapped lines joined."""
    listed: dict[str, str] = {}
    name = None
    for line in text.split("Commands:\n", 1)[1].splitlines():
        match = re.match(r"^  (\S+)\s+(.*)$", line)
        if match:
            name = match.group(1)
            listed[name] = match.group(2)
        elif name and line.strip():
            listed[name] += " " + line.strip()
    return listed


def test_every_group_lists_its_commands_whole(cli, monkeypatch) -> None:
    groups = [(path, command) for path, command in iter_commands(root_command()) if is_group(command)]
    assert len(groups) > 3
    for path, group in groups:
        listed = _listed(_help(cli, monkeypatch, *path[1:]))
        assert set(listed) == set(group.commands)
        for name, sub in group.commands.items():
            assert "..." not in listed[name], (path, name, listed[name])
            assert listed[name] == short_help(sub.help), (path, name)
    top = _listed(_help(cli, monkeypatch))
    assert top["demo"].startswith("Known-answer demo: synthetic controls, exact cycles on procedural scenes")


def test_short_help_is_the_first_sentence_whole() -> None:
    assert short_help("Write a report. It opens offline.") == "Write a report"
    assert short_help("Score margins, e.g. of hf: models, i.e. LLMs.\n\nMore.") == "Score margins, e.g. of hf: models, i.e. LLMs"
    assert short_help("First paragraph without a stop\n\nsecond") == "First paragraph without a stop"
    assert short_help(None) is None


def test_version(cli) -> None:
    code, out, err = cli("--version")
    assert code == 0 and out.strip() == f"vlaudit {__version__}", err


def _sections(text: str) -> dict[str, list[str]]:
    """The option sections of a command's help: heading -> the flags listed under it."""
    sections: dict[str, list[str]] = {}
    heading = None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            heading = line[:-1]
            sections[heading] = []
        elif heading and re.match(r"^  --", line):
            sections[heading].append(line.split()[0])
    return sections


def test_vca_score_help_groups_the_options_by_backend(cli, monkeypatch) -> None:
    text = _help(cli, monkeypatch, "vca", "score")
    sections = _sections(text)
    assert list(sections) == ["Options", *OPTION_PANELS], list(sections)
    for heading, flags in OPTION_PANELS.items():
        assert sections[heading] and set(sections[heading]) <= set(flags), heading
    assert "--tensor-parallel-size" in sections["vllm: engine options"]
    assert "--concurrency" in sections["openai: endpoint options"]
    assert "--workers" in sections["Ray executor options"]
    assert "--device-map" in sections["hf: and vllm: model options"]
    assert {"--model", "--benchmark", "--out", "--contexts"} <= set(sections["Options"])
    assert len(sections["Options"]) < 20  # what every run takes, apart from each backend's own settings
    model_help = " ".join(text.split("--model TEXT", 1)[1].split("--benchmark", 1)[0].split())
    for prefix in (*(e.prefix for e in backend_entries() if e.kinds == ("yesno",)), "ref"):
        assert f"{prefix}:" in model_help, prefix
    assert "openai:URL#MODEL" in model_help


@pytest.mark.parametrize(("command", "wrong", "close", "kind", "other"), [
    (("vca", "score", "--benchmark", "b.jsonl", "--images", "."), "tiny-qwen2vl", "tiny-qwen2-vl",
     "reference multimodal LLM", "tiny-clip"),
    (("vca", "score-dual", "--benchmark", "b.jsonl", "--images", "."), "scene-clip-spatail", "scene-clip-spatial",
     "reference dual encoder", "tiny-qwen2-vl"),
])
def test_a_misspelt_ref_name_says_did_you_mean_among_its_kind(command, wrong, close, kind, other, cli,
                                                              one_error_line, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.jsonl").write_text('{"item_id": "a", "image": "x.png", "question": "Is it?", "label": "yes"}\n')
    line = one_error_line(*cli(*command, "--model", f"ref:{wrong}", "--out", "run"))
    assert f"unknown {kind} {wrong!r} (did you mean {close!r}?)" in line
    known = line.split("; known: ", 1)[1].split(", ")
    assert close in known and other not in known
