"""Cycles from a notebook: build, featurize, score and evaluate (cycle paper §2–§5)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from warnings import catch_warnings, simplefilter, warn

import numpy as np

from vlaudit.analysis.stats_options import StatsOptions, spreads_stats
from vlaudit.api.input_records import as_cycles, as_matrix, as_scores
from vlaudit.api.inputs import CyclesInput, MatrixInput, ScoresInput
from vlaudit.api.results import Result, with_interval
from vlaudit.backends.base import Backend
from vlaudit.backends.options import RunOptions
from vlaudit.backends.registry import ModelRef, load_backend
from vlaudit.builders.cycles.build_steps import DEFAULT_SPLITS, sidecar_paths, validation_counts_from
from vlaudit.builders.cycles.coco import CocoCaps, build_coco_cycles
from vlaudit.builders.cycles.gqa import DEFAULT_GQA_IMAGE_PATTERN, DEFAULT_GQA_SPLITS, build_gqa_cycles
from vlaudit.builders.cycles.jsonl import build_jsonl_cycles
from vlaudit.builders.cycles.rules import GeometryRules
from vlaudit.builders.cycles.two_by_two import build_benchmark_cycles
from vlaudit.errors import InputError
from vlaudit.files import read_json, write_result
from vlaudit.metrics.cycles import VALIDATION_SPLIT, evaluate_cycle_families, reduced_precision
from vlaudit.metrics.two_by_two import METRIC_LABELS, benchmark_metrics, metric_names
from vlaudit.report.plots import plot_cycle_acc
from vlaudit.results.cycles import (
    BenchmarkEntry,
    BenchmarkMetricsResult,
    CycleBuildSummary,
    CycleEvaluationResult,
)
from vlaudit.results.versioned import to_json
from vlaudit.scoring.features import Features, read_features
from vlaudit.scoring.features import cosine_rows as cosine
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    CYCLE_BOOTSTRAP_SEED,
    CYCLE_POOL_SEED,
    CYCLE_TIE_TOL,
    MIN_CYCLES,
    NATURALBENCH_YES_THRESHOLD,
)
from vlaudit.sources.two_by_two import BENCHMARKS
from vlaudit.stats.clusters import small_sample_cells


class CycleEvaluation(Result):
    """CycleAcc per (family, split) — ``rows``: family, split, n, cycle_acc (+ interval), ties, tie_rate;
    :attr:`evaluation`: the typed record ``cycles eval`` writes.

    When the cycles come from a 2×2 benchmark (``cycles build winoground|naturalbench|blocks``),
    ``evaluation.benchmark_entries`` holds its own metrics and :attr:`benchmarks` their rows.
    """

    @property
    def evaluation(self) -> CycleEvaluationResult:
        """The typed evaluation (``eval.json``)."""
        assert isinstance(self.result, CycleEvaluationResult)  # evaluate_cycles always builds it with one
        return self.result

    def write(self, path: str | Path, *, plot: bool = True) -> list[Path]:
        """Write the evaluation as ``vlaudit cycles eval --out PATH`` does (see :func:`save_evaluation`)."""
        return save_evaluation(path, self.evaluation, plot=plot)

    @property
    def benchmarks(self) -> Result:
        """The 2×2 benchmarks' own metrics beside CycleAcc: one row per benchmark, split, tag and metric."""
        entries = self.evaluation.benchmark_entries
        return Result.of(BenchmarkMetricsResult(benchmarks=entries), benchmark_rows(entries),
                         title="2×2 benchmark metrics beside CycleAcc", interval_columns=("value",))


def benchmark_rows(benchmarks: Mapping[str, BenchmarkEntry]) -> list[dict[str, object]]:
    """Flat rows (benchmark, split, tag, metric, n, value + interval, ties) of the benchmarks' metrics."""
    rows: list[dict[str, object]] = []
    for name, entry in benchmarks.items():
        for split, tags in entry.splits.items():
            for tag, cell in tags.items():
                for metric in ("cycle_acc", *metric_names(entry.metrics)):
                    row: dict[str, object] = {"benchmark": name, "split": split, "tag": tag,
                                              "metric": METRIC_LABELS[metric], "n": cell["n"], "value": cell[metric]}
                    interval = cell[f"{metric}_ci"]
                    with_interval(row, "value", interval if isinstance(interval, list) else None)
                    rows.append(row | {"ties": cell[f"{metric}_ties"]})
    return rows


