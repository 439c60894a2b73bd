"""``vlaudit experiment transfer``: transfer alignment between cycle families (cycle paper §5.6).

For every ordered off-diagonal family pair (i, j) and seed: a rank-r (default 64) bilinear probe is trained on
family i (cycle loss, §E.3 optimisation, selected on family i's validation cycles) and its exact CycleAcc is
measured on the **test** cycles of family j (the diagonal i = j is reported too, as the in-family reference,
and kept out of the correlation).

Cycle-difference alignment (the paper names it without a formula; operationalised here). For a bilinear score
Δ = (x₁ − x₂)ᵀ W (y₁ − y₂) = ⟨W, (x₁ − x₂)(y₁ − y₂)ᵀ⟩_F (Proposition A.2), so what a family asks of W is
summarised by its mean cycle-difference operator on the **validation** cycles,

    M_f = mean over val cycles of f of (x₁ − x₂)(y₁ − y₂)ᵀ,

which is also the direction of the cycle loss gradient at W = 0. The alignment of families i and j is the
Frobenius cosine A(i, j) = ⟨M_i, M_j⟩_F / (‖M_i‖_F ‖M_j‖_F) ∈ [−1, 1]: 1 when the two families ask for the same
coupling, 0 when unrelated, negative when they ask for opposite ones. Within each seed, the Pearson
correlation between A(i, j) and the transfer CycleAcc over the ordered off-diagonal pairs is computed; the
report gives it per seed and as mean ± sample sd across seeds. The pairs share families and probes, so the
correlation is descriptive, not a test.

A family with fewer than ``min_cycles`` validation cycles in a seed is withdrawn there (§D.5): it is neither
trained on nor tested on in that seed, and is reported as unavailable.
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
    aggregate,
    flat_rows,
    mean_sd,
    mean_sd_text,
    number,
    per_seed_n_text,
    withdrawn_everywhere,
)
from vlaudit.analysis.cycles.driver import run_cycle_experiment, run_fields
from vlaudit.analysis.cycles.experiment import (
    ExperimentConfig,
    SeedInputs,
    family_splits,
    scorer_scores,
    split_cycle_eval,
    train_on,
)
from vlaudit.analysis.cycles.plots import plot_transfer
from vlaudit.builders.cycles.build_steps import family_label
from vlaudit.records import Cycle
from vlaudit.results.cycle_experiments import (
    ExperimentRun,
    ProbeNote,
    TransferCorrelation,
    TransferResult,
    TransferRow,
)
from vlaudit.results.versioned import JsonValue
from vlaudit.settings import CYCLE_SEEDS

KEYS = ("train_family", "test_family", "off_diagonal")
VALUES = ("cycle_acc", "alignment", "n")
CORRELATION = "Pearson r of alignment (val) with transfer CycleAcc (test), off-diagonal pairs"


def difference_operator(inputs: SeedInputs, cycles: Sequence[Cycle]) -> np.ndarray:
    """M = mean (x₁ − x₂)(y₁ − y₂)ᵀ over ``cycles``, float64 (d_x, d_y)."""
    index = inputs.probe_data(cycles, "alignment").cycles
    assert index is not None  # probe_data always indexes the cycles it is given
    x, y = inputs.x.astype(np.float64), inputs.y.astype(np.float64)
    dx = x[index[:, 0]] - x[index[:, 2]]
    dy = y[index[:, 1]] - y[index[:, 3]]
    return dx.T @ dy / len(index)


def alignment(m_i: np.ndarray, m_j: np.ndarray) -> float | None:
    """Frobenius cosine ⟨M_i, M_j⟩ / (‖M_i‖ ‖M_j‖); None when either operator is zero."""
    norm = float(np.linalg.norm(m_i) * np.linalg.norm(m_j))
    return None if norm == 0.0 else float(np.sum(m_i * m_j) / norm)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson correlation; None with fewer than 3 points or a constant variable."""
    a, b = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
    if len(a) < 3 or a.std() == 0 or b.std() == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def seed_transfer(inputs: SeedInputs, config: ExperimentConfig, families: Sequence[str],
                  notes: list[ProbeNote] | None = None) -> list[SeedRow]:
    """Rows {train_family, test_family, off_diagonal, cycle_acc, alignment, n} of one seed over ``families``
    (those that passed :func:`select_families` in this seed)."""
    available = [(family, *family_splits(inputs, family, config)) for family in families]
    operators = {family: difference_operator(inputs, val) for family, _, val, _ in available}
    rows: list[SeedRow] = []
    for family_i, train, val, _ in available:
        fitted = train_on(inputs, "lowrank", train, val, config.train(inputs.seed), rank=config.rank,
                          name=f"seed {inputs.seed}/{family_i}", notes=notes)
        for family_j, _, _, test in available:
            summary = split_cycle_eval(test, scorer_scores(fitted.scorer, inputs, test, config.device),
                                       config.test_split, tol=config.tol, seed=inputs.seed)[family_j]
            rows.append({"train_family": family_i, "test_family": family_j, "off_diagonal": family_i != family_j,
                         "cycle_acc": summary.cycle_acc, "n": summary.n,
                         "alignment": alignment(operators[family_i], operators[family_j]),
                         BELOW_CHANCE: fitted.below_chance})
    return rows


