"""The ``vllm:`` backend's failures and logs where vLLM is not installed (the main environment): a stand-in
``vllm`` module whose engine fails as vLLM's does (tests/vllm/ run the real engine).

What a user would notice: an engine refusal that is neither OSError nor ValueError (vLLM's CPU attention
refusing head_dim 16 raises a RuntimeError from C++, its stack frames in the message) is one line with the way
out, at load and mid-run; a run that crashed before it scored a record does not block the corrected rerun;
``vlaudit models tiny --head-dim 32`` builds the model vLLM's CPU engine accepts; vLLM logs to stderr at
WARNING unless told otherwise; ``vca stability --perturbations engine`` hands the second engine the settings it
needs (a model that needs a GPU server needs it in both engines) and frees the first before the second loads.
"""

from __future__ import annotations

import json
import sys
import types
from types import SimpleNamespace

import pytest

CPU_ATTENTION = ("Unsupported CPU attention configuration: head_dim=16\nException raised from "
                 "cpu_attention_with_kv_cache at csrc/cpu/attention.cpp:120 (most recent call first):\n"
                 "frame #0: c10::Error::Error(...) + 0x9e")


class _Logprob:
    def __init__(self, value: float) -> None:
        self.logprob = value


class FakeLLM:
    """``vllm.LLM``: ``fail_at`` = "load" (the constructor raises), "generate" (every forward raises) or None
    (log-prob −1 for the yes word and −2 for every other asked-for id)."""

    fail_at: str | None = None
    made: list[dict] = []

    def __init__(self, **kwargs: object) -> None:
        FakeLLM.made.append(kwargs)
        if FakeLLM.fail_at == "load":
            raise RuntimeError(CPU_ATTENTION)

    def generate(self, inputs, params, use_tqdm=False):
        if FakeLLM.fail_at == "generate":
            raise RuntimeError(CPU_ATTENTION)
        return [SimpleNamespace(prompt_token_ids=[1, 2, 3], outputs=[SimpleNamespace(
            logprobs=[{i: _Logprob(-1.0 if n == 0 else -2.0) for n, i in enumerate(p.logprob_token_ids)}])])
            for p in params]


@pytest.fixture
def fake_vllm(monkeypatch):
    """A stand-in ``vllm`` (LLM, SamplingParams, platforms.current_platform on the CPU) in sys.modules."""
    module = types.ModuleType("vllm")
    module.LLM = FakeLLM
    module.SamplingParams = lambda **kwargs: SimpleNamespace(**kwargs)
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = SimpleNamespace(is_cpu=lambda: True)
    module.platforms = platforms
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    monkeypatch.setattr(FakeLLM, "fail_at", None)
    monkeypatch.setattr(FakeLLM, "made", [])
    return FakeLLM


def _score(model: str, items, out, *more: str) -> list[str]:
    return ["vca", "score", "--model", model, "--benchmark", str(items), "--images", str(items.parent / "images"),
            "--out", str(out), "--contexts", "original,text", *more]


def test_an_engine_refusal_of_any_type_is_one_line_with_the_way_out(fake_vllm, tiny_model, toy_items, cli,
                                                                    one_error_line, tmp_path) -> None:
    items = toy_items(tmp_path / "bench", n_images=1)
    model = f"vllm:{tiny_model('qwen2-vl')}"
    fake_vllm.fail_at = "load"
    line = one_error_line(*cli(*_score(model, items, tmp_path / "load")))
    assert f"cannot load {model}: RuntimeError: Unsupported CPU attention configuration: head_dim=16" in line
    assert "--head-dim 32" in line and "frame #0" not in line
    # the engine starts, then fails at its first forward: one line, exit 3; the manifest is there, no record
    fake_vllm.fail_at = "generate"
    run = tmp_path / "run"
    code, out, err = cli(*_score(model, items, run))
    assert code == 3 and "Traceback" not in out + err, err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: the vLLM engine of {model} failed: RuntimeError: Unsupported CPU attention")
    assert "rerun the same command" in line
    assert (run / "manifest.json").is_file() and not (run / "summary.json").exists()
    # the corrected rerun, with other arguments, is not refused as "a run with other arguments"
    fake_vllm.fail_at = None
    code, _, err = cli(*_score(model, items, run, "--enforce-eager"))
    assert code == 0, err
    assert json.loads((run / "manifest.json").read_text())["arguments"]["enforce_eager"] is True
    # a run that scored records is still protected
    code, _, err = cli(*_score(model, items, run, "--seed", "3"))
    assert code == 2 and "holds a run with other arguments" in err


def test_vllm_logs_to_stderr_at_warning_unless_the_environment_says_otherwise(fake_vllm, monkeypatch) -> None:
    from vlaudit.backends.vllm.mllm import _import_vllm

    monkeypatch.delenv("VLLM_LOGGING_STREAM", raising=False)
    monkeypatch.setenv("VLLM_LOGGING_LEVEL", "DEBUG")  # the user's own setting stays
    assert _import_vllm() is sys.modules["vllm"]
    import os

    assert os.environ["VLLM_LOGGING_STREAM"] == "ext://sys.stderr" and os.environ["VLLM_LOGGING_LEVEL"] == "DEBUG"


