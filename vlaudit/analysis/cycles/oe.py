"""``vlaudit experiment oe``: the shortcut-contaminated outlier-exposure stress test (cycle paper §5.5,
Tables 4 and 7, §E.3).

Model (§E.3): rank-r (default 64) bilinear score with additive image-only and caption-only heads,
s(x, y) = (Ux)ᵀ(Vy) + αᵀx + βᵀy + c; 8 epochs, batch 512, lr 1e-3, wd 1e-4. Per seed (own split), over the
chosen families' cycles pooled within each split:

* **Shortcut OE** — pair BCE; positives the matched pairs (u, v) of the training cycles, negatives the same
  image with its own caption prefixed by :data:`MARKER` (a clean text-marginal shortcut: the prefix alone
  separates the classes). Selected on the same construction over validation cycles by AUROC.
* **Cycle OE** — cycle loss softplus(−Δ) on the training cycles, selected by exact CycleAcc on validation cycles.
* **Four-entry BCE** — BCE of the four block logits against 1, 1, 0, 0 on the training cycles, selected by
  validation CycleAcc.
* **Text-only probe** — b(y) trained on the Shortcut OE data with §E.4's shortcut-probe settings (50 epochs,
  lr 1e-2): it solves the marked validation task (AUROC ≈ 1) and, by Theorem 1, is exactly ½ on every exact
  cycle.

Reported per seed: the marked-validation AUROC of every protocol, its selection value, the exact test CycleAcc
on the original unmarked captions, and the per-seed difference Cycle OE − Shortcut OE (Table 7); mean ± sample
sd across seeds (Table 4).

The pool of a seed holds only the families that pass the minimum-cycle rule there (§D.5: at least
``min_cycles`` validation cycles, and some train and test cycles); the withdrawn ones are listed as unavailable with their
counts, and a seed left with none reports no number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlaudit.analysis.cycles.across_seeds import (
    BELOW_CHANCE,
    SeedRow,
    Table,
    aggregate,
    flat_rows,
    json_rows,
    mean_sd_text,
    number,
    seed_aggregate,
)
from vlaudit.analysis.cycles.driver import run_cycle_experiment, run_fields
from vlaudit.analysis.cycles.experiment import (
    ExperimentConfig,
    SeedInputs,
    log_probe,
    scorer_scores,
    split_cycle_eval,
)
from vlaudit.analysis.cycles.plots import plot_oe
from vlaudit.errors import InputError
from vlaudit.probes.trainer import ProbeData, evaluate_auroc, fit_probe
from vlaudit.records import Cycle
from vlaudit.results.cycle_experiments import ExperimentRun, OeResult, OeRow, ProbeNote
from vlaudit.results.versioned import JsonValue
from vlaudit.settings import CYCLE_SEEDS

# §5.5: "prefixing the true caption with the marker “this is an out of distribution negative example.”" — the
# quoted period is part of the marker; a space separates it from the caption.
MARKER = "this is an out of distribution negative example. "
MARK_SUFFIX = "::ood-marked"


def marked_text(text: str) -> str:
    """The marked negative caption of §5.5: the marker prefixed to the true caption."""
    return MARKER + text


def caption_texts(cycles: Sequence[Cycle]) -> dict[str, str]:
    """caption_id → text from the cycles' ``text_1`` / ``text_2`` (what the marked captions are built from)."""
    texts: dict[str, str] = {}
    for cycle in cycles:
        for k, caption_id in (("1", cycle.caption_1), ("2", cycle.caption_2)):
            text = cycle.extra.get(f"text_{k}")
            if not isinstance(text, str):
                raise InputError("the OE marker needs the caption text", record=cycle.cycle_id, field=f"text_{k}")
            texts[caption_id] = text
    return texts


def marked_pairs(inputs: SeedInputs, cycles: Sequence[Cycle], name: str) -> ProbeData:
    """Positives: each matched (image, caption) once; negatives: (image, marked caption)."""
    matched = list(dict.fromkeys((u, v) for c in cycles for u, v, label in c.entries() if label))
    rows = [(inputs.image_row[u], inputs.caption_row[v], 1.0) for u, v in matched]
    missing = [v for _, v in matched if v + MARK_SUFFIX not in inputs.caption_row]
    if missing:
        raise InputError(f"no marked-caption features for caption {missing[0]!r} (and {len(missing) - 1} more)",
                         path=inputs.source, field="marked features")
    rows += [(inputs.image_row[u], inputs.caption_row[v + MARK_SUFFIX], 0.0) for u, v in matched]
    array = np.array(rows)
    return ProbeData(inputs.x, inputs.y, pairs=array[:, :2].astype(np.int64), labels=array[:, 2], name=name)


