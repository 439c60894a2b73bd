"""The items a model comparison shares across its runs (matched on id and content).

An item is shared when every model has it under the same id *and* the same content: its label (the gold
letter of a multiple-choice item), the sha256 of its image file, its question and option texts in order (from
the ITEMS file the run's manifest names, read with the runs by
:func:`vlaudit.sources.compared_runs.read_model_runs`; a bare MARGINS file has neither), its number of options
(``logp_options``), its group and statement. An id whose content differs
between two runs is an :class:`InputError` naming the item and the field; an item some model lacks is dropped
from every model and counted per model with why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.errors import InputError
from vlaudit.sources.margins import MarginRun

#: the content fields an item id must agree on across runs, in the order they are checked
FINGERPRINT_FIELDS = ("label", "image", "question", "options", "logp_options", "group_id", "statement")
_WHAT = {"options": "options (texts, in order)", "logp_options": "number of options"}


def _column(run: MarginRun, name: str, questions: Mapping[tuple[str, str], object],
            options: Mapping[tuple[str, str], object]) -> list[object] | None:
    if name == "label":
        if run.choices is not None:
            gold = run.choices.gold
            return None if gold is None else [None if g is None else str(g) for g in gold]
        return None if run.labels is None else [bool(v) for v in run.labels]
    if name == "logp_options":  # how many options the item has, from its log-prob list
        return None if run.choices is None else [int(k) for k in run.choices.n_options]
    if name == "options":
        return [options.get((run.dataset, str(i))) for i in run.item_ids] if options else None
    if name == "image":
        values = run.extra.get("source_sha256")
        return None if values is None else [None if v is None else str(v) for v in values]
    if name == "question":
        if not questions:
            return None
        return [questions.get((run.dataset, str(i))) for i in run.item_ids]
    if name == "group_id":
        return None if run.group_ids is None else [None if g is None else str(g) for g in run.group_ids]
    if name == "statement":
        if run.statements is None or run.group_ids is None:
            return None
        return [None if g is None else bool(s) for g, s in zip(run.group_ids, run.statements, strict=True)]
    raise ValueError(name)


def member_mask(ids: np.ndarray, chosen: set[str] | frozenset[str]) -> np.ndarray:
    """Which ``ids`` (as text) are in ``chosen``; a set lookup, where ``np.isin`` on object arrays is quadratic."""
    return np.fromiter((str(i) in chosen for i in ids), dtype=bool, count=len(ids))


def check_fingerprints(runs: Sequence[MarginRun], labels: Sequence[str], shared: set[str],
                       questions: Sequence[Mapping[tuple[str, str], object]],
                       options: Sequence[Mapping[tuple[str, str], object]] | None = None) -> None:
    """Raise an InputError naming the first shared item whose content differs between two runs, and the field.

    ``questions`` and ``options``: per run, (dataset, item id) → the question / the option texts in order, from
    the run's ITEMS file (empty when it has none)."""
    per_run_options = list(options) if options is not None else [{} for _ in runs]
    for name in FINGERPRINT_FIELDS:
        reference: dict[str, object] = {}
        owner: dict[str, str] = {}
        for run, label, q, o in zip(runs, labels, questions, per_run_options, strict=True):
            values = _column(run, name, q, o)
            if values is None:
                continue
            ids = run.item_ids.astype(str)
            keep = member_mask(ids, shared)
            for item, value in zip(ids[keep].tolist(), np.asarray(values, dtype=object)[keep].tolist(),
                                   strict=True):
                if value is None:
                    continue
                if item in reference and reference[item] != value:
                    raise InputError(f"the item's {_WHAT.get(name, name)} differs between {owner[item]} and {label} "
                                     f"({reference[item]!r} vs {value!r}): they are not the same item",
                                     path=run.source, record=item, field=name)
                reference.setdefault(item, value)
                owner.setdefault(item, label)


@dataclass(frozen=True)
class SharedItems:
    """The items every model of one (dataset, interface) keeps, and per model what was dropped and why."""

    item_ids: np.ndarray
    dropped: tuple[dict[str, int], ...]


def shared_items(runs: Sequence[MarginRun], controls: Sequence[str],
                 failed: Sequence[Mapping[tuple[str, str], str]]) -> SharedItems:
    """Ids every run has with every headline control, minus relation groups some run does not hold whole.

    Reasons per model: ``missing`` (another model has the id, this run does not), ``failed image`` (its
    scoring record failed), ``lacks CONTEXT`` (no margin under a headline control), ``incomplete group``
    (a member of its relation group is not shared).
    """
    usable = [set(run.item_ids[run.available(*[c for c in controls if c in run.margins])].astype(str).tolist())
              if all(c in run.margins for c in controls) else set() for run in runs]
    shared = set.intersection(*usable) if usable else set()
    # a relation group is compared only when every model has all its members among the shared items
    broken: set[str] = set()
    for run in runs:
        if run.group_ids is None:
            continue
        for g, item in zip(run.group_ids, run.item_ids.astype(str), strict=True):
            if g is not None and item not in shared:
                broken.add(str(g))
    kept = {item for run in runs for g, item in zip(
        run.group_ids if run.group_ids is not None else [None] * run.n, run.item_ids.astype(str), strict=True)
        if item in shared and (g is None or str(g) not in broken)}
    every = sorted({i for run in runs for i in run.item_ids.astype(str).tolist()})
    dropped = []
    for run, fails, can in zip(runs, failed, usable, strict=True):
        position = {item: i for i, item in enumerate(run.item_ids.astype(str).tolist())}
        has = set(position)
        counts: dict[str, int] = {}
        for item in every:
            if item in kept:
                continue
            if item not in has:
                reason = fails.get((run.dataset, item), "missing")
            elif item not in can:
                lacking = [c for c in controls if c not in run.margins or np.isnan(run.margins[c][position[item]])]
                reason = f"lacks {'+'.join(lacking) or 'a control'}"
            elif item in shared:
                reason = "incomplete group"
            else:
                reason = "not in every run"
            counts[reason] = counts.get(reason, 0) + 1
        dropped.append(dict(sorted(counts.items())))
    return SharedItems(np.array(sorted(kept), dtype=object), tuple(dropped))
