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
from pathlib import Path
from typing import Any

from vlaudit.analysis.cycles.experiment import (
    RANKS,
    UNAVAILABLE,
    ExperimentConfig,
    SeedInputs,
    aggregate,
    check_seeds,
    experiment_result,
    family_splits,
    flat_rows,
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
from vlaudit.analysis.cycles.plots import plot_rank_sweep
from vlaudit.builders.cycles.build_steps import family_label
from vlaudit.results.cycles import CycleExperimentResult
from vlaudit.settings import CYCLE_SEEDS


def seed_rank_sweep(inputs: SeedInputs, config: ExperimentConfig, ranks: Sequence[int], families: Sequence[str],
                    notes: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Rows {family, rank ('additive' for the reference probe), n, cycle_acc, tie_rate} of one seed over
    ``families`` (those that passed :func:`select_families` in this seed); probe notes go to ``notes``."""
    rows: list[dict[str, Any]] = []
    for family in families:
        train, val, test = family_splits(inputs, family, config)
        sweep: tuple[int | str, ...] = (*ranks, "additive")
        for rank in sweep:
            if rank == "additive":
                scorer = train_on(inputs, "additive", train, val,
                                  config.train(inputs.seed, "bce4", "last", kind="additive"),
                                  name=f"seed {inputs.seed}/{family}/additive", notes=notes)
            else:
                scorer = train_on(inputs, "lowrank", train, val, config.train(inputs.seed), rank=int(rank),
                                  name=f"seed {inputs.seed}/{family}/rank {rank}", notes=notes)
            summary = split_cycle_eval(test, scorer_scores(scorer, inputs, test, config.device), config.test_split,
                                       tol=config.tol, seed=inputs.seed)[family]
            rows.append({"family": family, "rank": rank, "n": summary["n"], "cycle_acc": summary["cycle_acc"],
                         "tie_rate": summary["tie_rate"]})
    return rows


def run_rank_sweep(inputs: Mapping[int, SeedInputs], seeds: Sequence[int] = CYCLE_SEEDS, *,
                   ranks: Sequence[int] = RANKS, config: ExperimentConfig | None = None,
                   families: Sequence[str] | None = None, out_dir: str | Path | None = None) -> CycleExperimentResult:
    """All seeds; rows per (family, rank) with per-seed values and mean ± sample sd; JSON + CSV + plot.

    Returns the typed record ``rank_sweep.json`` holds (:class:`~vlaudit.results.cycles.CycleExperimentResult`;
    ``files`` is empty without ``out_dir``)."""
    config = config or ExperimentConfig()
    seeds = check_seeds(seeds, inputs)
    ranks = [int(r) for r in ranks]
    if not ranks or min(ranks) < 1:
        raise ValueError(f"ranks must be ≥ 1, got {ranks}")
    kept, unavailable = select_families(inputs, seeds, config, families)
    notes: list[dict[str, Any]] = []
    per_seed = {seed: seed_rank_sweep(inputs[seed], config, ranks, kept[seed], notes) for seed in seeds}
    rows = aggregate(per_seed, ("family", "rank"), ("cycle_acc", "tie_rate", "n"))
    additive = [r for r in rows if r["rank"] == "additive"]
    audit_failures = [{"seed": s, "family": r["family"], "cycle_acc": v}
                      for r in additive for s, v in r["cycle_acc"]["per_seed"].items() if v is not None and v != 0.5]
    audit_failures += [{"seed": s, "family": r["family"], "tie_rate": v}
                       for r in additive for s, v in r["tie_rate"]["per_seed"].items() if v is not None and v != 1.0]
    result: dict[str, Any] = {"experiment": "rank-sweep", "split": config.test_split, "seeds": seeds, "ranks": ranks,
              "config": config.as_dict(), **run_settings(config, ("interaction", "additive"), inputs, seeds), "probe_notes": notes,
              "rows": [r for r in rows if r["rank"] != "additive"],
              "additive": additive, "min_cycles": config.min_cycles, "unavailable": unavailable,
              "additive_audit": {"ok": bool(additive) and not audit_failures, "failures": audit_failures}}
    if out_dir is not None:
        plot = plot_rank_sweep(result["rows"], Path(out_dir) / "rank_sweep.png",
                               title=f"Rank sweep: exact CycleAcc on {config.test_split} cycles")
        result["files"] = {"plot": str(plot)}
        result["files"].update(write_outputs(out_dir, "rank_sweep", result,
                                             flat_rows([{**r, "rank": str(r["rank"])} for r in rows], ("family", "rank"),
                                                       ("cycle_acc", "tie_rate", "n")),
                                             split=config.test_split))
    return experiment_result(result)


def table_rows(result: Mapping[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Table 3 layout: one row per family, its test n per seed ("—" where withdrawn), one column per rank, then
    the additive reference (mean ± sd); a family withdrawn in every seed reads "unavailable" throughout."""
    cells = {(r["family"], r["rank"]): r for r in [*result["rows"], *result["additive"]]}
    families = list(dict.fromkeys(r["family"] for r in result["rows"]))
    columns = [*result["ranks"], "additive"]
    out = [[family_label(family), per_seed_n_text(cells[(family, result["ranks"][0])]["n"]),
            *[mean_sd_text(cells[(family, k)]["cycle_acc"], 3) if (family, k) in cells else "—" for k in columns]]
           for family in families]
    out += [[family_label(family), "/".join("—" for _ in result["seeds"]), *[UNAVAILABLE] * len(columns)]
            for family in withdrawn_everywhere(result)]
    return ["family", "n test", *[f"r={k}" if k != "additive" else "additive" for k in columns]], out
