"""Run specs built from parts: a model reference with its backend's typed options, how the run is computed
(RunOptions) and where (RayOptions).

* a rerun that changes only the operational parts (RunOptions, RayOptions) or the output folder resumes; one
  that changes a model option is refused, naming the option;
* a model reference with another backend's options class is one line naming both;
* every command's flags and the options classes agree: same flag, default and help, and back.
"""

from __future__ import annotations

import dataclasses
import inspect
import shutil
from pathlib import Path

import pytest

import vlaudit
from vlaudit import DualOptions, HfOptions, ModelRef, PlantedOptions, RayOptions, RunOptions, ScoreSpec
from vlaudit.backends.options import operational_option_names
from vlaudit.commands._introspect import is_option, iter_commands, root_command
from vlaudit.errors import InputError

pytestmark = pytest.mark.usefixtures("reference_cache")


# ----------------------------------------------------------------------------------------------- reruns


def test_a_rerun_may_change_the_run_and_executor_parts_and_the_folder_but_not_a_model_option(tmp_path,
                                                                                              toy_items) -> None:
    from vlaudit.scoring.run.folder import RunFolder

    items = toy_items(tmp_path / "bench", n_images=1)
    spec = ScoreSpec(model=ModelRef("ref:tiny-qwen2-vl"), benchmark=items, images=tmp_path / "bench" / "images",
                     out=tmp_path / "run", contexts=("original", "text"))
    first = vlaudit.score_margins(spec)
    assert first.summary.n_units_scored_now > 0
    loaded = vlaudit.load_model(spec.model, RunOptions(device="cpu"), interfaces=spec.interfaces)  # loaded once

    how = RunOptions(batch_size=3, chunk_size=5, device="cpu", prefix_cache=False, strict=True)
    again = vlaudit.score_margins(dataclasses.replace(spec, run=how), backend=loaded)
    assert again.summary.n_units_scored_now == 0  # resumed from the cache: nothing scored again
    ray = dataclasses.replace(spec, executor=RayOptions(workers=2, gpus_per_worker=1.0))
    RunFolder(spec.out).check(ray, ray.recorded(first_items(spec)))  # accepted (no Ray started here)

    moved = tmp_path / "moved"
    shutil.copytree(spec.out, moved)
    assert vlaudit.score_margins(dataclasses.replace(spec, out=moved), backend=loaded
                                 ).summary.n_units_scored_now == 0

    for options, changed in ((HfOptions(system="qwen-neutral"), "system: None → 'qwen-neutral'"),
                             (HfOptions(min_pixels=64), "min_pixels: None → 64"),
                             (HfOptions(dtype="bf16"), "dtype: 'auto' → 'bfloat16'")):
        other = dataclasses.replace(spec, model=ModelRef("ref:tiny-qwen2-vl", options))
        with pytest.raises(InputError) as refused:
            vlaudit.score_margins(other, backend=loaded)
        assert f"holds a run with other arguments ({changed})" in str(refused.value)
        assert len(str(refused.value).splitlines()) == 1


def first_items(spec: ScoreSpec) -> list:
    from vlaudit.sources.items import read_items

    return read_items(spec.benchmark)


# the names a rerun may change before specs were built from parts: the parts must give exactly these
_SCORE_OPERATIONAL = {"out", "batch_size", "device", "device_map", "chunk_size", "prefix_cache", "strict",
                      "executor", "address", "workers", "gpus_per_worker", "threads_per_worker"}


@pytest.mark.parametrize(("kind", "operational"), [
    ("ScoreSpec", _SCORE_OPERATIONAL),
    ("DualScoreSpec", {"out", "batch_size", "device"}),
    ("FeaturesSpec", {"out", "batch_size", "device", "executor", "address", "workers", "gpus_per_worker",
                      "threads_per_worker"}),
    ("CycleScoreSpec", {"out", "run_dir", "batch_size", "device", "chunk_size", "executor", "address", "workers",
                        "gpus_per_worker", "threads_per_worker"}),
])
def test_what_a_rerun_may_change_follows_from_the_parts(kind, operational, tmp_path, toy_items) -> None:
    from vlaudit.sources.items import read_items

    spec_class = getattr(vlaudit, kind)
    required = _required(spec_class, tmp_path)
    if kind == "ScoreSpec":
        required["benchmark"] = toy_items(tmp_path / "bench")
    spec = spec_class.of(**required)
    recorded = (spec.recorded(read_items(required["benchmark"])) if kind == "ScoreSpec"
                else spec.recorded("Is it {caption}?") if kind == "CycleScoreSpec" else spec.recorded())
    assert set(recorded) & spec_class.OPERATIONAL == operational
    held = {f.name for part in (RunOptions, RayOptions) for f in dataclasses.fields(part)}
    held |= set(operational_option_names())  # an endpoint's replicas, concurrency, retries, ...
    assert spec_class.OPERATIONAL - {"out", "run_dir", "executor"} == held  # nothing but the parts' fields