def seed_oe(inputs: SeedInputs, config: ExperimentConfig, families: Sequence[str],
            notes: list[ProbeNote] | None = None) -> list[SeedRow]:
    """Rows {protocol, val_metric, val_value, val_auroc, test_cycle_acc, test_tie_rate, n_test} of one seed, on
    the cycles of ``families`` (those that passed :func:`select_families` in this seed; none: no rows)."""
    if not families:
        return []
    train, val, test = (inputs.select(split, families) for split in config.splits)
    seed = inputs.seed
    pairs_train = marked_pairs(inputs, train, f"seed {seed}/shortcut/train")
    pairs_val = marked_pairs(inputs, val, f"seed {seed}/shortcut/val")
    cycles_train = inputs.probe_data(train, f"seed {seed}/cycles/train")
    cycles_val = inputs.probe_data(val, f"seed {seed}/cycles/val")
    runs = {
        "Shortcut OE": ("lowrank", pairs_train, pairs_val, config.train(seed, "pair_bce", "auroc"), "AUROC"),
        "Cycle OE": ("lowrank", cycles_train, cycles_val, config.train(seed, "cycle", "cycle_acc"), "CycleAcc"),
        "Four-entry BCE": ("lowrank", cycles_train, cycles_val, config.train(seed, "bce4", "cycle_acc"), "CycleAcc"),
        "Text-only probe": ("text", pairs_train, pairs_val, config.train(seed, "pair_bce", "auroc", "shortcut"),
                            "AUROC"),
    }
    rows: list[SeedRow] = []
    for protocol, (kind, train_data, val_data, train_config, metric) in runs.items():
        lowrank = kind == "lowrank"
        fitted = fit_probe(kind, train_data, val_data, train_config, rank=config.rank if lowrank else None,
                           additive_heads=lowrank)
        log_probe(notes, f"seed {seed}/{protocol}", fitted)
        summary = split_cycle_eval(test, scorer_scores(fitted.scorer, inputs, test, config.device), config.test_split,
                                   tol=config.tol, seed=seed)["overall"]
        rows.append({"protocol": protocol, "val_metric": metric, "val_value": fitted.best_value,
                     "best_epoch": fitted.best_epoch,
                     "val_auroc": evaluate_auroc(fitted.scorer, pairs_val, device=config.device),
                     "test_cycle_acc": summary.cycle_acc, "test_tie_rate": summary.tie_rate,
                     "n_test": summary.n, BELOW_CHANCE: fitted.below_chance})
    return rows


VALUES = ("val_value", "val_auroc", "test_cycle_acc", "test_tie_rate", "n_test")


