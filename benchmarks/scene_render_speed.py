"""Speed of the procedural inputs: `data scenes` and `data factorial`, against their codec floor.

Baseline (same process): encode and write the same number of images of the same size and format with
nothing drawn — the cost no renderer can avoid. Reports scenes per second and the ratio of each full build
(layout, drawing, annotations, JSON files, checks) to that floor.

    .venv/bin/python benchmarks/scene_render_speed.py [--images 500]

Last line: ``scenes_per_s=<x> scenes_ratio=<y> factorial_s=<z> factorial_ratio=<w>``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from PIL import Image

from vlaudit.builders.factorial import CANVAS, build_factorial
from vlaudit.builders.scene_render import encode
from vlaudit.builders.scenes import render_scenes


def _floor(n: int, size: tuple[int, int], fmt: str, out: Path, **options: object) -> float:
    image = Image.new("RGB", size, (230, 230, 225))
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for i in range(n):
        (out / f"{i}.{fmt.lower()}").write_bytes(encode(image, fmt, **options))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        floor_s = _floor(args.images, (160, 120), "JPEG", root / "floor_jpg", quality=90)
        start = time.perf_counter()
        render_scenes(root / "scenes", args.images, seed=0)
        scenes_s = time.perf_counter() - start
        floor_f = _floor(600, (CANVAS, CANVAS), "PNG", root / "floor_png", compress_level=1)
        start = time.perf_counter()
        build_factorial(root / "factorial")
        factorial_s = time.perf_counter() - start
    print(f"scenes: {args.images} in {scenes_s:.2f} s ({args.images / scenes_s:.0f}/s); "
          f"JPEG encode+write floor {floor_s:.2f} s")
    print(f"factorial: 600 images + 1,800 items in {factorial_s:.2f} s; PNG encode+write floor {floor_f:.2f} s")
    print(f"scenes_per_s={args.images / scenes_s:.1f} scenes_ratio={scenes_s / floor_s:.2f} "
          f"factorial_s={factorial_s:.2f} factorial_ratio={factorial_s / floor_f:.2f}")


if __name__ == "__main__":
    main()
