"""COCO-scale cycle construction: build time of all COCO families vs. merely parsing the two files.

Writes a synthetic annotation pair shaped like train2017 (118,287 images; ~860k instances with polygon
segmentations sized so the file has train2017's ~520 bytes per instance, ~2.9 categories per image;
~590k captions of ~10 words written from each image's categories with the synonym table), then, in a fresh
process so that generation does not count:

* baseline: ``orjson.loads`` of both files (the fastest JSON parser vlaudit uses), best of ``RUNS`` (3) runs, with
  the same garbage-collector pause the builder uses;
* build: ``build_coco_cycles`` with every COCO family and default options on the whole pool (parse,
  validation, indexes, pairing, and writing the cycles, captions and metadata files), best of ``RUNS`` runs
  (all must write identical bytes). The best of three, not two: the machine is shared, and a loaded moment
  slows one run by half.

The builder never reads masks, so it blanks well-formed "segmentation" values with one regex pass before
parsing (most of an instances file's bytes); the baseline parses everything.

Each scale prints the build's time per stage and family (``seconds`` of the summary, the faster run). The
default runs the scales 0.05, 0.2 and 1.0 (each generated and measured in its own processes) and fits the
exponent of build time against size (least squares on log time vs log scale; 1 means linear).

Last line: ``ratio=<build / parse at the largest scale> peak_gb=<peak RSS during that build> exponent=<fit>
identical=<both runs wrote the same bytes at every scale>`` (the peak is reset after the baseline where Linux
allows it, since the baseline's full parse holds more memory than the build; the scale's lines say whether it
was, and give the baseline's peak). Goal: ratio ≤ 2, peak ≤ 6 GB, exponent ≤ 1.2.
``--scales 0.05,0.2`` is the quick version (``make bench``).

    .venv/bin/python benchmarks/cycle_build_scale.py [--scales 0.05,0.2,1.0] [--workdir DIR] [--seed 0]
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson
from peak_memory import peak_gb, reset_peak

N_IMAGES, N_INSTANCES, N_CAPTIONS = 118_287, 860_001, 591_753
RUNS = 3


def generate(workdir: Path, scale: float, seed: int) -> tuple[Path, Path]:
    from vlaudit.builders.cycles.synonyms import synonym_table

    rng = np.random.default_rng(seed)
    table = synonym_table()
    names = list(table)
    n_images = max(20, int(N_IMAGES * scale))
    n_inst = max(100, int(N_INSTANCES * scale))
    width = rng.choice([640, 480, 500, 427], n_images)
    height = rng.choice([480, 640, 375, 427], n_images)
    # heavy-tailed instances per image; category popularity skewed like COCO (person dominates)
    per_image = rng.multinomial(n_inst - n_images, rng.dirichlet(np.full(n_images, 0.6))) + 1
    ann_image = np.repeat(np.arange(n_images), per_image)
    popularity = 1.0 / np.arange(1, len(names) + 1) ** 0.8
    popularity[0] = 8 * popularity[1]
    popularity /= popularity.sum()
    # ~2.9 categories per image, as in train2017; instances repeat within a category (crowds of people)
    ann_cat = np.empty(len(ann_image), dtype=np.int64)
    start = 0
    for count in per_image.tolist():
        cats = rng.choice(len(names), size=min(count, 1 + int(rng.poisson(1.9))), replace=False, p=popularity)
        ann_cat[start:start + count] = cats[np.minimum(rng.geometric(0.45, count) - 1, len(cats) - 1)]
        start += count
    W, H = width[ann_image], height[ann_image]
    bw = np.minimum(W, np.round(W * rng.beta(1.2, 4, len(ann_image)), 2) + 1)
    bh = np.minimum(H, np.round(H * rng.beta(1.2, 4, len(ann_image)), 2) + 1)
    bx = np.round(rng.random(len(ann_image)) * (W - bw), 2)
    by = np.round(rng.random(len(ann_image)) * (H - bh), 2)
    crowd = rng.random(len(ann_image)) < 0.009
    images = [{"license": 1, "file_name": f"{i + 1:012d}.jpg",
               "coco_url": f"http://images.cocodataset.org/train2017/{i + 1:012d}.jpg", "height": int(height[i]),
               "width": int(width[i]), "date_captured": "2013-11-14 17:02:52",
               "flickr_url": f"http://farm4.staticflickr.com/3153/{9833525 + i}_4b8a2a8b59_z.jpg", "id": i + 1}
              for i in range(n_images)]
    # polygon sizes chosen so that the file has train2017's bytes per instance (448 MB / 860k ≈ 520 B)
    n_points = rng.integers(12, 40, len(ann_image))
    annotations = []
    for k in range(len(ann_image)):
        x, y, w, h = float(bx[k]), float(by[k]), float(bw[k]), float(bh[k])
        t = np.linspace(0, 2 * np.pi, int(n_points[k]), endpoint=False)
        poly = np.round(np.stack([x + w / 2 * (1 + np.cos(t)), y + h / 2 * (1 + np.sin(t))], 1).ravel(), 2)
        annotations.append({"segmentation": [poly.tolist()], "area": round(w * h * 0.6, 4),
                            "iscrowd": int(crowd[k]), "image_id": int(ann_image[k]) + 1,
                            "bbox": [x, y, w, h], "category_id": int(ann_cat[k]) + 1, "id": k + 1})
    categories = [{"supercategory": "thing", "id": c + 1, "name": n} for c, n in enumerate(names)]
    instances = workdir / "instances_synthetic.json"
    instances.write_bytes(orjson.dumps({"info": {"description": "synthetic train2017-shaped"}, "licenses": [],
                                        "images": images, "annotations": annotations, "categories": categories}))
    del annotations
    n_caps = max(100, int(N_CAPTIONS * scale))
    cap_image = np.sort(rng.integers(0, n_images, n_caps))
    starts = np.searchsorted(ann_image, np.arange(n_images + 1))
    # ~10.5 words per caption, as in COCO
    fillers = ["sitting on top of", "standing next to", "near", "in front of", "together with", "beside",
               "behind"]
    scenes = ["in a small room", "on a busy city street", "in a large grassy field", "at the beach on a sunny day",
              "in the kitchen", "outside on a cloudy day", "on a wooden table"]
    captions = []
    for k, i in enumerate(cap_image.tolist()):
        cats = ann_cat[starts[i]:starts[i + 1]]
        chosen = rng.choice(cats, size=min(len(cats), int(rng.integers(1, 4))), replace=False)
        words = [table[names[c]][int(rng.integers(0, min(3, len(table[names[c]]))))] for c in chosen]
        text = "A " + f" {fillers[k % len(fillers)]} a ".join(words) + f" {scenes[k % len(scenes)]}."
        captions.append({"image_id": i + 1, "id": k + 1, "caption": text})
    captions_path = workdir / "captions_synthetic.json"
    captions_path.write_bytes(orjson.dumps({"info": {}, "licenses": [], "images": images, "annotations": captions}))
    return instances, captions_path


def measure(workdir: Path) -> None:
    from vlaudit.builders.cycles.coco import build_coco_cycles

    instances, captions = workdir / "instances_synthetic.json", workdir / "captions_synthetic.json"
    # the baseline gets the same garbage-collector pause the builder uses, and the best of RUNS runs
    parse_times: list[float] = []
    parse_cpu: list[float] = []
    for _ in range(RUNS):
        gc.disable()
        start, cpu = time.perf_counter(), time.process_time()
        parsed = (orjson.loads(instances.read_bytes()), orjson.loads(captions.read_bytes()))
        parse_times.append(time.perf_counter() - start)
        parse_cpu.append(time.process_time() - cpu)
        gc.enable()
        del parsed
        gc.collect()
    parse_s = min(parse_times)
    baseline_peak_gb = peak_gb()
    # the build gets the same best of RUNS runs (each from a fresh parse); its peak is reset after the
    # baseline where Linux allows it, so that the peak reported is the build's own
    build_times, build_cpu, peaks, build_seconds = [], [], [], []
    for run in range(RUNS):
        reset = reset_peak()
        start, cpu = time.perf_counter(), time.process_time()
        summary = build_coco_cycles(instances, captions, workdir / f"cycles_{run}.jsonl")
        build_times.append(time.perf_counter() - start)
        build_cpu.append(time.process_time() - cpu)
        peaks.append(peak_gb())
        build_seconds.append(summary["seconds"])
        gc.collect()
    build_s, build_peak_gb = min(build_times), max(peaks)
    # the cycles and the captions table, byte for byte (the metadata names its own path, so it differs)
    same = all((workdir / f"cycles_{run}{kind}.jsonl").read_bytes() == (workdir / f"cycles_0{kind}.jsonl").read_bytes()
               for run in range(1, RUNS) for kind in ("", ".captions"))
    stages = build_seconds[int(np.argmin(build_times))]
    print(f"images={summary['images_in_pool']} cycles={summary['cycles_written']} identical_outputs={same}")
    print(f"parse_s={parse_s:.2f} (runs: {', '.join(f'{t:.2f}' for t in parse_times)}) build_s={build_s:.2f} "
          f"(runs: {', '.join(f'{t:.2f}' for t in build_times)})")
    print(f"baseline_peak_gb={baseline_peak_gb:.2f} build_peak={'build only' if reset else 'whole process'}")
    print(f"{'stage or family':34s} {'seconds':>8s} {'share':>6s} {'blocks':>7s}")
    for stage, seconds in sorted(stages.items(), key=lambda kv: -kv[1]):
        blocks = sum(summary["counts"].get(stage, {}).values()) if stage in summary["counts"] else ""
        print(f"{stage:34s} {seconds:8.2f} {seconds / build_s:6.1%} {blocks!s:>7s}")
    # CPU time is less disturbed by other load on a shared machine (it leaves out the build's fsync waits)
    print(f"cpu_ratio={min(build_cpu) / min(parse_cpu):.2f} (parse_cpu_s={min(parse_cpu):.2f} "
          f"build_cpu_s={min(build_cpu):.2f})")
    print(f"ratio={build_s / parse_s:.2f} peak_gb={build_peak_gb:.2f}")
    print("result=" + json.dumps({"build_s": build_s, "parse_s": parse_s, "peak_gb": build_peak_gb, "identical": same,
                                  "cpu_ratio": min(build_cpu) / min(parse_cpu),
                                  "build_cpu_s": min(build_cpu)}), flush=True)


def fitted_exponent(scales: list[float], seconds: list[float]) -> float:
    """Least-squares slope of log(seconds) on log(scale): time ∝ scale^exponent."""
    return float(np.polyfit(np.log(scales), np.log(seconds), 1)[0]) if len(scales) > 1 else float("nan")


def run_scale(scale: float, seed: int, workdir: Path | None) -> dict:
    """Generate the files at ``scale``, then measure in a fresh process; its ``result=`` line, parsed."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        start = time.perf_counter()
        instances, captions = generate(Path(tmp), scale, seed)
        print(f"--- scale {scale:g}: generated {instances.stat().st_size / 1e6:.0f} MB + "
              f"{captions.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - start:.1f}s", flush=True)
        gc.collect()
        done = subprocess.run([sys.executable, __file__, "--measure", tmp], check=True, capture_output=True,
                              text=True)
    lines = done.stdout.splitlines()
    print("\n".join(line for line in lines if not line.startswith("result=")), flush=True)
    return json.loads(next(line for line in lines if line.startswith("result="))[len("result="):])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="0.05,0.2,1.0", help="Fractions of the train2017 size, comma-separated.")
    parser.add_argument("--workdir", type=Path, default=None, help="Where to write the files (default: temp).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--measure", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        measure(args.measure)
        return
    scales = sorted(float(s) for s in args.scales.split(","))
    results = [run_scale(scale, args.seed, args.workdir) for scale in scales]
    build = [r["build_s"] for r in results]
    cpu = [r["build_cpu_s"] for r in results]
    print(f"{'scale':>6s} {'build_s':>8s} {'parse_s':>8s} {'ratio':>6s} {'cpu_ratio':>9s} {'peak_gb':>7s}")
    for scale, r in zip(scales, results, strict=True):
        print(f"{scale:6g} {r['build_s']:8.2f} {r['parse_s']:8.2f} {r['build_s'] / r['parse_s']:6.2f} "
              f"{r['cpu_ratio']:9.2f} {r['peak_gb']:7.2f}")
    print(f"exponent of build time vs scale: wall {fitted_exponent(scales, build):.2f}, "
          f"cpu {fitted_exponent(scales, cpu):.2f}")
    last = results[-1]
    print(f"ratio={last['build_s'] / last['parse_s']:.2f} peak_gb={last['peak_gb']:.2f} "
          f"exponent={fitted_exponent(scales, build):.2f} identical={all(r['identical'] for r in results)}")


if __name__ == "__main__":
    main()
