"""``vlaudit experiment diagnostics``: frozen-feature exact-cycle diagnostics per family (cycle paper §5.2,
Table 2 and Table 8 layout).

Per seed (its own image-disjoint split) and family, all on the family's **test** cycles:

* the additive column — image-only a(x), text-only b(y) and additive a(x) + b(y) probes; §E.4's settings per
  kind: the additive audit probe 5 epochs (four-entry BCE on the training cycles, which, unlike the cycle loss,
  gives it gradient), the text-only and image-only shortcut probes 50 epochs at lr 1e-2, trained as §E.4 has
  them — *ordinary pair classification with shortcut-bearing negatives*: the family's matched training pairs
  against its swapped pairs whose caption (text-only) or image (image-only) features carry a fixed marker
  (:data:`~vlaudit.settings.SHORTCUT_MARKER_SD` sd along a seeded direction; not a paper setting). Their pair
  AUROC on the test split's pairs built the same way is reported beside their CycleAcc (``pair_auroc``): the
  marginal is highly predictive there and exactly invisible to CycleAcc (§E.4, Table 8). By
  Theorem 1 their contrast Δ is 0 up to float64 rounding on every retained complete block, so CycleAcc must be
  exactly 0.5 with tie rate 1. This is an implementation audit of the construction and filtering pipeline:
  any other value is flagged (``additive_audit.ok`` false, and the command exits non-zero);
* zero-shot cosine cos(x, y) of the frozen features (§E.2);
* trained diagonal, full bilinear and rank-r (default 64) bilinear probes: cycle loss softplus(−Δ), §E.3
  defaults (8 epochs, batch 512, lr 1e-3, wd 1e-4), the epoch selected by exact CycleAcc on the family's
  validation cycles.

A family with fewer than ``min_cycles`` validation cycles in a seed is withdrawn there (§D.5,
:func:`~vlaudit.analysis.cycles.experiment.select_families`) and reported as unavailable with its counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlaudit.analysis.cycles.across_seeds import (
    BELOW_CHANCE,
    UNAVAILABLE,
    SeedRow,
    Table,
    additive_audit,
    aggregate,
    flat_rows,
    json_rows,
    mean_sd_text,
    per_seed_n_text,
    withdrawn_everywhere,
)
from vlaudit.analysis.cycles.driver import run_cycle_experiment, run_fields
from vlaudit.analysis.cycles.experiment import (
    ExperimentConfig,
    SeedInputs,
    cosine_scores,
    family_splits,
    scorer_scores,
    split_cycle_eval,
    train_on,
    train_on_pairs,
)
from vlaudit.analysis.cycles.plots import plot_family_bars
from vlaudit.builders.cycles.build_steps import family_label
from vlaudit.probes.trainer import ProbeData, evaluate_auroc
from vlaudit.records import Cycle
from vlaudit.results.cycle_experiments import DiagnosticsResult, DiagnosticsRow, ExperimentRun, ProbeNote
from vlaudit.results.versioned import JsonValue
from vlaudit.settings import CYCLE_SEEDS, SHORTCUT_MARKER_SD

ADDITIVE_PROBES = ("image-only", "text-only", "additive")
SHORTCUT_PROBES = {"image-only": "image", "text-only": "text"}  # trained on ordinary pairs (§E.4)


def shortcut_marker(inputs: SeedInputs, side: str, train: Sequence[Cycle]) -> np.ndarray:
    """The marker a shortcut-bearing negative carries on ``side`` ("image" or "text"): a seeded unit direction
    scaled to :data:`SHORTCUT_MARKER_SD` sd of the training features' projections on it."""
    features = inputs.x if side == "image" else inputs.y
    rows = sorted({inputs.image_row[c.image_1] for c in train} | {inputs.image_row[c.image_2] for c in train}
                  if side == "image" else
                  {inputs.caption_row[c.caption_1] for c in train} | {inputs.caption_row[c.caption_2] for c in train})
    raw = np.random.default_rng([inputs.seed, 8]).standard_normal(features.shape[1])
    direction = np.asarray(raw / np.linalg.norm(raw), dtype=np.float64)
    spread = float(np.std(features[rows].astype(np.float64) @ direction)) or 1.0
    return (SHORTCUT_MARKER_SD * spread * direction).astype(np.float32)


