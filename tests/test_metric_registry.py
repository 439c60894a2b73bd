"""Common tests over every registered metric (the model is scikit-learn's ``test_common.py``).

Each metric declares its properties in :mod:`vlaudit.metrics.registry`; the tests below hold every metric to
what it declares, on seeded random panels drawn by hypothesis: row-order invariance, additive scores give
CycleAcc exactly ½ (cycle paper Prop. 1), C-U = Acc − D-CC (VCA §12), label symmetry where it holds, and
float32 inputs giving the float64 result. A new public metric function must be registered or excused.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.metrics.cycles import cycle_contrast
from vlaudit.metrics.registry import INPUT_KINDS, METRICS, PROPERTIES, Metric, metrics_with
from vlaudit.metrics.vca.permutation import permutation_dependence
from vlaudit.metrics.vca.support import correctness, image_gap, prediction_direction, strict_isolation

CONTEXTS = ("original", "text", "blank", "mean", "mismatch", "rele", "irre")
TOL = 1e-12
PANELS = given(n=st.integers(2, 40), seed=st.integers(0, 2**32 - 1))
EXAMPLES = settings(max_examples=12)


# ------------------------------------------------------------------------------------------------ panels


def base_panel(n: int, seed: int, *, additive: bool = False) -> dict[str, Any]:
    """The drawn inputs; every other kind is derived from these (:func:`derive`)."""
    rng = np.random.default_rng(seed)
    if additive:  # s(u, v) = a(u) + b(v) on every block, magnitudes of order 1–100
        a, b = rng.normal(0, 10, (n, 2)), rng.normal(0, 10, (n, 2))
        blocks = np.column_stack([a[:, 0] + b[:, 0], a[:, 1] + b[:, 1], a[:, 0] + b[:, 1], a[:, 1] + b[:, 0]])
    else:
        blocks = rng.normal(0, 1, (n, 4))
    first_true = rng.random(n // 2) < 0.5
    statements = np.column_stack([first_true, ~first_true]).ravel()
    group_ids = [f"g{i // 2}" for i in range(2 * (n // 2))]
    if n % 2:  # an item outside any group
        statements, group_ids = np.append(statements, rng.random() < 0.5), [*group_ids, None]
    return {"margins": {c: rng.normal(0, 2, n) for c in CONTEXTS}, "labels": rng.random(n) < 0.5,
            "block_scores": blocks, "scores": rng.normal(0, 1, n), "target": rng.random(n) < 0.5,
            "group_ids": np.asarray(group_ids, dtype=object), "statements": statements}


def derive(base: Mapping[str, Any]) -> dict[str, Any]:
    """Every input kind of :data:`INPUT_KINDS`, computed from the drawn ones."""
    margins, blocks = base["margins"], base["block_scores"]
    direction = prediction_direction(margins["original"])
    gap = image_gap(margins)
    out = dict(base)
    out |= {"s11": blocks[:, 0], "s22": blocks[:, 1], "s12": blocks[:, 2], "s21": blocks[:, 3],
            "delta": cycle_contrast(blocks[:, 0], blocks[:, 1], blocks[:, 2], blocks[:, 3]),
            "m_original": margins["original"], "direction": direction, "gap": gap,
            "gap_alt": image_gap(margins, ("text", "mean")), "dep": gap > 0,
            "dep_perm": permutation_dependence(margins), "correct": correctness(direction, base["labels"]),
            "strict": strict_isolation(margins)}
    assert set(out) == set(INPUT_KINDS)
    return out


def permuted(base: Mapping[str, Any], order: np.ndarray) -> dict[str, Any]:
    return {k: ({c: m[order] for c, m in v.items()} if isinstance(v, dict) else v[order]) for k, v in base.items()}


def answer_swapped(base: Mapping[str, Any]) -> dict[str, Any]:
    """yes ↔ no (margins negated, gold labels and targets flipped, scores negated); pairs (u1,v1) ↔ (u2,v2)."""
    return {**base, "margins": {c: -m for c, m in base["margins"].items()}, "labels": ~base["labels"],
            "target": ~base["target"], "scores": -base["scores"], "block_scores": base["block_scores"][:, [1, 0, 3, 2]]}


def recast(values: Any, source: type, target: type) -> Any:
    """Every ``source``-typed float array in ``values`` (nested mappings included) as ``target``."""
    if isinstance(values, Mapping):
        return {k: recast(v, source, target) for k, v in values.items()}
    return values.astype(target) if isinstance(values, np.ndarray) and values.dtype == source else values


# ------------------------------------------------------------------------------------------------ outputs


def assert_same(a: Any, b: Any, where: str = "") -> None:
    """Equal outputs: exact for booleans, integers and strings; floats within TOL (NaN equals NaN)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape, f"{where}: shape {a.shape} vs {np.shape(b)}"
        if a.dtype.kind == "f":
            assert np.allclose(a, b, rtol=TOL, atol=TOL, equal_nan=True), f"{where}: {a} vs {b}"
        else:
            assert np.array_equal(a, b), f"{where}: {a} vs {b}"
    elif isinstance(a, float):
        assert isinstance(b, float) and (math.isnan(a) and math.isnan(b) or math.isclose(a, b, rel_tol=TOL,
                                                                                         abs_tol=TOL)), \
            f"{where}: {a} vs {b}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def rows_permuted(out: Any, order: np.ndarray) -> Any:
    if isinstance(out, dict):
        return {k: rows_permuted(v, order) for k, v in out.items()}
    assert isinstance(out, np.ndarray), f"a per-row metric returned {type(out).__name__}"
    return out[order]


