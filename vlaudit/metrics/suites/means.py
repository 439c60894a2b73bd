"""The averages the group suites' official figures are (COLA, MMVP-VLM, ColorSwap, SPEC, VL-CheckList, CREPE).

:func:`item_mean` is a mean over items (COLA's ``np.mean(batch_acc)``); :func:`subset_means` the per-subset means
and their unweighted mean (MMVP-VLM's per-pattern figures, SPEC's mean over subsets). NaN outcomes (a quantity
that does not apply to an item) are left out of both; a figure over no item is ``Missing("no items")``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.records import SuiteItem
from vlaudit.results.missing import Missing
from vlaudit.results.suites import OfficialFigure


def item_mean(values: np.ndarray, *, key: str, label: str, tie_rule: str, source: str,
              aggregation: str = "mean over items", note: str | None = None) -> OfficialFigure:
    """The mean of the finite ``values`` (float64) as one :class:`OfficialFigure`."""
    kept = np.asarray(values, dtype=np.float64)
    kept = kept[np.isfinite(kept)]
    value: float | Missing = float(np.mean(kept)) if kept.size else Missing("no items")
    return OfficialFigure(key=key, label=label, value=value, n=int(kept.size), aggregation=aggregation,
                          tie_rule=tie_rule, source=source, note=note)


def subset_means(items: Sequence[SuiteItem], values: np.ndarray, *, key: str, label: str, tie_rule: str,
                 source: str, aggregation: str = "mean over subsets of the per-subset means",
                 note: str | None = None) -> OfficialFigure:
    """Per-subset means of the finite ``values`` (subsets in first-seen order) and their unweighted mean."""
    values = np.asarray(values, dtype=np.float64)
    groups: dict[str, list[float]] = {}
    for item, outcome in zip(items, values, strict=True):
        if np.isfinite(outcome):
            groups.setdefault(item.subset, []).append(float(outcome))
    per_subset = {name: float(np.mean(group)) for name, group in groups.items()}
    value: float | Missing = (float(np.mean(list(per_subset.values()))) if per_subset else Missing("no items"))
    return OfficialFigure(key=key, label=label, value=value, n=sum(len(group) for group in groups.values()),
                          aggregation=aggregation, tie_rule=tie_rule, source=source, subsets=per_subset,
                          n_subsets=len(per_subset), note=note)
