"""Known answers of the cycle-paper experiments on planted frozen features (no encoder involved)."""

from __future__ import annotations

import numpy as np
import pytest
from experiment_planted import merge, planted_inputs

from vlaudit.experiments import cycle_diagnostics, cycle_oe, cycle_rank_sweep, cycle_transfer
from vlaudit.experiments.cycle_common import ExperimentConfig, aggregate, mean_sd

# The planted problems are small: a larger step than §E.3's lr 1e-3 converges in a few hundred updates.
FAST = ExperimentConfig(epochs=10, lr=3e-2, batch_size=256, rank=8)


@pytest.fixture(autouse=True)
def _threads(one_torch_thread: None) -> None:
    return None


def test_rank_sweep_recovers_a_rank_4_interaction() -> None:
    inputs = {s: planted_inputs(s) for s in (0, 1)}
    result = cycle_rank_sweep.run_rank_sweep(inputs, (0, 1), ranks=(1, 4, 8), config=FAST)
    acc = {r["rank"]: r["cycle_acc"] for r in result["rows"]}
    for seed in ("0", "1"):
        assert acc[4]["per_seed"][seed] > acc[1]["per_seed"][seed] + 0.08
        assert acc[8]["per_seed"][seed] > acc[1]["per_seed"][seed] + 0.08
    assert acc[4]["mean"] > 0.75 and acc[1]["mean"] < 0.72
    additive = result["additive"][0]
    assert additive["cycle_acc"]["per_seed"] == {"0": 0.5, "1": 0.5} and result["additive_audit"]["ok"]


def test_additive_only_signal_is_exactly_half_at_every_rank() -> None:
    # Bag-of-words captions: both captions of each block encode identically, so only additive (image-only and
    # caption-only) information is left and every contrast is exactly 0 — at any rank, after any training.
    inputs = {s: planted_inputs(s, bag=True) for s in (0, 1)}
    result = cycle_rank_sweep.run_rank_sweep(inputs, (0, 1), ranks=(1, 2, 4, 8, 16), config=FAST)
    for row in [*result["rows"], *result["additive"]]:
        assert set(row["cycle_acc"]["per_seed"].values()) == {0.5}, row
        assert set(row["tie_rate"]["per_seed"].values()) == {1.0}, row
        assert row["cycle_acc"]["sd"] == 0.0


def test_shortcut_oe_solves_its_validation_but_transfers_worse_than_cycle_oe() -> None:
    inputs = {s: planted_inputs(s, marker_delta=6.0) for s in (0, 1, 2)}
    result = cycle_oe.run_oe(inputs, (0, 1, 2), config=FAST)
    rows = {r["protocol"]: r for r in result["rows"]}
    shortcut, cycle, text = rows["Shortcut OE"], rows["Cycle OE"], rows["Text-only probe"]
    assert shortcut["val_metric"] == "AUROC" and cycle["val_metric"] == "CycleAcc"
    for seed in ("0", "1", "2"):
        assert shortcut["val_auroc"]["per_seed"][seed] > 0.99
        assert text["val_auroc"]["per_seed"][seed] > 0.99
        assert shortcut["test_cycle_acc"]["per_seed"][seed] < cycle["test_cycle_acc"]["per_seed"][seed]
        assert text["test_cycle_acc"]["per_seed"][seed] == 0.5  # a text-only score is blind to cycles
        assert text["test_tie_rate"]["per_seed"][seed] == 1.0
    diff = result["difference_cycle_minus_shortcut"]
    expected = [cycle["test_cycle_acc"]["per_seed"][s] - shortcut["test_cycle_acc"]["per_seed"][s] for s in "012"]
    assert list(diff["per_seed"].values()) == pytest.approx(expected)
    assert diff["mean"] == pytest.approx(np.mean(expected)) and diff["sd"] == pytest.approx(np.std(expected, ddof=1))


def test_diagnostics_additive_column_is_exact_and_seeds_are_deterministic() -> None:
    inputs = {s: planted_inputs(s) for s in (0, 1)}
    first = cycle_diagnostics.run_diagnostics(inputs, (0, 1), config=FAST)
    again = cycle_diagnostics.run_diagnostics({0: planted_inputs(0), 1: planted_inputs(1)}, (0, 1), config=FAST)
    assert first["rows"] == again["rows"]  # CPU: the same seed gives the same numbers
    assert first["additive_audit"] == {"ok": True, "checked": 6, "failures": []}
    cells = {r["probe"]: r["cycle_acc"] for r in first["rows"]}
    for probe in ("image-only", "text-only", "additive"):
        assert cells[probe]["per_seed"] == {"0": 0.5, "1": 0.5}
    assert cells["bilinear"]["mean"] > 0.7 and cells["rank-8"]["mean"] > 0.7
    assert set(cells) == {"image-only", "text-only", "additive", "zero-shot cosine", "diagonal", "bilinear", "rank-8"}


def test_additive_audit_flags_an_unbalanced_block() -> None:
    per_seed = {0: [{"family": "f", "probe": "additive", "cycle_acc": 0.52, "tie_rate": 0.9}]}
    audit = cycle_diagnostics.additive_audit(per_seed)
    assert not audit["ok"] and audit["failures"][0]["cycle_acc"] == 0.52


def test_transfer_alignment_tracks_shared_coupling() -> None:
    # Families "a" and "b": independent samples of the same coupling A; "c": another coupling. So a ↔ b align
    # (cosine of their cycle-difference operators near 1) and transfer, a ↔ c do neither.
    per_seed = {seed: merge(seed, [planted_inputs(seed, strengths=(0.9, 0.9), dim=8, family="a",
                                                  coupling_seed=seed),
                                   planted_inputs(seed + 50, strengths=(0.9, 0.9), dim=8, family="b",
                                                  coupling_seed=seed),
                                   planted_inputs(seed + 100, strengths=(0.9, 0.9), dim=8, family="c")])
                for seed in (0, 1)}
    result = cycle_transfer.run_transfer(per_seed, (0, 1), config=FAST)
    cells = {(r["train_family"], r["test_family"]): r for r in result["rows"]}
    assert len(cells) == 9 and sum(r["off_diagonal"] for r in result["rows"]) == 6
    assert cells[("a", "b")]["alignment"]["mean"] > 0.5
    assert abs(cells[("a", "c")]["alignment"]["mean"]) < 0.35
    assert cells[("a", "b")]["cycle_acc"]["mean"] > cells[("a", "c")]["cycle_acc"]["mean"]
    corr = result["correlation"]
    assert set(corr["per_seed"]) == {"0", "1"} and corr["mean"] > 0.5
    assert corr["sd"] == pytest.approx(np.std(list(corr["per_seed"].values()), ddof=1))


def test_aggregate_mean_and_sample_sd_with_a_missing_seed() -> None:
    per_seed = {0: [{"f": "x", "v": 0.5}], 1: [{"f": "x", "v": 0.7}], 2: []}
    (row,) = aggregate(per_seed, ("f",), ("v",))
    assert row["v"]["per_seed"] == {"0": 0.5, "1": 0.7, "2": None}
    assert row["v"]["n_seeds"] == 2 and row["v"]["mean"] == pytest.approx(0.6)
    assert row["v"]["sd"] == pytest.approx(np.std([0.5, 0.7], ddof=1))
    assert mean_sd([0.4]) == (0.4, None, 1)
