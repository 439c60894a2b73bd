"""Every trained probe's batch and steps as run are in the run's JSON, AdamW is listed among vlaudit's own
settings, and a probe below chance on its own training data is left out of mean ± sd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from experiment_planted import planted_inputs

from vlaudit.analysis.cycles import diagnostics as cycle_diagnostics
from vlaudit.analysis.cycles.across_seeds import BELOW_CHANCE, aggregate, mean_sd_text
from vlaudit.analysis.cycles.experiment import ExperimentConfig
from vlaudit.probes.trainer import OPTIMIZER


def test_each_probes_batch_and_steps_and_the_optimizer_are_recorded(tmp_path: Path) -> None:
    # 60 training cycles, 2 epochs, min_steps 50: ⌈50 / 2⌉ = 25 steps per epoch, batch ⌈60 / 25⌉ = 3, 20 per
    # epoch, 40 steps; the 50-epoch shortcut probes on 120 training pairs: ⌈50 / 50⌉ = 1, batch 512, 50 steps
    inputs = {0: planted_inputs(0, splits=(("train", 60), ("val", 30), ("test", 30)))}
    result = cycle_diagnostics.run_diagnostics(inputs, (0,), config=ExperimentConfig(rank=4, epochs=2),
                                               out_dir=tmp_path)
    runs = {run.probe.split("/")[2]: run for run in result.probe_runs}
    assert set(runs) == {"image-only", "text-only", "additive", "diagonal", "bilinear", "rank-4"}
    for probe in ("diagonal", "bilinear", "rank-4"):
        assert (runs[probe].n_train, runs[probe].batch_size, runs[probe].steps) == (60, 3, 40)
    # the additive probe's 5 epochs: ⌈50 / 5⌉ = 10 steps per epoch, batch ⌈60 / 10⌉ = 6, 50 steps
    assert (runs["additive"].n_train, runs["additive"].batch_size, runs["additive"].steps) == (60, 6, 50)
    shortcut = runs["image-only"]
    assert shortcut.batch_size == 512 and shortcut.steps == 50 * -(-shortcut.n_train // 512)
    saved = json.loads((tmp_path / "diagnostics.json").read_text())
    assert saved["probe_runs"][0].keys() == {"probe", "n_train", "batch_size", "steps", "below_chance"}
    assert saved["settings"]["not_in_paper"]["optimizer"] == OPTIMIZER == "AdamW"
    assert "optimizer" not in saved["settings"]["paper"] and "optimizer" not in saved["settings"]["departs"]


def test_a_probe_below_chance_is_left_out_of_mean_and_sd_but_kept_per_seed() -> None:
    rows = {0: [{"family": "f", "probe": "p", "cycle_acc": 0.8, "n": 40, BELOW_CHANCE: False}],
            1: [{"family": "f", "probe": "p", "cycle_acc": 0.2, "n": 40, BELOW_CHANCE: True}],
            2: [{"family": "f", "probe": "p", "cycle_acc": 0.6, "n": 38, BELOW_CHANCE: False}]}
    ((key, cells),) = aggregate(rows, ("family", "probe"), ("cycle_acc", "n"))
    acc, n = cells["cycle_acc"], cells["n"]
    assert key == ("f", "p") and acc.per_seed == {"0": 0.8, "1": 0.2, "2": 0.6}
    assert acc.mean == pytest.approx(0.7) and acc.sd == pytest.approx(0.1414213562373095) and acc.n_seeds == 2
    assert list(acc.left_out) == ["1"] and "below chance" in acc.left_out["1"]
    assert n.n_seeds == 3 and n.left_out == {}  # the test count is the data's, not the probe's
    assert mean_sd_text(acc) == "0.7000 ± 0.1414 (2/3 seeds; seed 1 below chance, left out)"
