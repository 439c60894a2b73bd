"""Pair scorers s(x, y) over frozen image features x and text features y (cycle paper §3, §5, §E).

Every scorer maps a batch of image features ``x`` (n, d_x) and text features ``y`` (n, d_y) to one
pre-sigmoid logit per row (n,). The families, from no coupling to full coupling:

* ``image``     image-only        s = a(x) = αᵀx + c
* ``text``      text-only         s = b(y) = βᵀy + c
* ``additive``  additive          s = a(x) + b(y)
* ``cosine``    cosine            s = τ · cos(x, y)  (τ fixed, or learned as exp(log τ) when ``learn_temperature``)
* ``diagonal``  diagonal          s = Σ_k w_k x_k y_k + c  (d_x = d_y)
* ``bilinear``  full bilinear     s = xᵀWy + c
* ``lowrank``   rank-r bilinear   s = (Ux)ᵀ(Vy) + c = xᵀ(UᵀV)y + c,  U ∈ R^{r×d_x}, V ∈ R^{r×d_y}

``cosine``, ``diagonal``, ``bilinear`` and ``lowrank`` optionally add additive heads a(x) + b(y) (the §E.3 OE
model is rank-64 bilinear with additive image-only and caption-only components). Additive terms — heads and the
bias c — cancel exactly in the cycle contrast (Proposition A.1); the bilinear part contributes
Δ_cyc = (x1 − x2)ᵀW(y1 − y2) (Proposition A.2), see :meth:`PairScorer.interaction_matrix`.

Its classes subclass ``nn.Module``, so torch is imported with it; the commands reach it only through the lazy
facade ``import vlaudit``, so that ``vlaudit --help`` stays fast.
"""

from __future__ import annotations

import math

import torch
from torch import nn

SCORER_KINDS = ("image", "text", "additive", "cosine", "diagonal", "bilinear", "lowrank")
_COUPLED = ("cosine", "diagonal", "bilinear", "lowrank")  # the kinds that can take additive heads
_ALIASES = {"image-only": "image", "text-only": "text", "low-rank": "lowrank", "full": "bilinear"}


def _normal(shape: tuple[int, ...], std: float, generator: torch.Generator) -> nn.Parameter:
    # Explicit generator: initialisation must not read or advance torch's global RNG (no hidden state).
    return nn.Parameter(torch.randn(shape, generator=generator, dtype=torch.float32) * std)


class PairScorer(nn.Module):
    """Base class: ``forward(x, y)`` returns logits of shape (n,); subclasses define ``pair_logits``."""

    kind: str = ""

    def __init__(self, dim_x: int, dim_y: int, additive_heads: bool, generator: torch.Generator) -> None:
        super().__init__()
        self.dim_x, self.dim_y = int(dim_x), int(dim_y)
        self.additive_heads = bool(additive_heads)
        if self.additive_heads:
            self.head_x = _normal((self.dim_x,), 1.0 / math.sqrt(self.dim_x), generator)
            self.head_y = _normal((self.dim_y,), 1.0 / math.sqrt(self.dim_y), generator)
        self.bias = nn.Parameter(torch.zeros((), dtype=torch.float32))

    def pair_logits(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0]:
            raise ValueError(f"expected x (n, {self.dim_x}) and y (n, {self.dim_y}); got {tuple(x.shape)}, "
                             f"{tuple(y.shape)}")
        out = self.pair_logits(x, y) + self.bias
        if self.additive_heads:
            out = out + x @ self.head_x + y @ self.head_y
        return out

    def interaction_matrix(self) -> torch.Tensor | None:
        """W with s(x, y) = xᵀWy + additive terms, or None when the scorer is not bilinear in (x, y)."""
        return None


