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

Reported numbers per seed are aggregated by :func:`~vlaudit.analysis.cycles.across_seeds.aggregate`: mean and *sample* standard deviation (ddof = 1)
across the seeds where the quantity exists (``n_seeds`` says how many; sd is None for one seed).

All exact CycleAcc values go through :func:`split_cycle_eval`, which calls the split-aware
:func:`vlaudit.metrics.cycles.evaluate_cycle_families` on one split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from vlaudit.analysis.cycles.provenance import BUILD_PROVENANCE as BUILD_PROVENANCE
from vlaudit.analysis.cycles.provenance import PAPER_VALUES
from vlaudit.analysis.cycles.provenance import cycle_builds as cycle_builds
from vlaudit.analysis.cycles.provenance import settings_lines as settings_lines
from vlaudit.analysis.cycles.seed_inputs import SeedInputs as SeedInputs
from vlaudit.errors import InputError
from vlaudit.metrics.cycles import (
    DEFAULT_MIN_CYCLES,
    DEFAULT_TOL,
    block_scores,
    cycle_contrast,
    cycle_counts,
    evaluate_cycle_families,
    summarize_contrasts,
    withdraw_small_families,
)
from vlaudit.probes.trainer import OPTIMIZER, ProbeData, TrainConfig, TrainResult, fit_probe, score_index
from vlaudit.records import Cycle
from vlaudit.results.cycle_experiments import (
    PaperSetting,
    ProbeNote,
    ProbeRun,
    ProbeSettings,
    SettingsProvenance,
    Withdrawn,
)
from vlaudit.results.cycles import CycleAccCell, Setting
from vlaudit.scoring.features import Features, cosine_rows
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
        return TrainConfig(epochs=settings.epochs, batch_size=self.batch_size, lr=settings.lr,
                           weight_decay=self.weight_decay, seed=seed, loss=loss, select=select, device=self.device,
                           tol=self.tol, min_steps=self.min_steps)

    def probe_settings(self, kinds: Sequence[str] = ("interaction", "additive", "shortcut")
                       ) -> dict[str, ProbeSettings]:
        """Per probe kind a run trains (``kinds``): epochs, lr, batch, weight decay and the section stating them
        (the run's JSON)."""
        def kind(epochs: int, lr: float, paper: str) -> ProbeSettings:
            return ProbeSettings(epochs=epochs, lr=lr, batch_size=self.batch_size, weight_decay=self.weight_decay,
                                 min_steps=self.min_steps, paper=paper)

        every = {"interaction": kind(self.epochs, self.lr, "cycle §E.3"),
                 "additive": kind(self.additive_epochs, self.lr, "cycle §E.4"),
                 "shortcut": kind(self.shortcut_epochs, self.shortcut_lr, "cycle §E.4")}
        return {name: every[name] for name in kinds}

    def settings_provenance(self) -> SettingsProvenance:
        """Every setting of the run, sorted by where it comes from: ``paper`` (equal to the value the cycle paper
        states, with its section), ``departs`` (the paper states another value: both are given) and
        ``not_in_paper`` (vlaudit's own: the paper states none)."""
        paper: dict[str, PaperSetting] = {}
        departs: dict[str, PaperSetting] = {}
        own: dict[str, Setting] = {}
        for name, value in self.as_dict().items():
            if name in PAPER_VALUES:
                paper_value, section = PAPER_VALUES[name]
                cell = PaperSetting(value=value, paper=paper_value, section=section)
                (paper if value == paper_value else departs)[name] = cell
            else:
                own[name] = value
        own["optimizer"] = OPTIMIZER  # the paper states epochs, batch, lr and weight decay (§E.3), no optimiser
        return SettingsProvenance(paper=paper, departs=departs, not_in_paper=own)

    def as_dict(self) -> dict[str, Setting]:
        """The settings as the run's JSON writes them (``config``)."""
        return dict(asdict(self))


PROBE_KINDS = ("interaction", "additive", "shortcut")  # §E.3 probes; §E.4 additive audit; §E.4 image/text-only


def split_cycle_eval(cycles: Sequence[Cycle], scores: Mapping[tuple[str, str], float], split: str, *,
                     tol: float = DEFAULT_TOL, seed: int = 0) -> dict[str, CycleAccCell]:
    """family → CycleAcc cell (n, cycle_acc, ties, tie_rate, ci) on the cycles of ``split`` only (never pooled
    across splits), from ``evaluate_cycle_families(cycles, scores, splits=[split])``; key ``"overall"``: every
    family of that split
    together (one contrast per cycle of the split, summarised by :func:`summarize_contrasts`). Empty when
    ``cycles`` has none of ``split``.

    The minimum-cycle rule is not applied here: it needs the train and val counts too, so the experiments apply
    it before training (:func:`select_families`) and every family they pass in is evaluated (``min_cycles=1``).
    """
    chosen = [c for c in cycles if c.split == split]
    if not chosen:
        return {}
    result = evaluate_cycle_families(chosen, scores, splits=[split], min_cycles=1, tol=tol,
                                     n_resamples=N_RESAMPLES, seed=seed)
    out = {family: cells[split] for family, cells in result.families.items()}
    matrix = block_scores(chosen, scores)
    delta = cycle_contrast(matrix[:, 0], matrix[:, 1], matrix[:, 2], matrix[:, 3])
    out["overall"] = summarize_contrasts(delta, tol=tol, n_resamples=N_RESAMPLES, seed=seed)
    return out