def _evaluation_rows(result: CycleEvaluationResult) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for family, cells in result.families.items():
        for split, cell in cells.items():
            row: dict[str, object] = {"family": family, "split": split, "n": cell.n, "cycle_acc": cell.cycle_acc}
            with_interval(row, "cycle_acc", cell.ci)
            rows.append(row | {"unit": cell.unit, "n_clusters": cell.n_clusters, "ties": cell.ties,
                               "tie_rate": cell.tie_rate})
    return rows


@spreads_stats(resamples="n_resamples", seed="seed", cluster="cluster")
def evaluate_cycles(cycles: CyclesInput, scores: ScoresInput, *, splits: Sequence[str] | None = None,
                    min_cycles: int | None = None, tol: float = CYCLE_TIE_TOL, n_resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = CYCLE_BOOTSTRAP_SEED,
                    yes_threshold: float = NATURALBENCH_YES_THRESHOLD, cluster: str | None = None,
                    stats: StatsOptions | None = None) -> CycleEvaluation:
    """Exact CycleAcc per (family, split), never pooled across splits (cycle paper §2.1, §D.5).

    Args:
        cycles: a cycles file (JSONL/Parquet), a pandas DataFrame or pyarrow Table with the cycles columns,
            or a list of :class:`~vlaudit.records.Cycle`.
        scores: a scores file (CSV/JSONL/Parquet), a DataFrame/Table with ``image_id, caption_id, score``, a
            mapping ``(image_id, caption_id) → score``, or a scorer callable ``s(image_ids, caption_ids)``
            returning one score per pair.
        splits: evaluate only these splits (default: every split present; no split → ``"unsplit"``).
        min_cycles: a family with fewer validation cycles than this (cycle paper §D.5; None: the ``--min-cycles``
            the cycles file was built with, read from its ``CYCLES.meta.json``, else :data:`MIN_CYCLES`) is
            withdrawn whole and listed under ``unavailable``. A cycles file without a ``val`` split counts the
            validation cycles its build counted (``validation_counts`` of the ``.meta.json`` beside it: a COCO
            test build from val2017 made with ``--validation-from``, :func:`built_validation_counts`), else every
            evaluated split; ``min_cycles_counted`` of the result says which.
        tol: the fixed absolute tie tolerance (credit ½ when |Δ| ≤ tol).
        n_resamples: bootstrap resamples over cycles for each interval.
        seed: bootstrap seed.
        yes_threshold: NaturalBench blocks answer Yes iff the score exceeds this (0 for a yes/no log-odds).
        cluster: the resampling unit of every interval: None (the cycle; cycles that share an image are then
            resampled as independent, a caveat the table states), ``image`` (cycles joined whenever they share
            an image), ``image_1``, ``image_2``, ``family`` or an extra column of the cycles table (an image
            id of the source, ...). Every cell records its ``unit`` and ``n_clusters``.
        stats: ``n_resamples``, ``seed`` and ``cluster`` as one :class:`~vlaudit.StatsOptions` record instead
            (its fields, defaults included, replace them: its seed is VCA §19's unless given; giving both is
            refused).

    Returns:
        A :class:`CycleEvaluation` holding what ``vlaudit cycles eval`` writes (``.save(dir)`` writes
        ``dir/eval.json`` and ``dir/eval.png`` byte for byte as ``cycles eval --out dir/eval.json`` does);
        warnings are collected in ``evaluation.warnings``, not issued. An additive score gives ``cycle_acc ==
        0.5`` and ``tie_rate == 1`` in every row. Cycles from a 2×2 benchmark also get the benchmark's own
        metrics (:attr:`CycleEvaluation.benchmarks`).
    """
    for name, value in (("--yes-threshold", yes_threshold), ("--tol", tol)):
        if not np.isfinite(value):  # a NaN threshold would answer No to everything, silently
            raise InputError(f"must be a finite number, got {value!r}", field=name)
    if min_cycles is None:
        built_min = built_min_cycles(cycles) if isinstance(cycles, (str, Path)) else None
        min_cycles = MIN_CYCLES if built_min is None else built_min
    cycle_list = as_cycles(cycles)
    score_table = as_scores(scores, cycle_list)
    cycles_name = str(cycles) if isinstance(cycles, (str, Path)) else "<cycles>"
    scores_name = str(scores) if isinstance(scores, (str, Path)) else "<scores>"
    with catch_warnings(record=True) as caught:  # every warning lands in the evaluation's warnings (eval.json)
        simplefilter("always")
        built = (None, None) if not isinstance(cycles, (str, Path)) else built_validation_counts(cycles)
        result = evaluate_cycle_families(cycle_list, score_table, splits=splits, min_cycles=min_cycles, tol=tol,
                                         n_resamples=n_resamples, seed=seed, source=scores_name,
                                         cycles_source=cycles_name, cluster=cluster, validation_counts=built[0])
        if built[1] is not None and result.min_cycles_counted == f"{VALIDATION_SPLIT} of the build":
            result = replace(result, min_cycles_counted=built[1])
        benchmarks = benchmark_metrics(cycle_list, score_table, splits=result.splits, min_cycles=min_cycles,
                                       tol=tol, n_resamples=n_resamples, seed=seed, threshold=yes_threshold,
                                       source=scores_name, cluster=cluster)
    notes = list(result.warnings)
    for name, entry in benchmarks.items():
        cells = {f"{name}/{split}/{tag}": cell for split, tags in entry["splits"].items() for tag, cell in tags.items()}
        notes += small_sample_cells({where: int(cell["n_clusters"]) for where, cell in cells.items()},
                              next((str(cell["unit"]) for cell in cells.values()), "cycle"))
    notes += [text for text in (" ".join(str(w.message).split()) for w in caught) if text not in notes]
    warnings = [f"{scores_name}: {note}" for note in notes]
    precision = reduced_precision(np.fromiter(score_table.values(), dtype=np.float64, count=len(score_table)))
    if precision is not None:
        warnings.append(f"{scores_name}: {precision}: the scores carry less than float64 precision, so additive "
                        "scores need not tie exactly and the additive audit (CycleAcc exactly ½) is not exact; "
                        "store scores as float64 (Parquet double, or CSV/JSONL with shortest-repr text)")
    evaluation = replace(result, warnings=warnings,
                         extra={"benchmarks": to_json(benchmarks), "cycles": cycles_name, "scores": scores_name})
    return CycleEvaluation.of(evaluation, _evaluation_rows(evaluation),
                              title="CycleAcc per family and split", interval_columns=("cycle_acc",),
                              writer=lambda out, _: save_evaluation(out / "eval.json", evaluation))


