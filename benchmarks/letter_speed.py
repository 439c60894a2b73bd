"""Multiple-choice scoring: one forward per (item, context) against one forward per (item, context, option).

For the same K-option items, contexts and model, in one process, this times

(a) ``vca score --interface letter`` end to end (``run_scoring``: planning, rendering, hashing, batching,
    the cache, the Parquet write) — every option letter read from the one log-softmax at the prompt's end;
(b) the peers' loglikelihood way (lmms-eval's ``loglikelihood`` requests, one per option): for each (item,
    context, option) a forward over prompt + the option's letter, reading log p(letter | prompt) from the
    position before it — K forwards where (a) needs one;
(c) the forward-pass floor of (a): bare batched forwards over exactly the unique prompts (a) evaluates, every
    input decoded, rendered, tokenized and on tensors before the clock starts.

The model is the CPU-sized representative Qwen2-VL of ``score_limit.py`` (forwards, not Python, dominate).
(a) and (c) take about two seconds each at the default size, so each is timed three times, alternating, and
the best of each is kept (a single pair of timings moved the efficiency by ±0.1 on this machine).
Last line: ``speedup=<b/a> k=<K> max_abs_diff=<max |log p (a) − log p (b)|> efficiency=<c/a>``
(goals: speedup ≥ 0.8·K, max_abs_diff ≤ 1e-4, efficiency ≥ 0.9).
Run: ``.venv/bin/python benchmarks/letter_speed.py [--images N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

CONTEXTS = ["original", "text", "blank"]
OPTIONS = ["left", "right", "above", "below"]
COLOURS = ["red", "blue", "green", "yellow", "purple", "orange"]
REPEATS = 3  # (a) and (c) are timed this many times, alternating, each a fresh run folder; the best of each


def make_benchmark(root: Path, n_images: int, side: int, seed: int) -> Path:
    """Photo-like JPEGs, one four-option question each."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    images = root / "images"
    images.mkdir(parents=True)
    rows = []
    for index in range(n_images):
        pixels = rng.integers(0, 256, size=(side // 8, side // 8, 3), dtype=np.uint8)
        Image.fromarray(pixels).resize((side, side), Image.BILINEAR).save(images / f"img{index:03d}.jpg",
                                                                           quality=90)
        subject, obj = (str(c) for c in rng.choice(COLOURS, size=2, replace=False))
        rows.append({"item_id": f"q{index:03d}", "image": f"img{index:03d}.jpg", "split": "test",
                     "question": f"Where is the {subject} square relative to the {obj} circle?",
                     "options": [OPTIONS[(index + k) % 4] for k in range(4)], "label": "ABCD"[index % 4]})
    path = root / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def unit_inputs(backend: Any, items: list, images_dir: Path) -> tuple[list[tuple[Any, str, Any]], dict[Any, str]]:
    """(unit, prompt, context image) of every unique query of the letter run, rendered untimed, and the unit
    key of each (item, context) record (identical queries, e.g. one blank canvas, share a unit)."""
    from vlaudit.scoring.run.plan import plan_run, render
    from vlaudit.sources.images import ImageStore

    store = ImageStore(images_dir)
    records, units = plan_run(items, store, CONTEXTS, ["letter"], 0, "floor", backend.prompt)
    keys = {(r.item.item_id, r.context): r.key for r in records if r.status == "ok"}
    return [(u, backend.prompt(u.question, "letter", u.context != "text"),
             render(store, u.item, u.context, u.donor, 0)) for u in units], keys


def floor_seconds(backend: Any, inputs: list[tuple[Any, str, Any]]) -> float:
    """Bare batched forwards over the unique prompts (images and text-only apart), inputs encoded untimed."""
    import torch

    batches = []
    for with_image in (True, False):
        todo = [x for x in inputs if (x[2] is not None) == with_image]
        for start in range(0, len(todo), backend.batch_size):
            chunk = todo[start:start + backend.batch_size]
            batches.append(backend.encode([p for _, p, _ in chunk], [im for _, _, im in chunk] if with_image else None))
    start = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            backend.model(**batch, use_cache=False, logits_to_keep=1)
    return time.perf_counter() - start


def per_option_logps(backend: Any, inputs: list[tuple[Any, str, Any]]) -> tuple[dict[str, list[float]], float]:
    """The loglikelihood way: one forward per (item, context, option) over prompt + " letter"."""
    import torch

    out: dict[str, list[float]] = {}
    start = time.perf_counter()
    with torch.inference_mode():
        for unit, prompt, image in inputs:
            values = []
            for letter, token_id in zip("ABCD", backend.letter_ids, strict=False):
                batch = backend.encode([prompt + f" {letter}"], None if image is None else [image])
                logits = backend.model(**batch, use_cache=False).logits[0, -2, :]
                values.append(float(torch.log_softmax(logits.double(), dim=-1)[token_id]))
            out[unit.key] = values
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--side", type=int, default=448, help="image side in pixels (448 → 256 image tokens)")
    args = parser.parse_args()

    import pyarrow.parquet as pq
    import torch
    from score_limit import build_representative_qwen2vl

    from vlaudit.backends.options import HfOptions, RunOptions
    from vlaudit.backends.registry import ModelRef, load_backend
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench = make_benchmark(root / "bench", args.images, args.side, seed=0)
        model_dir = build_representative_qwen2vl(root / "representative", args.side)
        pixels = args.side * args.side
        backend = load_backend(ModelRef(f"hf:{model_dir}", HfOptions(dtype="fp32", max_pixels=pixels,
                                                                     min_pixels=pixels)),
                                                                     RunOptions(device="cpu", batch_size=8),
                                                                     interfaces=["letter"])
        items = read_items(bench)
        images_dir = bench.parent / "images"
        inputs, unit_of = unit_inputs(backend, items, images_dir)
        floor_seconds(backend, inputs[:2])  # warm-ups (allocator, kernels; the runner's first-use imports)
        run_scoring(backend, items[:2], images_dir=images_dir, out_dir=root / "warm-up", contexts=CONTEXTS,
                    interfaces=["letter"])
        t_floor = t_run = float("inf")
        for repeat in range(REPEATS):  # alternating, so both sides see the same machine; the best of each
            t_floor = min(t_floor, floor_seconds(backend, inputs))
            start = time.perf_counter()
            run_scoring(backend, items, images_dir=images_dir, out_dir=root / f"run{repeat}", contexts=CONTEXTS,
                        interfaces=["letter"])
            t_run = min(t_run, time.perf_counter() - start)
        baseline, t_options = per_option_logps(backend, inputs)
        rows = pq.read_table(root / "run0" / "margins.parquet").to_pylist()
        diff = max(abs(a - b) for r in rows
                   for a, b in zip(r["logp_options"], baseline[unit_of[(r["item_id"], r["context"])]], strict=True))
    k = len(OPTIONS)
    print(f"records={len(rows)} unique_queries={len(inputs)} floor={t_floor:.2f}s runner={t_run:.2f}s "
          f"per_option={t_options:.2f}s")
    print(f"speedup={t_options / t_run:.3f} k={k} max_abs_diff={diff:.3g} efficiency={t_floor / t_run:.3f}")


if __name__ == "__main__":
    main()
