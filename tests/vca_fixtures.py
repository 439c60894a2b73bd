"""Small MARGINS tables for the VCA tests (imported by tests/test_vca_*.py; not a test module)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# The hand-computed support example (see test_vca_support.py for every derived value).
SUPPORT_MARGINS = {
    "original": [2.0, -1.0, 0.5, 0.0, -2.0, -0.5, 1.0],
    "text": [1.0, 0.5, -1.0, 0.0, -1.0, 1.0, 3.0],
    "blank": [-1.0, -3.0, -2.0, -1.0, -0.5, 2.0, 0.0],
    "mismatch": [0.5, -4.0, 3.0, 1.0, 0.0, 0.0, 5.0],
}
SUPPORT_LABELS = ["yes", "no", "no", "yes", "yes", "yes", "no"]

# The hand-computed relation example: two groups (a | b, c) and (d | e) plus an ungrouped item f.
RELATION_ITEMS = ["a", "b", "c", "d", "e", "f"]
RELATION_GROUPS = ["G1", "G1", "G1", "G2", "G2", None]
RELATION_STATEMENTS = [True, False, False, True, False, None]
RELATION_MARGINS = {
    "original": [2.0, -1.0, -3.0, -1.0, 1.0, 0.3],
    "text": [0.5, 0.0, 1.0, -2.0, -1.0, 0.1],
    "blank": [-0.5, 1.0, -2.0, 0.5, 0.0, 0.2],
}


def rows_from_arrays(
    margins: Mapping[str, Sequence[float]],
    *,
    model: str = "m",
    dataset: str = "d",
    interface: str | None = None,
    item_ids: Sequence[str] | None = None,
    labels: Sequence[Any] | None = None,
    group_ids: Sequence[Any] | None = None,
    statements: Sequence[Any] | None = None,
    margin_field: str = "margin",
) -> list[dict[str, Any]]:
    """Long MARGINS rows from per-context arrays (``margin_field``: margin | nll | logp)."""
    n = len(margins["original"])
    item_ids = item_ids or [f"i{k}" for k in range(n)]
    rows = []
    for context, values in margins.items():
        for k in range(n):
            row: dict[str, Any] = {"model": model, "dataset": dataset, "item_id": item_ids[k], "context": context}
            if interface is not None:
                row["interface"] = interface
            m = float(values[k])
            if margin_field == "margin":
                row["margin"] = m
            elif margin_field == "nll":
                row["nll_yes"], row["nll_no"] = 1.0, 1.0 + m
            else:
                row["logp_yes"], row["logp_no"] = -1.0, -1.0 - m
            if labels is not None:
                row["label"] = labels[k]
            if group_ids is not None:
                row["group_id"] = group_ids[k]
                row["statement"] = None if statements[k] is None else ("true" if statements[k] else "false")
            rows.append(row)
    return rows
