"""Every numeric option declares its range in the option, so ``--help`` shows it and a value outside it is one
line naming the option (exit 2) before any work; the checks no single option can make (contexts named twice,
Ray options without Ray, a pixel minimum above the maximum, split fractions) live in the run specs and the
split parser, so the Python API refuses them too."""

from __future__ import annotations

import math
import typing
from pathlib import Path

import pytest

import vlaudit
from vlaudit.commands._introspect import is_group, is_option, iter_commands, root_command
from vlaudit.errors import InputError

# a numeric option whose every value means something
UNBOUNDED = {"--yes-threshold": "a threshold on a yes/no margin: any finite real number is one"}


def _numeric_options() -> list[tuple[tuple[str, ...], object]]:
    found = []
    for path, command in iter_commands(root_command()):
        if is_group(command):
            continue
        for param in command.params:
            annotation = param.type_descriptor.annotation if is_option(param) else None
            if is_option(param) and any(t in (int, float) for t in (typing.get_args(annotation) or (annotation,))):
                found.append((path[1:], param))
    return found


NUMERIC = _numeric_options()
RANGED = [(path, p) for path, p in NUMERIC if p.opts[0] not in UNBOUNDED]


def test_every_numeric_option_declares_its_range() -> None:
    unranged = [f"{' '.join(path)} {p.opts[0]}" for path, p in RANGED if p.min is None and p.max is None]
    assert not unranged, f"declare min=/max= in the option: {unranged}"
    assert len(NUMERIC) > 100  # the walk sees every command


def _outside(param) -> list[str]:
    integer = int in (typing.get_args(param.type_descriptor.annotation) or (param.type_descriptor.annotation,))
    values = []
    if param.min is not None:
        values.append(str(int(param.min) - 1) if integer else repr(float(param.min) - 0.5))
    if param.max is not None:
        values.append(str(int(param.max) + 1) if integer else repr(float(param.max) + 0.5))
    return values


CASES = [(path, p.opts[0], value) for path, p in RANGED for value in _outside(p)]


@pytest.mark.parametrize(("path", "option", "value"), CASES, ids=[f"{' '.join(p)} {o} {v}" for p, o, v in CASES])
def test_a_value_outside_the_range_is_one_line_naming_the_option(path, option, value, cli, tmp_path, monkeypatch
                                                                 ) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(*path, option, value)
    assert code == 2 and "Traceback" not in out + err, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: Invalid value for '{option}'"), err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", sorted({" ".join(path) for path, _ in RANGED}))
def test_the_help_shows_each_range(command, cli) -> None:
    code, out, _ = cli(*command.split(), "--help")
    flat = " ".join(out.split())
    assert code == 0 and flat.count("x>=") + flat.count("<=x") >= 1, flat


@pytest.mark.parametrize(("spec", "fraction"), [
    ("train=0.8,val=0.3", "sum to 1.1"), ("train=0.5", "sum to 0.5"), ("train=1.5,val=-0.5", "(0, 1]"),
    ("train=nan,val=0.5", "(0, 1]"), ("train=inf", "(0, 1]"), ("a=0.5,a=0.5", "distinct names"),
    ("train=0,test=1", "(0, 1]"),
])
def test_split_fractions_must_be_fractions_of_one_pool(spec, fraction) -> None:
    from vlaudit.builders.cycles.build_steps import parse_splits

    with pytest.raises(InputError, match=r"field 'splits'") as raised:
        parse_splits(spec)
    assert fraction in str(raised.value)


def test_well_formed_splits_are_kept() -> None:
    from vlaudit.builders.cycles.build_steps import parse_splits

    assert parse_splits("test") == [("test", 1.0)]
    parts = parse_splits("train=0.6,val=0.1,test=0.3")
    assert [n for n, _ in parts] == ["train", "val", "test"] and math.isclose(sum(f for _, f in parts), 1.0)


