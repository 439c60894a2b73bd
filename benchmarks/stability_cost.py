"""Cost of ``vca stability``: re-scored units per sampled item, against scoring the run, on a tiny Qwen2-VL.

Scores a small benchmark (``--images`` images × 2 questions × original/text/blank, batch 8) with a tiny
random Qwen2-VL, then measures the noise floor on ``--sample`` items under every perturbation the backend
supports (batch-1, padding-right, dtype, attention, prefix-cache). The unperturbed margins come from the run's
cache, so the units re-scored are exactly perturbations × sampled units; the model's forward calls are
counted on the model itself. Last line: ``units_per_item=<re-scored units per sampled item>
forwards_per_item=<model forward calls per sampled item> within_budget=<units == perturbations × units>
ratio=<stability seconds per re-scored unit / scoring seconds per unit> tau=<the floor>``.

    .venv/bin/python benchmarks/stability_cost.py [--images 8] [--sample 200]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

import vlaudit
from vlaudit.backends.options import RunOptions
from vlaudit.backends.registry import load_backend
from vlaudit.backends.tiny.mllm import build_tiny_mllm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=8)
    parser.add_argument("--sample", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    root = Path(tempfile.mkdtemp(prefix="vlaudit-stability-"))
    (root / "images").mkdir()
    rng = np.random.default_rng(0)
    rows = []
    for i in range(args.images):
        Image.fromarray(rng.integers(0, 256, (40 + 8 * (i % 3), 56, 3), dtype=np.uint8)).save(root / "images" / f"{i}.png")
        rows += [{"item_id": f"q{i}_{j}", "image": f"{i}.png", "question": f"Is the cat left of the dog {j}?",
                  "label": "yes" if j == 0 else "no", "dataset": "toy"} for j in range(2)]
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    model = build_tiny_mllm("qwen2-vl", root / "model", seed=0)
    backend = load_backend(f"hf:{model}", RunOptions(device="cpu", batch_size=8), interfaces=["yesno"])
    calls = 0

    def count(*_: object) -> None:
        nonlocal calls
        calls += 1

    backend.model.register_forward_pre_hook(count)  # a hook: the dtype perturbation's copy keeps it
    start = time.perf_counter()
    run = vlaudit.score_margins(vlaudit.ScoreSpec.of(model=backend.spec, benchmark=root / "items.jsonl",
                                                     images=root / "images", out=root / "run"),
                                backend=backend)
    score_s = time.perf_counter() - start
    n_units = run.summary.n_unique_units
    calls = 0
    start = time.perf_counter()
    result = vlaudit.measure_stability(root / "run", sample=args.sample, model=backend)
    stability_s = time.perf_counter() - start
    n_items = result.sample.n_items
    total = result.forwards.total_perturbed
    within = result.forwards.scored_now == total == len(result.perturbations) * result.sample.n_units
    ratio = (stability_s / total) / (score_s / n_units)
    print(f"perturbations: {', '.join(r.perturbation for r in result.perturbations)}; {n_items} items, "
          f"{result.sample.n_units} units; scoring {score_s:.2f} s, stability {stability_s:.2f} s")
    print(f"units_per_item={total / n_items:.3f} forwards_per_item={calls / n_items:.3f} within_budget={within} "
          f"ratio={ratio:.2f} tau={result.noise_floor:.3g}")


if __name__ == "__main__":
    main()
