"""The cycle paper's probe settings per kind (§E.3, §E.4), the minimum number of optimiser steps on small
training sets and the below-chance warning (and the paper's batch at the paper's scale)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from experiment_planted import planted_inputs

from vlaudit.analysis.cycles import diagnostics as cycle_diagnostics
from vlaudit.analysis.cycles import experiment as cycle_common
from vlaudit.analysis.cycles import oe as cycle_oe
from vlaudit.analysis.cycles.experiment import ExperimentConfig
from vlaudit.probes.trainer import ProbeData, TrainConfig, effective_batch_size, train_probe
from vlaudit.settings import (
    ADDITIVE_PROBE_EPOCHS,
    MIN_OPTIMISER_STEPS,
    PROBE_BATCH_SIZE,
    PROBE_EPOCHS,
    PROBE_LR,
    PROBE_WEIGHT_DECAY,
    SHORTCUT_PROBE_EPOCHS,
    SHORTCUT_PROBE_LR,
)


@pytest.fixture(autouse=True)
def _threads(one_torch_thread: None) -> None:
    return None


def test_paper_settings_are_the_defaults_per_probe_kind() -> None:
    # §E.3: 8 epochs, batch 512, lr 1e-3, wd 1e-4; §E.4: additive audit 5 epochs, shortcut probes 50 at 1e-2
    assert (PROBE_EPOCHS, PROBE_BATCH_SIZE, PROBE_LR, PROBE_WEIGHT_DECAY) == (8, 512, 1e-3, 1e-4)
    assert (ADDITIVE_PROBE_EPOCHS, SHORTCUT_PROBE_EPOCHS, SHORTCUT_PROBE_LR) == (5, 50, 1e-2)
    settings = ExperimentConfig().probe_settings()
    assert {kind: (s.epochs, s.lr) for kind, s in settings.items()} == {
        "interaction": (8, 1e-3), "additive": (5, 1e-3), "shortcut": (50, 1e-2)}
    assert {s.batch_size for s in settings.values()} == {512}
    assert {s.paper for s in settings.values()} == {"cycle §E.3", "cycle §E.4"}
    train = ExperimentConfig().train(0, "bce4", "last", kind="shortcut")
    assert (train.epochs, train.lr, train.batch_size, train.weight_decay) == (50, 1e-2, 512, 1e-4)
    assert TrainConfig().epochs == 8 and TrainConfig().lr == 1e-3


def test_each_probe_trains_with_its_kinds_settings_and_the_run_json_says_so(monkeypatch) -> None:
    used: dict[str, tuple[int, float]] = {}
    real = cycle_common.fit_probe

    def spy(kind, train, val=None, config=None, **kwargs):
        used[train.name.split("/")[2]] = (config.epochs, config.lr)
        return real(kind, train, val, config, **kwargs)

    monkeypatch.setattr(cycle_common, "fit_probe", spy)
    inputs = {0: planted_inputs(0, splits=(("train", 60), ("val", 30), ("test", 30)))}
    config = ExperimentConfig(rank=4, epochs=2, shortcut_epochs=3, additive_epochs=1)
    result = cycle_diagnostics.run_diagnostics(inputs, (0,), config=config)
    assert used == {"image-only": (3, 1e-2), "text-only": (3, 1e-2), "additive": (1, 1e-3),
                    "diagonal": (2, 1e-3), "bilinear": (2, 1e-3), "rank-4": (2, 1e-3)}
    assert result.probe_settings == config.probe_settings()
    assert result.additive_audit.ok


def test_oe_text_only_probe_uses_the_shortcut_settings(monkeypatch) -> None:
    used: dict[str, tuple[int, float]] = {}
    real = cycle_oe.fit_probe

    def spy(kind, train, val=None, config=None, **kwargs):
        used[f"{kind}/{config.loss}"] = (config.epochs, config.lr)
        return real(kind, train, val, config, **kwargs)

    monkeypatch.setattr(cycle_oe, "fit_probe", spy)
    inputs = {0: planted_inputs(0, marker_delta=4.0, splits=(("train", 60), ("val", 30), ("test", 30)))}
    config = ExperimentConfig(rank=4, epochs=2, shortcut_epochs=3)
    result = cycle_oe.run_oe(inputs, (0,), config=config)
    assert used == {"lowrank/pair_bce": (2, 1e-3), "lowrank/cycle": (2, 1e-3), "lowrank/bce4": (2, 1e-3),
                    "text/pair_bce": (3, 1e-2)}
    assert result.probe_settings["shortcut"].epochs == 3


def test_every_set_of_one_full_batch_trains_at_the_papers_batch() -> None:
    # §E.3: batch 512, 8 epochs, on every set of at least 512 units (the central experiments' scale untouched)
    for n in (512, 2400, 3584, 20_000):  # 2,400: a §D.5 GQA family's train cycles
        assert effective_batch_size(n, TrainConfig()) == PROBE_BATCH_SIZE
    # §E.4's additive audit probes (5 epochs, 10 steps per epoch)
    additive = TrainConfig(epochs=ADDITIVE_PROBE_EPOCHS)
    assert effective_batch_size(5120, additive) == effective_batch_size(512, additive) == PROBE_BATCH_SIZE
    assert effective_batch_size(400, additive) == 40  # ⌈400 / 10⌉: 10 steps per epoch, 50 in all
    assert effective_batch_size(40, additive) == 4  # ⌈40 / 10⌉: 10 steps per epoch, 50 in all


def test_small_training_sets_get_the_minimum_number_of_steps_and_the_rule_has_no_jump() -> None:
    assert MIN_OPTIMISER_STEPS == 50
    config = TrainConfig(min_steps=50)  # 8 epochs: at least ⌈50 / 8⌉ = 7 steps per epoch on a small set
    assert effective_batch_size(300, config) == 43  # ⌈300 / 7⌉: 7 steps of ≤ 43 per epoch, 56 in all
    assert effective_batch_size(448, config) == 64  # the last set at 7 steps per epoch
    assert effective_batch_size(480, config) == 288  # 512 − 7·32: the ramp up to the paper's batch
    # no jump at one full batch (the earlier rule: 511 → batch 73 and 56 steps, 512 → batch 512 and 8 steps)
    assert effective_batch_size(511, config) == 505 and effective_batch_size(512, config) == 512
    sizes = [effective_batch_size(n, config) for n in range(1, 4000)]
    assert all(0 <= b - a <= 7 for a, b in zip(sizes, sizes[1:], strict=False))  # monotone, rises ≤ k per unit
    steps = [config.epochs * -(-n // b) for n, b in zip(range(1, 4000), sizes, strict=False)]
    assert all(8 <= s <= 56 for s in steps[447:512])  # on the ramp, between the paper's 8 and the small sets' 56
    # every set of 43 to 448 units takes at least min_steps steps (a smaller one's ⌈n / 7⌉ batches may be fewer)
    assert all(s >= 50 for s in steps[42:448])
    assert effective_batch_size(3, config) == 1
    assert effective_batch_size(300, replace(config, min_steps=0)) == 512
    assert effective_batch_size(300, replace(config, epochs=50)) == 512  # 50 epochs × 1 step reach 50

    inputs = planted_inputs(0, splits=(("train", 300),))
    data = inputs.probe_data(inputs.cycles, "small")
    from vlaudit.probes.trainer import fit_probe

    result = fit_probe("bilinear", data, None, TrainConfig(select="last", min_steps=50))
    assert (result.batch_size, result.steps) == (43, 56)
    assert any("batch 43 instead of 512" in note for note in result.notes)
    plain = fit_probe("bilinear", data, None, TrainConfig(select="last", min_steps=0))
    assert (plain.batch_size, plain.steps, plain.notes) == (512, 8, [])


class _Negated(torch.nn.Module):
    """s(x, y) = w · ⟨x, y⟩ with w = −1: on pairs with y = x every exact cycle has Δ = −|x₁ − x₂|² < 0."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(-1.0))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.w * (x * y).sum(-1)


