"""Synthetic pair generators whose expected probe behaviour follows from construction (cycle paper §5.1).

All generators take an explicit ``numpy.random.Generator`` and return float32 feature arrays.

**Coupled Gaussian pairs** (:func:`coupled_pairs`). x ~ N(0, I_d) and y = A x + (I − AAᵀ)^{1/2} ε with
ε ~ N(0, I_d) and A = Σ_k ρ_k q_k p_kᵀ for orthonormal directions p_k, q_k and 0 ≤ ρ_k < 1. Then
Cov(y) = AAᵀ + (I − AAᵀ) = I: **both marginals are exactly N(0, I)**, and the only dependence between x and
y is the cross-covariance Cov(y, x) = A, spread over the K directions with strengths ρ_k. Recombining the
captions of valid pairs (:func:`recombine`) gives negatives whose image and caption marginals are *identical in
distribution* to the positives', so any image-only, text-only or additive score is at chance (AUROC ≈ 0.5),
whereas a bilinear score xᵀWy with W ∝ Aᵀ has positive mean Σ ρ_k² on positives and 0 on negatives.

A rank-r bilinear score can capture at most r of the K directions (Eckart–Young: the best rank-r part of A
keeps the r largest ρ_k), so with K directions of decaying strength AUROC rises with r up to r ≈ K and then
saturates — extra rank only adds parameters that fit noise.

**Marginal shortcut** (:func:`inject_shortcut`). Adds δ·m to the caption features of the negatives along a
fixed unit "marker" direction m: now the caption marginal alone separates the classes, so text-only and
additive scores reach AUROC ≈ 1 (Φ(δ/√2) per pair for a linear score; δ = 4 gives > 0.99).

**Attribute-binding scenes** (:func:`binding_scenes`). Each scene has two objects with distinct shapes and
distinct colours; its caption names both (shape, colour) bindings. A negative keeps the scene but swaps the two
colours in the caption ("red cube, blue ball" → "blue cube, red ball"). A *bag* representation (counts of
shapes and counts of colours) is identical for a caption and its colour swap, so positives and negatives have
the same distribution and every probe is at chance; a *pair-aware* representation (counts of shape⊗colour
bindings) differs, and a bilinear probe recovers the binding.

**Exact cycles** (:func:`pair_cycles`). Consecutive valid pairs (2k, 2k+1) and their two swaps. Under the
coupled-Gaussian model the swaps are independent recombinations, so a coupling-aware score prefers the matched
assignment, while every additive score has Δ = 0 exactly (Table 8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairSample:
    """Aligned pairs: row i of ``image_features`` goes with row i of ``text_features``; ``labels`` 1 = valid."""

    image_features: np.ndarray
    text_features: np.ndarray
    labels: np.ndarray


def coupling(rng: np.random.Generator, dim: int, strengths: np.ndarray) -> np.ndarray:
    """A = Σ_k ρ_k q_k p_kᵀ with random orthonormal p_k, q_k (K = len(strengths) ≤ dim, 0 ≤ ρ_k < 1)."""
    strengths = np.asarray(strengths, dtype=np.float64)
    k = len(strengths)
    if k > dim or (strengths < 0).any() or (strengths >= 1).any():
        raise ValueError("need len(strengths) ≤ dim and 0 ≤ strengths < 1")
    p = np.linalg.qr(rng.standard_normal((dim, dim)))[0][:, :k]
    q = np.linalg.qr(rng.standard_normal((dim, dim)))[0][:, :k]
    return (q * strengths) @ p.T


def coupled_pairs(rng: np.random.Generator, n: int, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """n valid pairs (x, y) with x ~ N(0, I), y = Ax + (I − AAᵀ)^{1/2} ε, so y ~ N(0, I) too."""
    dim = a.shape[0]
    eigval, eigvec = np.linalg.eigh(np.eye(dim) - a @ a.T)
    root = (eigvec * np.sqrt(np.clip(eigval, 0.0, None))) @ eigvec.T
    x = rng.standard_normal((n, dim))
    y = x @ a.T + rng.standard_normal((n, dim)) @ root.T
    return x.astype(np.float32), y.astype(np.float32)


def recombine(rng: np.random.Generator, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair each image with the caption of a *different* valid pair (a random derangement)."""
    n = len(x)
    if n < 2:
        raise ValueError("recombination needs at least two pairs")
    order = rng.permutation(n)
    partner = np.empty(n, dtype=np.int64)
    partner[order] = order[np.roll(np.arange(n), 1)]  # a cyclic shift of a random order never maps i → i
    return x, y[partner]


