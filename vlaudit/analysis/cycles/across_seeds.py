"""What the cycle-paper experiments report across seeds (cycle paper §5, §D.5, §E.4): per-seed rows aggregated
into mean ± sample sd, the families withdrawn everywhere, the additive audit, and their console text.

A per-seed row (:data:`SeedRow`) is one seed's numbers for one key (a family and probe, a family and rank, …);
:func:`aggregate` turns the rows of every seed into one :class:`~vlaudit.results.cycles.SeedAggregate` per
reported quantity: the value per seed (None where the seed has no row, e.g. the family was withdrawn there),
mean and *sample* sd (ddof = 1; None for one seed) over the seeds that have it. A row whose probe ended below
chance on its own training data (``below_chance``, :data:`BELOW_CHANCE`: it did not learn) keeps its values in
``per_seed`` but is left out of mean and sd (``left_out`` names the seed and why), except its counts
(:data:`COUNTS`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from vlaudit.builders.cycles.build_steps import family_label
from vlaudit.results.cycle_experiments import (
    AdditiveAudit,
    AdditiveFailure,
    CycleExperimentResult,
    SeedAggregate,
    TransferCorrelation,
)
from vlaudit.results.versioned import JsonValue, to_json

#: one value of a per-seed row: a key (family, probe, rank, protocol) or a number (None: not computable)
SeedValue = str | int | float | bool | None
#: one seed's numbers for one key of an experiment
SeedRow = dict[str, SeedValue]
#: a console table: its columns and rows of preformatted cells
Table = tuple[list[str], list[list[object]]]

UNAVAILABLE = "unavailable"
#: the key of a per-seed row whose probe ended below chance on its own training data
BELOW_CHANCE = "below_chance"
#: why such a seed's value is left out of mean and sd
BELOW_CHANCE_REASON = "the probe ended below chance on its own training data (it did not learn)"
#: the quantities that are counts of the test data, kept in mean ± sd whatever the probe did
COUNTS = ("n", "n_test")
ADDITIVE_CYCLE_ACC = 0.5  # Theorem 1: Δ = 0 on every complete block, so every cycle is a tie (credit ½)


def number(value: SeedValue) -> int | float | None:
    """A row's numeric value as it is (an int stays an int: a count); None for a missing, non-numeric or NaN
    value."""
    if value is None or isinstance(value, (bool, str)):
        return None
    return None if isinstance(value, float) and math.isnan(value) else value


def mean_sd(values: Iterable[int | float | None]) -> tuple[float | None, float | None, int]:
    """Mean and sample sd (ddof = 1) over the non-missing values, and how many there were."""
    kept = [float(v) for v in values if v is not None and not math.isnan(v)]
    if not kept:
        return None, None, 0
    array = np.asarray(kept, dtype=np.float64)
    return float(array.mean()), (float(array.std(ddof=1)) if len(array) > 1 else None), len(array)


def seed_aggregate(per_seed: Mapping[str, int | float | None], left_out: Mapping[str, str] | None = None
                   ) -> SeedAggregate:
    """The across-seed record of one quantity given its value per seed; the seeds of ``left_out`` (seed → why)
    keep their value in ``per_seed`` but are left out of mean and sd."""
    left = {seed: why for seed, why in (left_out or {}).items() if per_seed.get(seed) is not None}
    mean, sd, n = mean_sd(v for seed, v in per_seed.items() if seed not in left)
    return SeedAggregate(per_seed=dict(per_seed), mean=mean, sd=sd, n_seeds=n, left_out=left)


def aggregate(per_seed: Mapping[int, Sequence[SeedRow]], keys: Sequence[str], values: Sequence[str]
              ) -> list[tuple[tuple[SeedValue, ...], dict[str, SeedAggregate]]]:
    """Long rows → one entry per ``keys`` tuple (first-appearance order) with a :class:`SeedAggregate` for each
    of ``values``. A row missing in a seed is None for that seed and left out of mean and sd."""
    order: dict[tuple[SeedValue, ...], None] = {}
    lookup: dict[tuple[int, tuple[SeedValue, ...]], SeedRow] = {}
    for seed, rows in per_seed.items():
        for row in rows:
            key = tuple(row[k] for k in keys)
            order.setdefault(key, None)
            lookup[(seed, key)] = row
    def left_out(key: tuple[SeedValue, ...], value: str) -> dict[str, str]:
        if value in COUNTS:
            return {}
        return {str(s): BELOW_CHANCE_REASON for s in per_seed
                if (s, key) in lookup and lookup[(s, key)].get(BELOW_CHANCE) is True}

    return [(key, {value: seed_aggregate({str(s): number(lookup[(s, key)].get(value)) if (s, key) in lookup
                                          else None for s in per_seed}, left_out(key, value))
                   for value in values})
            for key in order]


def json_rows(rows: Sequence[object]) -> list[dict[str, Any]]:
    """Row records as the JSON objects the plots read."""
    out = [to_json(row) for row in rows]
    return [row for row in out if isinstance(row, dict)]


def flat_rows(rows: Sequence[object], keys: Sequence[str], values: Sequence[str]) -> list[dict[str, JsonValue]]:
    """The CSV form of aggregated row records: keys, then per value ``V_seed_S``, ``V_mean``, ``V_sd``,
    ``V_n_seeds``."""
    out: list[dict[str, JsonValue]] = []
    for row in rows:
        data = to_json(row)
        assert isinstance(data, dict)  # a row record is written as an object
        record: dict[str, JsonValue] = {k: data[k] for k in keys}
        for value in values:
            cell = data[value]
            assert isinstance(cell, dict) and isinstance(cell["per_seed"], dict)
            for seed, v in cell["per_seed"].items():
                record[f"{value}_seed_{seed}"] = v
            record[f"{value}_mean"], record[f"{value}_sd"], record[f"{value}_n_seeds"] = (
                cell["mean"], cell["sd"], cell["n_seeds"])
        out.append(record)
    return out


def mean_sd_text(cell: SeedAggregate | TransferCorrelation, digits: int = 4) -> str:
    """'0.7312 ± 0.0123' (sample sd), '0.7312' for one seed, '—' when missing; ' (2/3 seeds)' when some seed
    has no value (e.g. a family withdrawn there by the minimum cycle count); "; seed 1 below chance, left out"
    for the seeds left out (:data:`BELOW_CHANCE`)."""
    left = sorted(getattr(cell, "left_out", {}) or {})
    marks = f"seed{'s' if len(left) > 1 else ''} {', '.join(left)} below chance, left out" if left else ""
    if cell.mean is None:
        return "—" if not marks else f"— ({marks})"
    text = f"{cell.mean:.{digits}f}"
    text = text if cell.sd is None else f"{text} ± {cell.sd:.{digits}f}"
    total = len(cell.per_seed)
    parts = [f"{cell.n_seeds}/{total} seeds"] if cell.n_seeds < total else []
    parts += [marks] if marks else []
    return text if not parts else f"{text} ({'; '.join(parts)})"


def per_seed_n_text(cell: SeedAggregate) -> str:
    """'40/—/38': an aggregated n per seed, "—" for a seed without it (withdrawn there)."""
    return "/".join("—" if v is None else str(int(v)) for v in cell.per_seed.values())


def withdrawn_everywhere(result: CycleExperimentResult) -> list[str]:
    """The families withdrawn by the minimum-cycle rule in every seed of ``result`` (no number anywhere)."""
    seeds = set(result.seeds)
    by_family: dict[str, set[int]] = {}
    for item in result.unavailable:
        by_family.setdefault(item.family, set()).add(item.seed)
    return [family for family, withdrawn in by_family.items() if withdrawn == seeds]


def unavailable_table(result: CycleExperimentResult) -> Table:
    """One row per withdrawn (family, seed) with its cycles per split (the counts that failed §D.5's minimum)
    and whether the experiment or the cycles build withdrew it."""
    splits = [str(result.config[k]) for k in ("train_split", "val_split", "test_split")]
    rows: list[list[object]] = [[family_label(item.family), item.seed, *[item.cycles.get(split, 0) for split in splits],
                                 item.withdrawn_by] for item in result.unavailable]
    return ["family", "seed", *[f"{split} cycles" for split in splits], "withdrawn by"], rows


def additive_audit(per_seed: Mapping[int, Sequence[SeedRow]], probe_of: Callable[[SeedRow], str | None]
                   ) -> AdditiveAudit:
    """The additive audit (cycle paper §E.4, Theorem 1): every row ``probe_of`` names an additive probe (image-only,
    text-only, additive; None: not one) must have exact test CycleAcc ½ and tie rate 1, in every seed and family;
    ``ok`` iff at least one such cell was checked and none failed. Any other value means the cycles are not
    complete balanced blocks or the scores are not float64."""
    failures: list[AdditiveFailure] = []
    checked = 0
    for seed, rows in per_seed.items():
        for row in rows:
            probe = probe_of(row)
            if probe is None:
                continue
            checked += 1
            cycle_acc, tie_rate = number(row["cycle_acc"]), number(row["tie_rate"])
            if cycle_acc != ADDITIVE_CYCLE_ACC or tie_rate != 1.0:
                failures.append(AdditiveFailure(seed=seed, family=str(row["family"]), probe=probe,
                                                cycle_acc=cycle_acc, tie_rate=tie_rate))
    return AdditiveAudit(ok=not failures and checked > 0, checked=checked, failures=failures)