class ImageOnlyScorer(PairScorer):
    """a(x) = αᵀx + c: ignores the caption, so its cycle contrast is identically zero."""

    kind = "image"

    def __init__(self, dim_x: int, dim_y: int, generator: torch.Generator) -> None:
        super().__init__(dim_x, dim_y, False, generator)
        self.weight_x = _normal((self.dim_x,), 1.0 / math.sqrt(self.dim_x), generator)

    def pair_logits(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x @ self.weight_x


class TextOnlyScorer(PairScorer):
    """b(y) = βᵀy + c: ignores the image."""

    kind = "text"

    def __init__(self, dim_x: int, dim_y: int, generator: torch.Generator) -> None:
        super().__init__(dim_x, dim_y, False, generator)
        self.weight_y = _normal((self.dim_y,), 1.0 / math.sqrt(self.dim_y), generator)

    def pair_logits(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return y @ self.weight_y


class AdditiveScorer(PairScorer):
    """a(x) + b(y): the most general score that every exact cycle cancels (Theorem 1)."""

    kind = "additive"

    def __init__(self, dim_x: int, dim_y: int, generator: torch.Generator) -> None:
        super().__init__(dim_x, dim_y, True, generator)

    def pair_logits(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)


class CosineScorer(PairScorer):
    """τ · cos(x, y), the zero-shot CLIP score (§E.2) when τ is fixed; no bias so that τ=1 is plain cosine."""

    kind = "cosine"

    def __init__(self, dim_x: int, dim_y: int, generator: torch.Generator, temperature: float = 1.0,
                 learn_temperature: bool = False, additive_heads: bool = False) -> None:
        if dim_x != dim_y:
            raise ValueError(f"cosine needs dim_x == dim_y, got {dim_x} and {dim_y}")
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        super().__init__(dim_x, dim_y, additive_heads, generator)
        self.bias.requires_grad_(False)
        log_t = torch.tensor(math.log(temperature), dtype=torch.float32)
        if learn_temperature:
            self.log_temperature = nn.Parameter(log_t)
        else:
            self.register_buffer("log_temperature", log_t)

    def pair_logits(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        cos = nn.functional.cosine_similarity(x, y, dim=1, eps=1e-12)
        return self.log_temperature.exp() * cos


class DiagonalScorer(PairScorer):
    """Σ_k w_k x_k y_k + c: a bilinear score with W = diag(w)."""

    kind = "diagonal"

    def __init__(self, dim_x: int, dim_y: int, generator: torch.Generator, additive_heads: bool = False) -> None:
        if dim_x != dim_y:
            raise ValueError(f"diagonal needs dim_x == dim_y, got {dim_x} and {dim_y}")
        super().__init__(dim_x, dim_y, additive_heads, generator)
        self.weight = _normal((self.dim_x,), 1.0 / math.sqrt(self.dim_x), generator)

    def pair_logits(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x * y) @ self.weight

    def interaction_matrix(self) -> torch.Tensor:
        return torch.diag(self.weight)


class BilinearScorer(PairScorer):
    """xᵀWy + c with a full d_x × d_y matrix W."""

    kind = "bilinear"

    def __init__(self, dim_x: int, dim_y: int, generator: torch.Generator, additive_heads: bool = False) -> None:
        super().__init__(dim_x, dim_y, additive_heads, generator)
        self.weight = _normal((self.dim_x, self.dim_y), 1.0 / math.sqrt(self.dim_x * self.dim_y), generator)

    def pair_logits(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return ((x @ self.weight) * y).sum(dim=1)

    def interaction_matrix(self) -> torch.Tensor:
        return self.weight


class LowRankBilinearScorer(PairScorer):
    """(Ux)ᵀ(Vy) + c = xᵀ(UᵀV)y + c; rank(UᵀV) ≤ r by construction (§5.4 rank sweeps)."""

    kind = "lowrank"

    def __init__(self, dim_x: int, dim_y: int, rank: int, generator: torch.Generator,
                 additive_heads: bool = False) -> None:
        if rank < 1:
            raise ValueError(f"rank must be ≥ 1, got {rank}")
        super().__init__(dim_x, dim_y, additive_heads, generator)
        self.rank = int(rank)
        # Both factors random (not zero): with U = V = 0 the gradient of (Ux)ᵀ(Vy) vanishes and nothing trains.
        std = 1.0 / math.sqrt(math.sqrt(self.dim_x * self.dim_y) * self.rank)
        self.u = _normal((self.rank, self.dim_x), std, generator)
        self.v = _normal((self.rank, self.dim_y), std, generator)

    def pair_logits(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return ((x @ self.u.T) * (y @ self.v.T)).sum(dim=1)

    def interaction_matrix(self) -> torch.Tensor:
        return self.u.T @ self.v


def make_scorer(
    kind: str,
    dim_x: int,
    dim_y: int,
    *,
    rank: int | None = None,
    additive_heads: bool = False,
    seed: int = 0,
    temperature: float = 1.0,
    learn_temperature: bool = False,
) -> PairScorer:
    """Build a scorer of ``kind`` (one of :data:`SCORER_KINDS`) with parameters drawn from ``seed``.

    ``rank`` is required for ``lowrank``; ``additive_heads`` applies to cosine/diagonal/bilinear/lowrank.
    """
    kind = _ALIASES.get(kind, kind)
    generator = torch.Generator().manual_seed(int(seed))
    if additive_heads and kind not in _COUPLED:
        raise ValueError(f"additive_heads applies to {', '.join(_COUPLED)} scorers, not {kind!r}")
    if kind == "image":
        return ImageOnlyScorer(dim_x, dim_y, generator)
    if kind == "text":
        return TextOnlyScorer(dim_x, dim_y, generator)
    if kind == "additive":
        return AdditiveScorer(dim_x, dim_y, generator)
    if kind == "cosine":
        return CosineScorer(dim_x, dim_y, generator, temperature, learn_temperature, additive_heads)
    if kind == "diagonal":
        return DiagonalScorer(dim_x, dim_y, generator, additive_heads)
    if kind == "bilinear":
        return BilinearScorer(dim_x, dim_y, generator, additive_heads)
    if kind == "lowrank":
        if rank is None:
            raise ValueError("a lowrank scorer needs rank")
        return LowRankBilinearScorer(dim_x, dim_y, rank, generator, additive_heads)
    raise ValueError(f"unknown scorer kind {kind!r}; expected one of {', '.join(SCORER_KINDS)}")
