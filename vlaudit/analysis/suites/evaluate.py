"""One suite's figures from its items and their scores: the official figures, exact CycleAcc, the marginal audit.

Pure (no model): :func:`evaluate_items` takes what a reader returned (:class:`~vlaudit.records.SuiteRead`) and
the items' scores (:class:`~vlaudit.metrics.suites.SuiteScores`), and returns

* the suite's own figures — ``suite.outcomes`` then ``suite.aggregate``, its tie rule and aggregation;
* exact CycleAcc (cycle paper §2.1: credit 1 if Δ > tol, ½ if |Δ| ≤ tol, else 0) over the cycles the items hold
  (:mod:`vlaudit.analysis.suites.cycles`), for all cycles and per subset, each with its count and a seeded
  bootstrap interval over cycles (:func:`vlaudit.metrics.cycles.summarize_contrasts`);
* the marginal audit of the items' labelled pairs (:func:`vlaudit.metrics.pair_audit.audit_pairs`): every
  (image, text) of an item is one labelled entry, the image by its key (file plus crop), the text by its text.

The three are reported side by side and never mixed: the official figure is the suite's, CycleAcc is vlaudit's,
the audit says how far the suite's negatives are from exact cycles (0 TV and 0 imbalance on an exact-cycle set).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlaudit.analysis.suites.cycles import (
    ACROSS,
    MAX_ACROSS,
    SuiteCycle,
    across_item_cycles,
    distinct_cycles,
    suite_contrasts,
    within_item_cycles,
)
from vlaudit.analysis.suites.suite import Suite
from vlaudit.errors import InputError
from vlaudit.metrics.cycles import summarize_contrasts
from vlaudit.metrics.pair_audit import audit_pairs
from vlaudit.metrics.suites import SuiteScores
from vlaudit.records import LabelledPair, SuiteItem, SuiteRead
from vlaudit.results.suites import OfficialFigure, SuiteAuditCell, SuiteCycleCell

ALL = "all"


@dataclass(frozen=True)
class ItemsEvaluation:
    """What :func:`evaluate_items` returns: the official figures, the CycleAcc cells and the audit cells."""

    figures: list[OfficialFigure]
    cycles: list[SuiteCycleCell]
    audit: list[SuiteAuditCell]
    warnings: list[str]


def read_items(suite: Suite, path: str | Path, options: Mapping[str, object] | None = None) -> SuiteRead:
    """``path`` read by ``suite``'s reader with ``options`` (its reader keywords; an unknown one is refused
    naming those it takes)."""
    given = dict(options or {})
    names = [name for name, _ in suite.options]
    unknown = [name for name in given if name not in names]
    if unknown:
        raise InputError(f"unknown reader option(s) {unknown}; {suite.name} takes {names or 'none'}",
                         field="--option")
    return suite.read_file(path, **given)


def labelled_pairs(items: Sequence[SuiteItem]) -> list[LabelledPair]:
    """Every (image, text, label) of every item as one labelled entry (image by key, text by its text)."""
    return [LabelledPair(image_id=item.images[i].key, caption=item.texts[j], label=label, text=item.texts[j])
            for item in items for i, j, label in item.pairs()]


def audit_cell(subset: str, items: Sequence[SuiteItem]) -> SuiteAuditCell:
    """The marginal audit of one subset's items (module docstring)."""
    figures = audit_pairs(labelled_pairs(items), "mean")
    return SuiteAuditCell(subset=subset, pairs=figures["pairs"], positives=figures["positives"],
                          negatives=figures["negatives"], tv_image=figures["tv_image"],
                          tv_caption=figures["tv_caption"], tv_caption_length=figures["tv_caption_length"],
                          degree_imbalance=figures["degree_imbalance"],
                          degree_imbalance_image=figures["degree_imbalance_image"],
                          degree_imbalance_caption=figures["degree_imbalance_caption"],
                          positives_in_cycles=figures["positives_in_cycles"],
                          negatives_in_cycles=figures["negatives_in_cycles"])


def cycle_cells(cycles: Sequence[SuiteCycle], delta: np.ndarray, subsets: Sequence[str], *, tol: float,
                n_resamples: int, seed: int) -> list[SuiteCycleCell]:
    """CycleAcc over all cycles, then — when the items have several subsets — per subset (the items' subsets in
    order, then the cycles across subsets)."""
    labels = np.array([c.subset for c in cycles], dtype=object)
    across = np.array([c.kind == ACROSS for c in cycles], dtype=bool)
    order = ([] if len(set(subsets)) < 2 else
             [*dict.fromkeys(subsets), *(s for s in dict.fromkeys(labels.tolist()) if s not in subsets)])
    cells = []
    for name, mask in ((ALL, np.ones(len(cycles), dtype=bool)), *((s, labels == s) for s in order)):
        cells.append(SuiteCycleCell(subset=str(name), within=int((mask & ~across).sum()),
                                    across=int((mask & across).sum()),
                                    cell=summarize_contrasts(delta[mask], tol=tol, n_resamples=n_resamples,
                                                             seed=seed)))
    return cells


def evaluate_items(suite: Suite, read: SuiteRead, scores: SuiteScores, *, tol: float, n_resamples: int, seed: int,
                   across: bool = True) -> ItemsEvaluation:
    """The official figures, exact CycleAcc and the audit of ``read``'s items under ``scores`` (module
    docstring). ``across``: also count the cycles that two items complete."""
    items = read.items
    scores.check(items)
    figures = suite.aggregate(items, suite.outcomes(items, scores))
    crossing = across_item_cycles(items, MAX_ACROSS) if across else []
    cycles = distinct_cycles(items, [*(c for k, item in enumerate(items) for c in within_item_cycles(k, item)),
                                     *crossing])
    delta = suite_contrasts(cycles, scores) if cycles else np.zeros(0, dtype=np.float64)
    subsets = list(dict.fromkeys(item.subset for item in items))
    warnings = []
    if len(crossing) >= MAX_ACROSS:
        warnings.append(f"{suite.name}: the cross-item cycles were cut at {MAX_ACROSS:,} (the items' texts "
                        "repeat across many images); CycleAcc counts those found first")
    if not cycles:
        warnings.append(f"{suite.name}: the items hold no exact cycle (no 2×2 minor of true and false pairs, and "
                        "no two items whose texts are each other's negatives), so CycleAcc is not computed")
    audit = [audit_cell(ALL, items)]
    if len(subsets) > 1:
        audit += [audit_cell(s, [item for item in items if item.subset == s]) for s in subsets]
    cells = cycle_cells(cycles, delta, subsets, tol=tol, n_resamples=n_resamples, seed=seed)
    return ItemsEvaluation(figures=figures, cycles=cells, audit=audit, warnings=warnings)
