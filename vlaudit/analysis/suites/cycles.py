"""Exact cycles inside a compositionality suite's items, and across them (cycle paper §2.1, applied to the suites).

An exact cycle is two images u₁ ≠ u₂ and two texts v₁ ≠ v₂ with (u₁, v₁), (u₂, v₂) true pairs and the swaps
(u₁, v₂), (u₂, v₁) false pairs. Its contrast Δ = s(u₁,v₁) + s(u₂,v₂) − s(u₁,v₂) − s(u₂,v₁) cancels every
additive part a(u) + b(v) of a score (Proposition 1), so CycleAcc — credit 1 if Δ > tol, ½ if |Δ| ≤ tol, 0
otherwise (:func:`vlaudit.metrics.cycles.cycle_credit`) — is exactly ½ for a scorer that does not couple image
and text, whatever the suite's negatives let it exploit. Two sources, both counted:

* **within** an item — every 2×2 minor of the item's image×text matrix whose diagonal are positives and whose
  anti-diagonal are negatives: the native 2×2 blocks of COLA, MMVP-VLM, ColorSwap and Winoground-like
  suites (one cycle each) and every pair of (image, text) correspondences of a SPEC K×K group (K(K−1)/2);
* **across** items — pair suites (one image, a true text and false ones: ARO, SugarCrepe, VALSE) complete a
  cycle when two items on different images each have as a false text the other's true text: item k says
  (u₁: v₁ true, v₂ false) and item l says (u₂: v₂ true, v₁ false). Texts are matched by their exact text,
  images by :attr:`~vlaudit.records.SuiteImage.key` (file plus crop). All four scores come from the two
  items' own matrices, so nothing beyond the item's pairs is scored.

Each distinct cycle — its two true (image, text) pairs — is counted once, however many items state it.

A cross-item cycle belongs to its items' subset when both share one, else to :data:`ACROSS_SUBSETS`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.metrics.cycles import cycle_contrast
from vlaudit.metrics.suites import SuiteScores
from vlaudit.records import SuiteItem

ACROSS_SUBSETS = "(across subsets)"
#: at most this many cross-item cycles are collected (a suite whose texts repeat across thousands of images
#: could otherwise hold a quadratic number); reaching it is reported (:func:`vlaudit.analysis.suites.evaluate`)
MAX_ACROSS = 200_000
WITHIN, ACROSS = "within", "across"


@dataclass(frozen=True)
class SuiteCycle:
    """One exact cycle of a suite: item ``a`` holds (u₁, v₁) = (``image_a``, ``text_a``) true; item ``b`` holds
    (u₂, v₂) = (``image_b``, ``text_b``) true; for a ``within`` cycle ``a == b``. ``swap_a`` is the index in
    item ``a``'s texts of v₂ (the false pair (u₁, v₂)); ``swap_b`` the index in item ``b``'s texts of v₁."""

    kind: str
    subset: str
    a: int
    image_a: int
    text_a: int
    swap_a: int
    b: int
    image_b: int
    text_b: int
    swap_b: int


def within_item_cycles(index: int, item: SuiteItem) -> list[SuiteCycle]:
    """Every 2×2 minor of one item whose (i_a, j_a), (i_b, j_b) are positives and (i_a, j_b), (i_b, j_a) are
    negatives (i_a ≠ i_b, j_a ≠ j_b), each unordered pair of positives once, in positive order."""
    true = set(item.positives)
    positives = sorted(true)
    out = []
    for first, (ia, ja) in enumerate(positives):
        for ib, jb in positives[first + 1:]:
            if (ia != ib and ja != jb and (ia, jb) not in true and (ib, ja) not in true
                    and item.images[ia].key != item.images[ib].key and item.texts[ja] != item.texts[jb]):
                out.append(SuiteCycle(WITHIN, item.subset, index, ia, ja, jb, index, ib, jb, ja))
    return out


def across_item_cycles(items: Sequence[SuiteItem], limit: int | None = MAX_ACROSS) -> list[SuiteCycle]:
    """The cycles two items complete (module docstring), each unordered pair of (item, image, true text, false
    text) entries once, ordered by the first item then the second; at most ``limit`` (None: all)."""
    # (true text, false text) -> every (item, image index, true text index, false text index) that states it
    stated: dict[tuple[str, str], list[tuple[int, int, int, int]]] = defaultdict(list)
    for k, item in enumerate(items):
        true = set(item.positives)
        for i, j in item.positives:
            for j2, text in enumerate(item.texts):
                if (i, j2) not in true and text != item.texts[j]:
                    stated[(item.texts[j], text)].append((k, i, j, j2))
    out = []
    for (v1, v2), entries in stated.items():
        if v1 >= v2:  # each unordered text pair once: (v1, v2) is met again as (v2, v1)
            continue
        for k, i, j, j2 in entries:
            for other, i2, jj, jj2 in stated.get((v2, v1), ()):
                if other == k or items[k].images[i].key == items[other].images[i2].key:
                    continue  # the same item is a within-item minor; the same image is no cycle
                subset = items[k].subset if items[k].subset == items[other].subset else ACROSS_SUBSETS
                first, second = sorted(((k, i, j, j2), (other, i2, jj, jj2)))  # the earlier item is item a
                out.append(SuiteCycle(ACROSS, subset, *first, *second))
                if limit is not None and len(out) >= limit:
                    out.sort(key=lambda c: (c.a, c.b, c.image_a, c.text_a, c.image_b, c.text_b))
                    return out
    out.sort(key=lambda c: (c.a, c.b, c.image_a, c.text_a, c.image_b, c.text_b))
    return out


def cycle_key(items: Sequence[SuiteItem], cycle: SuiteCycle) -> frozenset[tuple[str, str]]:
    """What makes a cycle the cycle it is: its two true (image key, text) pairs, whichever items state them."""
    a, b = items[cycle.a], items[cycle.b]
    return frozenset({(a.images[cycle.image_a].key, a.texts[cycle.text_a]),
                      (b.images[cycle.image_b].key, b.texts[cycle.text_b])})


def suite_cycles(items: Sequence[SuiteItem], *, across: bool = True, max_across: int | None = MAX_ACROSS
                 ) -> list[SuiteCycle]:
    """The distinct exact cycles of a suite: within every item, then (``across``) between items. A cycle that
    several items state (the same two images and texts in a 2×2 item and again in two pair items, or an item
    repeated) is counted once, where it is first found (within items first). At most ``max_across`` cross-item
    cycles are collected (:data:`MAX_ACROSS`)."""
    found = [cycle for k, item in enumerate(items) for cycle in within_item_cycles(k, item)]
    return distinct_cycles(items, found + (across_item_cycles(items, max_across) if across else []))


def distinct_cycles(items: Sequence[SuiteItem], found: Sequence[SuiteCycle]) -> list[SuiteCycle]:
    """``found`` with each cycle (:func:`cycle_key`) kept once, where it first appears."""
    seen: set[frozenset[tuple[str, str]]] = set()
    out = []
    for cycle in found:
        key = cycle_key(items, cycle)
        if key not in seen:
            seen.add(key)
            out.append(cycle)
    return out


def cycle_scores(cycles: Sequence[SuiteCycle], scores: SuiteScores) -> np.ndarray:
    """The ``(n_cycles, 4)`` float64 matrix [s(u₁,v₁), s(u₂,v₂), s(u₁,v₂), s(u₂,v₁)] read from the items'
    matrices (the layout of :func:`vlaudit.metrics.cycles.block_scores`)."""
    out = np.empty((len(cycles), 4), dtype=np.float64)
    for row, c in enumerate(cycles):
        a, b = np.asarray(scores.pairs[c.a], np.float64), np.asarray(scores.pairs[c.b], np.float64)
        out[row] = (a[c.image_a, c.text_a], b[c.image_b, c.text_b], a[c.image_a, c.swap_a], b[c.image_b, c.swap_b])
    return out


def suite_contrasts(cycles: Sequence[SuiteCycle], scores: SuiteScores) -> np.ndarray:
    """Δ of every cycle in float64 (:func:`vlaudit.metrics.cycles.cycle_contrast`)."""
    matrix = cycle_scores(cycles, scores)
    return cycle_contrast(matrix[:, 0], matrix[:, 1], matrix[:, 2], matrix[:, 3])
