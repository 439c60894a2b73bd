"""Exact cycle contrast and CycleAcc per family and split (cycle paper §2.1, §5, §D.5, §E.2).

Definitions, for a cycle with images u1, u2 and captions v1, v2 and a score s:

* cycle contrast  Δ = s(u1, v1) + s(u2, v2) − s(u1, v2) − s(u2, v1)
* credit          1 if Δ > tol, ½ if |Δ| ≤ tol, 0 if Δ < −tol
* CycleAcc        mean credit over cycles

``tol`` is one fixed absolute tolerance (default 1e-9) for every block, model and run, applied to contrasts
computed in float64 (§E.2). With the half-tie convention an additive score a(u) + b(v) has Δ = 0 up to
rounding and therefore CycleAcc exactly ½ on every exact-cycle set (Proposition 1).

"Up to rounding": float64 rounding of four scores of magnitude S leaves |Δ| ≲ 4·eps·S ≈ 1e-15·S, inside the
fixed tolerance while |S| ≲ 1e6. :func:`evaluate_cycle_families` warns when the scores are large enough for rounding
alone to exceed ``tol`` (rescale such scores, or raise ``tol`` for every model alike).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from vlaudit.errors import InputError
from vlaudit.records import Cycle
from vlaudit.results.cycles import CycleAccCell, CycleEvaluationResult, SplitCounts
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE_LEVEL,
    CYCLE_BOOTSTRAP_SEED,
    CYCLE_TIE_TOL,
    MIN_CLUSTERS,
    MIN_CYCLES,
)
from vlaudit.stats.bootstrap import bootstrap_means, percentile_interval
from vlaudit.stats.clusters import ResamplingUnit, labels_or_items, linked_components, small_sample_cells

DEFAULT_TOL = CYCLE_TIE_TOL
DEFAULT_MIN_CYCLES = MIN_CYCLES  # §D.5: smaller families are reported as unavailable, not as an unstable number
VALIDATION_SPLIT = "val"  # the split §D.5's minimum is counted on
UNSPLIT = "unsplit"
_SHORT_DIGITS = 9  # float64 needs up to 17 significant digits; 9 round-trips every float32


def checked_contrasts(cycles: Sequence[Cycle], matrix: np.ndarray, *, source: str | None = None) -> np.ndarray:
    """The cycle contrast Δ of each block of ``matrix`` (rows aligned with ``cycles``, :func:`block_scores`).

    A contrast that overflows float64 (scores near ±1e308) is an :class:`InputError` naming the scores file and
    the first such cycle: counted as a tie or a win it would be a made-up credit."""
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below, naming the block
        delta = cycle_contrast(matrix[:, 0], matrix[:, 1], matrix[:, 2], matrix[:, 3])
    overflowed = np.nonzero(~np.isfinite(delta))[0]
    if len(overflowed):
        first = cycles[int(overflowed[0])]
        raise InputError(
            f"the cycle contrast of {len(overflowed)} block(s) overflows float64, first cycle '{first.cycle_id}' "
            f"(family '{first.family}'; scores reach {np.abs(matrix).max():.3g}); rescale the scores",
            path=source, record=first.cycle_id, field="score")
    return delta


def cycle_contrast(
    s11: np.ndarray | float, s22: np.ndarray | float, s12: np.ndarray | float, s21: np.ndarray | float
) -> np.ndarray:
    """Δ = s(u1,v1) + s(u2,v2) − s(u1,v2) − s(u2,v1) in float64 (cycle paper Eq. 1).

    ``s12`` is the score of image 1 with caption 2 and ``s21`` of image 2 with caption 1.
    """
    s11, s22, s12, s21 = (np.asarray(x, dtype=np.float64) for x in (s11, s22, s12, s21))
    return (s11 + s22) - (s12 + s21)


def cycle_credit(delta: np.ndarray | float, tol: float = DEFAULT_TOL) -> np.ndarray:
    """Credit per cycle: 1 if Δ > tol, ½ if |Δ| ≤ tol, else 0 (the half-tie convention, §2.1)."""
    if tol < 0:
        raise ValueError("tol must be non-negative")
    delta = np.asarray(delta, dtype=np.float64)
    return np.where(delta > tol, 1.0, np.where(np.abs(delta) <= tol, 0.5, 0.0))


def cycle_acc(delta: np.ndarray, tol: float = DEFAULT_TOL) -> float:
    """CycleAcc = mean credit over cycles; NaN for an empty set."""
    delta = np.asarray(delta, dtype=np.float64)
    if delta.size == 0:
        return float("nan")
    return float(cycle_credit(delta, tol).mean())


#: the resampling unit of every cycle interval and test (cycle paper §2.1): the cycle, and its caveat
CYCLE_UNIT_CAVEAT = ("resampling unit: the cycle (n cycles = n clusters); cycles that share an image are "
                     "resampled as independent, so where many do the intervals are too narrow "
                     "(--cluster image joins them)")

#: ``--cluster`` for cycles: ``image`` merges every two cycles that share an image (connected components);
#: a column of the cycles table beyond these (an image id of the source, ...) is also accepted
CYCLE_CLUSTERS = ("cycle_id", "image", "image_1", "image_2", "family")


def cycle_unit(cycles: Sequence[Cycle], column: str | None = None) -> ResamplingUnit:
    """The resampling unit of a cycle table: the cycle (default, ``cycle_id``), or ``image`` — cycles joined
    whenever they share an image, so no image is in two clusters — or another :data:`CYCLE_CLUSTERS` field,
    or an extra column of the cycles table (a cycle without a value there is its own cluster)."""
    ids = np.array([c.cycle_id for c in cycles], dtype=object)
    if column in (None, "cycle_id"):
        return ResamplingUnit(ids, "cycle", "cycle_id")
    if column == "image":
        labels = linked_components([c.image_1 for c in cycles], [c.image_2 for c in cycles])
        return ResamplingUnit(labels, "image", "image")
    if column in CYCLE_CLUSTERS:
        return ResamplingUnit(np.array([str(getattr(c, column)) for c in cycles], dtype=object), column, column)
    if not any(column in c.extra for c in cycles):
        extra = sorted({key for c in cycles for key in c.extra})
        raise InputError(f"--cluster {column}: cycles can be clustered by {', '.join([*CYCLE_CLUSTERS, *extra])}",
                         field="cluster")
    values = [c.extra.get(column) for c in cycles]
    return ResamplingUnit(labels_or_items(values, ids, column), column, column)


def cycle_unit_notes(cycles: Sequence[Cycle], unit: ResamplingUnit) -> list[str]:
    """What every cycle comparison says of its unit (``compare_cycles.json`` ``warnings`` and the console):
    the cycle-unit caveat (:data:`CYCLE_UNIT_CAVEAT`) when cycles are the unit; with ``--cluster two-way`` what
    the two-way bootstrap resamples; with ``--cluster image`` how many connected clusters the cycles collapse
    into (cycles sharing an image directly or through others are
    one cluster, so a chain of shared images can leave a handful of clusters, or one)."""
    if unit.unit == "cycle":
        return [CYCLE_UNIT_CAVEAT]
    images = {str(c.image_1) for c in cycles} | {str(c.image_2) for c in cycles}
    _, sizes = np.unique(unit.labels.astype(str), return_counts=True)
    k = int(sizes.size)
    if unit.source == "two-way":
        k1, k2 = len({str(c.image_1) for c in cycles}), len({str(c.image_2) for c in cycles})
        return [f"two-way bootstrap: the intervals resample the {k1} image_1 and the {k2} image_2 values "
                f"independently, each cycle weighted by both its images' draws (pigeonhole bootstrap, Owen 2007); "
                f"the tests flip the {k} connected image cluster{'' if k == 1 else 's'} (cycles that share an "
                "image joined)"]
    if unit.source != "image":
        return []
    line = (f"--cluster image joins the {len(cycles)} cycles over {len(images)} images into {k} connected "
            f"cluster{'' if k == 1 else 's'} (cycles that share an image, directly or through others; the "
            f"largest holds {int(sizes.max()) if k else 0} cycles)")
    if k < MIN_CLUSTERS:
        line += f"; fewer than {MIN_CLUSTERS}: the intervals and tests of so few clusters say little"
    return [line]


#: CycleAcc of one (family, split) cell: n, cycle_acc, ties, tie_rate and its bootstrap interval
CycleSummary = CycleAccCell


def summarize_contrasts(
    delta: np.ndarray,
    *,
    tol: float = DEFAULT_TOL,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = CYCLE_BOOTSTRAP_SEED,
    level: float = CONFIDENCE_LEVEL,
    unit: ResamplingUnit | None = None,
) -> CycleSummary:
    """CycleAcc, tie count (|Δ| ≤ tol), tie rate and a seeded percentile-bootstrap CI (cycle paper §2.1)
    resampling the clusters of ``unit`` (default: each cycle alone; a unit whose clusters are single cycles
    gives the same draws); CycleAcc, tie rate and interval are None for no cycle."""
    delta = np.asarray(delta, dtype=np.float64)
    credit = cycle_credit(delta, tol)
    name = "cycle" if unit is None else unit.unit
    if delta.size == 0:
        return CycleAccCell(n=0, cycle_acc=None, ties=0, tie_rate=None, ci=None, unit=name, n_clusters=0)
    clusters = None if unit is None or unit.independent else unit.labels
    samples = bootstrap_means(credit, n_resamples=n_resamples, seed=seed, clusters=clusters)
    low, high = percentile_interval(samples, level)
    ties = int((np.abs(delta) <= tol).sum())
    return CycleAccCell(n=int(delta.size), cycle_acc=float(credit.mean()), ties=ties, tie_rate=ties / delta.size,
                        ci=(float(low), float(high)), unit=name,
                        n_clusters=int(delta.size) if unit is None else unit.n_clusters)


def block_scores(
    cycles: Sequence[Cycle], scores: Mapping[tuple[str, str], float], *, source: str | None = None
) -> np.ndarray:
    """The ``(n_cycles, 4)`` float64 matrix [s11, s22, s12, s21]; a missing score names block and pair."""
    out = np.empty((len(cycles), 4), dtype=np.float64)
    for row, cycle in enumerate(cycles):
        for col, (image_id, caption_id, _) in enumerate(cycle.entries()):
            try:
                out[row, col] = scores[(image_id, caption_id)]
            except KeyError:
                raise InputError(
                    f"cycle '{cycle.cycle_id}' (family '{cycle.family}') has no score for the pair "
                    f"(image_id={image_id!r}, caption_id={caption_id!r})",
                    path=source, record=cycle.cycle_id,
                ) from None
    return out


def split_of(cycle: Cycle) -> str:
    """The evaluation group of a cycle: its split, or ``"unsplit"`` when it has none."""
    return cycle.split or UNSPLIT


def cycle_counts(cycles: Sequence[Cycle]) -> dict[str, dict[str, int]]:
    """Cycles per family and split (first-appearance order), cycles without a split under ``"unsplit"``."""
    counts: dict[str, dict[str, int]] = {}
    for cycle in cycles:
        cell = counts.setdefault(cycle.family, {})
        cell[split_of(cycle)] = cell.get(split_of(cycle), 0) + 1
    return counts


def withdraw_small_families(counts: Mapping[str, Mapping[str, int]], splits: Sequence[str], min_cycles: int,
                            validation_split: str | None = VALIDATION_SPLIT) -> dict[str, dict[str, int]]:
    """The minimum-cycle rule (cycle paper §D.5, §D.3): a family with fewer than ``min_cycles`` cycles in the
    *validation* split (GQA binding: 18–19 validation cycles per seed, "reported as unavailable") — or with no
    cycle at all in another of ``splits`` (nothing to train on or to report) — is withdrawn whole: returned
    here as ``{family: {split: count}}``, its cycles reported nowhere. When ``validation_split`` is None or not
    among ``splits`` (a file without a validation split, a test-only evaluation) the minimum applies to every
    split of ``splits`` instead."""
    if validation_split is not None and validation_split in splits:
        def small(cells: Mapping[str, int]) -> bool:
            return cells.get(validation_split, 0) < min_cycles or any(cells.get(s, 0) == 0 for s in splits)
    else:
        def small(cells: Mapping[str, int]) -> bool:
            return any(cells.get(split, 0) < min_cycles for split in splits)
    return {family: {split: int(cells.get(split, 0)) for split in splits}
            for family, cells in counts.items() if small(cells)}


def reduced_precision(values: np.ndarray | Sequence[float]) -> str | None:
    """Why stored scores carry less than float64 precision, or None when they may be full float64.

    Reduced: every finite value is exactly a float32 value, or every value has at most 9 significant decimal
    digits (scores rounded when written). Then the contrast of an additive score is Δ = 0 only up to the
    storage rounding, which can exceed ``tol``, so "additive ⇒ CycleAcc exactly ½" (Proposition 1) no longer
    holds exactly. Simple values (0.5, 1.0) also trip this check; it is a warning, not an error.
    """
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return None
    with np.errstate(over="ignore"):  # a value beyond float32's range is simply not a float32 value
        as_float32 = finite.astype(np.float32).astype(np.float64)
    if np.array_equal(as_float32, finite):
        return "every score is exactly representable in float32"
    digits = 0
    for value in finite.tolist():  # repr is the shortest text that round-trips; stops at the first long one
        digits = max(digits, len(repr(value).lstrip("-").split("e")[0].replace(".", "").strip("0")))
        if digits > _SHORT_DIGITS:
            return None
    return f"every score has at most {digits} significant decimal digits (rounded when stored)"


def _requested_splits(present: Sequence[str], splits: Sequence[str] | None, cycles_source: str | None) -> list[str]:
    """The splits to evaluate: ``splits`` without repeats (default: every split ``present``, in order); a split
    the cycles lack is an :class:`InputError` naming the cycles file."""
    if splits is None:
        return list(present)
    requested = list(dict.fromkeys(splits))
    unknown = [s for s in requested if s not in present]
    if unknown:
        raise InputError(f"split(s) {unknown} not in the cycles; they have {list(present)}", path=cycles_source,
                         field="split")
    return requested


def _withdrawn_families(cycles: Sequence[Cycle], counts: Mapping[str, Mapping[str, int]], present: Sequence[str],
                        requested: Sequence[str], min_cycles: int, validation_counts: Mapping[str, int] | None
                        ) -> tuple[dict[str, dict[str, int]], str]:
    """The families the minimum-cycle rule withdraws (``{family: {split: count}}``) and which cycles it counted:
    the validation split of ``cycles`` when present, else the build's ``validation_counts`` when given, else
    the evaluated splits (:func:`evaluate_cycle_families`)."""
    if VALIDATION_SPLIT in present:
        all_counts = cycle_counts(cycles)
        gated = withdraw_small_families({f: all_counts[f] for f in counts}, [VALIDATION_SPLIT], min_cycles)
        return ({f: {s: int(all_counts[f].get(s, 0)) for s in dict.fromkeys([*requested, VALIDATION_SPLIT])}
                 for f in gated}, VALIDATION_SPLIT)
    if validation_counts is not None:
        merged = {f: {**cells, VALIDATION_SPLIT: int(validation_counts.get(f, 0))} for f, cells in counts.items()}
        return (withdraw_small_families(merged, [*requested, VALIDATION_SPLIT], min_cycles),
                f"{VALIDATION_SPLIT} of the build")
    return withdraw_small_families(counts, requested, min_cycles), ", ".join(requested)


def _rounding_note(matrix: np.ndarray, tol: float) -> str | None:
    """The warning that float64 rounding of the contrast of scores as large as ``matrix``'s (≈ 4·eps·max|s|)
    exceeds ``tol``, so additive scores may not tie exactly; None while it stays inside ``tol``."""
    rounding = 4 * np.finfo(np.float64).eps * float(np.abs(matrix).max(initial=0.0))
    if not rounding > tol:  # a NaN score gives no note, as the comparison reads
        return None
    return (f"scores reach {np.abs(matrix).max():.3g}: float64 rounding of the cycle contrast "
            f"(~{rounding:.1e}) exceeds tol={tol:g}, so additive scores may not tie exactly; rescale the scores")


def _family_cells(kept: Sequence[Cycle], delta: np.ndarray, families: Sequence[str], splits: Sequence[str],
                  unit: ResamplingUnit, *, tol: float, n_resamples: int, seed: int
                  ) -> dict[str, dict[str, CycleAccCell]]:
    """CycleAcc of every (family, split) of ``families`` × ``splits`` that holds a cycle of ``kept`` (``delta``
    their contrasts, ``unit`` their resampling unit), never pooled across splits."""
    cells = np.array([f"{c.family}\x00{split_of(c)}" for c in kept], dtype=object)
    out: dict[str, dict[str, CycleAccCell]] = {}
    for family in families:
        out[family] = {}
        for split in splits:
            mask = cells == f"{family}\x00{split}"
            if mask.any():
                out[family][split] = summarize_contrasts(
                    delta[mask], tol=tol, n_resamples=n_resamples, seed=seed, unit=unit.subset(mask))
    return out


def evaluate_cycle_families(
    cycles: Sequence[Cycle],
    scores: Mapping[tuple[str, str], float],
    *,
    splits: Sequence[str] | None = None,
    min_cycles: int = DEFAULT_MIN_CYCLES,
    tol: float = DEFAULT_TOL,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = CYCLE_BOOTSTRAP_SEED,
    source: str | None = None,
    cycles_source: str | None = None,
    cluster: str | None = None,
    validation_counts: Mapping[str, int] | None = None,
) -> CycleEvaluationResult:
    """CycleAcc per (family, split), never pooled across splits (cycle paper §5, §D.5).

    Returns the evaluation record: ``families`` ``{family: {split: CycleAccCell}}``, ``unavailable``
    ``{family: {split: count}}``, ``splits``, ``min_cycles``, ``tol``, ``n_resamples``, ``seed`` and ``warnings``
    (one-line notes, also issued as :class:`RuntimeWarning`); :func:`vlaudit.evaluate_cycles` adds the files'
    names and a 2×2 benchmark's own metrics. A contrast
    that overflows float64 (scores near ±1e308) is an :class:`InputError` naming the scores file and the
    first such block: counted as a tie or a win it would be a made-up credit.
    ``splits`` restricts to the named splits (default: every split of ``cycles``, first-appearance order;
    cycles without a split are the split ``"unsplit"``). The minimum-cycle rule (:func:`withdraw_small_families`)
    counts the validation split of ``cycles`` when it has one — evaluated or not — else every evaluated split:
    a withdrawn family is listed under ``"unavailable"`` with its counts and needs no scores. Only the evaluated cycles need scores, so a test-only scores file serves ``splits=["test"]``.
    ``validation_counts`` (``{family: n}``, a family absent counting 0) are the validation cycles of a file
    without a ``val`` split as its build counted them (the paper's COCO test from val2017, whose validation
    cycles are the train2017 build's, §D.5; ``validation_counts`` of the build's metadata): the minimum then
    counts them, not the evaluated splits, and a withdrawn family's entry carries ``val`` beside them.
    ``min_cycles_counted`` of the result says which cycles the minimum counted.
    ``source`` and ``cycles_source`` name the scores and cycles files in errors. ``cluster`` is the
    resampling unit of the intervals (:func:`cycle_unit`: None, the cycle; ``image``: cycles that share an image
    joined; or a column); every cell records its unit and number of clusters, and cells with fewer than
    :data:`~vlaudit.settings.MIN_CLUSTERS` clusters add one warning.
    """
    present = list(dict.fromkeys(split_of(c) for c in cycles))
    requested = _requested_splits(present, splits, cycles_source)
    counts = cycle_counts([c for c in cycles if split_of(c) in requested])
    unavailable, counted = _withdrawn_families(cycles, counts, present, requested, min_cycles, validation_counts)
    kept = [c for c in cycles if split_of(c) in requested and c.family not in unavailable]
    matrix = block_scores(kept, scores, source=source)
    notes = []
    delta = checked_contrasts(kept, matrix, source=source)
    rounding = _rounding_note(matrix, tol)
    if rounding is not None:
        notes.append(rounding)
        warnings.warn(notes[-1], RuntimeWarning, stacklevel=2)
    unit = cycle_unit(kept, cluster)
    families = _family_cells(kept, delta, [f for f in sorted(counts) if f not in unavailable], requested, unit,
                             tol=tol, n_resamples=n_resamples, seed=seed)
    small = small_sample_cells({f"{family}/{split}": cell.n_clusters or 0 for family, by_split in families.items()
                          for split, cell in by_split.items()}, unit.unit)
    withdrawn: dict[str, SplitCounts] = dict(sorted(unavailable.items()))
    return CycleEvaluationResult(families=families, unavailable=withdrawn, splits=requested, min_cycles=min_cycles,
                                 tol=tol, n_resamples=n_resamples, seed=seed, warnings=notes + small,
                                 cluster=cluster, min_cycles_counted=counted)