def float_leaves(out: Any, where: str = "") -> list[tuple[str, Any]]:
    if isinstance(out, dict):
        return [leaf for k, v in out.items() for leaf in float_leaves(v, f"{where}.{k}")]
    is_float = isinstance(out, np.floating) or isinstance(out, float) or (isinstance(out, np.ndarray)
                                                                         and out.dtype.kind == "f")
    return [(where, out)] if is_float else []


def identity_groups(out: Any) -> list[Mapping[str, Any]]:
    """Every dict in the output holding acc, dcc and cu."""
    if not isinstance(out, dict):
        return []
    own = [out] if {"acc", "dcc", "cu"} <= set(out) else []
    return own + [g for v in out.values() for g in identity_groups(v)]


def is_all_half(out: Any) -> bool:
    if isinstance(out, dict):
        return all(is_all_half(v) for v in out.values())
    return bool(np.all(np.asarray(out, dtype=np.float64) == 0.5))


def _ids(metrics: list[Metric]) -> list[str]:
    return [m.name for m in metrics]


# ------------------------------------------------------------------------------------------------ tests


def test_every_metric_declares_known_inputs_and_properties() -> None:
    for metric in METRICS.values():
        assert set(metric.inputs) <= set(INPUT_KINDS), metric.name
        assert metric.properties <= set(PROPERTIES), metric.name
        assert metric.reference, metric.name
    with pytest.raises(ValueError, match="unknown metric property"):
        metrics_with("monotone")


@pytest.mark.parametrize("metric", metrics_with("row_order"), ids=_ids(metrics_with("row_order")))
@EXAMPLES
@PANELS
def test_row_order(metric: Metric, n: int, seed: int) -> None:
    """Permuting the rows permutes a per-row output alike and leaves a summary unchanged."""
    base = base_panel(n, seed)
    order = np.random.default_rng(seed + 1).permutation(n)
    before, after = metric(derive(base)), metric(derive(permuted(base, order)))
    assert_same(after, rows_permuted(before, order) if metric.per_row else before, metric.name)


@pytest.mark.parametrize("metric", metrics_with("additive_half"), ids=_ids(metrics_with("additive_half")))
@EXAMPLES
@PANELS
def test_additive_scores_give_exactly_half(metric: Metric, n: int, seed: int) -> None:
    """s(u, v) = a(u) + b(v): Δ = 0 up to rounding, so every cycle is a tie and CycleAcc is ½ exactly."""
    out = metric(derive(base_panel(n, seed, additive=True)))
    assert is_all_half(out), f"{metric.name}: {out}"


BLOCK_KINDS = {"block_scores", "s11", "s22", "s12", "s21", "delta"}
NOT_HALF = [m for m in METRICS.values() if BLOCK_KINDS & set(m.inputs) and "additive_half" not in m.properties]


@pytest.mark.parametrize("metric", NOT_HALF, ids=_ids(NOT_HALF))
def test_additive_half_is_declared_truthfully(metric: Metric) -> None:
    """A score metric that does not declare ``additive_half`` is not ½ on additive scores."""
    assert not is_all_half(metric(derive(base_panel(24, 5, additive=True)))), metric.name


@pytest.mark.parametrize("metric", metrics_with("cu_identity"), ids=_ids(metrics_with("cu_identity")))
@EXAMPLES
@PANELS
def test_cu_is_acc_minus_dcc(metric: Metric, n: int, seed: int) -> None:
    groups = identity_groups(metric(derive(base_panel(n, seed))))
    assert groups, f"{metric.name} declares cu_identity but reports no acc/dcc/cu"
    for group in groups:
        if any(group[k] is None or math.isnan(group[k]) for k in ("acc", "dcc", "cu")):
            continue
        assert math.isclose(group["cu"], group["acc"] - group["dcc"], abs_tol=TOL), (metric.name, group)


@pytest.mark.parametrize("metric", metrics_with("label_symmetric"), ids=_ids(metrics_with("label_symmetric")))
@EXAMPLES
@PANELS
def test_label_symmetry(metric: Metric, n: int, seed: int) -> None:
    """Swapping yes ↔ no (and the two pairs of a 2×2 block) changes nothing."""
    base = base_panel(n, seed)
    assert_same(metric(derive(answer_swapped(base))), metric(derive(base)), metric.name)


