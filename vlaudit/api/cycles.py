"""Cycles from a notebook: build, featurize, score and evaluate (cycle paper §2–§5)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vlaudit.api._inputs import as_cycles, as_matrix, as_scores
from vlaudit.api.results import Result, with_interval
from vlaudit.backends.registry import load_backend
from vlaudit.builders.cycles.coco import build_coco_cycles
from vlaudit.builders.cycles.gqa import build_gqa_cycles
from vlaudit.builders.cycles.jsonl import build_jsonl_cycles
from vlaudit.builders.cycles.two_by_two import build_benchmark_cycles
from vlaudit.errors import InputError
from vlaudit.metrics.cycles import evaluate_cycles as evaluate
from vlaudit.metrics.two_by_two import METRIC_LABELS, benchmark_metrics, metric_names
from vlaudit.scoring.features import Features, collect_inputs, read_features
from vlaudit.scoring.features import extract_features as extract
from vlaudit.scoring.features import zero_shot_scores as cosine
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    CYCLE_BOOTSTRAP_SEED,
    CYCLE_TIE_TOL,
    MIN_CYCLES,
    NATURALBENCH_YES_THRESHOLD,
)
from vlaudit.sources.cycle_tables import read_cycles
from vlaudit.sources.two_by_two import BENCHMARKS


class CycleEvaluation(Result):
    """CycleAcc per (family, split) — ``rows``: family, split, n, cycle_acc (+ interval), ties, tie_rate.

    When the cycles come from a 2×2 benchmark (``cycles build winoground|naturalbench|blocks``),
    ``data["benchmarks"]`` holds its own metrics and :attr:`benchmarks` their rows.
    """

    @property
    def benchmarks(self) -> Result:
        """The 2×2 benchmarks' own metrics beside CycleAcc: one row per benchmark, split, tag and metric."""
        return Result(self.data.get("benchmarks", {}), benchmark_rows(self.data.get("benchmarks", {})),
                      title="2×2 benchmark metrics beside CycleAcc", interval_columns=("value",))


def benchmark_rows(benchmarks: dict[str, Any]) -> list[dict[str, Any]]:
    """Flat rows (benchmark, split, tag, metric, n, value + interval, ties) of ``data["benchmarks"]``."""
    rows = []
    for name, entry in benchmarks.items():
        for split, tags in entry["splits"].items():
            for tag, cell in tags.items():
                for metric in ("cycle_acc", *metric_names(entry["metrics"])):
                    row = {"benchmark": name, "split": split, "tag": tag, "metric": METRIC_LABELS[metric],
                           "n": cell["n"], "value": cell[metric]}
                    with_interval(row, "value", cell[f"{metric}_ci"])
                    rows.append(row | {"ties": cell[f"{metric}_ties"]})
    return rows


def _evaluation_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for family, cells in data["families"].items():
        for split, cell in cells.items():
            row = {"family": family, "split": split, "n": cell["n"], "cycle_acc": cell["cycle_acc"]}
            with_interval(row, "cycle_acc", cell.get("ci"))
            rows.append(row | {"ties": cell["ties"], "tie_rate": cell.get("tie_rate")})
    return rows


def evaluate_cycles(cycles: Any, scores: Any, *, splits: Sequence[str] | None = None, min_cycles: int = MIN_CYCLES,
                    tol: float = CYCLE_TIE_TOL, n_resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = CYCLE_BOOTSTRAP_SEED,
                    yes_threshold: float = NATURALBENCH_YES_THRESHOLD) -> CycleEvaluation:
    """Exact CycleAcc per (family, split), never pooled across splits (cycle paper §2.1, §D.5).

    Args:
        cycles: a cycles file (JSONL/Parquet), a pandas DataFrame or pyarrow Table with the cycles columns,
            or a list of :class:`~vlaudit.records.Cycle`.
        scores: a scores file (CSV/JSONL/Parquet), a DataFrame/Table with ``image_id, caption_id, score``, a
            mapping ``(image_id, caption_id) → score``, or a scorer callable ``s(image_ids, caption_ids)``
            returning one score per pair.
        splits: evaluate only these splits (default: every split present; no split → ``"unsplit"``).
        min_cycles: a family with fewer validation cycles than this (cycle paper §D.5; every evaluated split
            when the cycles have no ``val`` split) is withdrawn whole and listed under ``data["unavailable"]``.
        tol: the fixed absolute tie tolerance (credit ½ when |Δ| ≤ tol).
        n_resamples: bootstrap resamples over cycles for each interval.
        seed: bootstrap seed.
        yes_threshold: NaturalBench blocks answer Yes iff the score exceeds this (0 for a yes/no log-odds).

    Returns:
        A :class:`CycleEvaluation`; an additive score gives ``cycle_acc == 0.5`` and ``tie_rate == 1`` in every row.
        Cycles from a 2×2 benchmark also get the benchmark's own metrics (:attr:`CycleEvaluation.benchmarks`).
    """
    cycle_list = as_cycles(cycles)
    score_table = as_scores(scores, cycle_list)
    data = evaluate(cycle_list, score_table, splits=splits, min_cycles=min_cycles, tol=tol,
                    n_resamples=n_resamples, seed=seed)
    data["benchmarks"] = benchmark_metrics(cycle_list, score_table, splits=data["splits"], min_cycles=min_cycles,
                                           tol=tol, n_resamples=n_resamples, seed=seed, threshold=yes_threshold)
    return CycleEvaluation(data, _evaluation_rows(data), title="CycleAcc per family and split",
                           interval_columns=("cycle_acc",))


