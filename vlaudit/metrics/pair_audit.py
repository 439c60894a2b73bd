"""How far is a labelled pair benchmark from exact cycles? (``vlaudit cycles audit-pairs``; cycle paper §2.2,
Theorem 1, §A.5, applied to other benchmarks' negatives.)

Input: labelled pairs (image, caption, label), label 1 for a valid (positive) pair and 0 for a negative. The
caption is identified by its id, or by its text when the benchmark has no ids (then two identical texts are the
same caption). Quantities, positives against negatives:

* ``tv_image`` / ``tv_caption`` — TV(p, q) = ½ Σ |p − q| between the image (caption) marginal among positives
  and among negatives (:func:`vlaudit.metrics.audits.total_variation`). A negative caption never seen as a
  positive — SugarCrepe's replaced/swapped/added captions — puts its whole mass on one side, so tv_caption = 1:
  a caption-only score can tell negatives from positives without looking at the image;
* ``tv_caption_length`` — the same over caption word counts (None when a caption has no text).
  All three are None when the table has no positives or no negatives (a TV with an empty side is undefined);
* signed degrees (Theorem 1): deg(u) = Σ of the signed weights w of the entries of image u (caption v alike).
  Theorem 1's condition is about the comparison the benchmark scores, so the weights are that comparison's,
  the pooled matched-vs-mismatched comparison, mean score of positives minus mean of negatives: w = +1/n_pos
  per positive, −1/n_neg per negative (``weighting="mean"``, the only one). Per side,
  ``degree_imbalance_image`` = Σ_images |deg| / Σ |w| (caption side alike), 0 iff additive image-only
  (caption-only) scores cancel in the comparison, 1 when no image (caption) appears on both sides;
  ``degree_imbalance`` = the mean of the two sides. **By identity a side's imbalance is its marginal TV**: with
  p, q the positive and negative marginals, deg(u) = p(u) − q(u) and Σ |w| = 2, so Σ_u |deg(u)| / 2 = TV(p, q)
  (it is reported beside the TV as Theorem 1's form of the same number). What's Up Controlled-A — 1 positive
  and 3 negatives per image — is balanced on the image side (0). ±1 weights (the former ``"count"``) gave it
  0.5 at TV 0: ``Σ_u |n⁺(u) − n⁻(u)| / n`` there is the class ratio |n⁺ − n⁻| / n and nothing of the images,
  and with the class-ratio part taken out (negatives reweighted to the positives' total) it is the TV again,
  so the option was dropped (:data:`COUNT_DROPPED`). ``max_abs_signed_degree`` is in these weights. Degrees
  are summed as exact fractions, so 0 is 0;
* exact-cycle completion — a positive (u₁, v₁) and a positive (u₂, v₂), u₁ ≠ u₂, v₁ ≠ v₂, whose swaps (u₁, v₂)
  and (u₂, v₁) are both labelled negatives in the table form an exact cycle; ``positives_in_cycles`` /
  ``negatives_in_cycles`` count the entries that lie in at least one such block.

On an exact-cycle set written as pairs (matched +, swaps −) every TV and degree is exactly 0 and every entry
is in a cycle.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

from vlaudit.errors import InputError
from vlaudit.metrics.audits import signed_degrees, total_variation
from vlaudit.records import LabelledPair
from vlaudit.settings import PAIR_AUDIT_WEIGHTINGS

WEIGHTINGS = PAIR_AUDIT_WEIGHTINGS
#: why ``weighting="count"`` (±1 per entry) is refused (see the module docstring)
COUNT_DROPPED = ("the 'count' weighting (±1 per entry) was dropped: its imbalance only restated the positive:"
                 "negative ratio (What's Up Controlled-A: 0.500 at image TV 0), and without that ratio it is the "
                 "marginal TV; the 'mean' weighting's imbalance equals the TV by identity")


def cycle_completions(pairs: Iterable[LabelledPair]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(positives, negatives) — as (image, caption) keys — that lie in at least one exact cycle of the table."""
    positives_of_image: dict[str, set[str]] = defaultdict(set)
    positives_of_caption: dict[str, set[str]] = defaultdict(set)
    negatives: set[tuple[str, str]] = set()
    for pair in pairs:
        if pair.label:
            positives_of_image[pair.image_id].add(pair.caption)
            positives_of_caption[pair.caption].add(pair.image_id)
        else:
            negatives.add((pair.image_id, pair.caption))
    in_pos: set[tuple[str, str]] = set()
    in_neg: set[tuple[str, str]] = set()
    for u1, v2 in negatives:  # the swap (u1, v2) of a block with positives (u1, v1) and (u2, v2)
        for v1 in positives_of_image.get(u1, ()):
            if v1 == v2:
                continue
            for u2 in positives_of_caption.get(v2, ()):
                if u2 != u1 and (u2, v1) in negatives:
                    in_pos.update(((u1, v1), (u2, v2)))
                    in_neg.update(((u1, v2), (u2, v1)))
    return in_pos, in_neg


