"""Throughput of ``vlaudit vca score`` against a naive lmms-eval style scorer, on a tiny Qwen2-VL (fp32, CPU).

Benchmark: ~200 yes/no items (2–4 questions per image, images of a few sizes), contexts original, text and
blank, interfaces yesno and truefalse. The baseline does what lmms-eval's loglikelihood path does: one full
forward per (item, context, interface, verbalizer), batch size 1, image re-encoded every time, loss over the
continuation tokens only. Ours: the runner (planning, dedup of identical (prompt, image) inputs, both verbalizers
from one forward, batching, shared image-prefix KV reuse, chunked cache writes) in the same process. Both sides
are timed after a warm-up call on 4 items and a full garbage collection, so one-time process costs count on
neither.

Last line: ``speedup=<baseline seconds / ours> max_abs_diff=<max |margin_ours − margin_baseline|>``.
Run: ``.venv/bin/python benchmarks/score_throughput.py [--items 200] [--threads 1]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

T = TypeVar("T")


def make_benchmark(root: Path, n_items: int, seed: int) -> Path:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    images = root / "images"
    images.mkdir(parents=True)
    relations = ["left of", "right of", "above", "below", "near", "behind"]
    objects = ["cat", "dog", "car", "table", "chair", "person"]
    sizes = [(64, 48), (96, 72), (80, 80)]
    rows, index = [], 0
    while len(rows) < n_items:
        width, height = sizes[index % len(sizes)]
        Image.fromarray(rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)).save(
            images / f"img{index:04d}.png")
        for q in range(int(rng.integers(2, 5))):
            subject, obj = rng.choice(objects, size=2, replace=False)
            relation = relations[int(rng.integers(len(relations)))]
            rows.append({"item_id": f"i{index:04d}_{q}", "image": f"img{index:04d}.png",
                         "question": f"Is the {subject} {relation} the {obj}?", "label": "yes" if q % 2 else "no",
                         "split": "test"})
        index += 1
    path = root / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows[:n_items]))
    return path


def naive_margins(backend, items, images_dir: Path, contexts, interfaces) -> dict[tuple[str, str, str], float]:
    """lmms-eval style: one unbatched forward per (item, context, interface, verbalizer)."""
    import torch
    from PIL import Image

    from vlaudit.backends.base import INTERFACES
    from vlaudit.contexts.image_contexts import render_context

    margins = {}
    for item in items:
        original = Image.open(images_dir / item.image).convert("RGB")
        for context in contexts:
            image = render_context(context, original)
            for interface in interfaces:
                prompt = backend.prompt(item.question, interface, image is not None)
                nll = []
                for verbalizer in INTERFACES[interface]:
                    kwargs = {"text": [prompt + verbalizer], "return_tensors": "pt"}
                    if image is not None:
                        kwargs["images"] = [image]
                    inputs = backend.processor(**kwargs)
                    n_cont = len(backend.tokenizer.encode(verbalizer, add_special_tokens=False))
                    with torch.inference_mode():
                        logits = backend.model(**inputs).logits[0]
                    labels = inputs["input_ids"][0].clone()
                    labels[: labels.shape[0] - n_cont] = -100
                    nll.append(float(torch.nn.functional.cross_entropy(
                        logits[:-1].double(), labels[1:], ignore_index=-100)))
                margins[(item.item_id, context, interface)] = nll[1] - nll[0]
    return margins


def timed(call: Callable[[], T]) -> tuple[T, float]:
    """``call()`` and its seconds, started with no full collection pending: one over the ~250k objects torch and
    transformers keep alive costs ~0.2 s here, and where it falls depends on the process's history."""
    gc.collect()
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import pyarrow.parquet as pq
    import torch

    from vlaudit.backends.options import HfOptions, RunOptions
    from vlaudit.backends.registry import ModelRef, load_backend
    from vlaudit.backends.tiny.mllm import build_tiny_mllm
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    torch.set_num_threads(args.threads)
    contexts, interfaces = ["original", "text", "blank"], ["yesno", "truefalse"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = build_tiny_mllm("qwen2-vl", root / "model", seed=args.seed)
        items = read_items(make_benchmark(root / "bench", args.items, args.seed))
        fp32 = ModelRef(f"hf:{model_dir}", HfOptions(dtype="fp32"))
        backend = load_backend(fp32, RunOptions(device="cpu", batch_size=args.batch_size))
        n_images = len({i.image for i in items})
        print(f"items={len(items)} images={n_images} contexts={len(contexts)} interfaces={len(interfaces)} "
              f"records={len(items) * len(contexts) * len(interfaces)} threads={args.threads}")

        naive_margins(backend, items[:4], root / "bench" / "images", contexts, interfaces)  # warm-up
        baseline, t_base = timed(lambda: naive_margins(backend, items, root / "bench" / "images", contexts,
                                                       interfaces))
        print(f"baseline (1 forward per context x verbalizer, batch 1): {t_base:.2f} s "
              f"({len(baseline) * 2} forwards, {len(baseline) / t_base:.1f} records/s)")

        # The same warm-up for ours: the first call in a process pays one-time costs (pyarrow imports pandas on
        # its first array, ~0.3-0.5 s here) that would otherwise land on one side only.
        _, t_warm = timed(lambda: run_scoring(backend, items[:4], images_dir=root / "bench" / "images",
                                              out_dir=root / "warm-up", contexts=contexts, interfaces=interfaces))
        print(f"warm-up, the process's first runner call (4 items): {t_warm:.2f} s")
        summary, t_ours = timed(lambda: run_scoring(backend, items, images_dir=root / "bench" / "images",
                                                    out_dir=root / "run", contexts=contexts, interfaces=interfaces))
        rows = pq.read_table(root / "run" / "margins.parquet").to_pylist()
        print(f"vlaudit runner: {t_ours:.2f} s ({summary['n_unique_units']} unique queries for "
              f"{summary['n_scored_rows']} records, {summary['n_scored_rows'] / t_ours:.1f} records/s)")
        plain = load_backend(fp32, RunOptions(device="cpu", batch_size=args.batch_size, prefix_cache=False))
        _, t_plain = timed(lambda: run_scoring(plain, items, images_dir=root / "bench" / "images",
                                               out_dir=root / "run-plain", contexts=contexts, interfaces=interfaces))
        print(f"ablation, runner without the shared image-prefix cache: {t_plain:.2f} s "
              f"(speedup {t_base / t_plain:.2f})")
        diff = max(abs(r["margin"] - baseline[(r["item_id"], r["context"], r["interface"])]) for r in rows)
        assert len(rows) == len(baseline)
    print(f"speedup={t_base / t_ours:.2f} max_abs_diff={diff:.3g}")


if __name__ == "__main__":
    main()