def seed_correlation(rows: Sequence[SeedRow]) -> float | None:
    """One seed's Pearson r of alignment with transfer CycleAcc over its off-diagonal pairs."""
    off = [(number(r["alignment"]), number(r["cycle_acc"])) for r in rows if r["off_diagonal"]]
    points = [(a, c) for a, c in off if a is not None and c is not None]
    return pearson([a for a, _ in points], [c for _, c in points])


@dataclass(frozen=True)
class Transfer:
    """Transfer as an :class:`~vlaudit.analysis.cycles.driver.Experiment`."""

    name: str = "transfer"
    file_stem: str = "transfer"
    kinds: tuple[str, ...] = ("interaction",)

    def run_seed(self, inputs: SeedInputs, config: ExperimentConfig, families: Sequence[str],
                 notes: list[ProbeNote]) -> list[SeedRow]:
        return seed_transfer(inputs, config, families, notes)

    def aggregate(self, per_seed: Mapping[int, Sequence[SeedRow]], run: ExperimentRun, config: ExperimentConfig,
                  families: Mapping[int, Sequence[str]]) -> TransferResult:
        rows = [TransferRow(train_family=str(train), test_family=str(test), off_diagonal=bool(off),
                            cycle_acc=cells["cycle_acc"], alignment=cells["alignment"], n=cells["n"])
                for (train, test, off), cells in aggregate(per_seed, KEYS, VALUES)]
        correlations = {str(seed): seed_correlation(rows_of_seed) for seed, rows_of_seed in per_seed.items()}
        mean, sd, n = mean_sd(correlations.values())
        return TransferResult(**run_fields(run), alignment_split=config.val_split, rows=rows,
                              correlation=TransferCorrelation(per_seed=correlations, mean=mean, sd=sd, n_seeds=n,
                                                              what=CORRELATION))

    def write(self, result: TransferResult, out_dir: Path, config: ExperimentConfig) -> dict[str, str]:
        names = list(dict.fromkeys(r.train_family for r in result.rows))
        cells = {(r.train_family, r.test_family): r.cycle_acc.mean for r in result.rows}
        matrix = [[cells.get((i, j)) for j in names] for i in names]
        points = [(r.alignment.mean, r.cycle_acc.mean) for r in result.rows
                  if r.off_diagonal and r.alignment.mean is not None and r.cycle_acc.mean is not None]
        plot = plot_transfer(names, matrix, points, out_dir / "transfer.png",
                             title=f"Rank-{config.rank} transfer (mean over seeds); "
                                   f"r(alignment, transfer) = {mean_sd_text(result.correlation, 3)}")
        return {"plot": str(plot)}

    def csv(self, result: TransferResult, config: ExperimentConfig) -> tuple[list[dict[str, JsonValue]], str | None]:
        return flat_rows(result.rows, KEYS, VALUES), f"{config.test_split} (alignment: {config.val_split})"


def run_transfer(inputs: Mapping[int, SeedInputs], seeds: Sequence[int] = CYCLE_SEEDS, *,
                 config: ExperimentConfig | None = None, families: Sequence[str] | None = None,
                 out_dir: str | Path | None = None) -> TransferResult:
    """All seeds; per-pair rows (mean ± sd), within-seed correlation of alignment with transfer; JSON/CSV/heatmap.

    Returns the typed record ``transfer.json`` holds (:class:`~vlaudit.results.cycles.TransferResult`;
    ``files`` is empty without ``out_dir``)."""
    return run_cycle_experiment(Transfer(), inputs, seeds, config=config or ExperimentConfig(), families=families,
                                out_dir=out_dir)


def table_rows(result: TransferResult) -> Table:
    """One row per ordered pair: train → test family, the test family's n per seed ("—" where withdrawn),
    transfer CycleAcc and alignment (mean ± sd); a family withdrawn in every seed gets one row reading
    "unavailable"."""
    out: list[list[object]] = [
        [family_label(r.train_family), family_label(r.test_family) + ("" if r.off_diagonal else " (same)"),
         per_seed_n_text(r.n), mean_sd_text(r.cycle_acc, 3), mean_sd_text(r.alignment, 3)] for r in result.rows]
    out += [[family_label(family), "—", "—", UNAVAILABLE, UNAVAILABLE] for family in withdrawn_everywhere(result)]
    return ["train family", "test family", "n test", "transfer CycleAcc (test)", "alignment (val)"], out