def _required(spec_class: type, tmp_path: Path) -> dict[str, object]:
    """The keywords ``spec_class.of`` needs, as paths under ``tmp_path`` (and a model of the right kind)."""
    required: dict[str, object] = {name: tmp_path / name for name, p in inspect.signature(spec_class.of).parameters.items()
                                   if p.default is inspect.Parameter.empty}
    dual = spec_class.COMMAND in ("vca score-dual", "features")
    required["model"] = "ref:tiny-open-clip" if dual else "ref:tiny-qwen2-vl"
    return required


def test_a_run_field_a_command_does_not_use_is_refused(tmp_path) -> None:
    with pytest.raises(InputError, match=r"field '--chunk-size': features does not use chunk_size"):
        vlaudit.FeaturesSpec(model=ModelRef("ref:tiny-open-clip"), cycles=tmp_path / "c", images=tmp_path,
                             out=tmp_path / "o", run=RunOptions(chunk_size=5))
    with pytest.raises(InputError, match=r"field '--batch-size': must be at least 1, got 0"):
        RunOptions(batch_size=0)
    with pytest.raises(InputError, match=r"field '--workers': configures Ray actors; add --executor ray"):
        RayOptions.chosen("local", workers=2)
    assert RayOptions.chosen("ray", workers=2) == RayOptions(workers=2)


# --------------------------------------------------------------------------------------- options classes


@pytest.mark.parametrize(("spec", "options", "line"), [
    ("hf:some/model", DualOptions(), "'hf:some/model' takes HfOptions, not DualOptions"),
    ("hf:some/model", PlantedOptions(), "'hf:some/model' takes HfOptions, not PlantedOptions"),
    ("open_clip:ViT-B-32", HfOptions(), "'open_clip:ViT-B-32' takes DualOptions, not HfOptions"),
    ("hf-clip:some/clip", HfOptions(), "'hf-clip:some/clip' takes DualOptions, not HfOptions"),
    ("ref:tiny-open-clip", HfOptions(), "'ref:tiny-open-clip' takes DualOptions, not HfOptions"),
    ("ref:batch-noise", DualOptions(), "'ref:batch-noise' takes HfOptions or PlantedOptions, not DualOptions"),
])
def test_another_backends_options_are_one_line_naming_both(spec, options, line) -> None:
    with pytest.raises(InputError) as refused:
        ModelRef(spec, options)
    assert str(refused.value).splitlines() == [f"field 'model.options': {line}"]


def test_a_model_ref_gets_its_prefixs_default_options() -> None:
    assert ModelRef("hf:some/model").options == HfOptions()
    assert ModelRef("open_clip:ViT-B-32").options == DualOptions()
    assert ModelRef("ref:tiny-open-clip").options == DualOptions()
    assert ModelRef("ref:batch-noise", PlantedOptions(noise_scale=0.5)).options.noise_scale == 0.5
    with pytest.raises(InputError, match="give the model's options in its ModelRef"):
        ScoreSpec.of(model=ModelRef("hf:some/model"), benchmark=Path("b"), images=Path("i"), out=Path("o"),
                     options={"dtype": "bf16"})



