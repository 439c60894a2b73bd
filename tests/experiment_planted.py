"""Planted frozen features for the experiment tests: the truth of each construction is known."""

from __future__ import annotations

import numpy as np

from vlaudit.analysis.cycles import synthetic_generators as gen
from vlaudit.analysis.cycles.experiment import SeedInputs
from vlaudit.analysis.cycles.oe import MARK_SUFFIX
from vlaudit.records import Cycle

SPLITS = (("train", 600), ("val", 200), ("test", 400))  # cycles per split


def merge(seed: int, parts: list[SeedInputs]) -> SeedInputs:
    """One seed's inputs from several planted families with disjoint ids."""
    return SeedInputs(seed, [c for p in parts for c in p.cycles], [i for p in parts for i in p.image_ids],
                      np.concatenate([p.x for p in parts]), [c for p in parts for c in p.caption_ids],
                      np.concatenate([p.y for p in parts]))


def planted_inputs(seed: int, *, strengths=(0.6, 0.6, 0.6, 0.6), dim: int = 16, bag: bool = False,
                   marker_delta: float | None = None, family: str = "planted",
                   coupling_seed: int | None = None, splits: tuple[tuple[str, int], ...] = SPLITS) -> SeedInputs:
    """Valid pairs (x, y = Ax + noise) with a rank-len(strengths) coupling A; cycles pair consecutive pairs.

    ``bag``: both captions of a block get the *same* features (a bag-of-words encoder of role-swapped captions),
    so no pairing signal survives and only additive information is left. ``marker_delta``: add marked captions
    y + δ·m (one fixed direction m) under ``caption_id + MARK_SUFFIX`` — a clean text shortcut.
    ``coupling_seed``: draw A from this seed (default ``seed``), the samples from ``seed``. ``splits``: cycles
    per split.
    """
    a = gen.coupling(np.random.default_rng([seed if coupling_seed is None else coupling_seed, 9]), dim,
                     np.asarray(strengths))
    rng = np.random.default_rng([seed, 10])
    n_pairs = 2 * sum(n for _, n in splits)
    x, y = gen.coupled_pairs(rng, n_pairs, a)
    if bag:
        y[1::2] = y[0::2]
    cycles, k = [], 0
    for split, n in splits:
        for _ in range(n):
            p = "" if family == "planted" else family
            cycles.append(Cycle(f"{family}/{split}/{k}", family, f"{p}i{2 * k}", f"{p}c{2 * k}", f"{p}i{2 * k + 1}",
                                f"{p}c{2 * k + 1}", split=split,
                                extra={"text_1": f"caption {2 * k}", "text_2": f"caption {2 * k + 1}"}))
            k += 1
    prefix = "" if family == "planted" else family
    image_ids = [f"{prefix}i{j}" for j in range(n_pairs)]
    caption_ids = [f"{prefix}c{j}" for j in range(n_pairs)]
    if marker_delta is not None:
        marker = rng.standard_normal(dim)
        y = np.concatenate([y, y + marker_delta * marker / np.linalg.norm(marker)])
        caption_ids += [c + MARK_SUFFIX for c in caption_ids]
    return SeedInputs(seed, cycles, image_ids, x, caption_ids, y, source=f"planted seed {seed}")
