"""The demo's cycle stage: procedural scenes → exact COCO/GQA cycles → audit → scores of every dual encoder.

Per demo seed: render scenes (``data scenes``), build the COCO and GQA cycle families with image-disjoint
train/val/test splits, audit them (Table 5: TV = 0, signed degree 0), then for every encoder extract frozen
features through the ordinary ``features`` path and score the cycles of each family with

* ``zero-shot``     s(u, v) = cos(f(u), g(v)) (cycle paper §5);
* ``additive``      a(x) + b(y) trained with the four-entry BCE on the train split (it learns component
                    shortcuts); CycleAcc exactly ½ with every cycle a tie by Proposition 1 — the implementation audit;
* ``probe-rank-R``  a rank-R bilinear probe (Ux)ᵀ(Vy) + c trained with the cycle loss on the family's train
                    split and selected on its val split (§3, §5.4); R over the rank sweep.

Only test-split cycles are reported. A family's result pools the demo's seeds: CycleAcc is the mean over seeds
of the per-seed CycleAcc, its 95% interval a percentile bootstrap of that mean (cycles resampled within each
seed), ties and n are summed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.builders.cycles.audit import audit_cycles_file
from vlaudit.builders.cycles.coco import build_coco_cycles
from vlaudit.builders.cycles.gqa import build_gqa_cycles
from vlaudit.builders.scenes import render_scenes
from vlaudit.demo.config import DemoConfig
from vlaudit.demo.json_view import json_object
from vlaudit.errors import InputError
from vlaudit.figures import pyplot
from vlaudit.files import atomic_write, write_result, write_table
from vlaudit.metrics.cycles import (
    DEFAULT_TOL,
    block_scores,
    cycle_contrast,
    cycle_credit,
    summarize_contrasts,
)
from vlaudit.probes.trainer import ProbeData, TrainConfig, cycle_scores, cycles_to_index, fit_probe
from vlaudit.report.plots import plot_cycle_acc
from vlaudit.results.demo import (
    DemoCycleAudits,
    DemoCycleCell,
    DemoEncoder,
    DemoRankPoint,
    DemoScorer,
    ProbeNote,
    ProbeNotes,
)
from vlaudit.scoring.features import (
    FeatureInputs,
    collect_inputs,
    cosine_rows,
    read_features,
    write_features,
)
from vlaudit.scoring.run.parts import RunOptions
from vlaudit.scoring.run.spec import FeaturesSpec
from vlaudit.sources.cycle_tables import read_cycles
from vlaudit.stats.bootstrap import bootstrap_means, percentile_interval

SPLITS = "train=0.6,val=0.2,test=0.2"
REPORT_SPLIT = "test"
SOURCES = ("coco", "gqa")
Log = Callable[[str], None]
# (description, total) -> advance(n); the caller draws progress bars
Bars = Callable[[str, int], Callable[[int], None]]


def model_slug(spec: str) -> str:
    """A folder name for a model spec ("ref:scene-clip-bag" → "ref_scene-clip-bag")."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")
    if len(slug) > 60:
        slug = f"{slug[:40]}-{hashlib.sha256(spec.encode()).hexdigest()[:12]}"
    return slug


def split_cycles(cycles: Sequence[Any], split: str) -> list[Any]:
    """The cycles of one split (the one place the demo selects a split)."""
    return [c for c in cycles if c.split == split]


