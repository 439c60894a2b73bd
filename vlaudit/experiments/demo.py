"""The offline end-to-end demo: every stage of both audits on the embedded default, no network, CPU only.

Embedded default = procedural scenes (COCO/GQA-format annotations rendered here) + the ``ref:`` reference
models (tiny, seeded, random-weight models of real families built offline). Steps:

1. synthetic controls (cycle paper §5.1, Table 1);
2. procedural scenes → exact COCO and GQA cycle families → Table-5 audit (TV = 0, signed degree = 0);
3. cycle scoring on the held-out test split: an additive image-only + text-only scorer (CycleAcc exactly ½ by
   Proposition 1), ``ref:tiny-open-clip`` zero-shot cosine, and a rank-16 bilinear probe trained on its frozen
   features with the cycle loss (train split, selected on val) → ``cycles eval`` per family;
4. VCA: same-image true/false spatial groups from the scenes, scored by ``ref:tiny-qwen2-vl`` under all seven
   contexts and both interfaces → ``vca report`` (support, permutation, relation and robustness axes);
5. the 3×3 evidence-source factorial (few stems) scored by the same model → ``vca factorial``.

The reference models have random weights: their numbers say nothing about real models; the demo shows what
every file and table looks like, and that the additive control is exactly at chance. Point the same commands
at real data and ``hf:`` / ``open_clip:`` models for real audits (README).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.tables import write_json, write_table


@dataclass(frozen=True)
class DemoConfig:
    """Sizes of the demo; :meth:`quick` is the small version the tests run."""

    seed: int = 0
    synthetic_seeds: tuple[int, ...] = (0, 1, 2)
    n_scenes: int = 600
    min_cycles: int = 30
    vca_groups: int = 60
    vca_contexts: tuple[str, ...] = ("original", "text", "blank", "mean", "mismatch", "rele", "irre")
    vca_interfaces: tuple[str, ...] = ("yesno", "truefalse")
    factorial_stems_per_relation: int = 4
    n_resamples: int = 2000
    mllm: str = "ref:tiny-qwen2-vl"
    dual: str = "ref:tiny-open-clip"
    torch_threads: int | None = 1
    probe_rank: int = 16
    probe_epochs: int = 20

    @classmethod
    def quick(cls) -> DemoConfig:
        return cls(synthetic_seeds=(0,), n_scenes=200, min_cycles=5, vca_groups=12,
                   factorial_stems_per_relation=2, n_resamples=200)


Log = Callable[[str], None]
# Image-disjoint splits of the demo cycles: probes train on train, select on val; every scorer is reported on test.
SPLITS = "train=0.6,val=0.2,test=0.2"


def _additive_scores(cycles: list, inputs: Any) -> list[dict[str, Any]]:
    """s(u, v) = mean pixel intensity of u + word count of v: an image-only plus a text-only cue."""
    from PIL import Image

    brightness: dict[str, float] = {}
    rows: dict[tuple[str, str], float] = {}
    for cycle in cycles:
        for image_id, caption_id, _ in cycle.entries():
            if image_id not in brightness:
                with Image.open(inputs.images[image_id]) as image:
                    brightness[image_id] = float(np.asarray(image.convert("L"), dtype=np.float64).mean() / 255.0)
            rows[(image_id, caption_id)] = brightness[image_id] + len(inputs.texts[caption_id].split())
    return [{"image_id": u, "caption_id": v, "score": s} for (u, v), s in rows.items()]


def _probe_scores(features: Any, cycles: list, config: DemoConfig) -> list[dict[str, Any]]:
    """A low-rank bilinear probe trained with the cycle loss on the train split, selected on val (§3, §E.3).

    Returns its scores on every pair of the test-split cycles.
    """
    from vlaudit.probes.trainer import ProbeData, TrainConfig, cycles_to_index, fit_probe, score_index

    image_index, caption_index = features.image_index(), features.caption_index()
    # Copies: arrays read from Parquet are read-only, and torch wants writable memory.
    x, y = np.array(features.images), np.array(features.texts)

    def data(split: str) -> ProbeData:
        chosen = [c for c in cycles if c.split == split]
        return ProbeData(x, y, cycles_to_index(chosen, image_index, caption_index), name=split)

    result = fit_probe("lowrank", data("train"), data("val"),
                       TrainConfig(epochs=config.probe_epochs, lr=3e-2, seed=config.seed), rank=config.probe_rank)
    pairs = {(u, v): None for c in cycles if c.split == "test" for u, v, _ in c.entries()}
    image_idx = np.array([image_index[u] for u, _ in pairs], dtype=np.int64)
    caption_idx = np.array([caption_index[v] for _, v in pairs], dtype=np.int64)
    scores = score_index(result.scorer, x, y, image_idx, caption_idx)
    return [{"image_id": u, "caption_id": v, "score": float(x)} for (u, v), x in zip(pairs, scores, strict=True)]


def _cycle_step(config: DemoConfig, out: Path, scenes: Path, log: Log) -> dict[str, Any]:
    from vlaudit.backends.registry import load_backend
    from vlaudit.builders.cycles.audit import audit_cycles_file
    from vlaudit.builders.cycles.coco import build_coco_cycles
    from vlaudit.builders.cycles.gqa import build_gqa_cycles
    from vlaudit.metrics.cycles import evaluate_cycles
    from vlaudit.report.plots import plot_cycle_acc
    from vlaudit.scoring.features import collect_inputs, extract_features, read_features, zero_shot_scores
    from vlaudit.sources.cycle_tables import read_cycles

    cycles_dir = out / "cycles"
    built = {
        "coco": build_coco_cycles(scenes / "instances.json", scenes / "captions.json", cycles_dir / "coco.jsonl",
                                  seed=config.seed, splits=SPLITS, min_cycles=config.min_cycles),
        "gqa": build_gqa_cycles(scenes / "scene_graphs.json", cycles_dir / "gqa.jsonl", seed=config.seed,
                                splits=SPLITS, min_cycles=config.min_cycles,
                                image_pattern="{image_id:0>12}.jpg"),
    }
    log(f"built cycles: {sum(len(read_cycles(cycles_dir / f'{n}.jsonl')) for n in built)} blocks "
        f"in {sum(len(b.get('counts', {})) for b in built.values())} family/split cells")
    audits = {name: audit_cycles_file(cycles_dir / f"{name}.jsonl",
                                      [scenes / "instances.json"] if name == "coco" else [scenes / "scene_graphs.json"])
              for name in built}
    write_json(cycles_dir / "audit.json", audits)
    dual = load_backend(config.dual)
    evaluations: dict[str, dict[str, Any]] = {}
    for name in built:
        path = cycles_dir / f"{name}.jsonl"
        cycles = read_cycles(path)
        inputs = collect_inputs(cycles, path, scenes / "images")
        feats = cycles_dir / f"features_{name}"
        extract_features(dual, inputs, feats, provenance={"model": config.dual})
        features = read_features(feats)
        test = [c for c in cycles if c.split == "test"]
        scorers = {
            "additive-shortcut": _additive_scores(test, inputs),
            "zero-shot-cosine": zero_shot_scores(features, test, source=path),
            f"cycle-loss-rank{config.probe_rank}-probe": _probe_scores(features, cycles, config),
        }
        for scorer, rows in scorers.items():
            write_table(cycles_dir / f"scores_{name}_{scorer}.csv", rows)
            scores = {(r["image_id"], r["caption_id"]): r["score"] for r in rows}
            evaluations[f"{name} / {scorer}"] = evaluate_cycles(cycles, scores, splits=["test"],
                                                                min_cycles=config.min_cycles,
                                                                n_resamples=config.n_resamples, seed=config.seed)
    write_json(cycles_dir / "eval.json", evaluations)
    plot_cycle_acc(evaluations, cycles_dir / "cycle_acc.png")
    return {"built": built, "audit": audits, "eval": evaluations}


def _score(config: DemoConfig, items_path: Path, images: Path, run_dir: Path, contexts, interfaces,
           log: Log) -> dict[str, Any]:
    from vlaudit.backends.registry import load_backend
    from vlaudit.scoring.runner import run_scoring
    from vlaudit.sources.items import read_items

    backend = load_backend(config.mllm, interfaces=list(interfaces))
    summary = run_scoring(backend, read_items(items_path), images_dir=images, out_dir=run_dir,
                          contexts=list(contexts), interfaces=list(interfaces), seed=config.seed,
                          arguments={"benchmark": str(items_path), "images": str(images), "demo": True})
    log(f"scored {run_dir.name}: {summary.get('n_records', summary)} records")
    return summary


def _erasable_groups(items: list, images_dir: Path, contexts: tuple[str, ...]) -> list:
    """Keep the groups whose erasure contexts can be built (irre needs tiles clear of the object union).

    The report requires every context of a run for every item, so the demo asks only answerable questions.
    """
    from PIL import Image

    from vlaudit.contexts.image_contexts import ContextUnavailable, render_context

    erasures = [c for c in contexts if c in ("rele", "irre")]
    keep: list = []
    for item in items:
        try:
            with Image.open(images_dir / item.image) as image:
                for context in erasures:
                    render_context(context, image.convert("RGB"), boxes=item.boxes)
        except ContextUnavailable:
            continue
        keep.append(item)
    groups = {}
    for item in keep:
        groups.setdefault(item.group_id, []).append(item)
    return [item for members in groups.values() if len(members) == 2 for item in members]


def _vca_step(config: DemoConfig, out: Path, scenes: Path, log: Log) -> dict[str, Any]:
    from vlaudit.builders.scene_items import scene_items_from_file
    from vlaudit.experiments.vca_report import ReportSettings, compute_report
    from vlaudit.report.vca_tables import print_headline, write_report_files
    from vlaudit.sources.items import write_items
    from vlaudit.sources.margins import read_margins

    vca = out / "vca"
    items = scene_items_from_file(scenes / "scene_graphs.json", seed=config.seed)
    items = _erasable_groups(items, scenes, config.vca_contexts)[: 2 * config.vca_groups]
    write_items(vca / "items.jsonl", items)
    _score(config, vca / "items.jsonl", scenes, vca / "run", config.vca_contexts, config.vca_interfaces, log)
    report = compute_report(read_margins(vca / "run" / "margins.parquet"),
                            ReportSettings(n_resamples=config.n_resamples))
    write_report_files(vca / "report", report)
    print_headline(report.runs, title="Visual Credit Audit — demo scenes (random-weight reference model)")
    return report.to_json()


def _factorial_step(config: DemoConfig, out: Path, log: Log) -> dict[str, Any]:
    from vlaudit.builders.factorial import build_factorial
    from vlaudit.experiments.factorial_analysis import run_factorial_analysis

    folder = out / "factorial"
    build_factorial(folder / "inputs", n_per_relation=config.factorial_stems_per_relation)
    _score(config, folder / "inputs" / "items.jsonl", folder / "inputs", folder / "run",
           ("original", "text", "blank"), ("yesno",), log)
    return run_factorial_analysis(folder / "run", items=folder / "inputs" / "items.jsonl",
                                  out_dir=folder / "report", n_resamples=config.n_resamples)


def run_demo(out_dir: str | Path, config: DemoConfig | None = None, *, log: Log = print) -> dict[str, Any]:
    """Run every step into ``out_dir`` and write ``out_dir/summary.json``; returns the summary."""
    from vlaudit.builders.scenes import render_scenes
    from vlaudit.experiments.synthetic import run_synthetic, torch_threads

    config = config or DemoConfig()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}

    def step(name: str, fn: Callable[[], Any]) -> Any:
        log(f"[{len(timings) + 1}/5] {name} …")
        start = time.perf_counter()
        value = fn()
        timings[name] = round(time.perf_counter() - start, 2)
        return value

    # Every model here is tiny: one torch thread is several times faster than thread hand-off between two.
    with torch_threads(config.torch_threads):
        synthetic = step("synthetic controls", lambda: run_synthetic(config.synthetic_seeds, out / "synthetic"))
        scenes = out / "scenes"
        step("procedural scenes", lambda: render_scenes(scenes, config.n_scenes, seed=config.seed))
        cycles = step("exact cycles: build, audit, score, eval", lambda: _cycle_step(config, out, scenes, log))
        vca = step("visual credit audit", lambda: _vca_step(config, out, scenes, log))
        factorial = step("evidence-source factorial", lambda: _factorial_step(config, out, log))
    summary = {
        "config": asdict(config),
        "synthetic": {"checks": synthetic["checks"],
                      "rows": [{k: r[k] for k in ("diagnostic", "probe", "metric", "mean", "expected")}
                               for r in synthetic["rows"]]},
        "cycles": {
            "audit_max_abs_signed_degree": max(
                (row.get("max_abs_signed_degree", 0) for audit in cycles["audit"].values()
                 for row in audit.get("rows", [])), default=0),
            "cycle_acc_split": "test",
            "cycle_acc": {name: {fam: s["test"]["cycle_acc"] for fam, s in ev["families"].items()}
                          for name, ev in cycles["eval"].items()},
        },
        "vca": [{k: run.get(k) for k in ("model", "dataset", "interface", "n", "acc", "dep", "dcc", "cu")}
                for run in vca["runs"]],
        "factorial": [{k: m.get(k) for k in ("model", "stems", "correct", "cu", "cu_rate", "responsive_rate",
                                             "flip_rate")} for m in factorial["models"]],
        "seconds": timings,
        "files": {"synthetic": "synthetic/synthetic.json", "cycles": "cycles/eval.json",
                  "cycle_plot": "cycles/cycle_acc.png", "audit": "cycles/audit.json",
                  "vca": "vca/report/vca.json", "vca_plot": "vca/report/gap_hist.png",
                  "factorial": "factorial/report/factorial.json"},
    }
    write_json(out / "summary.json", summary)
    return summary