def build_cycles(source: str, *, out: str | Path, **options: Any) -> dict[str, Any]:
    """Build exact cycles from annotations and write the cycles table (cycle paper §4, §D).

    Args:
        source: ``"coco"`` (options ``instances``, ``captions``), ``"gqa"`` (``scene_graphs``), ``"jsonl"``
            (``pairs``: the bring-your-own format), or a 2×2 benchmark — ``"winoground"``, ``"naturalbench"``,
            ``"blocks"`` (options ``examples``, ``images``; one cycle per example, split ``test``).
        out: the cycles file to write (a captions table and a metadata file are written beside it).
        **options: the builder's keyword options (``families``, ``seed``, ``splits``, ``min_cycles``,
            ``max_images``, ...), as on the command line.

    Returns:
        The build summary: Table-6 counts per family and split, unavailable families, ``paths`` written.
    """
    if source in BENCHMARKS:
        return build_benchmark_cycles(source, options.pop("examples"), out, **options)
    if source == "coco":
        return build_coco_cycles(options.pop("instances"), options.pop("captions", None), out, **options)
    if source == "gqa":
        return build_gqa_cycles(options.pop("scene_graphs"), out, **options)
    if source == "jsonl":
        return build_jsonl_cycles(options.pop("pairs"), out, **options)
    raise InputError(f"unknown cycle source {source!r}; use coco, gqa, jsonl, winoground, naturalbench or blocks",
                     field="source")


def load_model(spec: str, **options: Any) -> Any:
    """Load a model by spec — ``hf:``, ``hf-clip:``, ``open_clip:`` or ``ref:`` — through the backend registry.

    Returns a backend with ``score(requests)`` (multimodal LLMs) or ``encode_images``/``encode_texts``
    (dual encoders); options (``dtype``, ``device``, ``batch_size``, ...) pass to the backend's loader.
    """
    return load_backend(spec, **options)


def features_from_arrays(image_ids: Sequence[Any], image_embeddings: Any, caption_ids: Sequence[Any],
                         caption_embeddings: Any) -> Any:
    """Wrap embeddings you already hold (numpy arrays or torch tensors, one row per id) as features."""
    images = as_matrix(image_embeddings, what="image_embeddings")
    texts = as_matrix(caption_embeddings, what="caption_embeddings")
    if len(image_ids) != images.shape[0] or len(caption_ids) != texts.shape[0]:
        raise InputError("one embedding row per id is needed", field="embeddings")
    return Features([str(i) for i in image_ids], images, [str(c) for c in caption_ids], texts,
                    {"source": "in-memory arrays"})


def extract_features(model: Any, cycles: str | Path, *, images: str | Path, out: str | Path,
                     captions: str | Path | None = None) -> Any:
    """Embed every image and caption of a cycles file once with a dual encoder; write and return the features.

    ``model`` is a spec (``open_clip:…``, ``hf-clip:…``, ``ref:…``) or a loaded dual-encoder backend.
    """
    backend = load_model(model) if isinstance(model, str) else model
    inputs = collect_inputs(read_cycles(cycles), Path(cycles), Path(images),
                            None if captions is None else Path(captions))
    extract(backend, inputs, out, provenance={"cycles": str(cycles), "images": str(images)})
    return read_features(out)


def zero_shot_scores(features: Any, cycles: Any) -> dict[tuple[str, str], float]:
    """Cosine scores s(u, v) = cos(f(u), g(v)) in float64 for every pair the cycles use (cycle paper §5).

    ``features`` is a features folder path or the result of :func:`extract_features` /
    :func:`features_from_arrays`; the result feeds :func:`evaluate_cycles` directly.
    """
    feats = read_features(features) if isinstance(features, (str, Path)) else features
    rows = cosine(feats, as_cycles(cycles))
    return {(r["image_id"], r["caption_id"]): r["score"] for r in rows}