def test_models_tiny_head_dim_32_builds_a_model_vllms_cpu_attention_takes(cli, one_error_line, tmp_path) -> None:
    code, out, err = cli("models", "tiny", "--family", "qwen2-vl", "--head-dim", "32", "--out", tmp_path / "hd32")
    assert code == 0, err
    text = json.loads((tmp_path / "hd32" / "config.json").read_text())["text_config"]
    assert text["hidden_size"] // text["num_attention_heads"] == 32
    line = one_error_line(*cli("models", "tiny", "--family", "gemma3", "--head-dim", "32", "--out", tmp_path / "g"))
    assert "head_dim 32 is not built for tiny gemma3" in line
    line = one_error_line(*cli("models", "tiny", "--family", "clip", "--head-dim", "32", "--out", tmp_path / "c"))
    assert "head_dim is a setting of the tiny MLLMs" in line


def test_the_second_engine_gets_the_settings_it_needs(tmp_path) -> None:
    from vlaudit.backends.options import HfOptions, RunOptions, VllmOptions
    from vlaudit.backends.registry import ModelRef
    from vlaudit.backends.vllm.engine_twin import twin_load
    from vlaudit.errors import InputError

    hf_run = SimpleNamespace(spec="hf:/m", device="cuda", batch_size=4,
                             options={"revision": "r1", "min_pixels": None, "max_pixels": 50176, "system": None,
                                      "trust_remote_code": False, "dtype": "bfloat16"})
    engine = {"tensor_parallel_size": 2, "pipeline_parallel_size": 1, "gpu_memory_utilization": 0.45,
              "max_model_len": 2048, "enforce_eager": True, "device_map": None}
    assert twin_load(hf_run, engine) == (
        ModelRef("vllm:/m", VllmOptions(dtype="bfloat16", revision="r1", max_pixels=50176, tensor_parallel_size=2,
                                        gpu_memory_utilization=0.45, max_model_len=2048, enforce_eager=True)),
        RunOptions(batch_size=4, device="cuda"))
    with pytest.raises(InputError, match=r"'--device-map': the second engine of hf:/m is vllm:/m"):
        twin_load(hf_run, {**engine, "device_map": "auto"})
    # a vllm: run over 4 GPUs: its hf: twin is spread over the GPUs (device_map auto) unless told otherwise
    vllm_run = SimpleNamespace(spec="vllm:/m", device="cuda", batch_size=8, dtype="bfloat16",
                               options=VllmOptions(dtype="bfloat16", tensor_parallel_size=4))
    assert twin_load(vllm_run, None) == (ModelRef("hf:/m", HfOptions(dtype="bfloat16")),
                                         RunOptions(batch_size=8, device="cuda", device_map="auto"))
    assert twin_load(vllm_run, {"device_map": "balanced"})[1].device_map == "balanced"
    single = SimpleNamespace(**{**vars(vllm_run), "options": VllmOptions(dtype="bfloat16")})
    assert twin_load(single, None)[1].device_map is None
    with pytest.raises(InputError, match=r"'--tensor-parallel-size': the second engine of vllm:/m is hf:/m"):
        twin_load(vllm_run, {"tensor_parallel_size": 2})


def test_vca_stability_frees_the_first_engine_before_the_second_loads(fake_vllm, tiny_model, toy_items, cli,
                                                                     one_error_line, tmp_path, monkeypatch) -> None:
    from vlaudit.backends.vllm import engine_twin

    items = toy_items(tmp_path / "bench", n_images=1)
    run = tmp_path / "run"
    code, _, err = cli(*_score(f"hf:{tiny_model('qwen2-vl')}", items, run, "--device", "cpu"))
    assert code == 0, err
    events: list[tuple[str, str, bool]] = []
    release = engine_twin.release_engine

    def recorded(backend) -> None:
        events.append(("release", backend.spec, getattr(backend, "model", None) is not None))
        release(backend)

    monkeypatch.setattr(engine_twin, "release_engine", recorded)
    made = fake_vllm.__init__

    def loading(self, **kwargs) -> None:
        events.append(("load", "vllm", False))
        made(self, **kwargs)

    monkeypatch.setattr(fake_vllm, "__init__", loading)
    code, out, err = cli("vca", "stability", run, "--sample", "2", "--perturbations", "engine,batch-1",
                         "--tensor-parallel-size", "2", "--gpu-memory-utilization", "0.5", "--max-model-len",
                         "2048", "--enforce-eager")
    assert code == 0, err
    hf_spec = f"hf:{tiny_model('qwen2-vl')}"
    # batch-1 first, with the hf: model loaded; then the hf: model is freed; then vLLM loads; then it is freed
    assert [e[:2] for e in events] == [("release", hf_spec), ("load", "vllm"), ("release", f"vllm:{hf_spec[3:]}")]
    assert events[0][2] is True  # it held its weights until then
    (kwargs,) = fake_vllm.made
    assert {k: kwargs.get(k) for k in ("tensor_parallel_size", "gpu_memory_utilization", "max_model_len",
                                       "enforce_eager")} == {"tensor_parallel_size": 2, "gpu_memory_utilization": 0.5,
                                                              "max_model_len": 2048, "enforce_eager": True}
    assert "batch-1:" in out and "engine:" in out
    line = one_error_line(*cli("vca", "stability", run, "--sample", "2", "--perturbations", "engine",
                               "--device-map", "auto", "--out", tmp_path / "other"))
    assert "the second engine of hf:" in line and "--device-map" in line
