"""One dtype vocabulary: every spelling is accepted by every backend family that runs it,
and a backend that cannot run a dtype says what it supports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlaudit.backends.dtypes import DTYPE_SPELLINGS, check_supported, parse_dtype, resolve_dtype
from vlaudit.errors import InputError

# spelling → the dtype a model loaded on the CPU runs (auto is float32 there)
ON_CPU = {"fp32": "float32", "float32": "float32", "half": "float16", "fp16": "float16", "float16": "float16",
          "bf16": "bfloat16", "bfloat16": "bfloat16", "BFloat16": "bfloat16", "auto": "float32"}


def test_every_spelling_and_its_dtype() -> None:
    assert {spelling: resolve_dtype(spelling, "cpu") for spelling in ON_CPU} == ON_CPU
    assert set(DTYPE_SPELLINGS) | {"BFloat16"} == set(ON_CPU)
    assert resolve_dtype("auto", "cuda") == resolve_dtype("auto", "cuda:1") == "bfloat16"
    assert resolve_dtype(None, "cpu") == "float32" and parse_dtype(None) == "auto"
    assert parse_dtype(" FP16 ") == "float16"


@pytest.mark.parametrize("bad", ["float8", "float64", "int8", "", "bfloat"])
def test_an_unknown_spelling_lists_the_vocabulary(bad: str) -> None:
    with pytest.raises(InputError) as info:
        parse_dtype(bad, field="--dtype")
    message = str(info.value)
    assert repr(bad) in message and "--dtype" in message
    assert all(spelling in message for spelling in DTYPE_SPELLINGS)


def test_a_backend_that_runs_fewer_names_them() -> None:
    assert check_supported("fp32", ("float32",), "ref:x") == "float32"
    assert check_supported("auto", (), "ref:x") == "auto"
    with pytest.raises(InputError, match=r"ref:x cannot run dtype bfloat16; it supports auto, float32"):
        check_supported("bf16", ("float32",), "ref:x")
    with pytest.raises(InputError, match="unknown dtype"):
        check_supported("float8", ("float32",), "ref:x")


# ------------------------------------------------------------------------ every backend family, tiny models

pytest.importorskip("torch")
pytest.importorskip("transformers")

IMAGE = Image.fromarray(np.random.default_rng(0).integers(0, 256, (30, 40, 3), dtype=np.uint8))
SPELLINGS = ["fp32", "half", "bf16", "auto"]  # one spelling of each dtype, and auto


@pytest.fixture(scope="module")
def tiny_dual_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from vlaudit.backends.tiny.dual import build_tiny_dual

    root = tmp_path_factory.mktemp("dtype_dual")
    return {family: build_tiny_dual(family, root / family, seed=0) for family in ("clip", "siglip", "open_clip")}


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("family", ["clip", "siglip", "open_clip"])
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_dual_encoders_run_every_dtype(family: str, spelling: str, tiny_dual_dirs: dict[str, Path],
                                       no_network: None) -> None:
    from vlaudit.backends.options import DualOptions, RunOptions
    from vlaudit.backends.registry import ModelRef, load_backend
    from vlaudit.backends.tiny.dual import tiny_spec

    backend = load_backend(ModelRef(tiny_spec(family, tiny_dual_dirs[family]), DualOptions(dtype=spelling)),
                           RunOptions(device="cpu"))
    assert backend.describe()["dtype"] == ON_CPU[spelling]
    rows = np.concatenate([backend.encode_images([IMAGE]), backend.encode_texts(["a dog left of a cat"])])
    assert rows.dtype == np.float32 and np.isfinite(rows).all()
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-3)


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vlaudit.backends.tiny.mllm import build_tiny_mllm

    return build_tiny_mllm("qwen2-vl", tmp_path_factory.mktemp("dtype_qwen"), seed=0)


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_mllms_run_every_dtype(spelling: str, tiny_qwen: Path, no_network: None) -> None:
    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.options import HfOptions, RunOptions
    from vlaudit.backends.registry import ModelRef, load_backend

    backend = load_backend(ModelRef(f"hf:{tiny_qwen}", HfOptions(dtype=spelling)), RunOptions(device="cpu"),
                           interfaces=["yesno"])
    assert backend.describe()["dtype"] == ON_CPU[spelling]
    [result] = backend.score([YesNoRequest("i", "Is the dog left of the cat?", IMAGE)])
    assert np.isfinite(result.margin)


@pytest.mark.usefixtures("one_torch_thread")
def test_ministral_reads_the_same_vocabulary(tmp_path: Path, no_network: None) -> None:
    pytest.importorskip("mistral_common")
    from vlaudit.backends.options import HfOptions, RunOptions
    from vlaudit.backends.registry import ModelRef, load_backend
    from vlaudit.backends.tiny.mistral import build_tiny_ministral

    build_tiny_ministral(tmp_path)
    assert load_backend(ModelRef(f"hf:{tmp_path}", HfOptions(dtype="bf16")),
                        RunOptions(device="cpu")).describe()["dtype"] == "bfloat16"
    with pytest.raises(InputError, match="unknown dtype 'float8'"):
        load_backend(ModelRef(f"hf:{tmp_path}", HfOptions(dtype="float8")), RunOptions(device="cpu"))


@pytest.mark.parametrize(("name", "supported"), [
    ("scene-clip-spatial", ("float32",)),
    ("scene-vqa-grounded", ("float32",)),
    ("scene-vqa-prior", ()),
])
def test_reference_models_accept_their_dtype_and_name_it_otherwise(name: str, supported: tuple[str, ...],
                                                                   no_network: None) -> None:
    from vlaudit.backends.registry import ModelRef, load_backend, options_classes

    options = options_classes(f"ref:{name}")[0]  # the reference's own options class
    for spelling in ("auto", *supported):
        assert load_backend(ModelRef(f"ref:{name}", options(dtype=spelling))).spec == f"ref:{name}"
    if supported:
        assert load_backend(ModelRef(f"ref:{name}", options(dtype="FP32"))).spec == f"ref:{name}"
    listed = ", ".join(["auto", *supported])
    with pytest.raises(InputError, match=f"ref:{name} cannot run dtype float16; it supports {listed}$"):
        load_backend(ModelRef(f"ref:{name}", options(dtype="half")))


def test_mixture_model_takes_auto_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vlaudit.backends.options import HfOptions
    from vlaudit.backends.registry import ModelRef, load_backend

    monkeypatch.setenv("VLAUDIT_MIXTURE_SCENES", str(tmp_path))
    with pytest.raises(InputError, match="ref:scene-vqa-mixture cannot run dtype bfloat16; it supports auto$"):
        load_backend(ModelRef("ref:scene-vqa-mixture", HfOptions(dtype="bf16")))


def _dtype_options() -> dict[str, object]:
    """Every ``--dtype`` option of the command tree, by command path."""
    import typer.main

    from vlaudit.cli import app

    found = {}

    def walk(command: object, path: str) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())
        for param in getattr(command, "params", ()):
            if "--dtype" in getattr(param, "opts", ()):
                found[path] = param

    walk(typer.main.get_command(app), "")
    return found


def test_every_dtype_option_is_the_one_vocabulary() -> None:
    """Every --dtype in the command tree: the same help and the same check (a new command cannot drift)."""
    from vlaudit.backends.dtypes import DTYPE_HELP

    options = _dtype_options()
    assert {"vca score", "vca score-dual", "features", "cycles score-mllm"} <= set(options)
    for path, param in options.items():
        assert param.default == "auto" and (param.help or "").startswith(DTYPE_HELP.rstrip(".")), path
        assert param.process_value(None, "BF16") == "BF16", path  # checked, passed on as the API takes it
        with pytest.raises(InputError, match="unknown dtype 'float8'"):
            param.process_value(None, "float8")


@pytest.mark.parametrize("command", [("vca", "score"), ("features",)])
def test_a_bad_dtype_is_one_error_line_before_anything_loads(command: tuple[str, ...], cli) -> None:
    code, out, err = cli(*command, "--dtype", "float8")
    assert code == 2 and "unknown dtype 'float8'" in err and "Traceback" not in err