def select_families(inputs: Mapping[int, SeedInputs], seeds: Sequence[int], config: ExperimentConfig,
                    wanted: Sequence[str] | None = None) -> tuple[dict[int, list[str]], list[Withdrawn]]:
    """Per seed, the families that pass the minimum-cycle rule (§D.5), and the withdrawn ones.

    A family (``wanted``, default every family of any seed's cycles or build withdrawals) with fewer than
    ``config.min_cycles`` cycles in the validation split of a seed, or none in its train or test split
    (:func:`withdraw_small_families` over :func:`cycle_counts`), is withdrawn whole in that seed: returned as a
    :class:`~vlaudit.results.cycles.Withdrawn` record (its cycles per split, ``withdrawn_by="experiment"``) and
    given no number there. A family the cycles build already withdrew (absent from the file, in
    :attr:`SeedInputs.built_unavailable`) is listed with the build's counts and ``withdrawn_by="build"``. A wanted family unknown to every seed, or no family left in any seed, is an
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
    unavailable: list[Withdrawn] = []
    for seed in seeds:
        counts = cycle_counts([c for c in inputs[seed].cycles if c.split in splits and c.family in names])
        withdrawn = withdraw_small_families({f: counts.get(f, {}) for f in names}, splits, config.min_cycles,
                                            validation_split=config.val_split)
        kept[seed] = [f for f in names if f not in withdrawn]
        for family in (f for f in names if f in withdrawn):
            built = inputs[seed].built_unavailable.get(family) if family not in counts else None
            if built is None:
                unavailable.append(Withdrawn(family=family, seed=seed, cycles=withdrawn[family],
                                             withdrawn_by="experiment"))
            else:
                unavailable.append(Withdrawn(family=family, seed=seed, withdrawn_by="build",
                                             cycles={split: int(built.get(split, 0)) for split in splits}))
    if not any(kept.values()):
        raise InputError(f"no family has {config.min_cycles} {config.val_split} cycles (and some in "
                         f"{config.train_split} and {config.test_split}) in any seed "
                         f"(cycle paper §D.5; lower --min-cycles for small inputs): "
                         + "; ".join(f"{u.family} seed {u.seed} {u.cycles}" for u in unavailable),
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
    """Zero-shot cos(image, caption) in float64 via :func:`vlaudit.scoring.features.cosine_rows`."""
    features = Features(inputs.image_ids, inputs.x, inputs.caption_ids, inputs.y, {})
    rows = cosine_rows(features, cycles, source=inputs.source)
    return {(r["image_id"], r["caption_id"]): r["score"] for r in rows}


def family_splits(inputs: SeedInputs, family: str | Sequence[str], config: ExperimentConfig
                  ) -> tuple[list[Cycle], list[Cycle], list[Cycle]]:
    """The train, val and test cycles of ``family`` (one name or several, pooled within each split)."""
    return (inputs.select(config.train_split, family), inputs.select(config.val_split, family),
            inputs.select(config.test_split, family))


class ProbeLog(list[ProbeNote]):
    """The probe notes of a run (a list of :class:`ProbeNote`) and, in :attr:`runs`, every trained probe's batch
    and steps as run (:class:`ProbeRun`)."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[ProbeRun] = []


def log_probe(notes: list[ProbeNote] | None, name: str, result: TrainResult) -> TrainResult:
    """Append ``result``'s notes to ``notes`` and, when it is a :class:`ProbeLog`, its batch and steps."""
    if notes is not None:
        notes.extend(ProbeNote(probe=name, note=note) for note in result.notes)
    if isinstance(notes, ProbeLog) and result.batch_size is not None:  # None: nothing to fit (a fixed scorer)
        notes.runs.append(ProbeRun(probe=name, n_train=result.n_units, batch_size=result.batch_size, steps=result.steps,
                                   below_chance=result.below_chance))
    return result


def train_on(inputs: SeedInputs, kind: str, train: Sequence[Cycle], val: Sequence[Cycle], config: TrainConfig, *,
             rank: int | None = None, additive_heads: bool = False, name: str = "",
             notes: list[ProbeNote] | None = None) -> TrainResult:
    """:func:`fit_probe` on the index arrays of ``train`` / ``val`` cycles; returns the training result (its
    ``scorer``, ``below_chance``) and logs the run in ``notes`` (:func:`log_probe`)."""
    result = fit_probe(kind, inputs.probe_data(train, f"{name}/train"),
                       inputs.probe_data(val, f"{name}/val") if val else None, config, rank=rank,
                       additive_heads=additive_heads)
    return log_probe(notes, name, result)


def train_on_pairs(kind: str, train: ProbeData, config: TrainConfig, *, name: str = "",
                   notes: list[ProbeNote] | None = None) -> TrainResult:
    """:func:`fit_probe` on labelled pairs (pair BCE, final epoch), logged in ``notes`` as in :func:`train_on`."""
    return log_probe(notes, name, fit_probe(kind, train, None, config))


def probe_notes_summary(notes: Sequence[ProbeNote]) -> list[str]:
    """Console paragraphs for a run's probe notes: how many probes ran with a smaller batch, and which ended
    below chance on their own training data (every note is in ``probe_notes`` of the JSON)."""
    small = sum(1 for n in notes if n.note.startswith("small training set"))
    below = [n.probe for n in notes if n.note.startswith("warning")]
    lines = [f"{small} probe(s) had small training sets: a smaller batch, so each takes the minimum number of "
             "optimiser steps (probe_notes in the JSON; every probe's batch and steps in probe_runs)."] if small else []
    if below:
        lines.append(f"warning: {len(below)} probe(s) ended below chance on their own training data — they did not "
                     f"learn; their test values are left out of mean ± sd (left_out in the JSON): "
                     f"{', '.join(below)}.")
    return lines


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
