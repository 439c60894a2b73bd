"""The relation axis over same-image true/false statement groups (VCA §9, §13).

For a group with one true statement q+ and false statements q−, and a context c:

* H_c        = m_c(q+) − max_{q−} m_c(q−)
* G_int      = H_o − max_{c ∈ controls} H_c   (controls = {text, blank}: H_o − max(H_t, H_b))
* Rel_c      = m_c(q+) ≥ 0 and every m_c(q−) < 0   (accept the true statement, reject every false one)
* PairCredit = G_int > 0
* PairD      = every statement of the group has Dep
* Joint      = Rel_o ∧ PairD, which implies G_int > 0 (§9: m_o⁺ > m_c⁺ and m_o⁻ < m_c⁻ give H_o > H_c)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.metrics.vca.support import DEFAULT_CONTROLS


@dataclass(frozen=True)
class RelationGroups:
    """Per-group arrays, aligned with ``group_ids`` (groups in order of first appearance among items).

    ``h[c]`` and ``rel[c]`` exist for the original context and every control; ``codes[i]`` is the group index
    of item i (−1 for items outside any group); ``true_index[g]`` is the item of the group's true statement.
    """

    group_ids: np.ndarray
    codes: np.ndarray
    true_index: np.ndarray
    h: Mapping[str, np.ndarray]
    rel: Mapping[str, np.ndarray]
    g_int: np.ndarray
    pair_credit: np.ndarray
    pair_d: np.ndarray
    joint: np.ndarray

    @property
    def n_groups(self) -> int:
        return int(self.group_ids.size)


def group_codes(group_ids: Sequence[object] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense codes 0..k−1 by first appearance (−1 for None) and the ``k`` group ids."""
    codes = np.full(len(group_ids), -1, dtype=np.int64)
    index: dict[object, int] = {}
    for i, g in enumerate(group_ids):
        if g is not None:
            codes[i] = index.setdefault(g, len(index))
    return codes, np.array(list(index), dtype=object)


def relation_groups(
    group_ids: Sequence[object] | np.ndarray,
    statements: np.ndarray,
    margins: Mapping[str, np.ndarray],
    dep: np.ndarray,
    controls: Sequence[str] = DEFAULT_CONTROLS,
    *,
    extra_contexts: Sequence[str] = (),
) -> RelationGroups:
    """Compute every §13 group quantity (see the module docstring); groups need one true and ≥ 1 false.

    H_c and Rel_c are computed for the original context, every control and ``extra_contexts`` (reported
    only; G_int uses the controls).
    """
    codes, ids = group_codes(group_ids)
    k = ids.size
    statements = np.asarray(statements, dtype=bool)
    grouped = codes >= 0
    true_mask = grouped & statements
    false_mask = grouped & ~statements
    if np.bincount(codes[true_mask], minlength=k).tolist() != [1] * k:
        raise ValueError("every group needs exactly one true statement")
    if k and np.bincount(codes[false_mask], minlength=k).min() < 1:
        raise ValueError("every group needs at least one false statement")
    true_index = np.empty(k, dtype=np.int64)
    true_index[codes[true_mask]] = np.flatnonzero(true_mask)
    h: dict[str, np.ndarray] = {}
    rel: dict[str, np.ndarray] = {}
    for c in dict.fromkeys(("original", *controls, *extra_contexts)):
        m = np.asarray(margins[c], dtype=np.float64)
        max_false = np.full(k, -np.inf)
        np.maximum.at(max_false, codes[false_mask], m[false_mask])
        m_true = m[true_index]
        h[c] = m_true - max_false
        rel[c] = (m_true >= 0) & (max_false < 0)
    g_int = h["original"] - np.max(np.stack([h[c] for c in controls]), axis=0)
    undepended = np.bincount(codes[grouped & ~np.asarray(dep, dtype=bool)], minlength=k)
    pair_d = undepended == 0
    return RelationGroups(
        group_ids=ids, codes=codes, true_index=true_index, h=h, rel=rel, g_int=g_int,
        pair_credit=g_int > 0, pair_d=pair_d, joint=rel["original"] & pair_d,
    )


def relation_summary(groups: RelationGroups) -> dict[str, float]:
    """Rates over groups (rel_c, pair_credit, pair_d, joint), mean H_c and mean G_int (VCA §13).

    Keys use the short context letters of the paper: rel_o/rel_t/rel_b, h_o/h_t/h_b (first letter of the
    context name; ``mean`` → m, ``mismatch`` → x).
    """
    out: dict[str, float] = {"groups": groups.n_groups}
    for c in groups.rel:
        out[f"rel_{short(c)}"] = float(groups.rel[c].mean())
    out |= {
        "pair_credit": float(groups.pair_credit.mean()),
        "pair_d": float(groups.pair_d.mean()),
        "joint": float(groups.joint.mean()),
        "g_int_mean": float(groups.g_int.mean()),
    }
    for c in groups.h:
        out[f"h_{short(c)}_mean"] = float(groups.h[c].mean())
    return out


def short(context: str) -> str:
    """The paper's one-letter context subscript: original → o, text → t, blank → b, mean → m, mismatch → x."""
    return {"original": "o", "text": "t", "blank": "b", "mean": "m", "mismatch": "x"}.get(context, context)