def signed_weights(labels: Sequence[int], weighting: str = "mean") -> list[Fraction]:
    """The signed weight of each entry in the scored comparison (Theorem 1): ``"mean"`` +1/n_pos, −1/n_neg."""
    check_weighting(weighting)
    n_pos = sum(1 for label in labels if label)
    n_neg = len(labels) - n_pos
    return [Fraction(1, n_pos) if label else Fraction(-1, n_neg) for label in labels]


def check_weighting(weighting: str) -> None:
    """Refuse a weighting other than ``"mean"`` (``"count"``: :data:`COUNT_DROPPED`) as an InputError."""
    if weighting == "count":
        raise InputError(COUNT_DROPPED, field="weighting")
    if weighting not in WEIGHTINGS:
        raise InputError(f"unknown weighting {weighting!r}; expected one of {', '.join(WEIGHTINGS)}",
                         field="weighting")


def degree_imbalance(pairs: Sequence[LabelledPair], weighting: str = "mean") -> dict[str, Any]:
    """Signed degrees of images and captions under ``weighting`` and the imbalance per side (module docstring)."""
    weights = signed_weights([p.label for p in pairs], weighting)
    degrees_image, degrees_caption = signed_degrees(
        (p.image_id, p.caption, w) for p, w in zip(pairs, weights, strict=True))
    mass = sum(abs(w) for w in weights)

    def side(degrees: dict[str, Fraction]) -> float:
        return float(sum(abs(d) for d in degrees.values()) / mass) if mass else 0.0

    image, caption = side(degrees_image), side(degrees_caption)
    absolute = [abs(d) for d in (*degrees_image.values(), *degrees_caption.values())]
    return {
        "weighting": weighting,
        "degree_imbalance": (image + caption) / 2, "degree_imbalance_image": image,
        "degree_imbalance_caption": caption, "max_abs_signed_degree": float(max(absolute, default=0)),
        "images": len(degrees_image), "captions": len(degrees_caption),
        "images_imbalanced": sum(1 for d in degrees_image.values() if d != 0),
        "captions_imbalanced": sum(1 for d in degrees_caption.values() if d != 0),
    }


def audit_pairs(pairs: Sequence[LabelledPair], weighting: str = "mean") -> dict[str, Any]:
    """All quantities of the module docstring for one labelled pair table; ``weighting`` of the signed degrees:
    ``"mean"`` (the pooled mean-difference comparison; the only one)."""
    sides: dict[int, dict[str, Counter]] = {1: defaultdict(Counter), 0: defaultdict(Counter)}
    texts_known = True
    for pair in pairs:
        side = sides[1 if pair.label else 0]
        side["image"][pair.image_id] += 1
        side["caption"][pair.caption] += 1
        if pair.text is None:
            texts_known = False
        else:
            side["length"][len(pair.text.split())] += 1
    degrees = degree_imbalance(pairs, weighting)
    in_pos, in_neg = cycle_completions(pairs)
    positive_keys = {(p.image_id, p.caption) for p in pairs if p.label}
    negative_keys = {(p.image_id, p.caption) for p in pairs if not p.label}
    n_pos, n_neg = sum(sides[1]["image"].values()), sum(sides[0]["image"].values())
    both = n_pos > 0 and n_neg > 0
    return {
        "pairs": len(pairs), "positives": n_pos, "negatives": n_neg,
        "images": degrees.pop("images"), "captions": degrees.pop("captions"),
        # a TV between positives and negatives is undefined when one side is empty (None, not 1.0)
        "tv_image": total_variation(sides[1]["image"], sides[0]["image"]) if both else None,
        "tv_caption": total_variation(sides[1]["caption"], sides[0]["caption"]) if both else None,
        "tv_caption_length": (total_variation(sides[1]["length"], sides[0]["length"])
                              if texts_known and both else None),
        **degrees,
        "distinct_positives": len(positive_keys), "distinct_negatives": len(negative_keys),
        "positives_in_cycles": len(in_pos), "negatives_in_cycles": len(in_neg),
        "labelled_both_ways": len(positive_keys & negative_keys),
    }
