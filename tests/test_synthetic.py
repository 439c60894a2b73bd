"""Synthetic controls (cycle paper §5.1, Table 1, Table 8): generators, run_synthetic and the CLI."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import vlaudit.commands.synthetic  # noqa: F401  (registers the command)
from vlaudit.commands._apps import app
from vlaudit.experiments import synthetic_generators as gen
from vlaudit.experiments.synthetic import RANKS, SyntheticConfig, run_synthetic

TINY = SyntheticConfig(n_train=150, n_val=60, n_test=100, epochs=2)


@pytest.fixture(autouse=True)
def one_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def test_coupled_pairs_have_standard_marginals_and_cross_covariance_a() -> None:
    rng = np.random.default_rng(0)
    a = gen.coupling(rng, 6, np.array([0.7, 0.4]))
    assert np.linalg.matrix_rank(a) == 2
    np.testing.assert_allclose(np.linalg.svd(a, compute_uv=False)[:2], [0.7, 0.4], atol=1e-12)
    x, y = gen.coupled_pairs(rng, 40000, a)
    np.testing.assert_allclose(np.cov(y.T), np.eye(6), atol=0.04)
    np.testing.assert_allclose(np.cov(x.T), np.eye(6), atol=0.04)
    np.testing.assert_allclose(y.T @ x / len(x), a, atol=0.04)


def test_recombine_is_a_derangement_that_keeps_marginals() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((10, 3)), rng.standard_normal((10, 3))
    x2, y2 = gen.recombine(rng, x, y)
    assert np.array_equal(x2, x)
    assert not (y2 == y).all(axis=1).any()
    assert sorted(map(tuple, y2)) == sorted(map(tuple, y))


def test_shortcut_moves_only_negative_captions() -> None:
    rng = np.random.default_rng(2)
    sample = gen.interaction_sample(rng, 20, gen.coupling(rng, 4, np.array([0.5])))
    marked = gen.inject_shortcut(sample, np.array([0.0, 0.0, 3.0, 0.0]), 2.0)
    pos, neg = sample.labels == 1, sample.labels == 0
    assert np.array_equal(marked.text_features[pos], sample.text_features[pos])
    np.testing.assert_allclose(marked.text_features[neg] - sample.text_features[neg], [[0, 0, 2, 0]] * 20, atol=1e-6)


def test_bag_representation_cannot_see_binding() -> None:
    """Noise-free: a bag caption equals its image whether or not the colours are swapped; pair-aware differs."""
    bag = gen.binding_scenes(np.random.default_rng(3), 50, noise=0.0, representation="bag")
    assert np.array_equal(bag.image_features, bag.text_features)
    pair = gen.binding_scenes(np.random.default_rng(3), 50, noise=0.0, representation="pair")
    same = (pair.image_features == pair.text_features).all(axis=1)
    assert np.array_equal(same, pair.labels == 1)


def test_pair_cycles() -> None:
    assert gen.pair_cycles(5).tolist() == [[0, 0, 1, 1], [2, 2, 3, 3]]


def test_run_synthetic_writes_rows_per_seed(tmp_path) -> None:
    result = run_synthetic([0, 1], tmp_path, TINY)
    written = json.loads((tmp_path / "synthetic.json").read_text())
    assert written["seeds"] == [0, 1] and written["rows"] == json.loads(json.dumps(result["rows"]))
    keys = Counter((r["diagnostic"], r["probe"]) for r in result["rows"])
    assert max(keys.values()) == 1
    assert {d for d, _ in keys} == {"pure_interaction", "marginal_shortcut", "rank_sweep", "binding", "exact_cycles"}
    assert {p for d, p in keys if d == "rank_sweep"} == {f"rank {r}" for r in RANKS}
    for row in result["rows"]:
        values = list(row["per_seed"].values())
        assert set(row["per_seed"]) == {"0", "1"}
        assert row["mean"] == pytest.approx(np.mean(values))
        assert row["sd"] == pytest.approx(np.std(values, ddof=1))
    exact = {r["probe"]: r for r in result["rows"] if r["diagnostic"] == "exact_cycles"}
    for probe in ("image-only", "text-only", "additive"):
        assert exact[probe]["per_seed"] == {"0": 0.5, "1": 0.5}
    assert set(result["checks"]) and all(isinstance(v, bool) for v in result["checks"].values())
    assert not list(tmp_path.glob("*.tmp*"))


def test_run_synthetic_is_deterministic() -> None:
    a = run_synthetic([3], None, TINY)
    b = run_synthetic([3], None, TINY)
    assert a == b
    with pytest.raises(ValueError):
        run_synthetic([], None, TINY)


def test_default_run_shows_the_constructed_behaviour() -> None:
    """One seed at the default sizes: every check the construction predicts holds (Table 1 shape, Table 8)."""
    result = run_synthetic([0])
    assert result["checks"] == {name: True for name in result["checks"]}
    assert result["rows"][0]["sd"] is None


@pytest.mark.parametrize("seed_args", [["--seeds", "0", "1"], ["--seeds", "0,1"]])
def test_cli_writes_synthetic_json(tmp_path, seed_args) -> None:
    out = tmp_path / "syn"
    args = ["synthetic", "--out", str(out), *seed_args, "--n-train", "100", "--n-test", "60", "--epochs", "1",
            "--threads", "2"]
    before = torch.get_num_threads()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert torch.get_num_threads() == before  # scoped to the run, restored afterwards
    data = json.loads((out / "synthetic.json").read_text())
    assert data["seeds"] == [0, 1]
    assert "Synthetic controls" in result.output and "wrote" in result.output


def test_cli_seeds_before_out_and_bad_seeds(tmp_path) -> None:
    out = tmp_path / "syn"
    ok = CliRunner().invoke(app, ["synthetic", "--seeds", "4", "--out", str(out), "--n-train", "60",
                                  "--n-test", "40", "--epochs", "1", "--threads", "1"])
    assert ok.exit_code == 0, ok.output
    assert json.loads((out / "synthetic.json").read_text())["seeds"] == [4]
    bad = CliRunner().invoke(app, ["synthetic", "--out", str(out), "--seeds", "0", "x"])
    assert bad.exit_code != 0 and "seeds" in bad.output
    stray = CliRunner().invoke(app, ["synthetic", "--out", str(out), "--bogus"])
    assert stray.exit_code != 0
