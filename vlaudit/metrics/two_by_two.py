"""2×2 benchmarks' own metrics beside CycleAcc, from the same four scores per block.

A block holds images u1, u2 and texts v1, v2 with (u1, v1), (u2, v2) true; its scores are the row
``[s11, s22, s12, s21]`` of :func:`vlaudit.metrics.cycles.block_scores` (s12 = s(u1, v2)).

**Winoground** (Thrush et al. 2022, "Metrics"), strict ``>``: a tie loses.

* text  = s11 > s12 and s22 > s21 — each image scores its own caption higher;
* image = s11 > s21 and s22 > s12 — each caption scores its own image higher;
* group = text and image.

**NaturalBench** (Li et al. 2024; ``get_scores`` in the repository's ``naturalbench_vqa.py``). The model answers Yes to
(u, v) iff s(u, v) > θ (``NATURALBENCH_YES_THRESHOLD``, 0 for a log-odds score); the true answers are Yes on
(u1, v1), (u2, v2) and No on the swaps.

* Acc   = mean over the four (image, question) cells of a correct answer;
* Q-Acc = mean over questions of "correct on both images" (v1: s11 > θ ≥ s21; v2: s22 > θ ≥ s12);
* I-Acc = mean over images of "correct on both questions" (u1: s11 > θ ≥ s12; u2: s22 > θ ≥ s21);
* G-Acc = mean over samples of "all four correct".

Both relate to the cycle contrast Δ = (s11 − s12) + (s22 − s21) = (s11 − s21) + (s22 − s12) (cycle paper
Eq. 1): a text (or image, or group, or G-Acc) success makes both terms of one split positive, so it implies
Δ > 0; the converse fails (one large term can outweigh a negative one). An additive prior a(u) + b(v)
shifts the terms of each split by opposite amounts: it leaves Δ — and CycleAcc — unchanged but can turn a
group failure into a success (or back); see the docs page "2×2 benchmarks as exact cycles".

Intervals: seeded percentile bootstrap resampling examples (each example's cells stay together: the
clustered bootstrap over samples), one draw per tag shared by every metric of that tag; with ``cluster``
(``cycles eval --cluster``) whole clusters of examples are resampled (:func:`vlaudit.metrics.cycles.cycle_unit`).
Every cell names its ``unit`` and ``n_clusters``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vlaudit.metrics.cycles import block_scores, cycle_contrast, cycle_credit, cycle_unit, split_of
from vlaudit.records import Cycle
from vlaudit.settings import CONFIDENCE_LEVEL, NATURALBENCH_YES_THRESHOLD
from vlaudit.stats.bootstrap import ClusterBootstrap, percentile_intervals
from vlaudit.stats.clusters import ResamplingUnit

ALL_TAGS = "all"
WINOGROUND_METRICS = ("text", "image", "group")
NATURALBENCH_METRICS = ("acc", "q_acc", "i_acc", "g_acc")
METRIC_LABELS = {"cycle_acc": "CycleAcc", "text": "text", "image": "image", "group": "group", "acc": "Acc",
                 "q_acc": "Q-Acc", "i_acc": "I-Acc", "g_acc": "G-Acc"}


def winoground_outcomes(scores: np.ndarray) -> dict[str, np.ndarray]:
    """Per block: text, image, group (float 0/1, strict ``>``) and the ties that lost each of them."""
    s11, s22, s12, s21 = np.asarray(scores, dtype=np.float64).T
    text = (s11 > s12) & (s22 > s21)
    image = (s11 > s21) & (s22 > s12)
    text_tie = (s11 == s12) | (s22 == s21)
    image_tie = (s11 == s21) | (s22 == s12)
    return {"text": text.astype(np.float64), "image": image.astype(np.float64),
            "group": (text & image).astype(np.float64),
            "text_ties": text_tie, "image_ties": image_tie, "group_ties": text_tie | image_tie}


def naturalbench_outcomes(scores: np.ndarray, threshold: float = NATURALBENCH_YES_THRESHOLD
                          ) -> dict[str, np.ndarray]:
    """Per block: Acc (fraction of 4 cells), Q-Acc and I-Acc (fraction of 2), G-Acc (0/1), and blocks with a
    score exactly at the threshold (answered No by the rule, so counted as ties)."""
    scores = np.asarray(scores, dtype=np.float64)
    s11, s22, s12, s21 = scores.T
    yes11, yes22, no12, no21 = s11 > threshold, s22 > threshold, s12 <= threshold, s21 <= threshold
    cells = np.column_stack([yes11, yes22, no12, no21])
    questions = np.column_stack([yes11 & no21, yes22 & no12])
    images = np.column_stack([yes11 & no12, yes22 & no21])
    ties = (scores == threshold).any(axis=1)
    return {"acc": cells.mean(axis=1), "q_acc": questions.mean(axis=1), "i_acc": images.mean(axis=1),
            "g_acc": cells.all(axis=1).astype(np.float64), "acc_ties": ties, "q_acc_ties": ties,
            "i_acc_ties": ties, "g_acc_ties": ties}


def metric_names(kind: str) -> tuple[str, ...]:
    """The benchmark's own metrics for a block kind (``winoground`` or ``naturalbench``)."""
    return WINOGROUND_METRICS if kind == "winoground" else NATURALBENCH_METRICS