def build_seed(config: DemoConfig, seed: int, folder: Path, log: Log, bars: Bars) -> dict[str, Any]:
    """Render the scenes of ``seed`` and build + audit its COCO and GQA cycles under ``folder``."""
    scenes = folder / "scenes"
    advance = bars(f"seed {seed}: render scenes", config.n_scenes)
    render_scenes(scenes, config.n_scenes, seed=seed, progress=advance)
    cycles_dir = folder / "cycles"
    built = {
        "coco": build_coco_cycles(scenes / "instances.json", scenes / "captions.json", cycles_dir / "coco.jsonl",
                                  seed=seed, splits=SPLITS, min_cycles=config.min_cycles),
        "gqa": build_gqa_cycles(scenes / "scene_graphs.json", cycles_dir / "gqa.jsonl", seed=seed, splits=SPLITS,
                                min_cycles=config.min_cycles, image_pattern="{image_id:0>12}.jpg"),
    }
    audit = {name: audit_cycles_file(cycles_dir / f"{name}.jsonl",
                                     [scenes / ("instances.json" if name == "coco" else "scene_graphs.json")])
             for name in SOURCES}
    write_result(cycles_dir / "audit.json", DemoCycleAudits.from_dict(audit))
    counts = {name: b.get("counts", {}) for name, b in built.items()}
    log(f"seed {seed}: {sum(sum(c.values()) for cs in counts.values() for c in cs.values())} cycles in "
        f"{sum(len(cs) for cs in counts.values())} families")
    return {"scenes": scenes, "cycles": {name: cycles_dir / f"{name}.jsonl" for name in SOURCES},
            "counts": counts, "audit": audit}


def merge_inputs(parts: Sequence[tuple[Any, Path]]) -> Any:
    """One :class:`FeatureInputs` from several cycle files; an id defined two ways is an error naming the file."""
    merged = FeatureInputs()
    for part, path in parts:
        for table, other, kind in ((merged.images, part.images, "image"), (merged.texts, part.texts, "caption")):
            for key, value in other.items():
                if table.setdefault(key, value) != value:
                    raise InputError(f"{kind} id {key!r} means two different things across the cycle files",
                                     path=path, field=f"{kind}_id")
    return merged


def features_arguments(model: str, cycles: Sequence[Path], images: Path, out: Path, batch_size: int
                       ) -> dict[str, Any]:
    """The manifest's ``arguments`` of a demo features folder: the spec ``vlaudit features`` records
    (:class:`~vlaudit.scoring.run.spec.FeaturesSpec`), over the several cycles files the folder embeds."""
    recorded = [FeaturesSpec.of(model=model, cycles=path, images=images, out=out,
                                run=RunOptions(batch_size=batch_size)).recorded()
                for path in cycles]
    return {**recorded[0], **{key: [r[key] for r in recorded] for key in ("cycles", "cycles_sha256")}}


def _feature_bars(bars: Bars, prefix: str) -> Callable[[str, int, int], None]:
    """Adapt ``write_features``' progress(task, done, total) to one bar per task."""
    advance: dict[str, Callable[[int], None]] = {}

    def progress(task: str, done: int, total: int) -> None:
        if task not in advance:
            advance[task] = bars(f"{prefix} {task}", total)
        advance[task](done)

    return progress


def _probe_data(features: Any, index: tuple[dict[str, int], dict[str, int]], cycles: list[Any], name: str) -> Any:
    """:class:`ProbeData` holding only the feature rows these cycles use (the trainer converts every row it is
    given on each evaluation, so a family's probe should not carry the whole seed's features)."""
    rows = cycles_to_index(cycles, *index)
    images, image_rows = np.unique(rows[:, [0, 2]], return_inverse=True)
    texts, text_rows = np.unique(rows[:, [1, 3]], return_inverse=True)
    compact = np.stack([image_rows.reshape(-1, 2)[:, 0], text_rows.reshape(-1, 2)[:, 0],
                        image_rows.reshape(-1, 2)[:, 1], text_rows.reshape(-1, 2)[:, 1]], axis=1)
    return ProbeData(features.images[images], features.texts[texts], compact, name=name)