@pytest.mark.parametrize(("build", "line"), [
    (lambda: ScoreSpec.of(model="hf-clip:some/clip", benchmark="b", images="i", out="o", options={"min_pixels": 64}),
     "field '--min-pixels': the hf-clip: backend of 'hf-clip:some/clip' takes no --min-pixels (its options: "
     "dtype, revision)"),
    (lambda: ScoreSpec.of(model="ref:tiny-open-clip", benchmark="b", images="i", out="o",
                          options={"system": "qwen-neutral"}),
     "field '--system': the ref: backend of 'ref:tiny-open-clip' takes no --system (its options: dtype, "
     "revision)"),
    (lambda: vlaudit.CycleScoreSpec.of(model="open_clip:ViT-B-32", cycles="c", images="i", out="o",
                                       options={"max_pixels": 9}),
     "field '--max-pixels': the open_clip: backend of 'open_clip:ViT-B-32' takes no --max-pixels (its options: "
     "dtype, revision)"),
])
def test_an_option_the_backend_does_not_take_is_refused_naming_the_backend(build, line) -> None:
    """An option of another backend kind is refused in one line, not dropped unseen on the way to the
    model's own options class."""
    with pytest.raises(InputError) as refused:
        build()
    assert str(refused.value).splitlines() == [line]


def test_the_options_both_kinds_hold_carry_over_to_the_backends_class() -> None:
    spec = ScoreSpec.of(model="ref:tiny-open-clip", benchmark="b", images="i", out="o", options={"dtype": "bf16"})
    assert spec.model.options == DualOptions(dtype="bfloat16")


# ------------------------------------------------------------------------------ the flags and the options


_COMMANDS = {("vca", "score"): "ScoreSpec", ("vca", "score-dual"): "DualScoreSpec", ("features",): "FeaturesSpec",
             ("cycles", "score-mllm"): "CycleScoreSpec"}
_RENAMED = {"interface": "interfaces"}  # the one flag whose option name differs from the spec's keyword


def _command(path: tuple[str, ...]):
    for found, command in iter_commands(root_command()):
        if tuple(found[1:]) == path:
            return command
    raise AssertionError(path)


def _params(path: tuple[str, ...]) -> dict[str, object]:
    return {p.name: p for p in _command(path).params if is_option(p)}


_VLLM_COMMANDS = [("vca", "score"), ("cycles", "score-mllm")]  # the commands that take a vllm: model's engine flags


@pytest.mark.parametrize("path,prefix", [(p, None) for p in _COMMANDS] + [(p, "vllm") for p in _VLLM_COMMANDS],
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else str(v))
def test_every_option_field_has_its_flag_and_every_flag_maps_back(path, prefix, tmp_path) -> None:
    spec_class = getattr(vlaudit, _COMMANDS[path])
    params = _params(path)
    required = _required(spec_class, tmp_path)
    if prefix is not None:  # a vllm: model: its VllmOptions fields (the engine's settings) have flags too
        required["model"] = f"{prefix}:{tmp_path / 'model'}"
    spec = spec_class.of(**required)
    parts = [(spec.model.options, True), (spec.run, "batch_size")]  # batch_size: each command's own help
    if "executor" in params:
        parts.append((RayOptions(), True))
    of_keywords = set(inspect.signature(spec_class.of).parameters)
    # the command's backend options reach the spec through ``options`` (by name) and its run flags through
    # ``run``: the options classes the command's @model_options names, and RunOptions
    declared = _command(path).callback.__model_options__
    assert {"options", "run"} <= of_keywords, path
    by_part = {f.name for kind in declared for f in dataclasses.fields(kind)} | {
        f.name for f in dataclasses.fields(RunOptions)} | {"model_option"}
    if "executor" in of_keywords:  # the Ray flags reach it through ``executor`` (RayOptions.chosen)
        by_part |= {f.name for f in dataclasses.fields(RayOptions)}
    for part, same_help in parts:
        for f in dataclasses.fields(part):
            flag = f.metadata["flag"]
            if flag is None:  # an API-only option (attn_implementation, the planted knobs)
                continue
            param = params.get(f.name)
            if param is None:  # a run field this command has no use for must be at its default
                assert getattr(part, f.name) == f.default and f.name not in of_keywords, (path, f.name)
                continue
            assert flag in param.opts, (path, f.name, param.opts)
            assert param.default == getattr(part, f.name) or (f.name == "dtype" and param.default == "auto")
            if same_help is True or (same_help and f.name != same_help):
                assert param.help.split("  [default:")[0] == f.metadata["help"], (path, f.name)
            if "min" in f.metadata:
                assert param.min == f.metadata["min"], (path, f.name)
    # and back: every flag is a keyword of the spec the command builds, but those that decide what the command
    # does with a run, not what the run computes (replace it; accept it below a coverage)
    for name in params:
        assert (name in ("overwrite", "min_coverage") or _RENAMED.get(name, name) in of_keywords
                or name in by_part), (path, name)