def built_validation_counts(cycles: str | Path) -> tuple[dict[str, int] | None, str | None]:
    """What the minimum of a test-only build counted (cycle paper §D.5: validation cycles), from the
    ``.meta.json`` beside ``cycles``: ``({family: n}, "val of PATH")`` when its build counted another build's
    validation cycles (``cycles build coco --validation-from``, the paper's test from val2017); ``(None,
    None)`` without metadata or when the build counted its own splits. The counts are the metadata's
    ``validation_counts``; a build written before it recorded them names the train build's metadata in
    ``min_cycles_counted``, read here (as given, else beside this metadata); when it is not found the evaluated
    cycles are counted and a warning says so."""
    meta_path = sidecar_paths(cycles)[1]
    if not meta_path.exists():
        return None, None
    meta = read_json(meta_path)
    counted = meta.get("min_cycles_counted") if isinstance(meta, dict) else None
    prefix = f"{VALIDATION_SPLIT} of "
    if not isinstance(counted, str) or not counted.startswith(prefix):
        return None, None
    raw = meta.get("validation_counts")
    if raw is None:
        named = Path(counted[len(prefix):])
        source = next((p for p in (named, meta_path.parent / named.name) if p.exists()), None)
        if source is None:
            warn(f"{meta_path}: the build counted the validation cycles of {named}, which is not here: the "
                 f"minimum counts the evaluated cycles instead", RuntimeWarning, stacklevel=2)
            return None, None
        found = validation_counts_from(source, meta.get("seed"))
        raw = {family: cells[VALIDATION_SPLIT] for family, cells in (found or {}).items()}
    if not isinstance(raw, dict) or not all(isinstance(n, int) and not isinstance(n, bool) for n in raw.values()):
        raise InputError("expected {family: number of validation cycles}", path=meta_path, field="validation_counts")
    return {str(family): int(n) for family, n in raw.items()}, counted