def score_encoder(config: DemoConfig, spec: str, backend: Any, seed: int, built: dict[str, Any], folder: Path,
                  bars: Bars) -> dict[str, dict[str, np.ndarray]]:
    """Cycle contrasts Δ of the test cycles, ``{scorer: {family: Δ array}}``, for one encoder and one seed.

    Writes the features folders, ``contrasts.csv`` (cycle_id, family, scorer, s11, s22, s12, s21, delta) and
    ``probe_notes.json`` (each probe's small-set batch and below-chance notes, :class:`TrainResult`) under
    ``folder``.
    """
    out: dict[str, dict[str, np.ndarray]] = {}
    rows: list[dict[str, Any]] = []
    notes: list[ProbeNote] = []

    def keep(scorer: str, family: str, test: list[Any], block: np.ndarray) -> None:
        delta = cycle_contrast(block[:, 0], block[:, 1], block[:, 2], block[:, 3])
        out.setdefault(scorer, {})[family] = delta
        if scorer in config.stored_scorers:
            rows.extend({"cycle_id": c.cycle_id, "family": family, "scorer": scorer, "s11": b[0], "s22": b[1],
                         "s12": b[2], "s21": b[3], "delta": d} for c, b, d in zip(test, block, delta, strict=True))

    # one features folder for both sources: they share every picture (and ids of generated captions)
    cycles_of = {source: read_cycles(built["cycles"][source]) for source in SOURCES}
    inputs = merge_inputs([(collect_inputs(cycles_of[s], built["cycles"][s], built["scenes"] / "images"),
                            built["cycles"][s]) for s in SOURCES])
    write_features(backend, inputs, folder / "features", progress=_feature_bars(bars, f"seed {seed}: {spec}"),
                     provenance={"model": spec, "cycles": [str(built["cycles"][s]) for s in SOURCES]},
                     arguments=features_arguments(spec, [built["cycles"][s] for s in SOURCES],
                                                  built["scenes"] / "images", folder / "features",
                                                  int(backend.batch_size)))
    features = read_features(folder / "features")
    index = (features.image_index(), features.caption_index())
    jobs: list[tuple[str, list[Any], list[Any], list[Any]]] = []
    for source in SOURCES:
        for family in sorted({c.family for c in cycles_of[source]}):
            members = [c for c in cycles_of[source] if c.family == family]
            jobs.append((family, split_cycles(members, "train"), split_cycles(members, "val"),
                         split_cycles(members, REPORT_SPLIT)))
    trainable = [job for job in jobs if job[1] and job[3]]
    advance = bars(f"seed {seed}: {spec} probes", len(trainable) * (1 + len(config.ranks)))
    for family, train, val, test in jobs:
        if not test:
            continue
        scores = {(r["image_id"], r["caption_id"]): r["score"] for r in cosine_rows(features, test)}
        keep("zero-shot", family, test, block_scores(test, scores))
        if not train:
            continue
        test_data = _probe_data(features, index, test, f"{family}/test")
        train_data = _probe_data(features, index, train, f"{family}/train")
        additive = fit_probe("additive", train_data, None,
                             TrainConfig(epochs=5, batch_size=64, lr=1e-2, seed=seed, loss="bce4", select="last"))
        keep("additive", family, test, cycle_scores(additive.scorer, test_data))
        notes.extend(ProbeNote(family=family, scorer="additive", note=n) for n in additive.notes)
        advance(1)
        val_data = _probe_data(features, index, val, f"{family}/val") if val else None
        for rank in config.ranks:
            probe = fit_probe("lowrank", train_data, val_data,
                              TrainConfig(epochs=config.probe_epochs, batch_size=config.probe_batch,
                                          lr=config.probe_lr, seed=seed), rank=rank)
            keep(f"probe-rank-{rank}", family, test, cycle_scores(probe.scorer, test_data))
            notes.extend(ProbeNote(family=family, scorer=f"probe-rank-{rank}", note=n) for n in probe.notes)
            advance(1)
    write_table(folder / "contrasts.csv", rows)
    write_result(folder / "probe_notes.json", ProbeNotes(notes=notes))
    return out


def pooled_summary(deltas: dict[int, np.ndarray], config: DemoConfig) -> DemoCycleCell:
    """One family × scorer over seeds: n, CycleAcc, its interval, ties, tie rate and each seed's CycleAcc (see
    the module docstring); with no cycles, n = 0 and the rates and interval None."""
    per_seed = {seed: summarize_contrasts(d, tol=DEFAULT_TOL, n_resamples=config.n_resamples, seed=seed)
                for seed, d in sorted(deltas.items()) if len(d)}
    if not per_seed:
        return DemoCycleCell(n=0, cycle_acc=None, ci=None, ties=0, tie_rate=None, per_seed={})
    # stratified bootstrap of the mean over seeds: resample cycles within each seed, average the seed means
    draws = np.mean([bootstrap_means(cycle_credit(deltas[s], DEFAULT_TOL), n_resamples=config.n_resamples,
                                     seed=config.seed + s) for s in per_seed], axis=0)
    n = sum(s.n for s in per_seed.values())
    ties = sum(s.ties for s in per_seed.values())
    low, high = percentile_interval(draws)
    return DemoCycleCell(n=n, cycle_acc=float(np.mean([s.cycle_acc for s in per_seed.values()])),
                         ci=(float(low), float(high)), ties=ties, tie_rate=ties / n,
                         per_seed={str(seed): s.cycle_acc for seed, s in per_seed.items() if s.cycle_acc is not None})


