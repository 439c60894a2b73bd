"""Cold start of a cached rerun: ``vca score`` run again on a finished run, against ``import torch, transformers``.

A small benchmark (``--items`` items × original/text/blank) is scored once by ``ref:scene-vqa-grounded`` (a
torch model); then, in fresh interpreters taking turns, the same ``vca score`` command (every record cached),
``vlaudit models list`` and the bare ``python -c "import torch, transformers"`` are timed ``--repeats`` times
each (the best of each is kept: the machine's load only adds). A rerun that loads nothing it does not need
costs less than importing the libraries a model needs. Last line: ``ratio=<rerun / bare import>
list_ratio=<models list / bare import> rerun_s=<best rerun> import_s=<best bare import> torch_on_rerun=<the
rerun imported torch>``.

    .venv/bin/python benchmarks/cold_start.py [--items 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
ENV = os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def timed(argv: list[str], cwd: Path) -> tuple[float, str]:
    """Wall seconds of one fresh process and its stderr (it must succeed)."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr[-500:]}")
    return seconds, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="vlaudit-cold-start-"))
    (root / "images").mkdir()
    rng = np.random.default_rng(0)
    rows = []
    for i in range(args.items):
        Image.fromarray(rng.integers(0, 256, (60, 80, 3), dtype=np.uint8)).save(root / "images" / f"{i}.png")
        rows.append({"item_id": f"q{i}", "image": f"{i}.png", "question": "Is the cup left of the dog?",
                     "label": "yes" if i % 2 else "no", "dataset": "toy"})
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    vlaudit = [sys.executable, "-m", "vlaudit"]
    score = [*vlaudit, "vca", "score", "--model", "ref:scene-vqa-grounded", "--benchmark", "items.jsonl",
             "--images", "images", "--out", "run"]
    first_s, _ = timed(score, root)
    reruns, lists, imports = [], [], []
    torch_on_rerun = False
    for _ in range(args.repeats):
        imports.append(timed([sys.executable, "-c", "import torch, transformers"], root)[0])
        seconds, log = timed([sys.executable, "-X", "importtime", *score[1:]], root)
        reruns.append(seconds)
        torch_on_rerun |= any(line.rsplit("|", 1)[-1].strip() == "torch" for line in log.splitlines())
        lists.append(timed([*vlaudit, "models", "list"], root)[0])
    summary = json.loads((root / "run" / "summary.json").read_text())
    assert summary["n_units_scored_now"] == 0, "the rerun scored something: not a cached rerun"
    base = min(imports)
    print(f"first run {first_s:.2f} s; best of {args.repeats}: cached rerun {min(reruns):.2f} s, models list "
          f"{min(lists):.2f} s, import torch, transformers {base:.2f} s")
    print(f"ratio={min(reruns) / base:.3f} list_ratio={min(lists) / base:.3f} rerun_s={min(reruns):.2f} "
          f"import_s={base:.2f} torch_on_rerun={torch_on_rerun}")


if __name__ == "__main__":
    main()
