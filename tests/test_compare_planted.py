"""Known answer: the paired comparison recovers the planted difference in D-CC between the planted scene-VQA
reference models (the demo's statements, scored through the ordinary runner)."""

from __future__ import annotations

from pathlib import Path

import pytest

import vlaudit
from vlaudit.builders.scenes import render_scenes
from vlaudit.demo.vca import VcaStageConfig, _score, build_stage_items
from vlaudit.reference.scene_vqa_mixture import load_backend as load_mixture


@pytest.mark.slow
def test_planted_difference_in_dcc_is_covered(tmp_path: Path, no_network: None) -> None:
    scenes = tmp_path / "scenes"
    render_scenes(scenes, 60, seed=0)
    config = VcaStageConfig(n_scenes=60, contexts=("original", "text", "blank"), interfaces=("yesno",))
    items = [i for i in build_stage_items(scenes, config) if i.dataset == "vsr-like"]
    mixture = load_mixture(scenes=str(scenes))
    planted = sum(mixture.reads_image(i.question) for i in items) / len(items)
    runs = {}
    for spec in (config.grounded, config.prior, config.mixture):
        runs[spec] = tmp_path / spec.split(":")[1]
        _score(spec, items, scenes, runs[spec], config.contexts, config.interfaces, 0, scenes)
    data = vlaudit.compare_vca([runs[config.mixture], runs[config.prior], runs[config.grounded]],
                               n_resamples=1000, n_permutations=1000).data

    def row(a: str, b: str) -> dict:
        return next(r for r in data["comparisons"] if r["metric"] == "dcc" and r["family"] == "all"
                    and r["model_a"] == a and r["model_b"] == b)

    # the prior never reads the image (G_img = 0 on every item): its D-CC is 0, so the mixture's advantage is
    # its planted credited fraction
    mix_vs_prior = row(config.mixture, config.prior)
    assert mix_vs_prior["value_b"] == 0.0
    lo, hi = mix_vs_prior["ci"]
    assert lo <= planted <= hi, (planted, mix_vs_prior)
    grounded_vs_prior = row(config.prior, config.grounded)
    assert grounded_vs_prior["ci"][1] < 0 and grounded_vs_prior["survives"]
    assert grounded_vs_prior["test"] == "mcnemar"
