"""The runs a model comparison reads, and the items they share (matched on id and content).

An input is a ``vca score`` run folder (``margins.parquet``, ``manifest.json``, ``failures.jsonl``), a
``vca report`` folder written inside one (``RUN/report``: the margins are its parent's), or a MARGINS file.
An item is shared when every model has it under the same id *and* the same content: its label, the sha256 of
its image file, its question (read from the ITEMS file the run's manifest names, when that file is there),
its group and statement. An id whose content differs between two runs is an :class:`InputError` naming the
item and the field; an item some model lacks is dropped from every model and counted per model with why.
A ``vca report`` folder away from its run is refused in one line: its ``items.csv`` holds the report's
per-item events, not the per-context margins every compared metric is computed from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vlaudit.errors import InputError
from vlaudit.files import iter_jsonl, read_json
from vlaudit.sources.items import read_items
from vlaudit.sources.margins import MarginRun, read_margins

MARGINS_FILE = "margins.parquet"
REPORT_FILE = "vca.json"
REPORT_ITEMS_FILE = "items.csv"
#: the content fields an item id must agree on across runs, in the order they are checked
FINGERPRINT_FIELDS = ("label", "image", "question", "group_id", "statement")


@dataclass(frozen=True)
class ModelRuns:
    """The runs of one input: its margins runs, where they came from, questions and failed items by id."""

    source: str
    runs: tuple[MarginRun, ...]
    questions: Mapping[tuple[str, str], str] = field(default_factory=dict)
    failed: Mapping[tuple[str, str], str] = field(default_factory=dict)


def _standalone_report(folder: Path) -> InputError | None:
    """The error for a ``vca report`` folder outside its run: its ``items.csv`` holds per-item events
    (correct, Dep, D-CC, G_img under the report's controls) but not the per-context margins a comparison
    re-derives every metric from (Strict, the mismatch and relation axes, the noise flags on m_o, another
    control set), nor the image fingerprint the item matching checks."""
    items = folder / REPORT_ITEMS_FILE
    if not (folder / REPORT_FILE).is_file() and not items.is_file():
        return None
    held = (f"its {REPORT_ITEMS_FILE} holds the report's per-item events (correct, dep, dcc, g_img)"
            if items.is_file() else f"it has no {REPORT_ITEMS_FILE}")
    return InputError(f"a vca report folder outside its run: {held}, not the per-context margins and image "
                      f"fingerprint (source_sha256) a paired comparison needs; pass the vca score run folder "
                      f"(with {MARGINS_FILE}) instead", path=folder)


def margins_path(path: str | Path) -> Path:
    """The MARGINS file an input names (see the module docstring); an InputError when it names none."""
    path = Path(path)
    if path.is_file():
        return path
    for candidate in (path / MARGINS_FILE, path.parent / MARGINS_FILE):
        if path.is_dir() and candidate.is_file():
            return candidate
    standalone = _standalone_report(path) if path.is_dir() else None
    if standalone is not None:
        raise standalone
    raise InputError(f"not a vca score run folder, a report folder inside one or a MARGINS file (no "
                     f"{MARGINS_FILE} in it or its parent)", path=path)


def _questions(folder: Path) -> dict[tuple[str, str], str]:
    manifest = folder / "manifest.json"
    if not manifest.is_file():
        return {}
    benchmark = (read_json(manifest).get("arguments") or {}).get("benchmark")
    if not isinstance(benchmark, str) or not Path(benchmark).is_file():
        return {}
    return {(item.dataset or "", item.item_id): item.question for item in read_items(benchmark)}


def _failed(folder: Path) -> dict[tuple[str, str], str]:
    path = folder / "failures.jsonl"
    if not path.is_file():
        return {}
    out: dict[tuple[str, str], str] = {}
    for _, row in iter_jsonl(path):
        if row.get("status") == "failed" and row.get("context") == "original":
            out[(str(row.get("dataset") or ""), str(row.get("item_id")))] = "failed image"
    return out


def read_model_runs(path: str | Path) -> ModelRuns:
    """Read one input (see the module docstring)."""
    margins = margins_path(path)
    folder = margins.parent
    return ModelRuns(source=str(path), runs=tuple(read_margins(margins)), questions=_questions(folder),
                     failed=_failed(folder))


def _column(run: MarginRun, name: str, questions: Mapping[tuple[str, str], str]) -> list[object] | None:
    if name == "label":
        return None if run.labels is None else [bool(v) for v in run.labels]
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
                       questions: Sequence[Mapping[tuple[str, str], str]]) -> None:
    """Raise an InputError naming the first shared item whose content differs between two runs, and the field."""
    for name in FINGERPRINT_FIELDS:
        reference: dict[str, object] = {}
        owner: dict[str, str] = {}
        for run, label, q in zip(runs, labels, questions, strict=True):
            values = _column(run, name, q)
            if values is None:
                continue
            ids = run.item_ids.astype(str)
            keep = member_mask(ids, shared)
            for item, value in zip(ids[keep].tolist(), np.asarray(values, dtype=object)[keep].tolist(),
                                   strict=True):
                if value is None:
                    continue
                if item in reference and reference[item] != value:
                    raise InputError(f"the item's {name} differs between {owner[item]} and {label} "
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
