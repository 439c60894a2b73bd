"""The official metrics of the compositionality suites, as their authors' code computes them (pure numpy).

One module per suite. Each exposes two pure functions over the items a reader returned
(:class:`~vlaudit.records.SuiteItem`) and their scores (:class:`SuiteScores`):

* ``outcomes(items, scores) -> Outcomes`` — the per-item values the official code averages (0/1 for a
  correct argmax, R@k indicators, ...), with the suite's own tie rule; a float64 matrix, one named column per
  quantity;
* ``aggregate(items, outcomes) -> list[OfficialFigure]`` — the official figures: the suite's aggregation
  (macro over relations, mean over subsets, the first 1,000 items, ...).

Keeping the per-item outcomes apart from the aggregation lets a blind baseline be scored under the suite's own
metric (text-only scores give a matrix whose rows are equal) and lets a filtered subset be re-aggregated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.records import SuiteItem


@dataclass(frozen=True)
class SuiteScores:
    """The scores of a suite's items: ``pairs[k][i, j] = s(items[k].images[i], items[k].texts[j])`` (float64).

    ``texts`` (optional): ``texts[k][a, b]`` the text-to-text similarity of ``items[k].texts[a]`` and
    ``texts[b]`` (SugarCrepe++'s TOT); None where the model has no text encoder of its own (a yes/no MLLM)."""

    pairs: Sequence[np.ndarray]
    texts: Sequence[np.ndarray] | None = None

    def check(self, items: Sequence[SuiteItem]) -> None:
        """Every item has a matrix of its shape; raises ValueError naming the first that does not."""
        if len(self.pairs) != len(items):
            raise ValueError(f"{len(self.pairs)} score matrices for {len(items)} items")
        for item, matrix in zip(items, self.pairs, strict=True):
            if np.shape(matrix) != (len(item.images), len(item.texts)):
                raise ValueError(f"item {item.item_id}: score matrix of shape {np.shape(matrix)}, expected "
                                 f"{(len(item.images), len(item.texts))}")


@dataclass(frozen=True)
class Outcomes:
    """Per-item outcomes: ``values[k, c]`` is item k's value of quantity ``names[c]`` (float64; NaN where the
    quantity does not apply to the item, e.g. t2i on an item with one image)."""

    names: tuple[str, ...]
    values: np.ndarray

    def column(self, name: str) -> np.ndarray:
        return self.values[:, self.names.index(name)]

    def subset(self, mask: np.ndarray) -> Outcomes:
        return Outcomes(self.names, self.values[np.asarray(mask)])


def strict_greater(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """1.0 where a > b (a tie counts wrong), else 0.0, in float64."""
    return (np.asarray(a, dtype=np.float64) > np.asarray(b, dtype=np.float64)).astype(np.float64)


def first_argmax(row: np.ndarray) -> int:
    """``np.argmax``: the first index of the maximum (a tie goes to the earliest candidate, as torch/numpy
    argmax do in the suites' official code)."""
    return int(np.argmax(np.asarray(row, dtype=np.float64)))
