"""The ``vllm:`` backend where vLLM is not installed (the main environment): its options, its registry entry,
the engine perturbation's offer, and one-line refusals. The real engine is tested in tests/vllm/."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import vlaudit
from vlaudit.backends.options import HfOptions, VllmOptions
from vlaudit.backends.registry import ModelRef, backend_kind, load_backend
from vlaudit.backends.vllm.engine_twin import ENGINE, engine_perturbation, twin_spec
from vlaudit.errors import InputError, MissingDependencyError
from vlaudit.scoring.stability import choose_perturbations

REPO = Path(__file__).resolve().parents[1]
_FOUND = importlib.util.find_spec("vllm")
NO_VLLM = _FOUND is None or _FOUND.origin is None  # tests/vllm/ is a namespace package "vllm" on the path


def test_a_vllm_spec_is_a_yes_no_model_with_engine_options(tmp_path) -> None:
    assert backend_kind("vllm:Qwen/Qwen2-VL-2B-Instruct") == "yesno"
    assert ModelRef("vllm:some/model").options == VllmOptions()
    spec = vlaudit.ScoreSpec.of(model="vllm:some/model", benchmark=tmp_path / "b", images=tmp_path, out=tmp_path / "o",
                                options={"dtype": "bf16", "system": "", "max_pixels": 12544,
                                         "tensor_parallel_size": 2, "block_size": 16})
    assert spec.model.options == VllmOptions(dtype="bfloat16", system="", max_pixels=12544, tensor_parallel_size=2,
                                             block_size=16)
    # an engine setting of vllm: is refused for another backend, naming its flag; its default is no setting
    with pytest.raises(InputError, match=r"field '--tensor-parallel-size': is a setting of vllm: models"):
        vlaudit.ScoreSpec.of(model="hf:some/model", benchmark=tmp_path / "b", images=tmp_path, out=tmp_path / "o",
                             options={"tensor_parallel_size": 2})
    assert vlaudit.ScoreSpec.of(model="hf:some/model", benchmark=tmp_path / "b", images=tmp_path,
                                out=tmp_path / "o", options={"block_size": 32}).model.options == HfOptions()


def test_enforce_eager_reaches_the_engine_only_when_asked(cli, tmp_path) -> None:
    """``--enforce-eager`` (start-up without torch.compile) is a vLLM engine keyword only when set, so the
    default engine is vLLM's own; another backend refuses the flag naming it, before any file is read."""
    from vlaudit.backends.vllm.mllm import engine_arguments

    def engine(**flags: object) -> dict[str, object]:
        spec = vlaudit.ScoreSpec.of(model="vllm:some/model", benchmark=tmp_path / "b", images=tmp_path,
                                    out=tmp_path / "o", options=flags)
        return engine_arguments("some/model", spec.model.options, dtype="float32", prefix_cache=True)

    assert engine(enforce_eager=True)["enforce_eager"] is True
    assert "enforce_eager" not in engine()
    code, _, err = cli("vca", "score", "--model", "hf:some/model", "--benchmark", str(tmp_path / "b"),
                       "--images", str(tmp_path), "--out", str(tmp_path / "o"), "--enforce-eager")
    assert code != 0 and "--enforce-eager" in err and "vllm:" in err


@pytest.mark.parametrize("field,value,line", [
    ("tensor_parallel_size", 0, "field '--tensor-parallel-size': must be at least 1, got 0"),
    ("gpu_memory_utilization", 1.5, "field '--gpu-memory-utilization': must be in (0, 1], got 1.5"),
    ("block_size", 0, "field '--block-size': must be at least 1, got 0"),
])
def test_bad_engine_settings_are_refused_in_one_line(field, value, line) -> None:
    with pytest.raises(InputError) as refused:
        VllmOptions(**{field: value})
    assert str(refused.value) == line


def test_the_engine_perturbation_pairs_hf_and_vllm_and_is_measured_only_when_named(tiny_model) -> None:
    assert twin_spec("hf:/m") == "vllm:/m" and twin_spec("vllm:/m") == "hf:/m" and twin_spec("ref:x") is None
    backend = load_backend(f"hf:{tiny_model('qwen2-vl')}")
    assert ENGINE in engine_perturbation(backend)
    supported, names = choose_perturbations(backend, None)
    assert ENGINE in supported and ENGINE not in names  # a second model in memory: only when asked for
    assert choose_perturbations(backend, [ENGINE])[1] == [ENGINE]


@pytest.mark.skipif(not NO_VLLM, reason="vllm is installed here: tests/vllm/ load it for real")
def test_loading_vllm_without_vllm_says_how_to_install_it(tiny_model) -> None:
    with pytest.raises(MissingDependencyError, match=r"vllm: models need the vllm package .*make vllm-env"):
        load_backend(f"vllm:{tiny_model('qwen2-vl')}")


def test_the_vllm_prefix_is_listed_and_help_imports_no_engine() -> None:
    code = ("import sys; from vlaudit.cli import run; sys.argv = ['vlaudit', 'vca', 'score', '--help'];\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "assert 'vllm' not in sys.modules and 'vlaudit.backends.vllm.mllm' not in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert "--tensor-parallel-size" in done.stdout and "vllm:DIR" in done.stdout