@pytest.mark.parametrize("metric", metrics_with("float64"), ids=_ids(metrics_with("float64")))
@EXAMPLES
@PANELS
def test_float32_inputs_give_the_float64_result(metric: Metric, n: int, seed: int) -> None:
    values32 = recast(derive(base_panel(n, seed)), np.float64, np.float32)
    out32, out64 = metric(values32), metric(recast(values32, np.float32, np.float64))
    for where, leaf in float_leaves(out32, metric.name):
        assert np.asarray(leaf).dtype == np.float64, f"{where}: {np.asarray(leaf).dtype}"
    assert_same(out32, out64, metric.name)


def test_known_answers_through_the_registry() -> None:
    """Hand-worked values: the registry calls the metric itself (VCA §3, §12; cycle paper §2.1)."""
    margins = {"original": np.array([2.0, -1.0, 0.5, -3.0]), "text": np.array([1.0, 1.0, 0.5, -4.0]),
               "blank": np.array([-1.0, 0.5, 0.0, -2.0])}
    # d = (+, −, +, −); r_o = (2, 1, .5, 3); max r_c = (1, −.5, .5, 4) → G = (1, 1.5, 0, −1), Dep = (T, T, F, F)
    assert METRICS["image_gap"]({"margins": margins}).tolist() == [1.0, 1.5, 0.0, -1.0]
    dep, correct = np.array([True, True, False, False]), np.array([True, False, True, True])
    rates = METRICS["decomposition"]({"dep": dep, "correct": correct})
    assert (rates["acc"], rates["dcc"], rates["cu"]) == (0.75, 0.25, 0.5)
    assert METRICS["cycle_acc"]({"delta": np.array([1.0, -1.0, 0.0, 1e-12])}) == 0.5


MODULES = ("vlaudit.metrics.cycles", "vlaudit.metrics.two_by_two", "vlaudit.metrics.vca.support",
           "vlaudit.metrics.vca.permutation", "vlaudit.metrics.vca.relation", "vlaudit.metrics.vca.proxies",
           "vlaudit.metrics.vca.robustness", "vlaudit.stats.ranking")
#: public functions of those modules that are not registered, and why
NOT_REGISTERED = {
    "keeps_decision": "the per-item predicate Strict and survival share (the tie convention)",
    "tie_counts": "counts the items a tie decides, for the report's warning",
    "paired_ranks": "a leaderboard's ranks from its paired comparisons (tests/test_paired_ranks.py)",
    "block_scores": "assembles the score matrix from records", "split_of": "a cycle's split name",
    "cycle_unit": "the cycles' resampling unit (their clusters), not a metric",
    "cycle_unit_notes": "what a cycle comparison says of its resampling unit (warnings), not a metric",
    "checked_contrasts": "cycle_contrast (registered) with float64 overflow refused, naming the cycle",
    "cycle_counts": "counts cycles per family", "withdraw_small_families": "the §D.5 reporting rule",
    "reduced_precision": "a precision diagnostic of the inputs", "evaluate_cycle_families": "the pipeline over records",
    "summarize_contrasts": "its bootstrap interval resamples rows in order (cycle_acc is registered)",
    "metric_names": "names", "summarize_blocks": "its bootstrap interval resamples rows in order",
    "benchmark_groups": "groups records", "benchmark_metrics": "the pipeline over records",
    "balanced": "registered as 'balanced' over the gold strata",
    "group_codes": "dense codes", "relation_groups": "registered as 'relation'",
    "relation_summary": "registered as 'relation'", "short": "context letters",
    "probability_drop": "registered through permutation_drop, sufficiency, comprehensiveness",
    "ensemble_margins": "combines two runs' margins", "interface_agreement": "compares two runs",
    "pair_stability": "compares two runs", "erasure_effect": "registered as 'rele_erasure'",
    "erasure_geometry_summary": "image geometry, not scores",
    "macro_average": "averages reported rows",
    "weighted_auroc": "bootstrap weights (tested against auroc)", "weighted_auprc": "bootstrap weights",
    "weighted_high_minus_low": "bootstrap weights",
}


def test_every_public_metric_is_registered_or_excused() -> None:
    registered = {metric.function.__name__ for metric in METRICS.values()}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ != module_name or name.startswith("_"):
                continue
            assert name in registered or name in NOT_REGISTERED, f"{module_name}.{name} is neither registered " \
                                                                 "in vlaudit.metrics.registry nor excused here"


SWAP_KINDS = {"margins", "m_original", "labels", "scores", "target", "block_scores", "direction"}
NOT_SYMMETRIC = [m for m in METRICS.values() if SWAP_KINDS & set(m.inputs) and "label_symmetric" not in m.properties]


@pytest.mark.parametrize("metric", NOT_SYMMETRIC, ids=_ids(NOT_SYMMETRIC))
def test_label_symmetry_is_declared_truthfully(metric: Metric) -> None:
    """A metric that does not declare ``label_symmetric`` does change under the answer swap (e.g. AUPRC, the
    prediction strata, the relation groups' true statements)."""
    changed = 0
    for seed in range(5):
        base = base_panel(13, seed)
        try:
            assert_same(metric(derive(answer_swapped(base))), metric(derive(base)))
        except AssertionError:
            changed += 1
    assert changed, f"{metric.name} is label-symmetric on every panel: declare it"
