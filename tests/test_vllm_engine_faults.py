"""The ``vllm:`` backend's failures and logs where vLLM is not installed (the main environment): a stand-in
``vllm`` module whose engine fails as vLLM's does (tests/vllm/ run the real engine).

What a user would notice: an engine refusal that is neither OSError nor ValueError (vLLM's CPU attention
refusing head_dim 16 raises a RuntimeError from C++, its stack frames in the message) is one line with the way
out, at load and mid-run; a run that crashed before it scored a record does not block the corrected rerun;
``vlaudit models tiny --head-dim 32`` builds the model vLLM's CPU engine accepts; vLLM logs to stderr at
WARNING unless told otherwise.
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
    from vlaudit.backends.vllm_mllm import _import_vllm

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