@dataclass(frozen=True)
class OutlierExposure:
    """The shortcut-contaminated OE as an :class:`~vlaudit.analysis.cycles.driver.Experiment`; ``wanted``: the
    families asked for (None: every family), as the JSON records them."""

    wanted: tuple[str, ...] | None = None
    name: str = "oe"
    file_stem: str = "oe"
    kinds: tuple[str, ...] = ("interaction", "shortcut")

    def run_seed(self, inputs: SeedInputs, config: ExperimentConfig, families: Sequence[str],
                 notes: list[ProbeNote]) -> list[SeedRow]:
        return seed_oe(inputs, config, families, notes)

    def aggregate(self, per_seed: Mapping[int, Sequence[SeedRow]], run: ExperimentRun, config: ExperimentConfig,
                  families: Mapping[int, Sequence[str]]) -> OeResult:
        rows = [OeRow(protocol=str(protocol), val_metric=str(metric), val_value=cells["val_value"],
                      val_auroc=cells["val_auroc"], test_cycle_acc=cells["test_cycle_acc"],
                      test_tie_rate=cells["test_tie_rate"], n_test=cells["n_test"])
                for (protocol, metric), cells in aggregate(per_seed, ("protocol", "val_metric"), VALUES)]
        return OeResult(**run_fields(run), val_split=config.val_split, marker=MARKER,
                        families=None if self.wanted is None else list(self.wanted),
                        families_per_seed={str(s): list(kept) for s, kept in families.items()}, rows=rows,
                        difference_cycle_minus_shortcut=seed_aggregate(
                            {str(seed): _difference(rows_of_seed) for seed, rows_of_seed in per_seed.items()}))

    def write(self, result: OeResult, out_dir: Path, config: ExperimentConfig) -> dict[str, str]:
        plot = plot_oe(json_rows(result.rows), out_dir / "oe.png",
                       title=f"Shortcut-contaminated OE (rank {config.rank} + additive heads)")
        return {"plot": str(plot)}

    def csv(self, result: OeResult, config: ExperimentConfig) -> tuple[list[dict[str, JsonValue]], str | None]:
        difference = result.difference_cycle_minus_shortcut
        rows = flat_rows(result.rows, ("protocol", "val_metric"), VALUES)
        rows.append({"protocol": "Cycle OE − Shortcut OE", "val_metric": "test CycleAcc difference",
                     **{f"test_cycle_acc_seed_{s}": v for s, v in difference.per_seed.items()},
                     "test_cycle_acc_mean": difference.mean, "test_cycle_acc_sd": difference.sd,
                     "test_cycle_acc_n_seeds": difference.n_seeds})
        return rows, None


def _difference(rows: Sequence[SeedRow]) -> float | None:
    """One seed's test CycleAcc of Cycle OE minus Shortcut OE (None: the seed kept no family)."""
    test = {r["protocol"]: number(r["test_cycle_acc"]) for r in rows}
    cycle, shortcut = test.get("Cycle OE"), test.get("Shortcut OE")
    return None if cycle is None or shortcut is None else cycle - shortcut


def run_oe(inputs: Mapping[int, SeedInputs], seeds: Sequence[int] = CYCLE_SEEDS, *,
           config: ExperimentConfig | None = None, families: Sequence[str] | None = None,
           out_dir: str | Path | None = None) -> OeResult:
    """All seeds: rows per protocol (mean ± sd), per-seed Cycle − Shortcut differences; JSON + CSV + plot.

    Each :class:`SeedInputs` must hold the marked caption features under ``caption_id + MARK_SUFFIX``
    (see :func:`vlaudit.api.experiment_inputs.add_marked_features`). Returns the typed record ``oe.json``
    holds (:class:`~vlaudit.results.cycles.OeResult`; ``files`` is empty without ``out_dir``).
    """
    experiment = OutlierExposure(None if families is None else tuple(families))
    return run_cycle_experiment(experiment, inputs, seeds, config=config or ExperimentConfig(), families=families,
                                out_dir=out_dir)


def table_rows(result: OeResult) -> Table:
    """Table 4 layout: per protocol its selection value, marked-validation AUROC and test CycleAcc (mean ± sd)."""
    rows: list[list[object]] = [[r.protocol, f"{r.val_metric} {mean_sd_text(r.val_value, 3)}",
                                 mean_sd_text(r.val_auroc, 3), mean_sd_text(r.test_cycle_acc, 3)] for r in result.rows]
    return ["protocol", "selection (val)", "marked AUROC", "test CycleAcc"], rows


def seed_table_rows(result: OeResult) -> Table:
    """Table 7 layout: per seed the test CycleAcc of Shortcut OE and Cycle OE and their difference."""
    cells = {r.protocol: r.test_cycle_acc.per_seed for r in result.rows}
    diff = result.difference_cycle_minus_shortcut
    rows: list[list[object]] = [[s, _fmt(cells["Shortcut OE"][s]), _fmt(cells["Cycle OE"][s]), _fmt(diff.per_seed[s])]
                                for s in map(str, result.seeds)]
    means = {r.protocol: r.test_cycle_acc for r in result.rows}
    rows.append(["mean ± sd", mean_sd_text(means["Shortcut OE"], 3), mean_sd_text(means["Cycle OE"], 3),
                 mean_sd_text(diff, 3)])
    return ["seed", "Shortcut OE", "Cycle OE", "Cycle − Shortcut"], rows


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"