def shortcut_pairs(inputs: SeedInputs, cycles: Sequence[Cycle], side: str, marker: np.ndarray, name: str
                   ) -> ProbeData:
    """Ordinary pair classification over ``cycles``: the matched pairs (label 1) and the swapped pairs (label 0),
    the negatives' ``side`` features shifted by ``marker`` — a marginal shortcut the cycles themselves lack."""
    index = inputs.probe_data(cycles, name).cycles
    assert index is not None  # probe_data always indexes its cycles
    images = np.concatenate([index[:, 0], index[:, 2], index[:, 0], index[:, 2]])
    captions = np.concatenate([index[:, 1], index[:, 3], index[:, 3], index[:, 1]])
    labels = np.repeat(np.array([1.0, 0.0], dtype=np.float32), 2 * len(index))
    x, y = inputs.x[images].copy(), inputs.y[captions].copy()
    if side == "image":
        x[labels == 0] += marker
    else:
        y[labels == 0] += marker
    pairs = np.stack([np.arange(len(labels)), np.arange(len(labels))], axis=1)
    return ProbeData(x, y, pairs=pairs, labels=labels, name=name)


_KIND = {"image-only": "image", "text-only": "text", "additive": "additive", "diagonal": "diagonal",
         "bilinear": "bilinear"}


VALUES = ("cycle_acc", "tie_rate", "n", "pair_auroc")


def probe_names(config: ExperimentConfig) -> tuple[str, ...]:
    return (*ADDITIVE_PROBES, "zero-shot cosine", "diagonal", "bilinear", f"rank-{config.rank}")


def seed_diagnostics(inputs: SeedInputs, config: ExperimentConfig, families: Sequence[str],
                     notes: list[ProbeNote] | None = None) -> list[SeedRow]:
    """Rows {family, probe, n, cycle_acc, ties, tie_rate} of one seed over ``families`` (those that passed
    :func:`select_families` in this seed); probe notes go to ``notes``."""
    rows: list[SeedRow] = []
    square = inputs.x.shape[1] == inputs.y.shape[1]
    for family in families:
        train, val, test = family_splits(inputs, family, config)
        for probe in probe_names(config):
            name = f"seed {inputs.seed}/{family}/{probe}"
            pair_auroc, below_chance = None, False
            if probe == "zero-shot cosine":
                if not square:
                    continue
                scores = cosine_scores(inputs, test)
            elif probe in SHORTCUT_PROBES:
                side = SHORTCUT_PROBES[probe]
                marker = shortcut_marker(inputs, side, train)
                fitted = train_on_pairs(side, shortcut_pairs(inputs, train, side, marker, f"{name}/train pairs"),
                                        config.train(inputs.seed, loss="pair_bce", select="last", kind="shortcut"),
                                        name=name, notes=notes)
                scorer, below_chance = fitted.scorer, fitted.below_chance
                pair_auroc = evaluate_auroc(scorer, shortcut_pairs(inputs, test, side, marker, f"{name}/test pairs"),
                                            device=config.device)
                scores = scorer_scores(scorer, inputs, test, config.device)
            else:
                if probe == "diagonal" and not square:
                    continue
                if probe in ADDITIVE_PROBES:
                    train_config = config.train(inputs.seed, loss="bce4", select="last",
                                                kind="additive" if probe == "additive" else "shortcut")
                else:
                    train_config = config.train(inputs.seed)
                kind = _KIND.get(probe, "lowrank")
                fitted = train_on(inputs, kind, train, val, train_config,
                                  rank=config.rank if kind == "lowrank" else None, name=name, notes=notes)
                scorer, below_chance = fitted.scorer, fitted.below_chance
                scores = scorer_scores(scorer, inputs, test, config.device)
            summary = split_cycle_eval(test, scores, config.test_split, tol=config.tol, seed=inputs.seed)[family]
            rows.append({"family": family, "probe": probe, "n": summary.n, "cycle_acc": summary.cycle_acc,
                         "ties": summary.ties, "tie_rate": summary.tie_rate, "pair_auroc": pair_auroc,
                         BELOW_CHANCE: below_chance})
    return rows