def _parts(**changes):
    """The flat options a command line gives, routed to the spec's parts: the model's options, RunOptions, the
    executor (RayOptions.chosen) and the data."""
    import dataclasses

    from vlaudit.scoring.run.parts import RayOptions, RunOptions

    def take(names):
        return {k: changes.pop(k) for k in list(changes) if k in names}

    run = take({f.name for f in dataclasses.fields(RunOptions)})
    ray = take({f.name for f in dataclasses.fields(RayOptions)} | {"executor"})
    options = take({f.name for f in dataclasses.fields(vlaudit.PlantedOptions)})
    return {**changes, "options": options, "run": RunOptions(**run),
            "executor": RayOptions.chosen(ray.pop("executor", "local"), **ray)}


def _score_spec(**changes):
    from vlaudit.scoring.run.spec import ScoreSpec

    return ScoreSpec.of(model="ref:tiny-qwen2-vl", benchmark=Path("items.jsonl"), images=Path("images"),
                        out=Path("o"), **_parts(**changes))


@pytest.mark.parametrize(("changes", "line"), [
    ({"contexts": ("original", "text", "text")}, "field '--contexts': names text more than once"),
    ({"workers": 2}, "field '--workers': configures Ray actors; add --executor ray"),
    ({"gpus_per_worker": 1.0, "threads_per_worker": 2}, "(--gpus-per-worker, --threads-per-worker) configure Ray"),
    ({"min_pixels": 5000, "max_pixels": 100}, "field '--min-pixels': 5000 is above --max-pixels 100"),
    ({"batch_size": 0}, "field '--batch-size': must be at least 1, got 0"),
    ({"chunk_size": 0}, "field '--chunk-size': must be at least 1"),
    ({"seed": -1}, "field '--seed': must be at least 0"),
    ({"gpus_per_worker": math.nan, "executor": "ray"}, "field '--gpus-per-worker': must be at least 0.0, got nan"),
])
def test_the_api_refuses_what_the_cli_refuses(changes, line) -> None:
    with pytest.raises(InputError) as raised:
        _score_spec(**changes)
    assert line in str(raised.value)


def test_every_run_spec_checks_its_fields() -> None:
    from vlaudit.scoring.run.spec import CycleScoreSpec, DualScoreSpec, FeaturesSpec

    paths = {"model": "ref:tiny-open-clip", "images": Path("i"), "out": Path("o")}
    with pytest.raises(InputError, match="--contexts"):
        DualScoreSpec.of(benchmark=Path("b"), contexts=("original", "blank", "blank"), **paths)
    with pytest.raises(InputError, match="--batch-size"):
        FeaturesSpec.of(cycles=Path("c"), run=vlaudit.RunOptions(batch_size=0), **paths)
    with pytest.raises(InputError, match="--min-pixels"):
        CycleScoreSpec.of(cycles=Path("c"), options={"min_pixels": 10, "max_pixels": 5},
                          **{**paths, "model": "ref:tiny-qwen2-vl"})
    _score_spec(executor="ray", workers=3, min_pixels=100, max_pixels=100)  # consistent: accepted


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_an_unbounded_threshold_must_still_be_a_number(value, cli, tmp_path, monkeypatch) -> None:
    """Any real threshold is valid, a NaN or an infinite one is not (it would answer No to every block)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.jsonl").write_text('{"cycle_id": "c", "family": "f", "image_1": "u1", "caption_1": "v1", '
                                      '"image_2": "u2", "caption_2": "v2"}\n')
    (tmp_path / "s.csv").write_text("image_id,caption_id,score\nu1,v1,1\nu2,v2,1\nu1,v2,0\nu2,v1,0\n")
    code, out, err = cli("cycles", "eval", "--cycles", "c.jsonl", "--scores", "s.csv", "--out", "e.json",
                         "--min-cycles", "0", "--yes-threshold", value)
    assert code == 2 and "Traceback" not in out + err, (out, err)
    assert err.strip().splitlines() == [f"error: field '--yes-threshold': must be a finite number, got {float(value)!r}"]
    assert not (tmp_path / "e.json").exists()
