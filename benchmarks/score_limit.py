"""How close is ``vlaudit vca score`` to the forward-pass limit on one machine?

For the same items, contexts and model this times

(a) the runner end to end (``run_scoring``: planning, image decoding, context rendering, hashing,
    tokenization, batching, the cache, Parquet/JSON writes), and
(b) the *floor*: bare batched forward passes over exactly the unique token sequences the runner must
    evaluate — each unique context image's prefix (system turn + image tokens) once, each question suffix
    once on that prefix's KV cache, text-only prompts in full batches — with every input decoded, rendered,
    tokenized and moved to tensors before the clock starts (no I/O, no caching, no bookkeeping).

The representative model is a CPU-sized Qwen2-VL built from config (text 4 layers × 256, vision 4 layers ×
128, 448×448 images → 256 image tokens each), several questions per image, all seven contexts: the forward
passes, not Python, are what a real audit spends. The same is printed for the tiny smoke model, where the
fixed per-record overhead dominates.

Last line: ``efficiency=<floor/actual> overhead_s=<actual−floor> max_abs_diff=<max |margin runner − floor|>``
(goal: efficiency ≥ 0.8 with max_abs_diff ≤ 1e-5). Run: ``.venv/bin/python benchmarks/score_limit.py``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

CONTEXTS = ["original", "text", "blank", "mean", "mismatch", "rele", "irre"]
RELATIONS = ["left of", "right of", "above", "below"]
OBJECTS = ["cat", "dog", "car", "table", "chair", "person"]


def build_representative_qwen2vl(out: Path, side: int, seed: int = 0) -> Path:
    """A Qwen2-VL sized so that forwards dominate on a CPU (≈ 5 M parameters), saved like a hub model."""
    import torch
    import transformers as tf

    from vlaudit.backends.tiny.mllm import QWEN_TEMPLATE, _qwen_ids, _qwen_tokenizer

    torch.manual_seed(seed)
    tokenizer = _qwen_tokenizer()
    text = dict(vocab_size=len(tokenizer), hidden_size=256, intermediate_size=512, num_hidden_layers=4,
                num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=8192, bos_token_id=None,
                eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
                pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
                rope_parameters={"rope_type": "default", "rope_theta": 1e4, "mrope_section": [4, 6, 6]})
    config = tf.Qwen2VLConfig(text_config=text, vision_config=dict(
        depth=4, embed_dim=128, hidden_size=256, num_heads=4, mlp_ratio=2, patch_size=14, spatial_merge_size=2,
        temporal_patch_size=2), **_qwen_ids(tokenizer))
    model = tf.Qwen2VLForConditionalGeneration(config)
    budget = {"shortest_edge": side * side, "longest_edge": side * side}
    processor = tf.Qwen2VLProcessor(image_processor=tf.Qwen2VLImageProcessor(size=budget), tokenizer=tokenizer,
                                    video_processor=tf.Qwen2VLVideoProcessor(), chat_template=QWEN_TEMPLATE)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def make_benchmark(root: Path, n_images: int, questions: int, side: int, seed: int) -> Path:
    """JPEG photos-like images with two boxed objects and ``questions`` relation questions each."""
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
        for q in range(questions):
            subject, obj = (str(x) for x in rng.choice(OBJECTS, size=2, replace=False))
            a = [int(v) for v in rng.integers(10, side // 2, size=2)] + [side // 5, side // 5]
            b = [int(v) for v in rng.integers(side // 2, side - side // 4, size=2)] + [side // 6, side // 6]
            rows.append({"item_id": f"i{index:03d}_{q}", "image": f"img{index:03d}.jpg",
                         "question": f"Is the {subject} {RELATIONS[q % 4]} the {obj}?",
                         "label": "yes" if q % 2 else "no", "split": "test",
                         "boxes": {"subject": a, "object": b}})
    path = root / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def prepare_floor(backend: Any, items: list, images_dir: Path, interfaces: list[str]) -> dict[str, Any]:
    """Every unique context image's prefix inputs and its question suffix ids, all as tensors, untimed."""
    from vlaudit.backends.hf.mllm import _IMAGE_BLOCK_END
    from vlaudit.backends.hf.prefix_cache import split_prompt
    from vlaudit.scoring.run.plan import plan_run, render
    from vlaudit.sources.images import ImageStore

    store = ImageStore(images_dir)
    _, units = plan_run(items, store, CONTEXTS, interfaces, 0, "floor", backend.prompt)
    block_end = _IMAGE_BLOCK_END[backend.family]
    prefixes: dict[str, dict[str, Any]] = {}
    text_only = []
    for unit in units:
        prompt = backend.prompt(unit.question, unit.interface, unit.context != "text")
        if unit.context == "text":
            text_only.append((unit, prompt))
            continue
        entry = prefixes.get(unit.image_sha256)
        prefix, suffix = split_prompt(prompt, block_end)
        if entry is None:
            image = render(store, unit.item, unit.context, unit.donor, 0)
            entry = prefixes[unit.image_sha256] = {"batch": backend.encode([prefix], [image]), "suffixes": []}
        entry["suffixes"].append((unit, backend.tokenizer.encode(suffix, add_special_tokens=False)))
    text_batches = []
    for start in range(0, len(text_only), backend.batch_size):
        chunk = text_only[start:start + backend.batch_size]
        text_batches.append(([u for u, _ in chunk], backend.encode([p for _, p in chunk], None)))
    return {"prefixes": prefixes, "text_batches": text_batches, "n_units": len(units)}


