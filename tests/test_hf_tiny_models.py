"""Tiny MLLMs built from config (the fixtures of the hf: and scoring tests) and the ``models`` commands.

``tiny_model(family)`` (a session fixture in conftest.py) builds each family once per test session.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("one_torch_thread")

def test_tiny_builder_is_deterministic_and_loads(tiny_model, tmp_path_factory, no_network) -> None:
    from vlaudit.backends.registry import load_backend
    from vlaudit.backends.tiny.mllm import build_tiny_mllm

    first = tiny_model("qwen2-vl")
    again = build_tiny_mllm("qwen2-vl", tmp_path_factory.mktemp("again"), seed=0)
    assert (first / "model.safetensors").read_bytes() == (again / "model.safetensors").read_bytes()
    other = build_tiny_mllm("qwen2-vl", tmp_path_factory.mktemp("other"), seed=1)
    assert (first / "model.safetensors").read_bytes() != (other / "model.safetensors").read_bytes()
    backend = load_backend(f"hf:{first}")
    assert backend.family == "qwen2_vl" and backend.prefix_cache
    assert backend.describe()["dtype"] == "float32"  # fp32 on the CPU by default


def test_unknown_tiny_family_is_rejected(tmp_path) -> None:
    from vlaudit.backends.tiny.mllm import build_tiny_mllm
    from vlaudit.errors import InputError

    with pytest.raises(InputError, match="qwen2-vl"):
        build_tiny_mllm("nope", tmp_path)


def test_models_commands(tmp_path, no_network) -> None:
    from typer.testing import CliRunner

    from vlaudit.commands import models  # noqa: F401  (registers the commands)
    from vlaudit.commands._apps import app

    runner = CliRunner()
    result = runner.invoke(app, ["models", "tiny", "--family", "qwen2.5-vl", "--out", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m" / "config.json").is_file() and "hf:" in result.output
    listed = runner.invoke(app, ["models", "list"])
    assert listed.exit_code == 0 and "hf-clip" in listed.output and "open_clip" in listed.output


ALL_FAMILIES = ("qwen2-vl", "qwen2.5-vl", "qwen3-vl", "llava-onevision", "gemma3", "internvl", "ministral", "clip",
                "siglip", "open_clip")


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_models_tiny_writes_every_family_loadable_by_its_printed_spec(family, tmp_path, no_network) -> None:
    """`vlaudit models tiny --family F` for every tiny family, loaded through the ordinary path by
    the spec the command prints, and used once (one yes/no score or one embedding)."""
    from PIL import Image
    from typer.testing import CliRunner

    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend
    from vlaudit.commands import models  # noqa: F401  (registers the commands)
    from vlaudit.commands._apps import app

    result = CliRunner().invoke(app, ["models", "tiny", "--family", family, "--out", str(tmp_path / family)])
    assert result.exit_code == 0, result.output
    spec = " ".join(result.output.split()).rpartition("load it as ")[2].rstrip(")")
    backend = load_backend(spec, RunOptions(device="cpu"))
    image = Image.new("RGB", (40, 30), (10, 200, 30))
    if spec.startswith("hf:"):
        (scored,) = backend.score([YesNoRequest("k", "Is the cat left of the dog?", image)])
        assert scored.margin == scored.nll_no - scored.nll_yes and scored.nll_yes > 0
    else:
        assert backend.encode_images([image]).shape[0] == backend.encode_texts(["a cat"]).shape[0] == 1


def test_cli_families_are_the_builders_families() -> None:
    from vlaudit.backends.tiny.dual import FAMILIES
    from vlaudit.backends.tiny.mllm import MLLM_FAMILIES

    assert set(ALL_FAMILIES) == set(MLLM_FAMILIES) | set(FAMILIES)


