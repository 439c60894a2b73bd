"""Scorers, losses and the trainer over frozen features (cycle paper §3, §A.3, §A.4, §E.2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.errors import InputError
from vlaudit.metrics.cycles import cycle_contrast
from vlaudit.probes.losses import block_contrast, cycle_loss, four_entry_bce, pair_bce
from vlaudit.probes.scorers import SCORER_KINDS, make_scorer
from vlaudit.probes.trainer import (
    ProbeData,
    TrainConfig,
    cycle_contrasts,
    cycle_scores,
    cycles_to_index,
    evaluate_cycle_acc,
    fit_probe,
    train_probe,
)
from vlaudit.records import Cycle

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FAST = settings(max_examples=40, deadline=None)
seeds = st.integers(0, 2**31 - 1)




def random_cycles(rng: np.random.Generator, n_images: int, n_captions: int, n_cycles: int) -> np.ndarray:
    """Arbitrary exact cycles: any two images and two captions (an exact cycle needs nothing else)."""
    return np.stack([rng.integers(0, n, n_cycles) for n in (n_images, n_captions, n_images, n_captions)], axis=1)


def block_logits(scorer, x: torch.Tensor, y: torch.Tensor, cycles: np.ndarray) -> torch.Tensor:
    c = torch.as_tensor(cycles)
    images = torch.cat([c[:, 0], c[:, 2], c[:, 0], c[:, 2]])
    captions = torch.cat([c[:, 1], c[:, 3], c[:, 3], c[:, 1]])
    return scorer(x[images], y[captions]).reshape(4, len(c)).T


# ---------------------------------------------------------------- §A.4 bilinear cycle factorization

@FAST
@given(seed=seeds, dim_x=st.integers(1, 12), dim_y=st.integers(1, 12), scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_bilinear_cycle_factorization(seed: int, dim_x: int, dim_y: int, scale: float) -> None:
    rng = np.random.default_rng(seed)
    u1, u2 = rng.standard_normal((2, dim_x)) * scale
    v1, v2 = rng.standard_normal((2, dim_y))
    w = rng.standard_normal((dim_x, dim_y))

    def s(u: np.ndarray, v: np.ndarray) -> float:
        return float(u @ w @ v)

    delta = cycle_contrast(s(u1, v1), s(u2, v2), s(u1, v2), s(u2, v1))
    factorized = (u1 - u2) @ w @ (v1 - v2)
    bound = 1e-12 * (np.abs(u1).sum() + np.abs(u2).sum()) * np.abs(w).sum() * (np.abs(v1).sum() + np.abs(v2).sum())
    assert abs(float(delta) - float(factorized)) <= bound


@FAST
@given(seed=seeds, kind=st.sampled_from(["diagonal", "bilinear", "lowrank"]), heads=st.booleans())
def test_scorer_contrast_matches_interaction_matrix(seed: int, kind: str, heads: bool) -> None:
    """Δ from the float64 evaluation path equals (x1 − x2)ᵀW(y1 − y2), additive heads or not."""
    rng = np.random.default_rng(seed)
    dim = 6
    scorer = make_scorer(kind, dim, dim, rank=3, additive_heads=heads, seed=seed % 1000)
    with torch.no_grad():
        scorer.bias.fill_(float(rng.standard_normal()))
    data = ProbeData(rng.standard_normal((7, dim)), rng.standard_normal((5, dim)),
                     cycles=random_cycles(rng, 7, 5, 20))
    delta = cycle_contrasts(scorer, data)
    w = scorer.double().interaction_matrix().detach().numpy()  # UᵀV formed in float64, as evaluation does
    x, y, c = data.image_features.astype(np.float64), data.text_features.astype(np.float64), data.cycles
    expected = np.einsum("ni,ij,nj->n", x[c[:, 0]] - x[c[:, 2]], w, y[c[:, 1]] - y[c[:, 3]])
    np.testing.assert_allclose(delta, expected, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- §3 cycle loss vs four-entry BCE

@FAST
@given(seed=seeds, kind=st.sampled_from(["cosine", "diagonal", "bilinear", "lowrank"]))
def test_cycle_loss_gives_heads_zero_gradient_bce_does_not(seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    scorer = make_scorer(kind, 5, 5, rank=2, additive_heads=True, seed=seed % 1000).double()
    x = torch.as_tensor(rng.standard_normal((9, 5)))
    y = torch.as_tensor(rng.standard_normal((8, 5)))
    cycles = random_cycles(rng, 9, 8, 16)
    heads = [p for p in (scorer.head_x, scorer.head_y, scorer.bias) if p.requires_grad]  # cosine: no bias

    cycle_loss(block_logits(scorer, x, y, cycles)).backward()
    for p in heads:
        assert p.grad is not None and float(p.grad.abs().max()) <= 1e-12
    scorer.zero_grad()
    four_entry_bce(block_logits(scorer, x, y, cycles)).backward()
    assert sum(float(p.grad.abs().sum()) for p in heads) > 1e-6


@FAST
@given(seed=seeds, kind=st.sampled_from(["image", "text", "additive"]))
def test_cycle_loss_is_constant_for_marginal_scorers(seed: int, kind: str) -> None:
    """Image-only / text-only / additive scorers: Δ ≡ 0, L_cyc = log 2, zero gradient; BCE moves them."""
    rng = np.random.default_rng(seed)
    scorer = make_scorer(kind, 4, 3, seed=seed % 1000).double()
    x = torch.as_tensor(rng.standard_normal((6, 4)) * 10)
    y = torch.as_tensor(rng.standard_normal((6, 3)) * 10)
    cycles = random_cycles(rng, 6, 6, 12)
    loss = cycle_loss(block_logits(scorer, x, y, cycles))
    loss.backward()
    assert abs(float(loss.detach()) - np.log(2.0)) < 1e-9
    assert all(float(p.grad.abs().max()) <= 1e-10 for p in scorer.parameters() if p.requires_grad)
    scorer.zero_grad()
    four_entry_bce(block_logits(scorer, x, y, cycles)).backward()
    assert sum(float(p.grad.abs().sum()) for p in scorer.parameters() if p.requires_grad) > 1e-6


def test_losses_hand_values() -> None:
    blocks = torch.tensor([[2.0, 1.0, 0.5, 0.5], [0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    assert torch.equal(block_contrast(blocks), torch.tensor([2.0, 0.0], dtype=torch.float64))
    expected = (np.log1p(np.exp(-2.0)) + np.log(2.0)) / 2
    assert float(cycle_loss(blocks)) == pytest.approx(expected, rel=1e-12)
    sp = lambda z: np.log1p(np.exp(z))  # noqa: E731  BCE(logit, 1) = softplus(−z), BCE(logit, 0) = softplus(z)
    bce = (sp(-2.0) + sp(-1.0) + 2 * sp(0.5) + 4 * np.log(2.0)) / 8
    assert float(four_entry_bce(blocks)) == pytest.approx(bce, rel=1e-12)
    assert float(pair_bce(torch.zeros(3), torch.tensor([0.0, 1.0, 1.0]))) == pytest.approx(np.log(2.0))
    with pytest.raises(ValueError):
        cycle_loss(torch.zeros(3, 3))


# ---------------------------------------------------------------- Table 8: exactly one half

@FAST
@given(seed=seeds, kind=st.sampled_from(["image", "text", "additive"]), scale=st.sampled_from([1e-2, 1.0, 1e2]))
def test_marginal_scorers_have_cycle_acc_exactly_half(seed: int, kind: str, scale: float) -> None:
    rng = np.random.default_rng(seed)
    scorer = make_scorer(kind, 8, 6, seed=seed % 1000)
    with torch.no_grad():
        for p in scorer.parameters():
            p.mul_(scale).add_(float(rng.standard_normal()))
    data = ProbeData(rng.standard_normal((12, 8)) * scale, rng.standard_normal((10, 6)) * scale,
                     cycles=random_cycles(rng, 12, 10, 30))
    assert evaluate_cycle_acc(scorer, data) == 0.5
    assert np.abs(cycle_contrasts(scorer, data)).max() <= 1e-9


def test_trained_marginal_probes_are_exactly_half_on_synthetic_cycles() -> None:
    """Trained with pair BCE on data with a strong text shortcut, still exactly ½ on exact cycles."""
    from vlaudit.analysis.cycles import synthetic_generators as gen

    rng = np.random.default_rng(0)
    a = gen.coupling(rng, 8, np.full(3, 0.6))
    sample = gen.inject_shortcut(gen.interaction_sample(rng, 300, a), rng.standard_normal(8), 4.0)
    n = len(sample.labels)
    train = ProbeData(sample.image_features, sample.text_features, pairs=np.stack([np.arange(n)] * 2, 1),
                      labels=sample.labels)
    x, y = gen.coupled_pairs(rng, 200, a)
    cycles = ProbeData(x, y, cycles=gen.pair_cycles(200))
    config = TrainConfig(epochs=5, batch_size=64, lr=1e-2, loss="pair_bce")
    for kind in ("image", "text", "additive"):
        assert evaluate_cycle_acc(fit_probe(kind, train, None, config).scorer, cycles) == 0.5
    coupled = fit_probe("bilinear", ProbeData(x, y, cycles=gen.pair_cycles(200)), None,
                        TrainConfig(epochs=20, batch_size=32, lr=1e-2, loss="cycle"))
    assert evaluate_cycle_acc(coupled.scorer, cycles) > 0.7


# ---------------------------------------------------------------- trainer

def coupled_data(seed: int, n: int = 256, dim: int = 6) -> ProbeData:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim))
    y = 0.8 * x[:, ::-1] + 0.6 * rng.standard_normal((n, dim))
    pairs = np.concatenate([np.stack([np.arange(n)] * 2, 1), np.stack([np.arange(n), rng.permutation(n)], 1)])
    labels = np.concatenate([np.ones(n), np.zeros(n)])
    return ProbeData(x, y, cycles=np.stack([np.arange(0, n, 2), np.arange(0, n, 2), np.arange(1, n, 2),
                                            np.arange(1, n, 2)], 1), pairs=pairs, labels=labels)


@pytest.mark.parametrize("loss", ["cycle", "bce4", "pair_bce"])
def test_trainer_is_deterministic(loss: str) -> None:
    train, val = coupled_data(1), coupled_data(2)
    config = TrainConfig(epochs=3, batch_size=64, lr=1e-2, seed=7, loss=loss)
    runs = [fit_probe("lowrank", train, val, config, rank=2, additive_heads=True) for _ in range(2)]
    other = fit_probe("lowrank", train, val, TrainConfig(epochs=3, batch_size=64, lr=1e-2, seed=8, loss=loss),
                      rank=2, additive_heads=True)
    a, b, c = (r.scorer.state_dict() for r in (*runs, other))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert runs[0].history == runs[1].history
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_trainer_does_not_touch_global_rng() -> None:
    state = torch.random.get_rng_state()
    fit_probe("bilinear", coupled_data(1), None, TrainConfig(epochs=1, batch_size=64))
    assert torch.equal(state, torch.random.get_rng_state())


def test_selection_on_validation_cycles() -> None:
    train, val = coupled_data(3), coupled_data(4)
    result = fit_probe("bilinear", train, val, TrainConfig(epochs=6, batch_size=32, lr=3e-2, loss="cycle"))
    values = [h["val_cycle_acc"] for h in result.history]
    assert result.best_value == max(values)
    assert result.best_epoch == values.index(max(values)) + 1
    assert evaluate_cycle_acc(result.scorer, val) == result.best_value
    assert result.best_value > 0.8
    assert cycle_scores(result.scorer, val).dtype == np.float64  # contrasts in float64 (§E.2) …
    assert all(p.dtype == torch.float32 for p in result.scorer.parameters())  # … the model trains in float32


def test_defaults_follow_e3() -> None:
    config = TrainConfig()
    assert (config.epochs, config.batch_size, config.lr, config.weight_decay) == (8, 512, 1e-3, 1e-4)
    with pytest.raises(ValueError):
        TrainConfig(loss="hinge")


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_low_rank_constraint(rank: int) -> None:
    train = coupled_data(5, dim=8)
    result = fit_probe("lowrank", train, None, TrainConfig(epochs=3, batch_size=64, lr=3e-2, loss="cycle"),
                       rank=rank)
    w = result.scorer.double().interaction_matrix().detach().numpy()
    singular = np.linalg.svd(w, compute_uv=False)
    assert singular[rank - 1] > 1e-3 * singular[0] and singular[rank:].max() <= 1e-12 * singular[0]
    assert tuple(result.scorer.u.shape) == (rank, 8)


def test_scorer_shapes_and_errors() -> None:
    x, y = torch.randn(5, 4), torch.randn(5, 4)
    for kind in SCORER_KINDS:
        assert make_scorer(kind, 4, 4, rank=2).forward(x, y).shape == (5,)
    cosine = make_scorer("cosine", 4, 4, temperature=2.0)
    expected = 2.0 * torch.nn.functional.cosine_similarity(x, y, dim=1)
    assert torch.allclose(cosine(x, y), expected)
    assert not any(p.requires_grad for p in cosine.parameters())
    assert torch.equal(make_scorer("bilinear", 4, 3, seed=1).weight, make_scorer("bilinear", 4, 3, seed=1).weight)
    with pytest.raises(ValueError, match="unknown scorer"):
        make_scorer("mlp", 4, 4)
    with pytest.raises(ValueError, match="rank"):
        make_scorer("lowrank", 4, 4)
    with pytest.raises(ValueError, match="dim_x == dim_y"):
        make_scorer("diagonal", 4, 3)
    with pytest.raises(ValueError, match="additive_heads"):
        make_scorer("image", 4, 4, additive_heads=True)


def test_probe_data_validation_and_cycle_index() -> None:
    with pytest.raises(InputError, match="cycles"):
        ProbeData(np.zeros((3, 2)), np.zeros((3, 2)), cycles=np.array([[0, 0, 3, 1]]))
    with pytest.raises(InputError, match="labels"):
        ProbeData(np.zeros((3, 2)), np.zeros((3, 2)), pairs=np.array([[0, 1]]))
    with pytest.raises(InputError, match="NaN"):
        ProbeData(np.full((3, 2), np.nan), np.zeros((3, 2)))
    cycles = [Cycle("c1", "f", "i2", "t1", "i1", "t2")]
    index = cycles_to_index(cycles, {"i1": 0, "i2": 1}, {"t1": 0, "t2": 1})
    assert index.tolist() == [[1, 0, 0, 1]]
    with pytest.raises(InputError, match="caption_2"):
        cycles_to_index(cycles, {"i1": 0, "i2": 1}, {"t1": 0}, source="feats.npz")
    with pytest.raises(InputError, match="needs training cycles"):
        train_probe(make_scorer("bilinear", 2, 2), ProbeData(np.zeros((2, 2)), np.zeros((2, 2))))


@FAST
@given(scores=st.lists(st.integers(-3, 3), min_size=2, max_size=40), data=st.data())
def test_rank_auroc_equals_sklearn_with_ties(scores: list[int], data: st.DataObject) -> None:
    from sklearn.metrics import roc_auc_score

    from vlaudit.probes.trainer import rank_auroc

    labels = data.draw(st.lists(st.integers(0, 1), min_size=len(scores), max_size=len(scores)))
    values = np.asarray(scores, dtype=np.float64) / 7.0  # few distinct values: many ties
    if len(set(labels)) < 2:
        assert np.isnan(rank_auroc(values, np.asarray(labels)))
    else:
        assert rank_auroc(values, np.asarray(labels)) == pytest.approx(roc_auc_score(labels, values), abs=1e-12)


def test_auroc_selection_needs_both_labels() -> None:
    data = coupled_data(6)
    one_class = ProbeData(data.image_features, data.text_features, pairs=data.pairs[:10],
                          labels=np.ones(10), name="val.npz")
    with pytest.raises(InputError, match="val.npz.*labels"):
        fit_probe("bilinear", data, one_class, TrainConfig(epochs=1, loss="pair_bce", select="auroc"))