def floor_margins(backend: Any, prepared: dict[str, Any]) -> dict[str, float]:
    """Bare forwards: one per unique prefix, one batched suffix pass per prefix, full text-only batches."""
    import torch

    model = backend.model
    pad = int(backend.tokenizer.pad_token_id)
    margins: dict[str, float] = {}

    def read(units: list, logits: Any) -> None:
        logprobs = torch.log_softmax(logits.double(), dim=-1)
        for unit, row in zip(units, logprobs, strict=True):
            yes, no = backend.verbalizer_ids[unit.interface]
            margins[unit.key] = float(row[yes] - row[no])

    with torch.inference_mode():
        for units, batch in prepared["text_batches"]:
            read(units, model(**batch, use_cache=False, logits_to_keep=1).logits[:, -1, :])
        for entry in prepared["prefixes"].values():
            out = model(**entry["batch"], use_cache=True, logits_to_keep=1)
            cache = out["cache"] if "cache" in out else out["past_key_values"]
            rope_delta = model.model.rope_deltas
            n_prefix = int(entry["batch"]["input_ids"].shape[1])
            suffixes = entry["suffixes"]
            for start in range(0, len(suffixes), backend.batch_size):
                rows = suffixes[start:start + backend.batch_size]
                k, width = len(rows), max(len(ids) for _, ids in rows)
                input_ids = torch.full((k, width), pad, dtype=torch.long)
                mask = torch.zeros((k, n_prefix + width), dtype=torch.long)
                mask[:, :n_prefix] = 1
                for row, (_, ids) in enumerate(rows):
                    input_ids[row, :len(ids)] = torch.tensor(ids)
                    mask[row, n_prefix:n_prefix + len(ids)] = 1
                positions = (torch.arange(n_prefix, n_prefix + width).view(1, 1, -1) + rope_delta.view(1, 1, 1))
                row_cache = copy.deepcopy(cache)
                row_cache.batch_repeat_interleave(k)
                logits = model(input_ids=input_ids, attention_mask=mask,
                               position_ids=positions.expand(3, k, width).contiguous(), cache=row_cache,
                               use_cache=True).logits
                last = torch.tensor([len(ids) - 1 for _, ids in rows])
                read([u for u, _ in rows], logits[torch.arange(k), last])
    return margins


def measure(model_dir: Path, bench: Path, root: Path, interfaces: list[str], label: str,
            max_pixels: int | None) -> tuple[float, float, float]:
    import pyarrow.parquet as pq

    from vlaudit.backends.options import HfOptions, RunOptions
    from vlaudit.backends.registry import ModelRef, load_backend
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    items = read_items(bench)
    backend = load_backend(ModelRef(f"hf:{model_dir}", HfOptions(dtype="fp32", max_pixels=max_pixels,
                                                                 min_pixels=max_pixels)),
                                                                 RunOptions(device="cpu", batch_size=16))
    prepared = prepare_floor(backend, items[:2], bench.parent / "images", interfaces)
    floor_margins(backend, prepared)  # warm-up (allocator, kernels)
    prepared = prepare_floor(backend, items, bench.parent / "images", interfaces)
    start = time.perf_counter()
    floor = floor_margins(backend, prepared)
    t_floor = time.perf_counter() - start
    start = time.perf_counter()
    summary = run_scoring(backend, items, images_dir=bench.parent / "images", out_dir=root / f"run-{label}",
                          contexts=CONTEXTS, interfaces=interfaces)
    t_run = time.perf_counter() - start
    rows = pq.read_table(root / f"run-{label}" / "margins.parquet").to_pylist()
    keys = {}
    for record_key, unit_key in _record_units(backend, items, bench.parent / "images", interfaces):
        keys[record_key] = unit_key
    diff = max(abs(r["margin"] - floor[keys[(r["item_id"], r["context"], r["interface"])]]) for r in rows)
    image_tokens = int(next(iter(prepared["prefixes"].values()))["batch"]["input_ids"].shape[1])
    print(f"[{label}] records={summary['n_scored_rows']} unique_queries={prepared['n_units']} "
          f"unique_prefixes={len(prepared['prefixes'])} prefix_tokens={image_tokens} "
          f"prefix_cache={backend.describe().get('prefix_cache')}")
    print(f"[{label}] floor={t_floor:.2f}s runner={t_run:.2f}s efficiency={t_floor / t_run:.3f} "
          f"max_abs_diff={diff:.3g}")
    return t_floor, t_run, diff


def _record_units(backend: Any, items: list, images_dir: Path, interfaces: list[str]):
    from vlaudit.scoring.run.plan import plan_run
    from vlaudit.sources.images import ImageStore

    records, _ = plan_run(items, ImageStore(images_dir), CONTEXTS, interfaces, 0, "floor", backend.prompt)
    for record in records:
        if record.status == "ok":
            yield (record.item.item_id, record.context, record.interface), record.key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=10)
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--side", type=int, default=448, help="image side in pixels (448 → 256 image tokens)")
    args = parser.parse_args()

    import torch

    from vlaudit.backends.tiny.mllm import build_tiny_mllm

    torch.set_num_threads(args.threads)
    interfaces = ["yesno", "truefalse"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench = make_benchmark(root / "bench", args.images, args.questions, args.side, seed=0)
        tiny = build_tiny_mllm("qwen2-vl", root / "tiny", seed=0)
        measure(tiny, bench, root, interfaces, "tiny smoke model", None)
        big = build_representative_qwen2vl(root / "representative", args.side)
        t_floor, t_run, diff = measure(big, bench, root, interfaces, "representative", args.side * args.side)
    print(f"efficiency={t_floor / t_run:.3f} overhead_s={t_run - t_floor:.2f} max_abs_diff={diff:.3g}")


if __name__ == "__main__":
    main()
