"""Shared machinery of the cycle-paper experiments (``vlaudit experiment …``; cycle paper §5, §D.5, §E).

Every experiment runs once per seed on that seed's own independently constructed, image-disjoint cycle split
(§D.5: "three independently constructed cycle splits"): a :class:`SeedInputs` holds one seed's cycles (with
their ``split``: train / val / test by default) and the frozen features they index. Probes train on the train
split, are selected on the val split, and every reported CycleAcc is on the test split.

Reported numbers per seed are aggregated by :func:`aggregate`: mean and *sample* standard deviation (ddof = 1)
across the seeds where the quantity exists (``n_seeds`` says how many; sd is None for one seed).

All exact CycleAcc values go through :func:`split_cycle_eval`, the one place that selects a split and calls
:func:`vlaudit.metrics.cycles.evaluate_cycles` (switch it to the split-aware evaluation there).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.errors import InputError
from vlaudit.metrics.cycles import DEFAULT_TOL, evaluate_cycles
from vlaudit.probes.trainer import ProbeData, TrainConfig, cycles_to_index, fit_probe, score_index
from vlaudit.records import Cycle

RANKS = (1, 2, 4, 8, 16, 32, 64)
N_RESAMPLES = 1000  # bootstrap CIs of the per-seed test CycleAcc (descriptive; the headline is mean ± sd)


@dataclass(frozen=True)
class ExperimentConfig:
    """Probe optimisation (§E.3 defaults: 8 epochs, batch 512, lr 1e-3, wd 1e-4) and split names."""

    epochs: int = 8
    batch_size: int = 512
    lr: float = 1e-3
    weight_decay: float = 1e-4
    rank: int = 64
    additive_epochs: int = 5          # §E.4: the additive audit probes train for 5 epochs
    train_split: str = "train"
    val_split: str = "val"
    test_split: str = "test"
    device: str = "cpu"
    tol: float = DEFAULT_TOL

    def train(self, seed: int, loss: str = "cycle", select: str = "cycle_acc", epochs: int | None = None
              ) -> TrainConfig:
        return TrainConfig(epochs=epochs or self.epochs, batch_size=self.batch_size, lr=self.lr,
                           weight_decay=self.weight_decay, seed=seed, loss=loss, select=select, device=self.device,
                           tol=self.tol)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SeedInputs:
    """One seed's cycles and the features they index (image/caption id → row of ``x`` / ``y``).

    ``extra_texts``: additional caption rows (e.g. the OE-marked captions) keyed by caption id, appended to
    ``y`` by :meth:`with_texts`.
    """

    seed: int
    cycles: list[Cycle]
    image_ids: list[str]
    x: np.ndarray
    caption_ids: list[str]
    y: np.ndarray
    source: str = ""
    image_row: dict[str, int] = field(init=False)
    caption_row: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.x = np.array(self.x, dtype=np.float32)  # copies: Parquet arrays are read-only
        self.y = np.array(self.y, dtype=np.float32)
        self.image_row = {k: i for i, k in enumerate(self.image_ids)}
        self.caption_row = {k: i for i, k in enumerate(self.caption_ids)}

    @classmethod
    def from_features(cls, seed: int, cycles: list[Cycle], features: Any, source: str = "") -> SeedInputs:
        return cls(seed, cycles, list(features.image_ids), features.images, list(features.caption_ids),
                   features.texts, source)

    def with_texts(self, extra: Mapping[str, np.ndarray]) -> SeedInputs:
        """A copy whose caption table also holds ``extra`` (caption id → feature row)."""
        keys = [k for k in extra if k not in self.caption_row]
        y = np.concatenate([self.y, np.stack([extra[k] for k in keys])]) if keys else self.y
        return SeedInputs(self.seed, self.cycles, self.image_ids, self.x, self.caption_ids + keys, y, self.source)

    def families(self, wanted: Sequence[str] | None = None) -> list[str]:
        present = sorted({c.family for c in self.cycles})
        if wanted:
            unknown = [f for f in wanted if f not in present]
            if unknown:
                raise InputError(f"families {unknown} are not in the cycles of seed {self.seed}; present: {present}",
                                 path=self.source, field="families")
            return list(wanted)
        return present

    def select(self, split: str, family: str | Sequence[str] | None = None) -> list[Cycle]:
        fams = None if family is None else {family} if isinstance(family, str) else set(family)
        return [c for c in self.cycles if c.split == split and (fams is None or c.family in fams)]

    def probe_data(self, cycles: Sequence[Cycle], name: str) -> ProbeData:
        index = cycles_to_index(cycles, self.image_row, self.caption_row, source=self.source)
        return ProbeData(self.x, self.y, cycles=index, name=name)


def split_cycle_eval(cycles: Sequence[Cycle], scores: Mapping[tuple[str, str], float], split: str, *,
                     tol: float = DEFAULT_TOL, seed: int = 0) -> dict[str, dict[str, Any]]:
    """family → {n, cycle_acc, ties, tie_rate, ci} on the cycles of ``split`` only (never pooled across splits);
    key ``"overall"``: all families of that split together.

    The one place the experiments compute exact CycleAcc: it selects the split itself and calls
    :func:`evaluate_cycles`; once the split-aware ``evaluate_cycles(..., splits=[split])`` is on main, this
    body becomes ``evaluate_cycles(cycles, scores, splits=[split], ...)["families"][f][split]``.
    """
    chosen = [c for c in cycles if c.split == split]
    if not chosen:
        return {}
    result = evaluate_cycles(chosen, scores, tol=tol, n_resamples=N_RESAMPLES, seed=seed)
    out = {}
    for family, summary in [*result["families"].items(), ("overall", result["overall"])]:  # type: ignore[union-attr]
        out[family] = {**summary, "tie_rate": summary["ties"] / summary["n"] if summary["n"] else float("nan")}
    return out


def scorer_scores(scorer: Any, inputs: SeedInputs, cycles: Sequence[Cycle], device: str = "cpu"
                  ) -> dict[tuple[str, str], float]:
    """float64 logits of ``scorer`` on every distinct (image, caption) pair the cycles use (§E.2)."""
    pairs = list(dict.fromkeys((u, v) for c in cycles for u, v, _ in c.entries()))
    if not pairs:
        return {}
    images = np.array([inputs.image_row[u] for u, _ in pairs], dtype=np.int64)
    captions = np.array([inputs.caption_row[v] for _, v in pairs], dtype=np.int64)
    values = score_index(scorer, inputs.x, inputs.y, images, captions, device=device)
    return dict(zip(pairs, values.tolist(), strict=True))


def cosine_scores(inputs: SeedInputs, cycles: Sequence[Cycle]) -> dict[tuple[str, str], float]:
    """Zero-shot cos(image, caption) in float64 via :func:`vlaudit.scoring.features.zero_shot_scores`."""
    from vlaudit.scoring.features import Features, zero_shot_scores

    features = Features(inputs.image_ids, inputs.x, inputs.caption_ids, inputs.y, {})
    rows = zero_shot_scores(features, cycles, source=inputs.source)
    return {(r["image_id"], r["caption_id"]): r["score"] for r in rows}


def family_splits(inputs: SeedInputs, family: str | Sequence[str], config: ExperimentConfig
                  ) -> tuple[list[Cycle], list[Cycle], list[Cycle]]:
    """The train, val and test cycles of ``family`` (one name or several, pooled within each split)."""
    return (inputs.select(config.train_split, family), inputs.select(config.val_split, family),
            inputs.select(config.test_split, family))


def missing_splits(counts: Mapping[str, int]) -> list[str]:
    return [name for name, n in counts.items() if n == 0]


def train_on(inputs: SeedInputs, kind: str, train: Sequence[Cycle], val: Sequence[Cycle], config: TrainConfig, *,
             rank: int | None = None, additive_heads: bool = False, name: str = "") -> Any:
    """:func:`fit_probe` on the index arrays of ``train`` / ``val`` cycles; returns the fitted scorer."""
    result = fit_probe(kind, inputs.probe_data(train, f"{name}/train"),
                       inputs.probe_data(val, f"{name}/val") if val else None, config, rank=rank,
                       additive_heads=additive_heads)
    return result.scorer


# ------------------------------------------------------------------------------------------ aggregation


def mean_sd(values: Iterable[float | None]) -> tuple[float | None, float | None, int]:
    """Mean and sample sd (ddof = 1) over the non-missing values, and how many there were."""
    kept = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not kept:
        return None, None, 0
    array = np.asarray(kept, dtype=np.float64)
    return float(array.mean()), (float(array.std(ddof=1)) if len(array) > 1 else None), len(array)


def aggregate(per_seed: Mapping[int, Sequence[Mapping[str, Any]]], keys: Sequence[str],
              values: Sequence[str]) -> list[dict[str, Any]]:
    """Long rows → one row per ``keys`` tuple with, for each of ``values``: per-seed values, mean, sd, n_seeds.

    A row missing in a seed (e.g. a family withdrawn there) is None for that seed and left out of mean/sd.
    """
    order: dict[tuple, None] = {}
    lookup: dict[tuple[int, tuple], Mapping[str, Any]] = {}
    for seed, rows in per_seed.items():
        for row in rows:
            key = tuple(row[k] for k in keys)
            order.setdefault(key, None)
            lookup[(seed, key)] = row
    out = []
    for key in order:
        record: dict[str, Any] = dict(zip(keys, key, strict=True))
        for value in values:
            seeds = {str(s): (lookup[(s, key)].get(value) if (s, key) in lookup else None) for s in per_seed}
            mean, sd, n = mean_sd(seeds.values())
            record[value] = {"per_seed": seeds, "mean": mean, "sd": sd, "n_seeds": n}
        out.append(record)
    return out


def flat_rows(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], values: Sequence[str]) -> list[dict[str, Any]]:
    """The CSV form of :func:`aggregate` rows: keys, then per value ``V_seed_S``, ``V_mean``, ``V_sd``."""
    out = []
    for row in rows:
        record = {k: row[k] for k in keys}
        for value in values:
            cell = row[value]
            for seed, v in cell["per_seed"].items():
                record[f"{value}_seed_{seed}"] = v
            record[f"{value}_mean"], record[f"{value}_sd"], record[f"{value}_n_seeds"] = (
                cell["mean"], cell["sd"], cell["n_seeds"])
        out.append(record)
    return out


def mean_sd_text(cell: Mapping[str, Any], digits: int = 4) -> str:
    """'0.7312 ± 0.0123' (sample sd), '0.7312' for one seed, '—' when missing; ' (2/3 seeds)' when some seed
    has no value (e.g. a family withdrawn there by the minimum cycle count)."""
    if cell["mean"] is None:
        return "—"
    text = f"{cell['mean']:.{digits}f}"
    text = text if cell["sd"] is None else f"{text} ± {cell['sd']:.{digits}f}"
    total = len(cell.get("per_seed", {}))
    return text if cell["n_seeds"] >= total else f"{text} ({cell['n_seeds']}/{total} seeds)"


def write_outputs(out_dir: str | Path | None, name: str, result: Mapping[str, Any],
                  csv_rows: Sequence[Mapping[str, Any]], *, split: str | None = None) -> dict[str, str]:
    """``OUT/NAME.json`` (everything) and ``OUT/NAME.csv`` (one row per reported quantity), atomically.

    ``split``: the split every CSV value is computed on (a first column, so no number comes without one).
    """
    if out_dir is None:
        return {}
    if split is not None:
        csv_rows = [{"split": split, **row} for row in csv_rows]
    from vlaudit.tables import write_json, write_table

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": str(out / f"{name}.json"), "csv": str(out / f"{name}.csv")}
    write_table(paths["csv"], list(csv_rows))
    write_json(paths["json"], {**result, "files": {**result.get("files", {}), **paths}})
    return paths


def check_seeds(seeds: Sequence[int], inputs: Mapping[int, SeedInputs]) -> list[int]:
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise InputError("need at least one seed", field="seeds")
    if len(set(seeds)) != len(seeds):
        raise InputError(f"duplicated seeds {seeds}", field="seeds")
    missing = [s for s in seeds if s not in inputs]
    if missing:
        raise InputError(f"no cycles/features for seeds {missing}", field="seeds")
    return seeds
