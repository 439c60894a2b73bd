"""Training losses over exact cycles and plain pairs (cycle paper §3, §5.5, §E.3).

A *block* is the (n, 4) tensor of logits [s(u1,v1), s(u2,v2), s(u1,v2), s(u2,v1)] of n cycles — the matched
pairs first, then the swaps, with labels 1, 1, 0, 0 (the column order of :meth:`vlaudit.records.Cycle.entries`).

* cycle loss        L_cyc = mean softplus(−Δ_cyc),  Δ_cyc = s11 + s22 − s12 − s21 (§3). Δ_cyc — and therefore
                    L_cyc and its gradient — is unchanged by any image-only or text-only head, which thus
                    receives zero gradient: component plausibility cannot lower the loss.
* four-entry BCE    mean BCE of the four logits against labels 1, 1, 0, 0 over the same blocks; it depends on
                    absolute scores, so additive heads do receive gradient (and can learn shortcuts).
* pair BCE          mean BCE over independent (image, caption, label) pairs (the shortcut-OE baseline, §5.5).
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

BLOCK_LABELS = (1.0, 1.0, 0.0, 0.0)


def _check_blocks(blocks: torch.Tensor) -> None:
    if blocks.ndim != 2 or blocks.shape[1] != 4:
        raise ValueError(f"expected block logits of shape (n, 4), got {tuple(blocks.shape)}")


def block_contrast(blocks: torch.Tensor) -> torch.Tensor:
    """Δ_cyc = (s11 + s22) − (s12 + s21) per block, in the dtype of ``blocks``."""
    _check_blocks(blocks)
    return (blocks[:, 0] + blocks[:, 1]) - (blocks[:, 2] + blocks[:, 3])


def cycle_loss(blocks: torch.Tensor) -> torch.Tensor:
    """Mean softplus(−Δ_cyc) over blocks (§3): the logistic loss of preferring the matched assignment."""
    return F.softplus(-block_contrast(blocks)).mean()


def four_entry_bce(blocks: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of the four block logits against labels 1, 1, 0, 0."""
    _check_blocks(blocks)
    labels = torch.tensor(BLOCK_LABELS, dtype=blocks.dtype, device=blocks.device).expand_as(blocks)
    return F.binary_cross_entropy_with_logits(blocks, labels)


def pair_bce(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of independent pair logits (n,) against 0/1 labels (n,)."""
    if logits.shape != labels.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and labels {tuple(labels.shape)} differ in shape")
    return F.binary_cross_entropy_with_logits(logits, labels.to(logits.dtype))


LOSSES = ("cycle", "bce4", "pair_bce")
