"""Tiny MLLMs built from config (the fixtures of the hf: and scoring tests) and the ``models`` commands.

``tiny_model(family, factory)`` builds each family once per test session (other test modules import it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("one_torch_thread")

_BUILT: dict[str, Path] = {}


def tiny_model(family: str, factory: pytest.TempPathFactory) -> Path:
    """The directory of a tiny ``family`` model, built on first use in this session."""
    if family not in _BUILT:
        from vlaudit.backends.tiny_mllm import build_tiny_mllm

        _BUILT[family] = build_tiny_mllm(family, factory.mktemp(f"tiny-{family}"), seed=0)
    return _BUILT[family]


def make_benchmark(root: Path, n_images: int = 4, questions: int = 2, extra: tuple[dict, ...] = ()) -> Path:
    """A small real-format benchmark: PNG images of different sizes and an ITEMS JSONL (2 questions each)."""
    import numpy as np
    from PIL import Image

    images = root / "images"
    images.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    rows = []
    relations = ["left of", "right of", "above", "below"]
    for i in range(n_images):
        pixels = rng.integers(0, 256, size=(40 + 8 * (i % 3), 56 + 8 * i, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(images / f"img{i}.png")
        for j in range(questions):
            relation = relations[(i + j) % 4]
            rows.append({"item_id": f"q{i:02d}_{j}", "image": f"img{i}.png",
                         "question": f"Is the cat {relation} the dog?", "label": "yes" if j == 0 else "no",
                         "group_id": f"g{i}", "statement": "true" if j == 0 else "false", "relation": relation,
                         "subject": "cat", "object": "dog", "split": "val",
                         "boxes": {"subject": [2, 2, 10, 10], "object": [20, 20, 12, 12]}})
    rows.extend(extra)
    path = root / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_tiny_builder_is_deterministic_and_loads(tmp_path_factory, no_network) -> None:
    from vlaudit.backends.registry import load_backend
    from vlaudit.backends.tiny_mllm import build_tiny_mllm

    first = tiny_model("qwen2-vl", tmp_path_factory)
    again = build_tiny_mllm("qwen2-vl", tmp_path_factory.mktemp("again"), seed=0)
    assert (first / "model.safetensors").read_bytes() == (again / "model.safetensors").read_bytes()
    other = build_tiny_mllm("qwen2-vl", tmp_path_factory.mktemp("other"), seed=1)
    assert (first / "model.safetensors").read_bytes() != (other / "model.safetensors").read_bytes()
    backend = load_backend(f"hf:{first}")
    assert backend.family == "qwen2_vl" and backend.prefix_cache
    assert backend.describe()["dtype"] == "float32"  # fp32 on the CPU by default


def test_unknown_tiny_family_is_rejected(tmp_path) -> None:
    from vlaudit.backends.tiny_mllm import build_tiny_mllm
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
    """`vlaudit models tiny --family F` for every family the issue names, loaded through the ordinary path by
    the spec the command prints, and used once (one yes/no score or one embedding)."""
    from PIL import Image
    from typer.testing import CliRunner

    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.registry import load_backend
    from vlaudit.commands import models  # noqa: F401  (registers the commands)
    from vlaudit.commands._apps import app

    result = CliRunner().invoke(app, ["models", "tiny", "--family", family, "--out", str(tmp_path / family)])
    assert result.exit_code == 0, result.output
    spec = " ".join(result.output.split()).rpartition("load it as ")[2].rstrip(")")
    backend = load_backend(spec, device="cpu")
    image = Image.new("RGB", (40, 30), (10, 200, 30))
    if spec.startswith("hf:"):
        (scored,) = backend.score([YesNoRequest("k", "Is the cat left of the dog?", image)])
        assert scored.margin == scored.nll_no - scored.nll_yes and scored.nll_yes > 0
    else:
        assert backend.encode_images([image]).shape[0] == backend.encode_texts(["a cat"]).shape[0] == 1


def test_cli_families_are_the_builders_families() -> None:
    from vlaudit.backends.tiny_dual import FAMILIES
    from vlaudit.backends.tiny_mllm import MLLM_FAMILIES

    assert set(ALL_FAMILIES) == set(MLLM_FAMILIES) | set(FAMILIES)