def save_evaluation(path: str | Path, evaluation: CycleEvaluationResult, *, plot: bool = True) -> list[Path]:
    """Write an evaluation as ``vlaudit cycles eval --out PATH`` does: PATH (JSON) and, with ``plot``, PATH's
    ``.png`` (CycleAcc per family and split with CIs). ``CycleEvaluation.save(dir)`` writes ``dir/eval.json``
    this way. An evaluation in which no family reached the minimum writes nothing (a later command must not
    take it for a result) and raises :class:`~vlaudit.errors.InputError`."""
    path = Path(path)
    if not evaluation.families:
        counted = "validation" if "val" in evaluation.splits else ", ".join(evaluation.splits)
        raise InputError(f"no family reached --min-cycles {evaluation.min_cycles} ({counted} cycles) for splits "
                         f"{evaluation.splits}, so nothing was written; lower --min-cycles or restrict --split")
    written = [write_result(path, evaluation)]
    if plot:
        written.append(plot_cycle_acc({Path(evaluation.scores_name).stem: evaluation.to_dict()},
                                      path.with_suffix(".png")))
    return written


def build_cycles(source: str, *, out: str | Path, instances: str | Path | None = None,
                 captions: str | Path | None = None, scene_graphs: str | Path | None = None,
                 pairs: str | Path | None = None, examples: str | Path | None = None,
                 images: str | Path | None = None, families: Sequence[str] | None = None, seed: int = 0,
                 splits: str | Sequence[tuple[str, float]] | None = None, min_cycles: int = MIN_CYCLES,
                 max_cycles_per_family: int | None = None, max_images: int | None = None,
                 rules: GeometryRules | None = None, image_pattern: str | None = None,
                 pool_seed: int = CYCLE_POOL_SEED, validation_from: str | Path | None = None, overwrite: bool = False,
                 caps: CocoCaps | None = None, extra_families: bool = False) -> CycleBuildSummary:
    """Build exact cycles from annotations and write the cycles table (cycle paper §4, §D).

    Args:
        source: ``"coco"`` (``instances``, optional ``captions``), ``"gqa"`` (``scene_graphs``, optional
            ``image_pattern``), ``"jsonl"`` (``pairs``: the bring-your-own format), or a 2×2 benchmark —
            ``"winoground"``, ``"naturalbench"``, ``"blocks"`` (``examples``, ``images``; one cycle per example,
            split ``test``, none of the options below).
        out: the cycles file to write (a captions table and a metadata file are written beside it).
        families, seed, splits, min_cycles, max_cycles_per_family, max_images: as on the command line
            (``splits`` default: the source's own, e.g. ``train=0.8,val=0.2`` for COCO).
        rules: the geometry rules of the relation families (COCO, JSONL; default: the paper's).
        pool_seed: the seed of the ``max_images`` pool, drawn once for every ``seed`` (§D.5: family estimates
            share image pools); ``seed`` then draws the splits and pairings inside it.
        validation_from: COCO: the same seed's train2017 build's metadata, whose val cycles the minimum counts
            for a build without a val split (§D.5).
        overwrite: replace a cycles file ``out`` that was built with another ``seed`` (refused without it, as
            ``cycles build --overwrite``: one cycles file per seed, §D.5).
        caps: COCO construction caps (captions, categories and statements per image, image uses; not paper
            settings; default: :class:`~vlaudit.builders.cycles.coco.CocoCaps`).
        extra_families: GQA: also build the cross-noun families (not in the paper).

    Returns:
        The typed build summary: Table-6 counts per family and split, unavailable families, ``paths`` written
        (``summary["counts"]`` reads like the dict it is written as; ``.to_dict()`` gives that dict).
    """
    def needed(value: str | Path | None, name: str) -> str | Path:
        if value is None:
            raise InputError(f"cycles from {source} need {name}", field=name)
        return value

    if source in ("coco", "gqa", "jsonl"):
        refuse_other_seed(out, seed, overwrite=overwrite)
    if source in BENCHMARKS:
        return CycleBuildSummary.from_dict(build_benchmark_cycles(source, needed(examples, "examples"), out,
                                                                  images=needed(images, "images")))
    if source == "coco":
        return CycleBuildSummary.from_dict(build_coco_cycles(
            needed(instances, "instances"), captions, out, families=families, seed=seed,
            splits=DEFAULT_SPLITS if splits is None else splits, min_cycles=min_cycles,
            max_cycles_per_family=max_cycles_per_family, max_images=max_images, pool_seed=pool_seed, rules=rules,
            validation_from=validation_from, caps=caps))
    if source == "gqa":
        return CycleBuildSummary.from_dict(build_gqa_cycles(
            needed(scene_graphs, "scene_graphs"), out, families=families, seed=seed,
            splits=DEFAULT_GQA_SPLITS if splits is None else splits, min_cycles=min_cycles,
            max_cycles_per_family=max_cycles_per_family, max_images=max_images, pool_seed=pool_seed,
            image_pattern=DEFAULT_GQA_IMAGE_PATTERN if image_pattern is None else image_pattern,
            extra_families=extra_families))
    if source == "jsonl":
        return CycleBuildSummary.from_dict(build_jsonl_cycles(
            needed(pairs, "pairs"), out, families=families, seed=seed,
            splits=DEFAULT_SPLITS if splits is None else splits, min_cycles=min_cycles,
            max_cycles_per_family=max_cycles_per_family, max_images=max_images, pool_seed=pool_seed, rules=rules))
    raise InputError(f"unknown cycle source {source!r}; use coco, gqa, jsonl, winoground, naturalbench or blocks",
                     field="source")


