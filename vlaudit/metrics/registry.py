"""The metric registry: name → the pure function, what it is called with, and the properties it declares.

The registry changes no metric: each entry holds the function of :mod:`vlaudit.metrics` or
:mod:`vlaudit.stats` itself (or a one-line composition of two of them), so what a caller computes through it
is what the analyses compute. It exists so that one set of common tests (in the manner of scikit-learn's
``test_common.py``) holds every metric to the properties it declares, and a new metric is checked by adding
one line here.

**Inputs.** ``Metric.inputs`` names, in call order, the kind of each positional argument (see
:data:`INPUT_KINDS`): all are aligned on the same rows (items, cycles or blocks), so that a row permutation,
the answer swap and a dtype change are defined once for every metric.

**Properties** (:data:`PROPERTIES`):

* ``row_order`` — permuting the rows permutes a per-row output alike and leaves a summary unchanged;
* ``additive_half`` — block scores of an additive model s(u, v) = a(u) + b(v) give exactly ½ (cycle paper
  Proposition 1: Δ = 0 up to rounding, inside the tie tolerance);
* ``cu_identity`` — every output group holding ``acc``, ``dcc`` and ``cu`` has C-U = Acc − D-CC (VCA §12);
* ``label_symmetric`` — unchanged by swapping the answer labels: yes ↔ no (every margin negated, every
  gold label and ranking target flipped, ranking scores negated) and, for 2×2 blocks, the two pairs
  (u1, v1) ↔ (u2, v2);
* ``float64`` — float32 inputs give the float64 result of the same values in float64.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from vlaudit.metrics.cycles import cycle_acc, cycle_contrast, cycle_credit
from vlaudit.metrics.two_by_two import naturalbench_outcomes, winoground_outcomes
from vlaudit.metrics.vca.permutation import permutation_dependence, permutation_summary
from vlaudit.metrics.vca.proxies import (
    comprehensiveness,
    confidence,
    fpvg_style,
    gold_log_prob,
    min_js,
    perceptual_score,
    permutation_drop,
    shortcut_score,
    sufficiency,
    visnec_style,
    visual_dependence,
)
from vlaudit.metrics.vca.relation import relation_groups, relation_summary
from vlaudit.metrics.vca.robustness import (
    aggregation_gaps,
    agreement,
    compare_gaps,
    erasure_effect,
    jaccard,
    spearman,
)
from vlaudit.metrics.vca.support import (
    aligned_support,
    balanced,
    correctness,
    decision_survival,
    decomposition,
    dependence,
    gap_summary,
    image_gap,
    prediction_direction,
    stratified,
    strict_isolation,
)
from vlaudit.stats.ranking import auprc, auroc, high_minus_low, percentile_ranks

#: what each input kind is; every kind is aligned on the rows (items, cycles or 2×2 blocks)
INPUT_KINDS: Mapping[str, str] = MappingProxyType({
    "block_scores": "(n, 4) float scores [s11, s22, s12, s21] of 2×2 blocks, s12 = s(u1, v2) (cycle paper §2)",
    "s11": "(n,) float, s(u1, v1)", "s22": "(n,) float, s(u2, v2)",
    "s12": "(n,) float, s(u1, v2)", "s21": "(n,) float, s(u2, v1)",
    "delta": "(n,) float cycle contrasts Δ (cycle paper Eq. 1)",
    "margins": "context → (n,) float yes/no margins m_c = NLL(no) − NLL(yes) (VCA §3)",
    "m_original": "(n,) float margins under the original image",
    "labels": "(n,) bool gold answers (True = yes)",
    "direction": "(n,) float original decisions d = ±1 (VCA §3)",
    "gap": "(n,) float image gaps G_img with the headline controls (VCA §3)",
    "gap_alt": "(n,) float image gaps with an alternate control set, text + mean (VCA §18)",
    "dep": "(n,) bool Dep = G_img > 0", "dep_perm": "(n,) bool Dep_perm (VCA §18)",
    "correct": "(n,) bool original decision agrees with the gold label",
    "strict": "(n,) bool strict isolation (VCA §12)",
    "group_ids": "(n,) object same-image relation group of each statement (VCA §13)",
    "statements": "(n,) bool the statement is the group's true one",
    "scores": "(n,) float a continuous score to rank by", "target": "(n,) bool a binary target (VCA §15)",
})

PROPERTIES = ("row_order", "additive_half", "cu_identity", "label_symmetric", "float64")


@dataclass(frozen=True)
class Metric:
    """One registered metric: ``function(*inputs)`` returns one value per row (``per_row``) or a summary."""

    name: str
    function: Callable[..., Any]
    inputs: tuple[str, ...]
    per_row: bool
    properties: frozenset[str]
    reference: str

    def __call__(self, values: Mapping[str, Any]) -> Any:
        """The metric of ``values`` (input kind → value), called with the kinds it names in order."""
        return self.function(*(values[kind] for kind in self.inputs))


def relation_rates(group_ids: Sequence[object], statements: np.ndarray, margins: Mapping[str, np.ndarray],
                   dep: np.ndarray) -> dict[str, float]:
    """The §13 group rates: :func:`relation_summary` of :func:`relation_groups` (VCA §13)."""
    return relation_summary(relation_groups(group_ids, statements, margins, dep))


def balanced_gold_rates(direction: np.ndarray, dep: np.ndarray, correct: np.ndarray, strict: np.ndarray,
                        labels: np.ndarray) -> dict[str, float]:
    """Balanced acc, dcc and cu over the gold-yes and gold-no strata (VCA §12)."""
    return balanced(stratified(direction, dep, correct, strict, labels)["gold"])


def rele_erasure(margins: Mapping[str, np.ndarray], dep: np.ndarray) -> dict[str, float]:
    """:func:`erasure_effect` of the RelE view (VCA §11, §18)."""
    return erasure_effect(margins, "rele", dep)


_ALL = frozenset({"row_order", "label_symmetric", "float64"})
_NO_SWAP = frozenset({"row_order", "float64"})


_METRICS = (
    # cycle paper §2 and the 2×2 benchmarks' own metrics
    Metric("cycle_contrast", cycle_contrast, ("s11", "s22", "s12", "s21"), True, _ALL, "cycle §2, Eq. 1"),
    Metric("cycle_credit", cycle_credit, ("delta",), True, _ALL | {"additive_half"}, "cycle §2.1"),
    Metric("cycle_acc", cycle_acc, ("delta",), False, _ALL | {"additive_half"}, "cycle §2.1, Prop. 1"),
    Metric("winoground", winoground_outcomes, ("block_scores",), True, _ALL, "Thrush et al. 2022"),
    Metric("naturalbench", naturalbench_outcomes, ("block_scores",), True, _ALL, "Li et al. 2024"),
    # VCA support axis §3, §12, the permutation calibration §18
    Metric("prediction_direction", prediction_direction, ("m_original",), True, _NO_SWAP, "VCA §3"),
    Metric("aligned_support", aligned_support, ("direction", "m_original"), True, _ALL, "VCA §3"),
    Metric("image_gap", image_gap, ("margins",), True, _ALL, "VCA §3"),
    Metric("dependence", dependence, ("gap",), True, _ALL, "VCA §3"),
    Metric("correctness", correctness, ("direction", "labels"), True, _ALL, "VCA §12"),
    Metric("strict_isolation", strict_isolation, ("margins",), True, _ALL, "VCA §12"),
    Metric("decomposition", decomposition, ("dep", "correct"), False, _ALL | {"cu_identity"}, "VCA §12"),
    Metric("stratified", stratified, ("direction", "dep", "correct", "strict", "labels"), False,
       _NO_SWAP | {"cu_identity"}, "VCA §12"),
    Metric("balanced", balanced_gold_rates, ("direction", "dep", "correct", "strict", "labels"), False,
       _ALL | {"cu_identity"}, "VCA §12"),
    Metric("decision_survival", decision_survival, ("margins", "dep"), False, _ALL, "VCA §12"),
    Metric("gap_summary", gap_summary, ("gap",), False, _ALL, "VCA §12"),
    Metric("permutation_dependence", permutation_dependence, ("margins",), True, _ALL, "VCA §18"),
    Metric("permutation_summary", permutation_summary, ("dep", "dep_perm", "correct"), False, _ALL, "VCA §18"),
    # relation axis §13
    Metric("relation", relation_rates, ("group_ids", "statements", "margins", "dep"), False, _NO_SWAP, "VCA §13"),
    # comparison signals §15, §16, §18
    Metric("confidence", confidence, ("m_original",), True, _ALL, "VCA §15"),
    Metric("gold_log_prob", gold_log_prob, ("m_original", "labels"), True, _ALL, "VCA §16"),
    Metric("visnec_style", visnec_style, ("margins", "labels"), True, _ALL, "VCA §16"),
    Metric("shortcut_score", shortcut_score, ("margins", "labels"), True, _ALL, "VCA §16"),
    Metric("perceptual_score", perceptual_score, ("margins", "labels"), True, _ALL, "VCA §18"),
    Metric("permutation_drop", permutation_drop, ("margins",), True, _ALL, "VCA §18"),
    Metric("sufficiency", sufficiency, ("margins",), True, _ALL, "VCA §18"),
    Metric("comprehensiveness", comprehensiveness, ("margins",), True, _ALL, "VCA §18"),
    Metric("fpvg_style", fpvg_style, ("margins",), True, _ALL, "VCA §18"),
    Metric("min_js", min_js, ("margins",), True, _ALL, "VCA §18"),
    Metric("visual_dependence", visual_dependence, ("margins", "labels"), False, _ALL, "VCA §18"),
    # robustness §18
    Metric("aggregation_gaps", aggregation_gaps, ("margins",), True, _ALL, "VCA §18"),
    Metric("compare_gaps", compare_gaps, ("gap", "gap_alt", "correct"), False, _ALL, "VCA §18"),
    Metric("dep_agreement", agreement, ("dep", "dep_perm"), False, _ALL, "VCA §18"),
    Metric("dep_jaccard", jaccard, ("dep", "dep_perm"), False, _ALL, "VCA §18"),
    Metric("gap_spearman", spearman, ("gap", "gap_alt"), False, _ALL, "VCA §18"),
    Metric("rele_erasure", rele_erasure, ("margins", "dep"), False, _ALL, "VCA §11, §18"),
    # ranking an external target (stats), VCA §15, §16
    Metric("auroc", auroc, ("scores", "target"), False, _ALL, "VCA §15"),
    Metric("auprc", auprc, ("scores", "target"), False, _NO_SWAP, "VCA §15"),
    Metric("high_minus_low", high_minus_low, ("scores", "target"), False, _NO_SWAP, "VCA §15"),
    Metric("percentile_ranks", percentile_ranks, ("scores",), True, _NO_SWAP, "VCA §15, §16"),
)

#: name → metric
METRICS: Mapping[str, Metric] = MappingProxyType({metric.name: metric for metric in _METRICS})


def metrics_with(prop: str) -> list[Metric]:
    """The registered metrics that declare ``prop`` (one of :data:`PROPERTIES`)."""
    if prop not in PROPERTIES:
        raise ValueError(f"unknown metric property {prop!r}; known: {', '.join(PROPERTIES)}")
    return [metric for metric in METRICS.values() if prop in metric.properties]
