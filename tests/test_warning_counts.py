"""A warning's numbers are those of what it names.

``cycles eval`` printed "5 cell(s) (coco-box-relation/test 8, …): only 1 cycle cluster (< 20)" — the smallest
cell's count for all of them; ``vca stability`` blamed ``batch-1`` (the perturbation with the fewest units) when
τ came from ``dtype``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vlaudit.scoring.stability import floor_estimate
from vlaudit.stats.clusters import small_sample_cells


def test_each_small_cell_is_named_with_its_own_count() -> None:
    (line,) = small_sample_cells({"coco-box-relation/test": 8, "coco-strict-left-right/test": 1,
                                  "coco-object-coarse/test": 40}, "cycle")
    assert "2 cell(s) have fewer than 20 cycle clusters (coco-box-relation/test 8, coco-strict-left-right/test 1)" \
        in line
    assert "only 1 cycle cluster" not in line


def test_the_tau_warning_names_the_perturbation_tau_comes_from(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    deltas = {"batch-1": np.abs(rng.normal(0, 1e-6, 10)),  # fewest units, tiny noise
              "dtype": np.abs(rng.normal(0, 1e-2, 40))}  # sets tau
    tau, estimate = floor_estimate(deltas, where=tmp_path)
    assert tau == float(deltas["dtype"].max())
    assert estimate.warning is not None
    assert estimate.warning.startswith("tau rests on 40 re-scored units (dtype, which sets it)")
    assert "also short of 299: batch-1 (10)" in estimate.warning
    # tau from a perturbation with enough units: the short one is named as short, not as tau's source
    deltas["dtype"] = np.abs(rng.normal(0, 1e-2, 400))
    tau, estimate = floor_estimate(deltas, where=tmp_path)
    assert estimate.warning is not None and estimate.warning.startswith("tau comes from dtype (a 95% upper bound")
    assert "batch-1 (10) re-scored fewer than 299 units" in estimate.warning
    _, estimate = floor_estimate({"dtype": deltas["dtype"]}, where=tmp_path)
    assert estimate.warning is None
