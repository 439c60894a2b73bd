"""Scale-out of ``vca score`` on Ray: items/s with 1 and with 2 workers (one torch thread each).

The same benchmark (tiny Qwen2-VL from config, ~120 items, original/text/blank × yesno/truefalse) is scored
into two fresh run folders on a local Ray instance started here (``ray.init(num_cpus=2)``), once with one
actor and once with two; each actor loads the model once. Both runs must give the same ``margins.parquet``
bytes. Last line: ``scaling=<items/s with 2 workers ÷ items/s with 1> identical=<True|False>`` (goal ≥ 1.6
on a 2-core machine; the driver's planning is shared, so it bounds the ratio below 2).
Run: ``.venv/bin/python benchmarks/ray_scaling.py [--items 120]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=120)
    parser.add_argument("--chunk-size", type=int, default=16)
    args = parser.parse_args()

    import ray
    import torch
    from score_throughput import make_benchmark

    from vlaudit.backends.options import HfOptions, RunOptions
    from vlaudit.backends.registry import BackendLoad, ModelRef
    from vlaudit.backends.tiny.mllm import build_tiny_mllm
    from vlaudit.scoring.run.ray_executor import RayExecutor
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    torch.set_num_threads(1)
    contexts, interfaces = ["original", "text", "blank"], ["yesno", "truefalse"]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            model = build_tiny_mllm("qwen2-vl", root / "model", seed=0)
            items = read_items(make_benchmark(root / "bench", args.items, 0))
            rates = {}
            for workers in (1, 2):
                load = BackendLoad(ModelRef(f"hf:{model}", HfOptions(dtype="fp32")),
                                   RunOptions(batch_size=8, device="cpu"), interfaces=tuple(interfaces))
                executor = RayExecutor(load, workers=workers, threads=1)
                backend = executor.start()  # model loading is not part of the rate
                start = time.perf_counter()
                summary = run_scoring(backend, items, images_dir=root / "bench" / "images",
                                      out_dir=root / f"run{workers}", contexts=contexts, interfaces=interfaces,
                                      chunk_size=args.chunk_size, executor=executor)
                seconds = time.perf_counter() - start
                executor.shutdown()
                rates[workers] = summary["n_scored_rows"] / seconds
                print(f"workers={workers} records={summary['n_scored_rows']} seconds={seconds:.2f} "
                      f"records/s={rates[workers]:.1f}")
            identical = (root / "run1" / "margins.parquet").read_bytes() == \
                (root / "run2" / "margins.parquet").read_bytes()
    finally:
        ray.shutdown()
    print(f"scaling={rates[2] / rates[1]:.2f} identical={identical}")


if __name__ == "__main__":
    main()