def summarize_blocks(scores: np.ndarray, kind: str, *, tol: float, min_cycles: int, n_resamples: int, seed: int,
                     threshold: float = NATURALBENCH_YES_THRESHOLD, level: float = CONFIDENCE_LEVEL,
                     unit: ResamplingUnit | None = None) -> dict[str, Any]:
    """CycleAcc and the benchmark's metrics of one set of blocks, each with its percentile interval and ties;
    ``unit``: the blocks' clusters (default: each block alone).

    CycleAcc is withheld (None) under ``min_cycles`` blocks (cycle paper §D.5); the benchmark's own metrics are
    reported on any number of blocks, as the benchmark defines them.
    """
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.shape[0]
    delta = cycle_contrast(scores[:, 0], scores[:, 1], scores[:, 2], scores[:, 3])
    outcomes = winoground_outcomes(scores) if kind == "winoground" else naturalbench_outcomes(scores, threshold)
    names = metric_names(kind)
    values = np.column_stack([cycle_credit(delta, tol), *(outcomes[m] for m in names)])
    clusters = None if unit is None or unit.independent else unit.labels
    plan = ClusterBootstrap.draw(n, clusters=clusters, n_resamples=n_resamples, seed=seed)
    intervals = percentile_intervals(plan.means(values), level)
    cell: dict[str, Any] = {"n": int(n), "unit": "cycle" if unit is None else unit.unit,
                            "n_clusters": int(n) if unit is None else unit.n_clusters}
    for column, name in enumerate(("cycle_acc", *names)):
        cell[name] = float(values[:, column].mean())
        cell[f"{name}_ci"] = [float(intervals[column, 0]), float(intervals[column, 1])]
        cell[f"{name}_ties"] = int((np.abs(delta) <= tol).sum() if name == "cycle_acc"
                                   else outcomes[f"{name}_ties"].sum())
    if n < min_cycles:
        cell.update(cycle_acc=None, cycle_acc_ci=None, cycle_acc_withheld=f"fewer than {min_cycles} blocks")
    return cell


def benchmark_groups(cycles: Sequence[Cycle]) -> dict[tuple[str, str], list[int]]:
    """Indexes of the benchmark cycles per (benchmark name, metric kind); other cycles are left out."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, cycle in enumerate(cycles):
        benchmark, kind = cycle.extra.get("benchmark"), cycle.extra.get("benchmark_metrics")
        if isinstance(benchmark, str) and kind in ("winoground", "naturalbench"):
            groups.setdefault((benchmark, str(kind)), []).append(index)
    return groups


def benchmark_metrics(cycles: Sequence[Cycle], scores: Mapping[tuple[str, str], float], *,
                      splits: Sequence[str] | None = None, min_cycles: int, tol: float, n_resamples: int, seed: int,
                      threshold: float = NATURALBENCH_YES_THRESHOLD, source: str | None = None,
                      cluster: str | None = None) -> dict[str, Any]:
    """The benchmark's own metrics beside CycleAcc, per benchmark, split and tag (family), plus ``all``.

    Returns ``{name: {"benchmark", "metrics", "threshold"?, "splits": {split: {tag: cell}}}}`` with cells from
    :func:`summarize_blocks`; empty when no cycle came from a 2×2 benchmark. Splits are never pooled.
    ``cluster``: the resampling unit (:func:`~vlaudit.metrics.cycles.cycle_unit`; None: the block).
    """
    groups = benchmark_groups(cycles)
    kinds_of: dict[str, set[str]] = {}
    for benchmark, kind in groups:
        kinds_of.setdefault(benchmark, set()).add(kind)
    result: dict[str, Any] = {}
    for (benchmark, kind), indexes in groups.items():
        chosen = [cycles[i] for i in indexes if splits is None or split_of(cycles[i]) in splits]
        if not chosen:
            continue
        matrix = block_scores(chosen, scores, source=source)
        unit = cycle_unit(chosen, cluster)
        name = benchmark if len(kinds_of[benchmark]) == 1 else f"{benchmark}/{kind}"
        entry: dict[str, Any] = {"benchmark": benchmark, "metrics": kind, "splits": {}}
        if kind == "naturalbench":
            entry["threshold"] = threshold
        split_names = np.array([split_of(c) for c in chosen], dtype=object)
        families = np.array([c.family for c in chosen], dtype=object)
        for split in dict.fromkeys(split_names.tolist()):
            in_split = split_names == split
            tags = {tag: in_split & (families == tag) for tag in sorted(set(families[in_split].tolist()))}
            if len(tags) > 1:
                tags = {ALL_TAGS: in_split, **tags}
            entry["splits"][split] = {
                tag: summarize_blocks(matrix[mask], kind, tol=tol, min_cycles=min_cycles, n_resamples=n_resamples,
                                      seed=seed, threshold=threshold, unit=unit.subset(mask))
                for tag, mask in tags.items()}
        result[name] = entry
    return result
