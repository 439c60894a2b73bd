"""Finite-sample audits of a comparison set (cycle paper §2.2 Theorem 1, §A.5).

A *signed comparison set* is a multiset of (image, caption, weight) entries; a linear comparison
Σ w·s(u, v) cancels every additive score a(u) + b(v) iff every image and every caption has signed degree
Σ_{entries containing it} w = 0 (Theorem 1). For cycles the entries are the matched pairs with weight +1
and the swaps with weight −1, so all degrees are exactly zero.

The marginal audits compare the distribution of images (and captions, and caption lengths) among matched
entries with that among swapped entries by total-variation distance TV(p, q) = ½ Σ |p − q| (§A.5); on a
valid cycle set all three are exactly 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, TypeVar

from vlaudit.errors import InputError
from vlaudit.records import Cycle

# a weight is ±1 for cycles, a float or an exact Fraction for labelled pairs; degrees keep its type
Weight = TypeVar("Weight", int, float, Fraction)


def signed_degrees(
    entries: Iterable[tuple[str, str, Weight]],
) -> tuple[dict[str, Weight], dict[str, Weight]]:
    """Signed degree of every image and caption in a comparison set of (image, caption, weight)."""
    image_degree: dict[str, Weight] = {}
    caption_degree: dict[str, Weight] = {}
    for image_id, caption_id, weight in entries:
        image_degree[image_id] = image_degree.get(image_id, 0) + weight
        caption_degree[caption_id] = caption_degree.get(caption_id, 0) + weight
    return image_degree, caption_degree


def cycle_entries(cycles: Iterable[Cycle]) -> list[tuple[str, str, int]]:
    """The signed comparison set of a cycle set: +1 for matched pairs, −1 for swaps."""
    return [(u, v, 1 if label else -1) for cycle in cycles for (u, v, label) in cycle.entries()]


def max_abs_signed_degree(entries: Iterable[tuple[str, str, float]]) -> float:
    """max |degree| over all images and captions; 0 iff additive scores cancel exactly (Theorem 1)."""
    images, captions = signed_degrees(entries)
    values = [abs(v) for v in images.values()] + [abs(v) for v in captions.values()]
    return max(values, default=0)


def total_variation(p: Counter | Mapping[object, int], q: Counter | Mapping[object, int]) -> float:
    """TV distance ½ Σ |p(x) − q(x)| between two empirical distributions given as counts (exact rationals)."""
    total_p, total_q = sum(p.values()), sum(q.values())
    if total_p == 0 or total_q == 0:
        return 0.0 if total_p == total_q else 1.0
    keys = set(p) | set(q)
    distance = sum(abs(Fraction(p.get(k, 0), total_p) - Fraction(q.get(k, 0), total_q)) for k in keys) / 2
    return float(distance)


def marginal_tv(cycles: Sequence[Cycle], caption_text: Mapping[str, str] | None = None) -> dict[str, float | None]:
    """TV between matched and swapped marginals of images, captions and (with texts) caption word counts."""
    matched_images: Counter = Counter()
    swapped_images: Counter = Counter()
    matched_captions: Counter = Counter()
    swapped_captions: Counter = Counter()
    for cycle in cycles:
        for image_id, caption_id, label in cycle.entries():
            (matched_images if label else swapped_images)[image_id] += 1
            (matched_captions if label else swapped_captions)[caption_id] += 1
    result: dict[str, float | None] = {
        "tv_image": total_variation(matched_images, swapped_images),
        "tv_caption": total_variation(matched_captions, swapped_captions),
        "tv_caption_length": None,
    }
    if caption_text is not None:
        def lengths(counts: Counter) -> Counter:
            out: Counter = Counter()
            for caption_id, count in counts.items():
                if caption_id not in caption_text:
                    raise InputError("no caption text for the length audit", record=caption_id, field="caption_id")
                out[len(caption_text[caption_id].split())] += count
            return out

        result["tv_caption_length"] = total_variation(lengths(matched_captions), lengths(swapped_captions))
    return result


def audit_cycles(cycles: Sequence[Cycle], caption_text: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Table 5 audit of one cycle set: counts, marginal TVs and the maximum |signed degree|."""
    images = {u for c in cycles for u in (c.image_1, c.image_2)}
    captions = {v for c in cycles for v in (c.caption_1, c.caption_2)}
    return {
        "cycles": len(cycles),
        "images": len(images),
        "captions": len(captions),
        **marginal_tv(cycles, caption_text),
        "max_abs_signed_degree": max_abs_signed_degree(cycle_entries(cycles)),
    }
