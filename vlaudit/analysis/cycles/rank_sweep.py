"""``vlaudit experiment rank-sweep``: low-rank bilinear recoverability (cycle paper §5.4, Table 3, Fig. 2).

Per seed and family: rank-r bilinear probes s = (Ux)ᵀ(Vy) + c for r in ``ranks`` (default 1, 2, 4, 8, 16, 32,
64), cycle loss, §E.3 optimisation, the epoch selected by exact CycleAcc on the family's validation cycles,
reported on its test cycles. If a relation is present but spread over several directions, CycleAcc rises with
r; if the representation does not expose it, no rank helps. The additive probe a(x) + b(y) (four-entry BCE)
is run alongside as the reference line: exactly ½ with tie rate 1 at any rank, by Theorem 1. A family with
fewer than ``min_cycles`` validation cycles in a seed is withdrawn there (§D.5) and reported as unavailable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

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
    RANKS,
    ExperimentConfig,
    SeedInputs,
    family_splits,
    scorer_scores,
    split_cycle_eval,
    train_on,
)
from vlaudit.analysis.cycles.plots import plot_rank_sweep
from vlaudit.builders.cycles.build_steps import family_label
from vlaudit.results.cycle_experiments import ExperimentRun, ProbeNote, RankSweepResult, RankSweepRow
from vlaudit.results.versioned import JsonValue
from vlaudit.settings import CYCLE_SEEDS

VALUES = ("cycle_acc", "tie_rate", "n")


def seed_rank_sweep(inputs: SeedInputs, config: ExperimentConfig, ranks: Sequence[int], families: Sequence[str],
                    notes: list[ProbeNote] | None = None) -> list[SeedRow]:
    """Rows {family, rank ('additive' for the reference probe), n, cycle_acc, tie_rate} of one seed over
    ``families`` (those that passed :func:`select_families` in this seed); probe notes go to ``notes``."""
    rows: list[SeedRow] = []
    for family in families:
        train, val, test = family_splits(inputs, family, config)
        sweep: tuple[int | str, ...] = (*ranks, "additive")
        for rank in sweep:
            if rank == "additive":
                fitted = train_on(inputs, "additive", train, val,
                                  config.train(inputs.seed, "bce4", "last", kind="additive"),
                                  name=f"seed {inputs.seed}/{family}/additive", notes=notes)
            else:
                fitted = train_on(inputs, "lowrank", train, val, config.train(inputs.seed), rank=int(rank),
                                  name=f"seed {inputs.seed}/{family}/rank {rank}", notes=notes)
            summary = split_cycle_eval(test, scorer_scores(fitted.scorer, inputs, test, config.device),
                                       config.test_split, tol=config.tol, seed=inputs.seed)[family]
            rows.append({"family": family, "rank": rank, "n": summary.n, "cycle_acc": summary.cycle_acc,
                         "tie_rate": summary.tie_rate, BELOW_CHANCE: fitted.below_chance})
    return rows


@dataclass(frozen=True)
class RankSweep:
    """The rank sweep as an :class:`~vlaudit.analysis.cycles.driver.Experiment` over ``ranks``."""

    ranks: tuple[int, ...]
    name: str = "rank-sweep"
    file_stem: str = "rank_sweep"
    kinds: tuple[str, ...] = ("interaction", "additive")

    def run_seed(self, inputs: SeedInputs, config: ExperimentConfig, families: Sequence[str],
                 notes: list[ProbeNote]) -> list[SeedRow]:
        return seed_rank_sweep(inputs, config, self.ranks, families, notes)

    def aggregate(self, per_seed: Mapping[int, Sequence[SeedRow]], run: ExperimentRun, config: ExperimentConfig,
                  families: Mapping[int, Sequence[str]]) -> RankSweepResult:
        rows = [RankSweepRow(family=str(family), rank=rank if isinstance(rank, int) else "additive", **cells)
                for (family, rank), cells in aggregate(per_seed, ("family", "rank"), VALUES)]
        return RankSweepResult(**run_fields(run), ranks=list(self.ranks),
                               rows=[r for r in rows if r.rank != "additive"],
                               additive=[r for r in rows if r.rank == "additive"],
                               additive_audit=additive_audit(
                                   per_seed, lambda row: "additive" if row["rank"] == "additive" else None))

    def write(self, result: RankSweepResult, out_dir: Path, config: ExperimentConfig) -> dict[str, str]:
        plot = plot_rank_sweep(json_rows(result.rows), out_dir / "rank_sweep.png",
                               title=f"Rank sweep: exact CycleAcc on {config.test_split} cycles")
        return {"plot": str(plot)}

    def csv(self, result: RankSweepResult, config: ExperimentConfig) -> tuple[list[dict[str, JsonValue]], str | None]:
        rows = flat_rows([*result.rows, *result.additive], ("family", "rank"), VALUES)
        return [{**row, "rank": str(row["rank"])} for row in _in_key_order(rows, result)], config.test_split


def _in_key_order(rows: list[dict[str, JsonValue]], result: RankSweepResult) -> list[dict[str, JsonValue]]:
    """The CSV rows in the order the seeds produced them (per family: every rank, then the additive line)."""
    families = list(dict.fromkeys(r.family for r in [*result.rows, *result.additive]))
    order = {(family, rank): i for i, (family, rank) in enumerate(
        (f, k) for f in families for k in [*result.ranks, "additive"])}
    return sorted(rows, key=lambda row: order.get((str(row["family"]), row["rank"]), len(order)))


def run_rank_sweep(inputs: Mapping[int, SeedInputs], seeds: Sequence[int] = CYCLE_SEEDS, *,
                   ranks: Sequence[int] = RANKS, config: ExperimentConfig | None = None,
                   families: Sequence[str] | None = None, out_dir: str | Path | None = None) -> RankSweepResult:
    """All seeds; rows per (family, rank) with per-seed values and mean ± sample sd; JSON + CSV + plot.

    Returns the typed record ``rank_sweep.json`` holds (:class:`~vlaudit.results.cycles.RankSweepResult`;
    ``files`` is empty without ``out_dir``)."""
    rank_list = tuple(int(r) for r in ranks)
    if not rank_list or min(rank_list) < 1:
        raise ValueError(f"ranks must be ≥ 1, got {list(rank_list)}")
    return run_cycle_experiment(RankSweep(rank_list), inputs, seeds, config=config or ExperimentConfig(),
                                families=families, out_dir=out_dir)


def table_rows(result: RankSweepResult) -> Table:
    """Table 3 layout: one row per family, its test n per seed ("—" where withdrawn), one column per rank, then
    the additive reference (mean ± sd); a family withdrawn in every seed reads "unavailable" throughout."""
    cells = {(r.family, r.rank): r for r in [*result.rows, *result.additive]}
    families = list(dict.fromkeys(r.family for r in result.rows))
    columns: list[int | Literal["additive"]] = [*result.ranks, "additive"]
    out: list[list[object]] = [
        [family_label(family), per_seed_n_text(cells[(family, result.ranks[0])].n),
         *[mean_sd_text(cells[(family, k)].cycle_acc, 3) if (family, k) in cells else "—" for k in columns]]
        for family in families]
    out += [[family_label(family), "/".join("—" for _ in result.seeds), *[UNAVAILABLE] * len(columns)]
            for family in withdrawn_everywhere(result)]
    return ["family", "n test", *[f"r={k}" if k != "additive" else "additive" for k in columns]], out