def test_a_probe_below_chance_on_its_training_cycles_is_warned() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 4)).astype(np.float32)
    cycles = np.array([[2 * k, 2 * k, 2 * k + 1, 2 * k + 1] for k in range(20)])
    data = ProbeData(x, x.copy(), cycles=cycles, name="negated")
    # lr 1e-9: the weight stays at −1, so CycleAcc on the training cycles is exactly 0 (hand-worked above)
    result = train_probe(_Negated(), data, None, TrainConfig(epochs=1, lr=1e-9, select="last", min_steps=0))
    assert result.train_value == 0.0
    (note,) = result.notes
    assert note.startswith("warning: below chance on its own training cycles (CycleAcc 0.000 < 0.5)")
    # the same data with w = +1: CycleAcc 1, no warning
    positive = _Negated()
    positive.w.data.fill_(1.0)
    result = train_probe(positive, data, None, TrainConfig(epochs=1, lr=1e-9, select="last", min_steps=0))
    assert result.train_value == 1.0 and result.notes == []


def test_probe_notes_reach_the_run_json_and_the_console_lines() -> None:
    from vlaudit.analysis.cycles.experiment import probe_notes_summary
    from vlaudit.results.cycle_experiments import ProbeNote

    inputs = {0: planted_inputs(0, splits=(("train", 60), ("val", 30), ("test", 30)))}
    result = cycle_diagnostics.run_diagnostics(inputs, (0,), config=ExperimentConfig(rank=4, epochs=2))
    small = [n for n in result.probe_notes if n.note.startswith("small training set")]
    # 60 training cycles, batch 512: every trained probe but the 50-epoch shortcut ones needs a smaller batch
    assert {n.probe.split("/")[2] for n in small} == {"additive", "diagonal", "bilinear", "rank-4"}
    lines = probe_notes_summary(result.probe_notes)
    assert lines[0].startswith("4 probe(s) had small training sets")
    (line,) = probe_notes_summary([ProbeNote(probe="seed 0/f/diagonal", note="warning: below chance …"),
                                   ProbeNote(probe="seed 1/f/bilinear", note="warning: below chance …")])
    assert line.startswith("warning: 2 probe(s) ended below chance") and line.endswith(
        "seed 0/f/diagonal, seed 1/f/bilinear.")


def test_the_oe_marker_is_the_papers_quote() -> None:
    # §5.5: negatives prefix the true caption with “this is an out of distribution negative example.”
    assert cycle_oe.MARKER == "this is an out of distribution negative example. "
    assert cycle_oe.marked_text("a dog on a sofa") == "this is an out of distribution negative example. a dog on a sofa"


def test_families_the_paper_does_not_have_are_labelled_in_experiment_tables() -> None:
    family = "gqa-attribute-cross-noun"
    inputs = {0: planted_inputs(0, family=family, splits=(("train", 40), ("val", 30), ("test", 30)))}
    config = ExperimentConfig(rank=2, epochs=1, shortcut_epochs=1, additive_epochs=1)
    result = cycle_diagnostics.run_diagnostics(inputs, (0,), config=config)
    assert result.families_not_in_paper == [family]
    for _, rows in (cycle_diagnostics.table_rows(result), cycle_diagnostics.shortcut_table_rows(result)):
        assert [row[0] for row in rows] == [f"{family} (not in the paper)"]
