"""vLLM's offline engine (``vllm:``) against the transformers backend (``hf:``) on the same tiny model and queries.

Runs in the vLLM environment (``make vllm-env``; benchmarks/suite.py runs it with ``.venv-vllm/bin/python``
and skips it where that environment is absent). A tiny random Qwen2-VL with head_dim 32 (vLLM's CPU attention
takes 32, 64, 80, ...) is built from config; ``--images`` images × ``--questions`` yes/no questions are scored
under the original, text-only and blank contexts by both backends, each after one warm-up call on other
queries. Queries/s of each and their ratio (vLLM / HF) are one run each; the engine's start-up (load,
compile, KV cache, warm-up) is timed apart and not in its queries/s. ``max_abs_diff``: the largest
|margin_vllm − margin_hf| over every query (float32 on the CPU).

Last line: ``ratio=… hf_qps=… vllm_qps=… startup_s=… max_abs_diff=… n=…``.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402 (the engine's environment first)
from PIL import Image  # noqa: E402

from vlaudit.backends.base import YesNoRequest  # noqa: E402
from vlaudit.backends.options import RunOptions  # noqa: E402
from vlaudit.backends.registry import load_backend  # noqa: E402
from vlaudit.backends.tiny.mllm import build_tiny_mllm  # noqa: E402

RELATIONS = ("left of", "right of", "above", "below", "behind", "in front of", "next to", "under")


def requests(n_images: int, questions: int, seed: int) -> list[YesNoRequest]:
    """Every image's questions under original, text-only and blank (a white image of the same size)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_images):
        image = Image.fromarray(rng.integers(0, 256, (56 + 8 * (i % 4), 84, 3), dtype=np.uint8))
        blank = Image.new("RGB", image.size, (255, 255, 255))
        for j in range(questions):
            question = f"Is the cat {RELATIONS[(i + j) % len(RELATIONS)]} the dog?"
            for context, shown in (("original", image), ("text", None), ("blank", blank)):
                out.append(YesNoRequest(f"{seed}-{i}-{j}-{context}", question, shown))
    return out


def timed(score, batch: list[YesNoRequest]) -> tuple[list, float]:
    gc.collect()
    start = time.perf_counter()
    results = score(batch)
    return results, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=8)
    parser.add_argument("--questions", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_tiny_mllm("qwen2-vl", tmp, head_dim=32)
        work, warm = requests(args.images, args.questions, 0), requests(1, 2, 1)
        hf = load_backend(f"hf:{folder}", RunOptions(batch_size=8, device="cpu"))
        hf.score(warm)
        hf_results, hf_s = timed(hf.score, work)
        start = time.perf_counter()
        engine = load_backend(f"vllm:{folder}")
        engine.score(warm)
        startup = time.perf_counter() - start
        vllm_results, vllm_s = timed(engine.score, work)
    diff = max(abs(a.margin - b.margin) for a, b in zip(hf_results, vllm_results, strict=True))
    n = len(work)
    print(f"hf: {n} queries in {hf_s:.2f} s; vllm: {vllm_s:.2f} s after a {startup:.0f} s start-up")
    print(f"ratio={hf_s / vllm_s:.3f} hf_qps={n / hf_s:.1f} vllm_qps={n / vllm_s:.1f} startup_s={startup:.0f} "
          f"max_abs_diff={diff:.2e} n={n}")


if __name__ == "__main__":
    main()