def interaction_sample(rng: np.random.Generator, n_per_class: int, a: np.ndarray) -> PairSample:
    """Positives: valid pairs. Negatives: recombinations of an independent draw of valid pairs."""
    x_pos, y_pos = coupled_pairs(rng, n_per_class, a)
    x_neg, y_neg = recombine(rng, *coupled_pairs(rng, n_per_class, a))
    return PairSample(
        np.concatenate([x_pos, x_neg]),
        np.concatenate([y_pos, y_neg]),
        np.concatenate([np.ones(n_per_class), np.zeros(n_per_class)]).astype(np.float32),
    )


def inject_shortcut(sample: PairSample, marker: np.ndarray, delta: float) -> PairSample:
    """Add δ·marker to the caption features of every negative (a text-marginal shortcut)."""
    marker = np.asarray(marker, dtype=np.float64)
    marker = marker / np.linalg.norm(marker)
    text = sample.text_features.astype(np.float64) + np.outer(1.0 - sample.labels, marker) * delta
    return PairSample(sample.image_features, text.astype(np.float32), sample.labels)


def pair_cycles(n_pairs: int) -> np.ndarray:
    """(n_pairs // 2, 4) index rows [image_1, caption_1, image_2, caption_2] over aligned valid pairs."""
    first = np.arange(0, n_pairs - 1, 2, dtype=np.int64)
    return np.stack([first, first, first + 1, first + 1], axis=1)


def binding_scenes(
    rng: np.random.Generator, n_per_class: int, *, n_shapes: int = 4, n_colors: int = 4, noise: float = 0.3,
    representation: str = "pair",
) -> PairSample:
    """Two-object scenes with caption bindings; a negative's caption swaps the two colours of its own scene.

    The first ``n_per_class`` rows are positives, the rest negatives (independent scenes). Shapes and colours are
    drawn independently and uniformly, so the swapped caption has the same marginal distribution as a valid one:
    only the binding of colour to shape separates the classes.

    ``representation``: ``pair`` — counts of (shape, colour) bindings, dim n_shapes·n_colors; ``bag`` — counts of
    shapes then counts of colours, dim n_shapes + n_colors. Gaussian noise of sd ``noise`` is added to both
    sides so that neither representation is a lookup table.
    """
    if representation not in ("pair", "bag"):
        raise ValueError(f"representation must be 'pair' or 'bag', got {representation!r}")
    if n_shapes < 2 or n_colors < 2:
        raise ValueError("need at least two shapes and two colours")
    n = 2 * n_per_class
    shapes = np.stack([rng.choice(n_shapes, size=2, replace=False) for _ in range(n)])
    colors = np.stack([rng.choice(n_colors, size=2, replace=False) for _ in range(n)])
    labels = np.concatenate([np.ones(n_per_class), np.zeros(n_per_class)]).astype(np.float32)
    caption_colors = np.where(labels[:, None] == 1, colors, colors[:, ::-1])

    def encode(shape_ids: np.ndarray, color_ids: np.ndarray) -> np.ndarray:
        rows = np.arange(n)[:, None]
        if representation == "pair":
            out = np.zeros((n, n_shapes * n_colors))
            np.add.at(out, (rows, shape_ids * n_colors + color_ids), 1.0)
        else:
            out = np.zeros((n, n_shapes + n_colors))
            np.add.at(out, (rows, shape_ids), 1.0)
            np.add.at(out, (rows, n_shapes + color_ids), 1.0)
        return out + noise * rng.standard_normal(out.shape)

    image = encode(shapes, colors)
    text = encode(shapes, caption_colors)
    return PairSample(image.astype(np.float32), text.astype(np.float32), labels)
