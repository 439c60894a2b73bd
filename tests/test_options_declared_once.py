"""A backend option is declared once, in its backend's options record, and reaches every layer from there.

The known-answer check adds a dummy field to one record (``HfOptions``, in a fresh interpreter, before the
commands are built) and finds it in ``vca score --help``, accepted by its flag and by ``-o``, in the spec
(``ScoreSpec.of(options=...)``) and in the run's manifest — with no other line of vlaudit changed. Then: ``-o``
converts text to the field's type, and refuses an unknown key, a key of another backend and a value that
does not convert, each in one line naming the backend and its options (as simonw/llm's ``llm -o`` validates
against ``model.Options`` and inspect_ai's ``-M``). Last, ``vca stability``'s second engine: a dummy engine field
added to ``VllmOptions`` is in its ``--help``, taken by its flag and by ``-o``, and reaches the ``vllm:`` engine
that re-scores an ``hf:`` run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import vlaudit
from vlaudit.errors import InputError

pytestmark = pytest.mark.usefixtures("reference_cache")

REPO = Path(__file__).resolve().parents[1]

_DUMMY = textwrap.dedent('''
    import dataclasses, json, sys
    from pathlib import Path

    import vlaudit.backends.options as options
    import vlaudit.backends.registry as registry

    # one new field in one record: what a new vLLM (or hf:) option is
    Dummy = dataclasses.make_dataclass("HfOptions", [("dummy_knob", int, dataclasses.field(default=0, metadata={
        "flag": "--dummy-knob", "min": 0, "help": "A dummy knob, declared once (test only)."}))],
        bases=(options.HfOptions,), frozen=True)
    options.HfOptions = Dummy
    # the registry's entries name the record (in the source, the class itself gains the field)
    entries = registry.REGISTRY._entries
    entries["hf"] = dataclasses.replace(entries["hf"], options=(Dummy,))
    entries["ref"] = dataclasses.replace(entries["ref"], options_by_kind={
        **entries["ref"].options_by_kind, "yesno": (Dummy, options.PlantedOptions)})

    from typer.testing import CliRunner

    import vlaudit
    from vlaudit.commands import _all  # registers every command
    from vlaudit.commands._apps import app

    bench, out = Path(sys.argv[1]), Path(sys.argv[2])
    runner = CliRunner()
    found = {"help": runner.invoke(app, ["vca", "score", "--help"], terminal_width=200).output,
             "features_help": runner.invoke(app, ["features", "--help"], terminal_width=200).output}
    spec = vlaudit.ScoreSpec.of(model="ref:tiny-qwen2-vl", benchmark=bench / "items.jsonl", images=bench / "images",
                                out=out / "api", options={"dummy_knob": 5})
    found["spec"] = spec.model.options.dummy_knob
    for name, given in (("flag", ["--dummy-knob", "3"]), ("o", ["-o", "dummy-knob=4"])):
        done = runner.invoke(app, ["vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark",
                                   str(bench / "items.jsonl"), "--images", str(bench / "images"), "--out",
                                   str(out / name), "--device", "cpu", *given])
        assert done.exit_code == 0, done.output
        found[name] = json.loads((out / name / "manifest.json").read_text())["arguments"].get("dummy_knob")
    refused = runner.invoke(app, ["features", "--model", "ref:tiny-open-clip", "--cycles", "c", "--images",
                                  str(bench / "images"), "--out", str(out / "f"), "-o", "dummy_knob=1"])
    found["dual"] = str(refused.exception)
    print(json.dumps(found))
''')


def test_a_field_added_to_one_record_reaches_help_flag_o_spec_and_manifest(tmp_path, toy_items) -> None:
    bench = tmp_path / "bench"
    toy_items(bench)
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-c", _DUMMY, str(bench), str(tmp_path / "runs")], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "--dummy-knob" in found["help"] and "A dummy knob, declared once (test only)." in found["help"]
    assert "--dummy-knob" not in found["features_help"]  # a dual encoder's record has no such field
    assert found["spec"] == 5
    assert found["flag"] == 3 and found["o"] == 4  # recorded in the run's manifest, by either door
    assert found["dual"] == ("field '-o dummy_knob': the ref: backend of 'ref:tiny-open-clip' takes no -o dummy_knob "
                             "(its options: dtype, revision)")


# ------------------------------------------------------------------------------------------- -o by itself


def _ref(spec: str, *text: str, **options: object) -> vlaudit.ModelRef:
    return vlaudit.model_ref(spec, options, text=text)


def test_o_converts_text_to_each_fields_type() -> None:
    ref = _ref("vllm:some/model", "tensor_parallel_size=2", "gpu-memory-utilization=0.5", "enforce_eager=yes",
               "max_model_len=none", "system=", "attn_implementation=sdpa")
    assert ref.options == vlaudit.VllmOptions(tensor_parallel_size=2, gpu_memory_utilization=0.5,
                                              enforce_eager=True, system="", attn_implementation="sdpa")
    served = _ref("openai:http://127.0.0.1:1/v1#m", "replicas=http://a/v1", "replicas=http://b/v1", "timeout=3")
    assert served.options == vlaudit.EndpointOptions(replicas=("http://a/v1", "http://b/v1"), timeout=3.0)
    planted = _ref("ref:batch-noise", "noise_scale=0.25")  # an API-only field: the record that holds it
    assert planted.options == vlaudit.PlantedOptions(noise_scale=0.25)
    assert _ref("hf:some/model", "trust_remote_code=off").options == vlaudit.HfOptions()


@pytest.mark.parametrize(("spec", "text", "options", "line"), [
    ("hf:some/model", ["tensor_parallel_size=2"], {},
     "field '-o tensor_parallel_size': is a setting of vllm: models, not of 'hf:some/model'"),
    ("hf:some/model", [], {"tensor_parallel_size": 2},
     "field '--tensor-parallel-size': is a setting of vllm: models, not of 'hf:some/model'"),
    ("hf:some/model", ["colour=red"], {},
     "field '-o colour': the hf: backend of 'hf:some/model' has no option 'colour' (its options: "
     "attn_implementation, dtype, max_pixels, min_pixels, revision, system, trust_remote_code)"),
    ("open_clip:ViT-B-32", ["max_pixels=9"], {},
     "field '-o max_pixels': the open_clip: backend of 'open_clip:ViT-B-32' takes no -o max_pixels (its options: "
     "dtype, revision)"),
    ("openai:http://127.0.0.1:1/v1#m", [], {"dtype": "bf16"}, "field '--dtype': openai: models do not take --dtype"),
    ("vllm:some/model", ["block_size=many"], {}, "field '-o block_size': expected int, got 'many'"),
    ("vllm:some/model", ["enforce_eager=perhaps"], {}, "field '-o enforce_eager': expected true or false, got "
                                                       "'perhaps'"),
    ("vllm:some/model", ["block_size"], {}, "field '--model-option': expected KEY=VALUE, got 'block_size'"),
    ("vllm:some/model", ["block_size=16"], {"block_size": 8},
     "field '--block-size': is given twice (by --block-size and by -o block_size)"),
    ("vllm:some/model", ["tensor_parallel_size=0"], {}, "field '--tensor-parallel-size': must be at least 1, got 0"),
])
def test_o_refuses_in_one_line(spec, text, options, line) -> None:
    with pytest.raises(InputError) as refused:
        _ref(spec, *text, **options)
    assert str(refused.value).splitlines() == [line]


def test_another_backends_option_at_its_default_is_no_setting() -> None:
    """A command passes every flag it shows: a flag of another backend left at its default is not set."""
    assert _ref("hf:some/model", block_size=32, concurrency=8, dtype="auto").options == vlaudit.HfOptions()
    assert _ref("openai:http://127.0.0.1:1/v1#m", dtype="auto", min_pixels=None).options == vlaudit.EndpointOptions()
    with pytest.raises(InputError, match="give the model's options in its ModelRef, not beside it"):
        _ref(vlaudit.ModelRef("hf:some/model"), "dtype=bf16")


def test_the_cli_takes_o_and_refuses_a_wrong_key_before_any_file_is_read(cli, one_error_line, tmp_path) -> None:
    args = ["vca", "score", "--model", "hf:some/model", "--benchmark", tmp_path / "b", "--images", tmp_path,
            "--out", tmp_path / "o"]
    line = one_error_line(*cli(*args, "-o", "colour=red"))
    assert "the hf: backend of 'hf:some/model' has no option 'colour'" in line
    line = one_error_line(*cli(*args, "--model-option", "block_size=16"))
    assert "is a setting of vllm: models" in line


def test_every_command_with_backend_flags_says_which_records_it_takes() -> None:
    """The commands built by @model_options carry the records their flags come from, and -o."""
    from vlaudit.commands._introspect import iter_commands, root_command

    decorated = {" ".join(path[1:]): command for path, command in iter_commands(root_command())
                 if getattr(command.callback, "__model_options__", None)}
    assert {"vca score", "vca score-dual", "features", "cycles score-mllm"} <= set(decorated)
    for name, command in decorated.items():
        opts = {opt for p in command.params for opt in p.opts}
        assert {"--model", "-o", "--model-option"} <= opts, name


# ------------------------------------------------------------- vca stability: the second engine's records

_DUMMY_ENGINE = textwrap.dedent('''
    import dataclasses, json
    from types import SimpleNamespace

    import vlaudit.backends.options as options
    import vlaudit.backends.registry as registry

    # one new engine field in VllmOptions: what a new vLLM engine setting is
    Dummy = dataclasses.make_dataclass("VllmOptions", [("dummy_engine", int, dataclasses.field(default=0, metadata={
        "flag": "--dummy-engine", "min": 0, "help": "A dummy engine setting, declared once (test only)."}))],
        bases=(options.VllmOptions,), frozen=True)
    options.VllmOptions = Dummy
    entries = registry.REGISTRY._entries
    entries["vllm"] = dataclasses.replace(entries["vllm"], options=(Dummy,))

    from typer.testing import CliRunner

    import vlaudit
    from vlaudit.backends.vllm.engine_twin import twin_load, twin_settings
    from vlaudit.commands import _all  # registers every command
    from vlaudit.commands._apps import app

    runner = CliRunner()
    found = {"help": runner.invoke(app, ["vca", "stability", "--help"], terminal_width=200).output}
    given = {}

    def measured(run, **kwargs):
        given.update(kwargs)
        raise SystemExit(0)

    vlaudit.measure_stability = measured  # the command's call, as it reaches the API
    for name, args in (("flag", ["--dummy-engine", "3"]), ("o", ["-o", "dummy-engine=4"])):
        done = runner.invoke(app, ["vca", "stability", "RUN", "--perturbations", "engine", *args])
        assert done.exit_code == 0, done.output
        found[name] = given["engine"].dummy_engine
    # and on to the vllm: engine that re-scores an hf: run
    hf_run = SimpleNamespace(spec="hf:/m", device="cpu", batch_size=2,
                             options={"revision": None, "min_pixels": None, "max_pixels": None, "system": None,
                                      "trust_remote_code": False, "dtype": "float32"})
    found["twin"] = twin_load(hf_run, twin_settings(given["engine"]))[0].options.dummy_engine
    print(json.dumps(found))
''')


def test_an_engine_field_added_to_vllm_options_reaches_vca_stability_and_its_second_engine() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-c", _DUMMY_ENGINE], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "--dummy-engine" in found["help"] and "A dummy engine setting, declared once (test only)." in found["help"]
    assert found["flag"] == 3 and found["o"] == 4 and found["twin"] == 4


def test_vca_stability_passes_its_engine_flags_as_records(cli, one_error_line, monkeypatch) -> None:
    given: dict[str, object] = {}

    def measured(run, **kwargs):
        given.update(kwargs, run=run)
        raise InputError("measured")  # the command stops here, with the records it built

    monkeypatch.setattr(vlaudit, "measure_stability", measured)
    line = one_error_line(*cli("vca", "stability", "RUN", "--perturbations", "engine", "--tensor-parallel-size", "2",
                               "--enforce-eager", "--device-map", "auto", "-o", "block_size=16", "--device", "cpu"))
    assert line == "error: measured"
    assert given["engine"] == vlaudit.VllmOptions(tensor_parallel_size=2, enforce_eager=True, block_size=16)
    assert given["engine_run"] == vlaudit.RunOptions(device_map="auto")
    assert given["model"] is None and given["device"] == "cpu"
    one_error_line(*cli("vca", "stability", "RUN", "--model", "hf:some/model"))
    assert given["model"] == "hf:some/model"  # the spec as given: the run's recorded options come with it
    assert given["engine"] == vlaudit.VllmOptions() and given["engine_run"] == vlaudit.RunOptions()
    line = one_error_line(*cli("vca", "stability", "RUN", "-o", "dtype=bfloat16"))
    assert line.startswith("error: field '-o dtype': is not an option taken here (its options: block_size, "
                           "enforce_eager, gpu_memory_utilization, max_model_len, max_num_seqs,")
    line = one_error_line(*cli("vca", "stability", "RUN", "--max-model-len", "8", "-o", "max_model_len=9"))
    assert line == ("error: field '--max-model-len': is given twice (by --max-model-len and by -o "
                    "max_model_len)")


def test_the_second_engine_takes_only_engine_settings_and_a_device_map() -> None:
    from vlaudit.backends.vllm.engine_twin import twin_settings

    assert twin_settings(None, None) == {}
    assert twin_settings(vlaudit.VllmOptions(max_num_seqs=4, enforce_eager=True),
                         vlaudit.RunOptions(device_map="balanced")) == {"max_num_seqs": 4, "enforce_eager": True,
                                                                        "device_map": "balanced"}
    with pytest.raises(InputError, match=r"^field '--dtype': is the run's own setting"):
        twin_settings(vlaudit.VllmOptions(dtype="bfloat16"))
    with pytest.raises(InputError, match=r"^field '--batch-size': the second engine of vca stability does not use"):
        twin_settings(None, vlaudit.RunOptions(batch_size=2))
    record = vlaudit.options_record(vlaudit.VllmOptions, {"tensor_parallel_size": 2},
                                    text=["enforce-eager=yes", "max_model_len=none"])
    assert record == vlaudit.VllmOptions(tensor_parallel_size=2, enforce_eager=True)
    with pytest.raises(InputError, match=r"^field '-o colour': is not an option taken here \(its options: attn_implementation, "):
        vlaudit.options_record(vlaudit.HfOptions, text=["colour=red"])
