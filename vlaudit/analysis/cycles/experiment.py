"""Shared machinery of the cycle-paper experiments (``vlaudit experiment …``; cycle paper §5, §D.5, §E).

Every experiment runs once per seed on that seed's own independently constructed, image-disjoint cycle split
(§D.5: "three independently constructed cycle splits"): a :class:`SeedInputs` holds one seed's cycles (with
their ``split``: train / val / test by default) and the frozen features they index. Probes train on the train
split, are selected on the val split, and every reported CycleAcc is on the test split.

The minimum-cycle rule (§D.5) is applied per seed by :func:`select_families`: a family with fewer than
``min_cycles`` (default 30) *validation* cycles in that seed — or with no train or test cycle — is withdrawn
whole there: no probe is trained on it and no number is reported for it in that seed; it is listed under
``unavailable`` with its per-split counts. A family kept in some seeds and not others is reported with its
test n per seed and mean ± sd over the seeds it has (``n_seeds``; the table says "(2/3 seeds)").

Reported numbers per seed are aggregated by :func:`aggregate`: mean and *sample* standard deviation (ddof = 1)
across the seeds where the quantity exists (``n_seeds`` says how many; sd is None for one seed).

All exact CycleAcc values go through :func:`split_cycle_eval`, which calls the split-aware
:func:`vlaudit.metrics.cycles.evaluate_cycles` on one split.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.analysis.cycles.provenance import BUILD_PROVENANCE as BUILD_PROVENANCE
from vlaudit.analysis.cycles.provenance import PAPER_VALUES
from vlaudit.analysis.cycles.provenance import cycle_builds as cycle_builds
from vlaudit.analysis.cycles.provenance import run_settings as run_settings
from vlaudit.analysis.cycles.provenance import settings_lines as settings_lines
from vlaudit.builders.cycles.build_steps import family_label
from vlaudit.errors import InputError
from vlaudit.files import write_result, write_table
from vlaudit.metrics.cycles import (
    DEFAULT_MIN_CYCLES,
    DEFAULT_TOL,
    block_scores,
    cycle_contrast,
    cycle_counts,
    evaluate_cycles,
    summarize_contrasts,
    withdraw_small_families,
)
from vlaudit.probes.trainer import ProbeData, TrainConfig, cycles_to_index, fit_probe, score_index
from vlaudit.records import Cycle
from vlaudit.results.cycles import CycleExperimentResult
from vlaudit.scoring.features import Features, zero_shot_scores
from vlaudit.settings import (
    ADDITIVE_PROBE_EPOCHS,
    CYCLE_EXPERIMENT_RESAMPLES,
    MIN_OPTIMISER_STEPS,
    PROBE_BATCH_SIZE,
    PROBE_EPOCHS,
    PROBE_LR,
    PROBE_RANK,
    PROBE_WEIGHT_DECAY,
    RANK_SWEEP,
    SHORTCUT_PROBE_EPOCHS,
    SHORTCUT_PROBE_LR,
)

RANKS = RANK_SWEEP
N_RESAMPLES = CYCLE_EXPERIMENT_RESAMPLES  # per-seed test CycleAcc CIs (descriptive; headline: mean ± sd)


@dataclass(frozen=True)
class ExperimentConfig:
    """Probe optimisation per probe kind (:data:`PROBE_KINDS`; defaults in :mod:`vlaudit.settings`): interaction
    probes §E.3 (8 epochs, batch 512, lr 1e-3, wd 1e-4), additive audit probes §E.4 (5 epochs), text-only and
    image-only shortcut probes §E.4 (50 epochs, lr 1e-2); the fewest optimiser steps of a probe on a small
    training set (vlaudit's, not the paper's); split names and the per-family minimum of validation cycles
    (§D.5: 30)."""

    epochs: int = PROBE_EPOCHS
    batch_size: int = PROBE_BATCH_SIZE
    lr: float = PROBE_LR
    weight_decay: float = PROBE_WEIGHT_DECAY
    rank: int = PROBE_RANK
    additive_epochs: int = ADDITIVE_PROBE_EPOCHS
    shortcut_epochs: int = SHORTCUT_PROBE_EPOCHS
    shortcut_lr: float = SHORTCUT_PROBE_LR
    min_steps: int = MIN_OPTIMISER_STEPS
    train_split: str = "train"
    val_split: str = "val"
    test_split: str = "test"
    device: str = "cpu"
    tol: float = DEFAULT_TOL
    min_cycles: int = DEFAULT_MIN_CYCLES

    def __post_init__(self) -> None:
        if self.min_cycles < 1:
            raise ValueError(f"min_cycles must be ≥ 1 (a family needs cycles in every split), got {self.min_cycles}")

    @property
    def splits(self) -> tuple[str, str, str]:
        return (self.train_split, self.val_split, self.test_split)

    def train(self, seed: int, loss: str = "cycle", select: str = "cycle_acc", kind: str = "interaction"
              ) -> TrainConfig:
        """The optimiser settings of one probe of ``kind`` (one of :data:`PROBE_KINDS`)."""
        settings = self.probe_settings()[kind]
        return TrainConfig(epochs=settings["epochs"], batch_size=self.batch_size, lr=settings["lr"],
                           weight_decay=self.weight_decay, seed=seed, loss=loss, select=select, device=self.device,
                           tol=self.tol, min_steps=self.min_steps)

    def probe_settings(self, kinds: Sequence[str] = ("interaction", "additive", "shortcut")
                       ) -> dict[str, dict[str, Any]]:
        """Per probe kind a run trains (``kinds``): epochs, lr, batch, weight decay and the section stating them
        (the run's JSON)."""
        common = {"batch_size": self.batch_size, "weight_decay": self.weight_decay, "min_steps": self.min_steps}
        every = {"interaction": {"epochs": self.epochs, "lr": self.lr, **common, "paper": "cycle §E.3"},
                 "additive": {"epochs": self.additive_epochs, "lr": self.lr, **common, "paper": "cycle §E.4"},
                 "shortcut": {"epochs": self.shortcut_epochs, "lr": self.shortcut_lr, **common,
                              "paper": "cycle §E.4"}}
        return {kind: every[kind] for kind in kinds}

    def settings_provenance(self) -> dict[str, dict[str, Any]]:
        """Every setting of the run, sorted by where it comes from: ``paper`` (equal to the value the cycle paper
        states, with its section), ``departs`` (the paper states another value: both are given) and
        ``not_in_paper`` (vlaudit's own: the paper states none)."""
        out: dict[str, dict[str, Any]] = {"paper": {}, "departs": {}, "not_in_paper": {}}
        for name, value in self.as_dict().items():
            if name in PAPER_VALUES:
                paper_value, section = PAPER_VALUES[name]
                cell = {"value": value, "paper": paper_value, "section": section}
                out["paper" if value == paper_value else "departs"][name] = cell
            else:
                out["not_in_paper"][name] = value
        return out

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PROBE_KINDS = ("interaction", "additive", "shortcut")  # §E.3 probes; §E.4 additive audit; §E.4 image/text-only


@dataclass
class SeedInputs:
    """One seed's cycles and the features they index (image/caption id → row of ``x`` / ``y``).

    ``extra_texts``: additional caption rows (e.g. the OE-marked captions) keyed by caption id, appended to
    ``y`` by :meth:`with_texts`. ``built_unavailable``: families the cycles build already withdrew by its own
    minimum (``unavailable`` of its ``.meta.json``: family → {split: count}); they are in no cycle of the file.
    """

    seed: int
    cycles: list[Cycle]
    image_ids: list[str]
    x: np.ndarray
    caption_ids: list[str]
    y: np.ndarray
    source: str = ""
    built_unavailable: dict[str, dict[str, int]] = field(default_factory=dict)
    build: dict[str, Any] = field(default_factory=dict)  # BUILD_PROVENANCE of its CYCLES.meta.json, when read
    image_row: dict[str, int] = field(init=False)
    caption_row: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.x = np.array(self.x, dtype=np.float32)  # copies: Parquet arrays are read-only
        self.y = np.array(self.y, dtype=np.float32)
        self.image_row = {k: i for i, k in enumerate(self.image_ids)}
        self.caption_row = {k: i for i, k in enumerate(self.caption_ids)}

    @classmethod
    def from_features(cls, seed: int, cycles: list[Cycle], features: Any, source: str = "",
                      built_unavailable: Mapping[str, Mapping[str, int]] | None = None) -> SeedInputs:
        return cls(seed, cycles, list(features.image_ids), features.images, list(features.caption_ids),
                   features.texts, source, {f: dict(c) for f, c in (built_unavailable or {}).items()})

    def with_texts(self, extra: Mapping[str, np.ndarray]) -> SeedInputs:
        """A copy whose caption table also holds ``extra`` (caption id → feature row)."""
        keys = [k for k in extra if k not in self.caption_row]
        y = np.concatenate([self.y, np.stack([extra[k] for k in keys])]) if keys else self.y
        return SeedInputs(self.seed, self.cycles, self.image_ids, self.x, self.caption_ids + keys, y, self.source,
                          self.built_unavailable, self.build)

    def select(self, split: str, family: str | Sequence[str] | None = None) -> list[Cycle]:
        fams = None if family is None else {family} if isinstance(family, str) else set(family)
        return [c for c in self.cycles if c.split == split and (fams is None or c.family in fams)]

    def probe_data(self, cycles: Sequence[Cycle], name: str) -> ProbeData:
        index = cycles_to_index(cycles, self.image_row, self.caption_row, source=self.source)
        return ProbeData(self.x, self.y, cycles=index, name=name)


def split_cycle_eval(cycles: Sequence[Cycle], scores: Mapping[tuple[str, str], float], split: str, *,
                     tol: float = DEFAULT_TOL, seed: int = 0) -> dict[str, dict[str, Any]]:
    """family → {n, cycle_acc, ties, tie_rate, ci} on the cycles of ``split`` only (never pooled across splits),
    from ``evaluate_cycles(cycles, scores, splits=[split])``; key ``"overall"``: every family of that split
    together (one contrast per cycle of the split, summarised by :func:`summarize_contrasts`). Empty when
    ``cycles`` has none of ``split``.

    The minimum-cycle rule is not applied here: it needs the train and val counts too, so the experiments apply
    it before training (:func:`select_families`) and every family they pass in is evaluated (``min_cycles=1``).
    """
    chosen = [c for c in cycles if c.split == split]
    if not chosen:
        return {}
    result = evaluate_cycles(chosen, scores, splits=[split], min_cycles=1, tol=tol, n_resamples=N_RESAMPLES,
                             seed=seed)
    out: dict[str, dict[str, Any]] = {family: cells[split] for family, cells in result["families"].items()}
    matrix = block_scores(chosen, scores)
    delta = cycle_contrast(matrix[:, 0], matrix[:, 1], matrix[:, 2], matrix[:, 3])
    out["overall"] = summarize_contrasts(delta, tol=tol, n_resamples=N_RESAMPLES, seed=seed).to_dict()
    return out


def select_families(inputs: Mapping[int, SeedInputs], seeds: Sequence[int], config: ExperimentConfig,
                    wanted: Sequence[str] | None = None) -> tuple[dict[int, list[str]], list[dict[str, Any]]]:
    """Per seed, the families that pass the minimum-cycle rule (§D.5), and the withdrawn ones.

    A family (``wanted``, default every family of any seed's cycles or build withdrawals) with fewer than
    ``config.min_cycles`` cycles in the validation split of a seed, or none in its train or test split
    (:func:`withdraw_small_families` over :func:`cycle_counts`), is withdrawn whole in that seed: returned as ``{"family", "seed", "cycles":
    {split: count}, "withdrawn_by": "experiment"}`` and given no number there. A family the cycles build already
    withdrew (absent from the file, in :attr:`SeedInputs.built_unavailable`) is listed with the build's counts and
    ``"withdrawn_by": "build"``. A wanted family unknown to every seed, or no family left in any seed, is an
    InputError.
    """
    splits = list(config.splits)
    present = sorted({c.family for s in seeds for c in inputs[s].cycles}
                     | {f for s in seeds for f in inputs[s].built_unavailable})
    if wanted:
        unknown = [f for f in wanted if f not in present]
        if unknown:
            raise InputError(f"families {unknown} are in no seed's cycles; present: {present}",
                             path=inputs[seeds[0]].source, field="families")
    names = list(dict.fromkeys(wanted)) if wanted else present
    kept: dict[int, list[str]] = {}
    unavailable: list[dict[str, Any]] = []
    for seed in seeds:
        counts = cycle_counts([c for c in inputs[seed].cycles if c.split in splits and c.family in names])
        withdrawn = withdraw_small_families({f: counts.get(f, {}) for f in names}, splits, config.min_cycles,
                                            validation_split=config.val_split)
        kept[seed] = [f for f in names if f not in withdrawn]
        for family in (f for f in names if f in withdrawn):
            built = inputs[seed].built_unavailable.get(family) if family not in counts else None
            unavailable.append({"family": family, "seed": seed,
                                "cycles": withdrawn[family] if built is None else
                                {split: int(built.get(split, 0)) for split in splits},
                                "withdrawn_by": "experiment" if built is None else "build"})
    if not any(kept.values()):
        raise InputError(f"no family has {config.min_cycles} {config.val_split} cycles (and some in "
                         f"{config.train_split} and {config.test_split}) in any seed "
                         f"(cycle paper §D.5; lower --min-cycles for small inputs): "
                         + "; ".join(f"{u['family']} seed {u['seed']} {u['cycles']}" for u in unavailable),
                         path=inputs[seeds[0]].source, field="min_cycles")
    return kept, unavailable


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
    features = Features(inputs.image_ids, inputs.x, inputs.caption_ids, inputs.y, {})
    rows = zero_shot_scores(features, cycles, source=inputs.source)
    return {(r["image_id"], r["caption_id"]): r["score"] for r in rows}


def family_splits(inputs: SeedInputs, family: str | Sequence[str], config: ExperimentConfig
                  ) -> tuple[list[Cycle], list[Cycle], list[Cycle]]:
    """The train, val and test cycles of ``family`` (one name or several, pooled within each split)."""
    return (inputs.select(config.train_split, family), inputs.select(config.val_split, family),
            inputs.select(config.test_split, family))


def train_on(inputs: SeedInputs, kind: str, train: Sequence[Cycle], val: Sequence[Cycle], config: TrainConfig, *,
             rank: int | None = None, additive_heads: bool = False, name: str = "",
             notes: list[dict[str, Any]] | None = None) -> Any:
    """:func:`fit_probe` on the index arrays of ``train`` / ``val`` cycles; returns the fitted scorer and
    appends the run's notes (small-set batch, below chance) to ``notes`` as ``{"probe": name, "note"}``."""
    result = fit_probe(kind, inputs.probe_data(train, f"{name}/train"),
                       inputs.probe_data(val, f"{name}/val") if val else None, config, rank=rank,
                       additive_heads=additive_heads)
    if notes is not None:
        notes.extend({"probe": name, "note": note} for note in result.notes)
    return result.scorer


def train_on_pairs(kind: str, train: ProbeData, config: TrainConfig, *, name: str = "",
                   notes: list[dict[str, Any]] | None = None) -> Any:
    """:func:`fit_probe` on labelled pairs (pair BCE, final epoch): the scorer, with its notes appended to
    ``notes`` as in :func:`train_on`."""
    result = fit_probe(kind, train, None, config)
    if notes is not None:
        notes.extend({"probe": name, "note": note} for note in result.notes)
    return result.scorer


def probe_notes_summary(notes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Console paragraphs for a run's probe notes: how many probes ran with a smaller batch, and which ended
    below chance on their own training data (every note is in ``probe_notes`` of the JSON)."""
    small = sum(1 for n in notes if n["note"].startswith("small training set"))
    below = [n["probe"] for n in notes if n["note"].startswith("warning")]
    lines = [f"{small} probe(s) had small training sets: a smaller batch, so each takes the minimum number of "
             "optimiser steps (probe_notes in the JSON)."] if small else []
    if below:
        lines.append(f"warning: {len(below)} probe(s) ended below chance on their own training data — they did not "
                     f"learn; do not read their test values: {', '.join(below)}.")
    return lines


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


def per_seed_n_text(cell: Mapping[str, Any]) -> str:
    """'40/—/38': the n of an :func:`aggregate` cell per seed, "—" for a seed without it (withdrawn there)."""
    return "/".join("—" if v is None else str(int(v)) for v in cell["per_seed"].values())


UNAVAILABLE = "unavailable"


def withdrawn_everywhere(result: Mapping[str, Any]) -> list[str]:
    """The families withdrawn by the minimum-cycle rule in every seed of ``result`` (no number anywhere)."""
    seeds = {int(s) for s in result["seeds"]}
    by_family: dict[str, set[int]] = {}
    for item in result.get("unavailable", []):
        by_family.setdefault(item["family"], set()).add(int(item["seed"]))
    return [family for family, withdrawn in by_family.items() if withdrawn == seeds]


def unavailable_table(result: Mapping[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """One row per withdrawn (family, seed) with its cycles per split (the counts that failed §D.5's minimum)
    and whether the experiment or the cycles build withdrew it."""
    splits = [result["config"][k] for k in ("train_split", "val_split", "test_split")]
    rows = [[family_label(item["family"]), item["seed"], *[item["cycles"].get(split, 0) for split in splits],
             item.get("withdrawn_by", "experiment")] for item in result.get("unavailable", [])]
    return ["family", "seed", *[f"{split} cycles" for split in splits], "withdrawn by"], rows


def write_outputs(out_dir: str | Path | None, name: str, result: Mapping[str, Any],
                  csv_rows: Sequence[Mapping[str, Any]], *, split: str | None = None) -> dict[str, str]:
    """``OUT/NAME.json`` (everything) and ``OUT/NAME.csv`` (one row per reported quantity), atomically.

    ``split``: the split every CSV value is computed on (a first column, so no number comes without one).
    """
    if out_dir is None:
        return {}
    if split is not None:
        csv_rows = [{"split": split, **row} for row in csv_rows]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": str(out / f"{name}.json"), "csv": str(out / f"{name}.csv")}
    write_table(paths["csv"], list(csv_rows))
    write_result(paths["json"], experiment_result({**result, "files": {**result.get("files", {}), **paths}}))
    return paths


def experiment_result(result: Mapping[str, Any]) -> CycleExperimentResult:
    """The typed record an experiment returns, as ``OUT/NAME.json`` holds it (no file written: ``files`` {})."""
    return CycleExperimentResult.from_dict({**result, "files": result.get("files", {})})


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