def load_model(model: ModelRef | str, run: RunOptions | None = None, *,
               interfaces: Sequence[str] | None = None) -> Backend:
    """Load a model — ``hf:``, ``hf-clip:``, ``open_clip:`` or ``ref:`` — through the backend registry.

    ``model``: a spec (its backend's default options) or a :class:`~vlaudit.scoring.run.parts.ModelRef`
    with typed options (e.g. ``ModelRef("hf:…", HfOptions(dtype="bf16"))``); ``run``: device and batch size
    (:class:`~vlaudit.scoring.run.parts.RunOptions`); ``interfaces``: the yes/no interfaces to resolve
    verbalizers for. Returns a backend with ``score(requests)`` (multimodal LLMs) or
    ``encode_images``/``encode_texts`` (dual encoders).
    """
    return load_backend(model, run, interfaces=interfaces)


def features_from_arrays(image_ids: Sequence[str | int], image_embeddings: MatrixInput,
                         caption_ids: Sequence[str | int], caption_embeddings: MatrixInput) -> Features:
    """Wrap embeddings you already hold (numpy arrays or torch tensors, one row per id) as features."""
    images = as_matrix(image_embeddings, what="image_embeddings")
    texts = as_matrix(caption_embeddings, what="caption_embeddings")
    if len(image_ids) != images.shape[0] or len(caption_ids) != texts.shape[0]:
        raise InputError("one embedding row per id is needed", field="embeddings")
    return Features([str(i) for i in image_ids], images, [str(c) for c in caption_ids], texts,
                    {"source": "in-memory arrays"})


def zero_shot_scores(features: Features | str | Path, cycles: CyclesInput) -> dict[tuple[str, str], float]:
    """Cosine scores s(u, v) = cos(f(u), g(v)) in float64 for every pair the cycles use (cycle paper §5).

    ``features`` is a features folder path or the result of :func:`vlaudit.extract_features` /
    :func:`features_from_arrays`; the result feeds :func:`evaluate_cycles` directly.
    """
    feats = read_features(features) if isinstance(features, (str, Path)) else features
    rows = cosine(feats, as_cycles(cycles))
    return {(str(r["image_id"]), str(r["caption_id"])): float(r["score"]) for r in rows}


def _build_meta(cycles: str | Path) -> dict[str, object] | None:
    """The ``CYCLES.meta.json`` beside a cycles file, when it is readable (None otherwise)."""
    meta = sidecar_paths(cycles)[1]
    if not meta.is_file():
        return None
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def built_min_cycles(cycles: str | Path) -> int | None:
    """The ``--min-cycles`` a ``cycles build coco|gqa|jsonl`` wrote into the file's metadata (None without one;
    a 2×2 benchmark's build records none of the user's)."""
    meta = _build_meta(cycles)
    value = None if meta is None or meta.get("source") not in ("coco", "gqa", "jsonl") else meta.get("min_cycles")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def refuse_other_seed(out: str | Path, seed: int, *, overwrite: bool) -> None:
    """Refuse (one line, before anything is built) to replace a cycles file built with another ``--seed``, as
    ``vca score`` refuses another run's folder: each seed is its own split of the pool (§D.5)."""
    meta = _build_meta(out)
    built = None if meta is None or not Path(out).is_file() else meta.get("seed")
    if overwrite or not isinstance(built, int) or built == seed:
        return
    raise InputError(f"holds cycles built with --seed {built} ({sidecar_paths(out)[1].name}); this build uses "
                     f"--seed {seed}: give another --out (one cycles file per seed, cycle paper §D.5) or pass "
                     "--overwrite to replace it", path=out, field="--seed")
