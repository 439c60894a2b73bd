"""Geometric relation rules between instance boxes (cycle paper §4, §D.2).

Boxes are COCO [x, y, w, h]; cx, cy are box centres, W, H the image size (y grows downwards).

* left_of(a, b)  iff cx(a) + m_x·W < cx(b);   right_of(a, b) = left_of(b, a)
* above(a, b)    iff cy(a) + m_y·H < cy(b);   below(a, b)    = above(b, a)
* larger_than(a, b) iff area(a) ≥ ρ·area(b);  smaller_than(a, b) = larger_than(b, a)

A statement (subject category, relation, object category) *holds* in an image if some instance pair of the
two categories satisfies the rule. Three verdicts, so that every emitted block is certain (§4,
"conservative rules, complete-block filter"):

* **valid**: it holds over *eligible* instances (iscrowd = 0, box area ≥ ``min_area`` of the image) with the
  margins m_x, m_y and ratio ρ;
* **invalid**: a category is absent altogether, or it fails over *all* instances (crowd and small ones
  included) with zero margin and ratio 1, i.e. no instance pair satisfies the relation at all;
* otherwise **unverifiable**: a block that needs such a pair is discarded.

Because the rule is an existential over instance pairs, it is separable: left_of holds somewhere iff
min cx(a) + m·W < max cx(b). Builders therefore keep per-(image, category) extremes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from vlaudit.errors import InputError
from vlaudit.geometry import centre_relation_holds
from vlaudit.relations import relation_phrase

RELATIONS = ("left of", "right of", "above", "below", "larger than", "smaller than")
RELATION_CODE = {name: code for code, name in enumerate(RELATIONS)}
RELATION_TEXT = {name: relation_phrase(name) for name in RELATIONS}


@dataclass(frozen=True)
class GeometryRules:
    """Margins of the validity rule and the eligibility threshold (defaults of §D.2)."""

    margin_x: float = 0.05
    margin_y: float = 0.05
    size_ratio: float = 2.0
    min_area: float = 0.01

    def __post_init__(self) -> None:
        # a negative margin or a ratio under 1 would call a statement valid that the zero-margin rule calls
        # false, so a "valid" matched pair could be wrong
        for name, low, high in (("margin_x", 0.0, 1.0), ("margin_y", 0.0, 1.0), ("size_ratio", 1.0, float("inf")),
                                ("min_area", 0.0, 1.0)):
            value = getattr(self, name)
            if not (low <= value <= high):
                raise InputError(f"must be in [{low:g}, {high:g}], got {value!r}", field=name)

    def as_dict(self) -> dict[str, float | str]:
        return {**asdict(self),
                "left_of": "cx(a) + margin_x*W < cx(b)", "above": "cy(a) + margin_y*H < cy(b)",
                "larger_than": "area(a) >= size_ratio*area(b)",
                "eligible": "iscrowd == 0 and w*h >= min_area*W*H",
                "invalid": "category absent, or no instance pair satisfies the rule with zero margin and ratio 1"}


def inverse(relation: str) -> str:
    """right of ↔ left of, below ↔ above, smaller than ↔ larger than."""
    code = RELATION_CODE[relation]
    return RELATIONS[code ^ 1]


def canonical(subject: int, code: int, obj: int) -> tuple[int, int, int]:
    """The same statement with the even (left/above/larger) relation code: (b, right of, a) → (a, left of, b)."""
    return (obj, code - 1, subject) if code % 2 else (subject, code, obj)


def caption_text(subject: str, relation: str, obj: str) -> str:
    """'a dog to the left of a chair' — the generated caption of a relation statement."""
    return f"{_article(subject)} {subject} {RELATION_TEXT[relation]} {_article(obj)} {obj}"


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


# --- vectorised verdicts over per-(image, category) extremes -------------------------------------------

@dataclass
class CategoryStats:
    """Per-(image, category) extremes over all instances and over eligible ones (NaN where none).

    ``lo``/``hi`` have columns (cx, cy, area); ``*_e`` are the same over eligible instances. ``size`` is
    (W, H) of the image of each row; ``n_all``/``n_elig`` the instance counts.
    """

    lo: np.ndarray
    hi: np.ndarray
    lo_e: np.ndarray
    hi_e: np.ndarray
    size: np.ndarray
    n_all: np.ndarray
    n_elig: np.ndarray


def category_stats(group: np.ndarray, n_groups: int, bbox: np.ndarray, eligible: np.ndarray,
                   size: np.ndarray, order: np.ndarray | None = None) -> CategoryStats:
    """Extremes of box centre and area per group (group = index of (image, category) of each instance).

    ``order``: ``np.argsort(group, kind="stable")`` when the caller has it already.
    """
    x, y, w, h = bbox.T
    values = np.stack([x + w / 2, y + h / 2, w * h], axis=1)
    lo = np.full((n_groups, 3), np.inf)
    hi = np.full((n_groups, 3), -np.inf)
    if order is None:
        order = np.argsort(group, kind="stable")
    _reduce(lo, hi, group[order], values[order])
    lo_e = np.full((n_groups, 3), np.inf)
    hi_e = np.full((n_groups, 3), -np.inf)
    order_e = order[eligible[order]]
    _reduce(lo_e, hi_e, group[order_e], values[order_e])
    group_size = np.zeros((n_groups, 2))
    group_size[group] = size
    return CategoryStats(lo=lo, hi=hi, lo_e=lo_e, hi_e=hi_e, size=group_size,
                         n_all=np.bincount(group, minlength=n_groups),
                         n_elig=np.bincount(group[eligible], minlength=n_groups))


def _reduce(lo: np.ndarray, hi: np.ndarray, group: np.ndarray, values: np.ndarray) -> None:
    """lo[g] / hi[g] = min / max over the rows of group g; ``group`` sorted (reduceat beats ufunc.at)."""
    if len(group) == 0:
        return
    starts = np.concatenate([[0], np.nonzero(group[1:] != group[:-1])[0] + 1])
    lo[group[starts]] = np.minimum.reduceat(values, starts, axis=0)
    hi[group[starts]] = np.maximum.reduceat(values, starts, axis=0)


def holds(stats: CategoryStats, ga: np.ndarray, gb: np.ndarray, code: np.ndarray, rules: GeometryRules,
          *, eligible: bool) -> np.ndarray:
    """Whether (a, relation, b) holds, from group rows ``ga``/``gb`` (−1 = category absent).

    ``eligible=True``: the validity rule (eligible instances, margins); ``False``: the zero-margin rule
    over all instances (its negation is invalidity).
    """
    ga, gb, code = np.broadcast_arrays(np.asarray(ga), np.asarray(gb), np.asarray(code))
    swap = code % 2 == 1
    first = np.where(swap, gb, ga)
    second = np.where(swap, ga, gb)
    axis = code // 2
    present = (first >= 0) & (second >= 0)
    f = np.where(present, first, 0)
    s = np.where(present, second, 0)
    lo, hi = (stats.lo_e, stats.hi_e) if eligible else (stats.lo, stats.hi)
    lo_f = lo[f, axis]
    hi_f = hi[f, axis]
    hi_s = hi[s, axis]
    lo_s = lo[s, axis]
    if eligible:
        dims = stats.size[f, np.minimum(axis, 1)]
        margin = np.where(axis == 0, rules.margin_x, rules.margin_y) * dims
        ratio = rules.size_ratio
    else:
        margin = np.zeros(len(f))
        ratio = 1.0
    with np.errstate(invalid="ignore"):
        positional = lo_f + margin < hi_s
        size = hi_f >= ratio * lo_s
    result = np.where(axis == 2, size, positional)
    if eligible:
        result &= (stats.n_elig[f] > 0) & (stats.n_elig[s] > 0)
    return result & present


# --- scalar re-check over instance lists (independent of the vectorised path; used by the audit) -------

def statement_verdict(boxes_a: Sequence[tuple[Sequence[float], bool]], boxes_b: Sequence[tuple[Sequence[float], bool]],
                      relation: str, width: float, height: float, rules: GeometryRules) -> str:
    """'valid', 'invalid' or 'unverifiable' from explicit instance lists [(box, eligible), ...]."""
    if not boxes_a or not boxes_b:
        return "invalid"
    code = RELATION_CODE[relation]
    if code % 2:
        boxes_a, boxes_b, code = boxes_b, boxes_a, code - 1

    def rel(a: Sequence[float], b: Sequence[float], margin: float, ratio: float) -> bool:
        if code == 0:
            return centre_relation_holds(a, b, "left of", margin_x=margin * width)
        if code == 2:
            return centre_relation_holds(a, b, "above", margin_y=margin * height)
        return a[2] * a[3] >= ratio * (b[2] * b[3])

    margin_valid = rules.margin_x if code == 0 else rules.margin_y
    if any(rel(a, b, margin_valid, rules.size_ratio) for a, ea in boxes_a for b, eb in boxes_b if ea and eb):
        return "valid"
    if not any(rel(a, b, 0.0, 1.0) for a, _ in boxes_a for b, _ in boxes_b):
        return "invalid"
    return "unverifiable"