@dataclass(frozen=True)
class Diagnostics:
    """The diagnostics as an :class:`~vlaudit.analysis.cycles.driver.Experiment`."""

    name: str = "diagnostics"
    file_stem: str = "diagnostics"
    kinds: tuple[str, ...] = ("interaction", "additive", "shortcut")

    def run_seed(self, inputs: SeedInputs, config: ExperimentConfig, families: Sequence[str],
                 notes: list[ProbeNote]) -> list[SeedRow]:
        return seed_diagnostics(inputs, config, families, notes)

    def aggregate(self, per_seed: Mapping[int, Sequence[SeedRow]], run: ExperimentRun, config: ExperimentConfig,
                  families: Mapping[int, Sequence[str]]) -> DiagnosticsResult:
        rows = [DiagnosticsRow(family=str(family), probe=str(probe), cycle_acc=cells["cycle_acc"],
                               tie_rate=cells["tie_rate"], n=cells["n"], pair_auroc=cells["pair_auroc"])
                for (family, probe), cells in aggregate(per_seed, ("family", "probe"), VALUES)]
        audit = additive_audit(per_seed, lambda row: str(row["probe"]) if row["probe"] in ADDITIVE_PROBES else None)
        return DiagnosticsResult(**run_fields(run), probes=list(probe_names(config)), rows=rows, additive_audit=audit)

    def write(self, result: DiagnosticsResult, out_dir: Path, config: ExperimentConfig) -> dict[str, str]:
        plot = plot_family_bars(json_rows(result.rows), out_dir / "diagnostics.png",
                                title=f"Exact-cycle diagnostics ({config.test_split} cycles)")
        return {"plot": str(plot)}

    def csv(self, result: DiagnosticsResult, config: ExperimentConfig
            ) -> tuple[list[dict[str, JsonValue]], str | None]:
        return flat_rows(result.rows, ("family", "probe"), VALUES), config.test_split


def run_diagnostics(inputs: Mapping[int, SeedInputs], seeds: Sequence[int] = CYCLE_SEEDS, *,
                    config: ExperimentConfig | None = None, families: Sequence[str] | None = None,
                    out_dir: str | Path | None = None) -> DiagnosticsResult:
    """Run :func:`seed_diagnostics` for every seed; aggregate mean ± sample sd; write JSON + CSV (+ plot).

    Returns the typed record ``diagnostics.json`` holds (:class:`~vlaudit.results.cycles.DiagnosticsResult`;
    ``files`` is empty without ``out_dir``)."""
    return run_cycle_experiment(Diagnostics(), inputs, seeds, config=config or ExperimentConfig(),
                                families=families, out_dir=out_dir)


def shortcut_table_rows(result: DiagnosticsResult) -> Table:
    """§E.4 / Table 8: per family, each shortcut probe's pair AUROC (ordinary test pairs, shortcut-bearing
    negatives) beside its exact CycleAcc on the test cycles (mean ± sd over seeds)."""
    cells = {(r.family, r.probe): r for r in result.rows}
    families = list(dict.fromkeys(r.family for r in result.rows))
    out: list[list[object]] = []
    for family in families:
        row: list[object] = [family_label(family)]
        for probe in SHORTCUT_PROBES:
            cell = cells.get((family, probe))
            row += ["—", "—"] if cell is None else [mean_sd_text(cell.pair_auroc, 3), mean_sd_text(cell.cycle_acc, 3)]
        out.append(row)
    return ["family", "image AUROC", "image CycleAcc", "text AUROC", "text CycleAcc"], out


def table_rows(result: DiagnosticsResult) -> Table:
    """Table 2 layout: one row per family, one column per probe (mean ± sd over seeds), test n per seed ("—"
    for a seed that withdrew the family); a family withdrawn in every seed reads "unavailable" throughout."""
    probes = result.probes
    cells = {(r.family, r.probe): r for r in result.rows}
    families = list(dict.fromkeys(r.family for r in result.rows))
    out: list[list[object]] = []
    for family in families:
        first = next(r for r in result.rows if r.family == family)
        out.append([family_label(family), per_seed_n_text(first.n),
                    *[mean_sd_text(cells[(family, p)].cycle_acc, 3) if (family, p) in cells else "—" for p in probes]])
    out += [[family_label(family), "/".join("—" for _ in result.seeds), *[UNAVAILABLE] * len(probes)]
            for family in withdrawn_everywhere(result)]
    short = {"image-only": "image", "text-only": "text", "zero-shot cosine": "cosine", "diagonal": "diag."}
    return ["family", "n test", *[short.get(p, p) for p in probes]], out