def summarize_encoders(contrasts: dict[str, dict[int, dict[str, dict[str, np.ndarray]]]],
                       config: DemoConfig) -> dict[str, DemoEncoder]:
    """Per encoder, scorer, family and the test split the cells pooled over seeds, from per-seed contrasts."""
    encoders: dict[str, DemoEncoder] = {}
    for spec, by_seed in contrasts.items():
        scorers: dict[str, DemoScorer] = {}
        names = list(dict.fromkeys(s for per in by_seed.values() for s in per))
        for scorer in names:
            families = sorted({f for per in by_seed.values() for f in per.get(scorer, {})})
            scorers[scorer] = DemoScorer(families={
                family: {REPORT_SPLIT: pooled_summary({seed: per[scorer][family] for seed, per in by_seed.items()
                                                       if family in per.get(scorer, {})}, config)}
                for family in families})
        encoders[spec] = DemoEncoder(scorers=scorers)
    return encoders


def rank_sweep(encoders: dict[str, DemoEncoder], ranks: Sequence[int]) -> list[DemoRankPoint]:
    """The probe-rank-R scorers' test-split CycleAcc per encoder, family and rank."""
    rows = []
    for spec, entry in encoders.items():
        for rank in ranks:
            scorer = entry.scorers.get(f"probe-rank-{rank}")
            for family, splits in ({} if scorer is None else scorer.families).items():
                cell = splits[REPORT_SPLIT]
                rows.append(DemoRankPoint(model=spec, family=family, rank=rank, cycle_acc=cell.cycle_acc, ci=cell.ci,
                                          n=cell.n))
    return rows


def plot_outputs(encoders: dict[str, DemoEncoder], sweep: list[DemoRankPoint], out: Path,
                 config: DemoConfig) -> dict[str, Path]:
    """``cycle_acc.png`` (headline scorers per encoder) and ``rank_sweep.png``; returns their paths."""
    evaluations = {}
    for spec, entry in encoders.items():
        for scorer in ("additive", "zero-shot", f"probe-rank-{config.probe_rank}"):
            if scorer in entry.scorers:
                # {family: {split: summary}} as the file holds it: the plot labels every row with its split
                evaluations[f"{spec} / {spec.removeprefix('ref:')} {scorer}"] = json_object(entry.scorers[scorer])
    paths = {"cycle_plot": plot_cycle_acc(evaluations, out / "cycle_acc.png")}
    paths["rank_plot"] = _plot_rank_sweep(sweep, out / "rank_sweep.png")
    return paths


def _plot_rank_sweep(rows: list[DemoRankPoint], path: Path) -> Path:
    plt = pyplot()

    models = list(dict.fromkeys(r.model for r in rows))
    families = sorted({r.family for r in rows})
    fig, axes = plt.subplots(1, max(1, len(models)), figsize=(5.2 * max(1, len(models)), 4.8), sharey=True,
                             squeeze=False)
    colours = plt.get_cmap("tab10")
    for ax, model in zip(axes[0], models, strict=False):
        for k, family in enumerate(families):
            pts = sorted((r.rank, r.cycle_acc) for r in rows
                         if r.model == model and r.family == family and r.cycle_acc is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=colours(k % 10), label=family)
        ax.axhline(0.5, color="#888888", linestyle="--", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_title(model, fontsize=10)
        ax.set_xlabel("probe rank")
    axes[0][0].set_ylabel("CycleAcc (test)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=min(5, max(1, len(labels))), frameon=False)
    with atomic_write(path, "wb") as handle:
        fig.savefig(handle, format="png", dpi=110)
    plt.close(fig)
    return path
