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
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.analysis.cycles.experiment import (
    UNAVAILABLE,
    ExperimentConfig,
    SeedInputs,
    aggregate,
    check_seeds,
    experiment_result,
    family_splits,
    flat_rows,
    mean_sd,
    mean_sd_text,
    per_seed_n_text,
    run_settings,
    scorer_scores,
    select_families,
    split_cycle_eval,
    train_on,
    withdrawn_everywhere,
    write_outputs,
)
from vlaudit.analysis.cycles.plots import plot_transfer
from vlaudit.builders.cycles.build_steps import family_label
from vlaudit.records import Cycle
from vlaudit.results.cycles import CycleExperimentResult
from vlaudit.settings import CYCLE_SEEDS


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
                  notes: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Rows {train_family, test_family, off_diagonal, cycle_acc, alignment, n} of one seed over ``families``
    (those that passed :func:`select_families` in this seed)."""
    available = [(family, *family_splits(inputs, family, config)) for family in families]
    operators = {family: difference_operator(inputs, val) for family, _, val, _ in available}
    rows = []
    for family_i, train, val, _ in available:
        scorer = train_on(inputs, "lowrank", train, val, config.train(inputs.seed), rank=config.rank,
                          name=f"seed {inputs.seed}/{family_i}", notes=notes)
        for family_j, _, _, test in available:
            summary = split_cycle_eval(test, scorer_scores(scorer, inputs, test, config.device), config.test_split,
                                       tol=config.tol, seed=inputs.seed)[family_j]
            rows.append({"train_family": family_i, "test_family": family_j, "off_diagonal": family_i != family_j,
                         "cycle_acc": summary["cycle_acc"], "n": summary["n"],
                         "alignment": alignment(operators[family_i], operators[family_j])})
    return rows


def run_transfer(inputs: Mapping[int, SeedInputs], seeds: Sequence[int] = CYCLE_SEEDS, *,
                 config: ExperimentConfig | None = None, families: Sequence[str] | None = None,
                 out_dir: str | Path | None = None) -> CycleExperimentResult:
    """All seeds; per-pair rows (mean ± sd), within-seed correlation of alignment with transfer; JSON/CSV/heatmap.

    Returns the typed record ``transfer.json`` holds (:class:`~vlaudit.results.cycles.CycleExperimentResult`;
    ``files`` is empty without ``out_dir``)."""
    config = config or ExperimentConfig()
    seeds = check_seeds(seeds, inputs)
    kept, unavailable = select_families(inputs, seeds, config, families)
    per_seed: dict[int, list[dict[str, Any]]] = {}
    correlations: dict[str, float | None] = {}
    notes: list[dict[str, Any]] = []
    for seed in seeds:
        per_seed[seed] = seed_transfer(inputs[seed], config, kept[seed], notes)
        off = [r for r in per_seed[seed] if r["off_diagonal"] and r["alignment"] is not None]
        correlations[str(seed)] = pearson([r["alignment"] for r in off], [r["cycle_acc"] for r in off])
    rows = aggregate(per_seed, ("train_family", "test_family", "off_diagonal"), ("cycle_acc", "alignment", "n"))
    mean, sd, n = mean_sd(correlations.values())
    result: dict[str, Any] = {"experiment": "transfer", "split": config.test_split, "alignment_split": config.val_split,
              "seeds": seeds, "config": config.as_dict(), **run_settings(config, ("interaction",), inputs, seeds),
              "probe_notes": notes, "rows": rows, "min_cycles": config.min_cycles,
              "unavailable": unavailable,
              "correlation": {"per_seed": correlations, "mean": mean, "sd": sd, "n_seeds": n,
                              "what": "Pearson r of alignment (val) with transfer CycleAcc (test), off-diagonal pairs"}}
    if out_dir is not None:
        names = list(dict.fromkeys(r["train_family"] for r in rows))
        cells = {(r["train_family"], r["test_family"]): r["cycle_acc"]["mean"] for r in rows}
        matrix = [[cells.get((i, j)) for j in names] for i in names]
        points = [(r["alignment"]["mean"], r["cycle_acc"]["mean"]) for r in rows
                  if r["off_diagonal"] and r["alignment"]["mean"] is not None]
        plot = plot_transfer(names, matrix, points, Path(out_dir) / "transfer.png",
                             title=f"Rank-{config.rank} transfer (mean over seeds); "
                                   f"r(alignment, transfer) = {mean_sd_text(result['correlation'], 3)}")
        result["files"] = {"plot": str(plot)}
        result["files"].update(write_outputs(out_dir, "transfer", result,
                                             flat_rows(rows, ("train_family", "test_family", "off_diagonal"),
                                                       ("cycle_acc", "alignment", "n")),
                                             split=f"{config.test_split} (alignment: {config.val_split})"))
    return experiment_result(result)


def table_rows(result: Mapping[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """One row per ordered pair: train → test family, the test family's n per seed ("—" where withdrawn),
    transfer CycleAcc and alignment (mean ± sd); a family withdrawn in every seed gets one row reading
    "unavailable"."""
    out = [[family_label(r["train_family"]), family_label(r["test_family"]) + ("" if r["off_diagonal"] else " (same)"),
            per_seed_n_text(r["n"]),
            mean_sd_text(r["cycle_acc"], 3), mean_sd_text(r["alignment"], 3)] for r in result["rows"]]
    out += [[family_label(family), "—", "—", UNAVAILABLE, UNAVAILABLE] for family in withdrawn_everywhere(result)]
    return ["train family", "test family", "n test", "transfer CycleAcc (test)", "alignment (val)"], out
