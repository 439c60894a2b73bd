"""The hf: backend on tiny models built from config: margins equal direct unbatched full forwards."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FAMILIES = ["qwen2-vl", "qwen2.5-vl", "qwen3-vl", "llava-onevision", "gemma3", "internvl"]


def _images():
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(1)
    return [Image.fromarray(rng.integers(0, 256, size=(48, 64, 3), dtype=np.uint8)),
            Image.fromarray(rng.integers(0, 256, size=(70, 40, 3), dtype=np.uint8))]


@pytest.mark.parametrize("family", FAMILIES)
def test_margins_equal_unbatched_full_forward(direct_nll, tiny_model, family, tmp_path_factory, no_network) -> None:
    from vlaudit.backends.base import INTERFACES, YesNoRequest
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend

    backend = load_backend(f"hf:{tiny_model(family)}", RunOptions(batch_size=3))
    images = _images()
    questions = ["Is the cat left of the dog?", "Is the dog above the cat?", "Is the car near the table?"]
    requests = [YesNoRequest(f"{q}|{k}|{interface}", question, image, interface)
                for q, question in enumerate(questions)
                for k, image in enumerate([*images, None])
                for interface in INTERFACES]
    results = backend.score(requests)
    assert [r.key for r in results] == [r.key for r in requests]
    for request, result in zip(requests, results, strict=True):
        prompt = backend.prompt(request.question, request.interface, request.image is not None)
        assert result.prompt == prompt
        yes, no = INTERFACES[request.interface]
        nll_yes, yes_id, n_prompt = direct_nll(backend, prompt, request.image, yes)
        nll_no, no_id, _ = direct_nll(backend, prompt, request.image, no)
        assert (result.yes_token_id, result.no_token_id) == (yes_id, no_id)
        assert result.n_prompt_tokens == n_prompt
        assert result.nll_yes == pytest.approx(nll_yes, abs=1e-4)
        assert result.nll_no == pytest.approx(nll_no, abs=1e-4)
        assert result.margin == pytest.approx(nll_no - nll_yes, abs=1e-4)
        assert result.margin == result.nll_no - result.nll_yes


def _expected_prompt_ids(backend, prompt: str, image, block_end: str) -> bool:
    """True when tokenizing prefix and suffix separately reproduces the full prompt's ids (the split the
    prefix cache scores by)."""
    from vlaudit.backends.hf.prefix_cache import split_prompt

    full = backend.encode([prompt], [image])["input_ids"][0].tolist()
    prefix, suffix = split_prompt(prompt, block_end)
    head = backend.encode([prefix], [image])["input_ids"][0].tolist()
    return full == head + backend.tokenizer.encode(suffix, add_special_tokens=False)


def test_prefix_cache_matches_full_forwards(tiny_model, tmp_path_factory, no_network) -> None:
    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend

    path = tiny_model("qwen2-vl")
    shared = load_backend(f"hf:{path}", RunOptions(batch_size=4))
    full = load_backend(f"hf:{path}", RunOptions(batch_size=1, prefix_cache=False))
    assert shared.prefix_cache and not full.prefix_cache
    image = _images()[0]
    requests = [YesNoRequest(str(i), f"Is the cat {rel} the dog?", image, interface)
                for i, (rel, interface) in enumerate([("left of", "yesno"), ("right of", "yesno"),
                                                      ("above", "truefalse"), ("below", "truefalse"),
                                                      ("on", "yesno")])]
    assert _expected_prompt_ids(shared, shared.prompt("Is it?", "yesno", True), image, "<|vision_end|>")
    for a, b in zip(shared.score(requests), full.score(requests), strict=True):
        assert a.margin == pytest.approx(b.margin, abs=1e-5)
        assert a.n_prompt_tokens == b.n_prompt_tokens


@pytest.mark.parametrize("family", ["qwen2-vl", "llava-onevision", "gemma3"])
def test_text_only_prompt_has_no_image_tokens(tiny_model, family, tmp_path_factory, no_network) -> None:
    from vlaudit.backends.registry import load_backend

    backend = load_backend(f"hf:{tiny_model(family)}")
    image_id = backend.model.config.image_token_id if hasattr(backend.model.config, "image_token_id") \
        else backend.model.config.image_token_index
    text_prompt = backend.prompt("Is the cat left of the dog?", "yesno", False)
    image_prompt = backend.prompt("Is the cat left of the dog?", "yesno", True)
    image_token = backend.processor.image_token
    assert image_token not in text_prompt and image_token in image_prompt
    assert "<|vision_start|>" not in text_prompt
    ids = backend.encode([text_prompt], None)["input_ids"][0].tolist()
    assert image_id not in ids
    # the text-only prompt keeps the identical question, template and generation prefix
    assert "Is the cat left of the dog? Answer yes or no." in text_prompt and text_prompt.endswith("\nAnswer:")
    assert text_prompt.count("Is the cat") == 1


def test_non_single_token_verbalizer_is_rejected(tiny_model, tmp_path_factory, monkeypatch, no_network) -> None:
    from vlaudit.backends import base
    from vlaudit.backends.hf.mllm import VerbalizerError
    from vlaudit.backends.registry import load_backend

    monkeypatch.setitem(base.ANSWER_WORDS, "maybe", ("definitely", "no"))
    with pytest.raises(VerbalizerError, match="definitely") as info:
        load_backend(f"hf:{tiny_model('qwen2-vl')}", interfaces=["yesno", "maybe"])
    assert "single-token" in str(info.value)


def test_describe_records_pixel_budget_and_options(tiny_model, tmp_path_factory, no_network) -> None:
    from vlaudit.backends.options import HfOptions
    from vlaudit.backends.registry import ModelRef, load_backend

    backend = load_backend(ModelRef(f"hf:{tiny_model('qwen2-vl')}", HfOptions(max_pixels=56 * 56 * 4,
                                                                              dtype="fp32")), interfaces=["yesno"])
    facts = backend.describe()
    assert facts["pixel_budget"]["max_pixels"] == 56 * 56 * 4
    assert facts["pixel_budget"]["image_processor_size"]["longest_edge"] == 56 * 56 * 4
    assert facts["dtype"] == "float32" and facts["verbalizer_ids"].keys() == {"yesno"}


def test_unknown_model_dir_is_an_input_error(tmp_path, no_network) -> None:
    from vlaudit.backends.registry import load_backend
    from vlaudit.errors import InputError

    with pytest.raises(InputError, match="folder does not exist"):
        load_backend(f"hf:{tmp_path / 'absent'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="cannot load"):
        load_backend(f"hf:{tmp_path / 'empty'}")


@pytest.mark.parametrize("family", ["qwen2-vl", "llava-onevision"])
def test_bf16_scores_close_to_fp32(tiny_model, family, tmp_path_factory, no_network) -> None:
    """The GPU default dtype (bf16) runs the same path: pixel tensors follow the model's dtype."""
    from PIL import Image

    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.options import HfOptions, RunOptions
    from vlaudit.backends.registry import ModelRef, load_backend

    folder = tiny_model(family)
    requests = [YesNoRequest("img", "Is the cat left of the dog?", Image.new("RGB", (64, 48), (10, 200, 30))),
                YesNoRequest("txt", "Is the cat left of the dog?", None)]
    full = load_backend(ModelRef(f"hf:{folder}", HfOptions(dtype="fp32")), RunOptions(device="cpu")).score(requests)
    half = load_backend(ModelRef(f"hf:{folder}", HfOptions(dtype="bf16")), RunOptions(device="cpu"))
    assert half.describe()["dtype"] == "bfloat16"
    for a, b in zip(full, half.score(requests), strict=True):
        assert abs(a.margin - b.margin) < 0.1
