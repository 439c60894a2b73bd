"""The MARGINS table: cached yes/no margins per item and context, the input of ``vlaudit vca report``.

Schema (Parquet, CSV or JSONL; one row per (model, dataset, item_id, context, interface)):

============  =========  ===================================================================================
column        required   meaning
============  =========  ===================================================================================
model         yes        model name (string)
dataset       yes        benchmark name (string; null or empty → the file stem)
item_id       yes        id of the yes/no query (string; integers are read as their decimal text)
context       yes        ``original``, ``text`` (text only), ``blank`` (mid-grey canvas), ``mean`` (mean-colour
                         canvas), ``mismatch`` (same-split permuted image), ``rele``/``irre`` (relation-/
                         irrelevant-erased views), ``blur`` / ``patch-shuffle`` (stress probes, never controls)
margin        one of     m = NLL(no) − NLL(yes) (VCA §3); positive when the model prefers "yes"
nll_yes,      these      used when ``margin`` is absent/null: m = nll_no − nll_yes
nll_no        three
logp_yes,                used when both of the above are absent: m = logp_yes − logp_no
logp_no
interface     no         ``yesno`` (default), ``truefalse`` — the answer verbalisers — or ``letter``
logp_options  letter     multiple choice: log p of the option letters A, B, ... (list; replaces the margin)
option_       no         ``ABCD``: the letters read (must match the list's length)
letters
label         no         gold answer: yes/no, true/false or 1/0 (the gold letter on letter rows); label-free
                         quantities need none
group_id      no         same-image true/false relation group (VCA §13)
statement     no         ``true``/``false`` (also yes/no, 1/0) within a group: exactly one true per group
relation      no         relation phrase
status        no         rows whose status is set and not ``ok`` (failed scoring records) are skipped
censored      no         set on a row whose margin is only a bound (an answer word outside a served model's
                         top-k log-probs): such a file is refused, naming the count — never read as exact
============  =========  ===================================================================================

Under the ``truefalse`` interface the same columns hold the aligned True/False margin: "yes" stands for
"true" and "no" for "false" (m = NLL(false) − NLL(true)), so both interfaces share one decision rule and the
mean-margin ensemble of VCA §18 can average them per context.

Any other column is carried along (values from the ``original`` row) in :attr:`MarginRun.extra` — among
them the erasure geometry ``union_pct``, ``rele_erased_pct``, ``irre_erased_pct``,
``irre_erased_in_union_pct`` (% of the image area, VCA Table 11) that ``vca score`` writes with ``rele``/``irre``,
and the resampling unit ``cluster`` / ``cluster_unit`` copied from the ITEMS file (a factorial stem, an edit, an
image; :mod:`vlaudit.analysis.vca.units` reads them, ``--cluster COLUMN`` may name any carried column).
When ``margin`` and the ``nll_*`` pair are both given they must agree (tolerance 1e-4 of the NLL scale).

Validation errors name the file, the 1-based row and the field: a duplicate key, an item without an
``original`` row (unless the run has only ``text`` rows: a text-only LLM run, MMStar's leakage baseline), a group without exactly one true statement (or without a false one), unparsable labels,
labels given for only some items of a run, and non-finite margins, NLLs or log-probs — or finite ones beyond
±1e100 (:data:`~vlaudit.sources.letter_margins.MAX_ABS_LOG_VALUE`: differences of values near ±1.8e308
overflow to inf, and no model's log-prob comes near).

A context present for some items of a run but not others is legitimate (``vca score`` skips ``rele``/``irre``
where no unique boxes exist, a failed record leaves a hole): its margin is NaN for the items without it, and
:meth:`MarginRun.available` tells which items have it. Every quantity is computed on the items that have
the contexts it needs (``vlaudit vca report`` prints and stores each n and excluded count);
:func:`require_contexts` is the check for analyses that need a context on every item they use.

:func:`read_margins` returns one :class:`MarginRun` per (model, dataset, interface): float64 arrays per
context, aligned by item, with items sorted by ``item_id`` so that row order never changes a result.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.errors import InputError
from vlaudit.files import read_table
from vlaudit.results.columns import MARGINS
from vlaudit.sources.context_names import CONTEXTS, normalize_context
from vlaudit.sources.items import parse_yes_no
from vlaudit.sources.letter_margins import (
    LETTER_INTERFACE,
    MAX_ABS_LOG_VALUE,
    LetterChoices,
    build_choices,
    letter_label,
    row_logps,
    too_large,
)

INTERFACES = ("yesno", "truefalse", LETTER_INTERFACE)
KEY_COLUMNS = MARGINS.required
#: the columns the pivot reads itself (a subset of :data:`~vlaudit.results.columns.MARGINS`' known columns);
#: the original row's other columns are carried along in :attr:`MarginRun.extra`
SCHEMA_COLUMNS = (
    *KEY_COLUMNS, "interface", "margin", "nll_yes", "nll_no", "logp_yes", "logp_no", "label", "group_id",
    "statement", "relation", "status", "logp_options", "option_letters", "option_token_ids", "censored",
)

@dataclass(frozen=True)
class MarginRun:
    """One (model, dataset, interface) run in wide form; every array is aligned with ``item_ids``.

    ``margins[c]`` is the float64 margin m_c per item, NaN for an item without context c (``original`` is
    never missing); ``labels`` is True for gold "yes" (None without labels); ``group_ids`` holds None for
    items outside any relation group; ``statements`` is True for the group's true statement (meaningful only
    where ``group_ids`` is not None). ``skipped_note`` says how many rows were skipped for their status.
    """

    model: str
    dataset: str
    interface: str
    item_ids: np.ndarray
    margins: Mapping[str, np.ndarray]
    labels: np.ndarray | None = None
    group_ids: np.ndarray | None = None
    statements: np.ndarray | None = None
    relations: np.ndarray | None = None
    extra: Mapping[str, np.ndarray] = field(default_factory=dict)
    source: str | None = None
    skipped_note: str = ""
    #: a letter run's option log-probs; its ``margins`` then mark which contexts each item has (0.0 or NaN)
    #: until :func:`vlaudit.analysis.vca.choice_run.aligned_run` replaces them with the aligned support
    choices: LetterChoices | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.model, self.dataset, self.interface)

    @property
    def n(self) -> int:
        return int(self.item_ids.size)

    @property
    def contexts(self) -> tuple[str, ...]:
        return tuple(c for c in CONTEXTS if c in self.margins) + tuple(
            sorted(c for c in self.margins if c not in CONTEXTS))

    @property
    def has_groups(self) -> bool:
        return self.group_ids is not None and any(g is not None for g in self.group_ids)

    @property
    def name(self) -> str:
        return f"run (model={self.model!r}, dataset={self.dataset!r}, interface={self.interface!r})"

    def available(self, *contexts: str) -> np.ndarray:
        """Boolean mask of the items that have every one of ``contexts`` (all False if one is absent)."""
        mask = np.ones(self.n, dtype=bool)
        for c in contexts:
            mask &= ~np.isnan(self.margins[c]) if c in self.margins else False
        return mask

    def subset(self, mask: np.ndarray) -> MarginRun:
        """The run restricted to the items where ``mask`` is True (every per-item array alike)."""
        mask = np.asarray(mask, dtype=bool)

        def cut(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[mask]

        return replace(self, item_ids=self.item_ids[mask], margins={c: m[mask] for c, m in self.margins.items()},
                       labels=cut(self.labels), group_ids=cut(self.group_ids), statements=cut(self.statements),
                       relations=cut(self.relations), extra={k: v[mask] for k, v in self.extra.items()},
                       choices=None if self.choices is None else self.choices.subset(mask))


def normalize_interface(value: object, *, path: str | Path | None = None, record: object = None) -> str:
    """``yesno`` (also yes/no, yes_no, null), ``truefalse`` (also true/false, true_false) or ``letter``."""
    if _is_null(value):
        return "yesno"
    text = re.sub(r"[^a-z]", "", str(value).lower())
    if text not in INTERFACES:
        raise InputError(f"unknown interface {value!r} (expected yesno, truefalse or letter)", path=path,
                         record=record, field="interface")
    return text


def _is_null(value: object) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def _number(value: Any, *, path: str | Path, record: str, name: str) -> float | None:
    if _is_null(value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"not a number: {value!r}", path=path, record=record, field=name) from None
    if not math.isfinite(number):
        raise InputError(f"non-finite value {value!r}", path=path, record=record, field=name)
    if abs(number) > MAX_ABS_LOG_VALUE:
        raise InputError(too_large(number), path=path, record=record, field=name)
    return number


def row_margin(row: Mapping[str, Any], *, path: str | Path, record: str) -> float:
    """m = ``margin`` | nll_no − nll_yes | logp_yes − logp_no, checked for agreement when several are given."""
    margin = _number(row.get("margin"), path=path, record=record, name="margin")
    nll_yes = _number(row.get("nll_yes"), path=path, record=record, name="nll_yes")
    nll_no = _number(row.get("nll_no"), path=path, record=record, name="nll_no")
    if nll_yes is not None and nll_no is not None:
        from_nll = nll_no - nll_yes
        if margin is None:
            return from_nll
        # float32 NLLs written beside a float64 margin differ in the last bits; anything larger is a bug
        if abs(margin - from_nll) > 1e-4 * max(1.0, abs(nll_yes), abs(nll_no)):
            raise InputError(f"margin {margin!r} disagrees with nll_no − nll_yes = {from_nll!r}", path=path,
                             record=record, field="margin")
        return margin
    if margin is not None:
        return margin
    logp_yes = _number(row.get("logp_yes"), path=path, record=record, name="logp_yes")
    logp_no = _number(row.get("logp_no"), path=path, record=record, name="logp_no")
    if logp_yes is not None and logp_no is not None:
        return logp_yes - logp_no
    raise InputError("no margin: give 'margin', or 'nll_yes' and 'nll_no', or 'logp_yes' and 'logp_no'",
                     path=path, record=record, field="margin")


def _text(value: object) -> str | None:
    if _is_null(value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


class _ItemAcc:
    """Everything collected about one item of one run while reading rows."""

    __slots__ = ("first_row", "margins", "label", "label_row", "group", "statement", "relation", "extra",
                 "original_row", "options")

    def __init__(self, first_row: int) -> None:
        self.first_row = first_row
        self.margins: dict[str, float] = {}
        self.label: str | None = None
        self.label_row = first_row
        self.group: str | None = None
        self.statement: str | None = None
        self.relation: str | None = None
        self.extra: dict[str, Any] = {}
        self.original_row: int | None = None
        self.options: dict[str, tuple[float, ...]] = {}


def _merge(acc: _ItemAcc, name: str, value: str | None, *, path: str | Path, record: str) -> None:
    """Per-item fields repeat on every context row; they must agree where given."""
    if value is None:
        return
    current = getattr(acc, name)
    if current is None:
        setattr(acc, name, value)
    elif current != value:
        raise InputError(f"{name} {value!r} disagrees with {current!r} given for the same item at row "
                         f"{acc.first_row}", path=path, record=record, field=name)


def runs_from_rows(rows: Sequence[Mapping[str, Any]], *, path: str | Path = "<rows>") -> list[MarginRun]:
    """Validate margin rows (see the module docstring) and pivot them into one :class:`MarginRun` per run."""
    for name in KEY_COLUMNS:
        if rows and name not in rows[0]:
            raise InputError("missing required column", path=path, field=name)
    runs: dict[tuple[str, str, str], dict[str, _ItemAcc]] = {}
    seen: dict[tuple[str, str, str, str, str], int] = {}
    skipped: list[int] = []
    censored = [index for index, row in enumerate(rows, start=1) if _text(row.get("censored"))]
    if censored:
        raise censored_rows_error(len(censored), len(rows), path=path, record=f"row {censored[0]}")
    for index, row in enumerate(rows, start=1):
        record = f"row {index}"
        status = _text(row.get("status"))
        if status is not None and status.lower() != "ok":
            skipped.append(index)  # a failed scoring record; its item then lacks a context, reported below
            continue
        key_values = []
        for name in ("model", "dataset", "item_id"):
            value = _text(row.get(name))
            if name == "dataset" and not value:
                value = Path(str(path)).stem  # as in the ITEMS table: the file stem names an unnamed dataset
            if value is None or value == "":
                raise InputError("missing required field", path=path, record=record, field=name)
            key_values.append(value)
        if _is_null(row.get("context")):
            raise InputError("missing required field", path=path, record=record, field="context")
        context = normalize_context(row["context"], path=path, record=record)
        interface = normalize_interface(row.get("interface"), path=path, record=record)
        model, dataset, item_id = key_values
        full_key = (model, dataset, item_id, context, interface)
        if full_key in seen:
            raise InputError(f"duplicate (model, dataset, item_id, context, interface) = {full_key}, first at "
                             f"row {seen[full_key]}", path=path, record=record, field="item_id")
        seen[full_key] = index
        letters = row_logps(row, path=path, record=record) if interface == LETTER_INTERFACE else None
        margin = 0.0 if letters is not None else row_margin(row, path=path, record=record)
        items = runs.setdefault((model, dataset, interface), {})
        acc = items.get(item_id)
        if acc is None:
            acc = items[item_id] = _ItemAcc(index)
        acc.margins[context] = margin
        if letters is not None:
            acc.options[context] = letters
        label = (letter_label(_text(row.get("label")), len(letters), path=path, record=record) if letters
                 is not None else parse_yes_no(_text(row.get("label")), path=path, record=record, field="label"))
        _merge(acc, "label", label, path=path, record=record)
        _merge(acc, "group", _text(row.get("group_id")), path=path, record=record)
        statement = parse_yes_no(_text(row.get("statement")), path=path, record=record, field="statement")
        _merge(acc, "statement", statement, path=path, record=record)
        _merge(acc, "relation", _text(row.get("relation")), path=path, record=record)
        if context == "original":
            acc.original_row = index
            acc.extra = {k: v for k, v in row.items() if k not in SCHEMA_COLUMNS}
    ordered = sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][1], INTERFACES.index(kv[0][2])))
    note = "" if not skipped else (f" ({len(skipped)} row(s) with a status other than 'ok' were skipped, "
                                   f"first row {skipped[0]})")
    return [_build_run(key, items, path=path, note=note) for key, items in ordered]


def censored_rows_error(n_censored: int, n_rows: int, *, path: str | Path, record: str) -> InputError:
    """The refusal of a margins file holding censored rows: a bound read as a margin would be a silent number."""
    return InputError(f"{n_censored} of {n_rows} rows hold a censored margin (an answer word outside the served "
                      "model's top-k log-probs: only a bound); the analyses need exact margins: score against a "
                      "server that offers logprob_token_ids (vLLM)", path=path, record=record, field="censored")


def _name_items(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _build_run(
    key: tuple[str, str, str], items: dict[str, _ItemAcc], *, path: str | Path, note: str = ""
) -> MarginRun:
    model, dataset, interface = key
    run_name = f"run (model={model!r}, dataset={dataset!r}, interface={interface!r})"
    ids = sorted(items)
    accs = [items[i] for i in ids]
    # a text-only run (a base LLM scored blind, for MMStar's leakage) has no original context at all
    text_only = all(acc.original_row is None and set(acc.margins) == {"text"} for acc in accs)
    for item_id, acc in zip(ids, accs, strict=True):
        if acc.original_row is None and not text_only:
            raise InputError(f"item {item_id!r} of {run_name} has no 'original' row{note}", path=path,
                             record=f"row {acc.first_row}", field="context")
    contexts = sorted({c for acc in accs for c in acc.margins}, key=lambda c: CONTEXTS.index(c))
    # a context missing for some items is NaN there (see the module docstring), never an error here
    margins = {context: np.array([acc.margins.get(context, np.nan) for acc in accs], dtype=np.float64)
               for context in contexts}
    choices = None
    if interface == LETTER_INTERFACE:
        choices = build_choices(ids, [acc.options for acc in accs], [acc.label for acc in accs], contexts,
                                run_name, path=path)
    labelled = [acc.label is not None and choices is None for acc in accs]
    labels = None
    if any(labelled):
        unlabelled = [i for i, ok in zip(ids, labelled, strict=True) if not ok]
        if unlabelled:
            raise InputError(f"label is missing for {len(unlabelled)} of {len(ids)} items of {run_name} "
                             f"(give every item a label or none): {_name_items(unlabelled)}", path=path,
                             record=f"row {items[unlabelled[0]].first_row}", field="label")
        labels = np.array([acc.label == "yes" for acc in accs], dtype=bool)
    group_ids = statements = None
    if any(acc.group is not None for acc in accs):
        group_ids = np.array([acc.group for acc in accs], dtype=object)
        statements = np.array([acc.statement == "yes" for acc in accs], dtype=bool)
        _check_groups(ids, accs, run_name, path=path)
    relations = None
    if any(acc.relation is not None for acc in accs):
        relations = np.array([acc.relation for acc in accs], dtype=object)
    extra_names = sorted({k for acc in accs for k in acc.extra})
    extra = {k: np.array([acc.extra.get(k) for acc in accs], dtype=object) for k in extra_names}
    return MarginRun(model=model, dataset=dataset, interface=interface, item_ids=np.array(ids, dtype=object),
                     margins=margins, labels=labels, group_ids=group_ids, statements=statements,
                     relations=relations, extra=extra, source=str(path), skipped_note=note, choices=choices)


def missing_items(run: MarginRun, context: str) -> list[str]:
    """Ids of the items of ``run`` without ``context`` (every item when the run lacks it entirely)."""
    return [str(i) for i in run.item_ids[~run.available(context)]]


def describe_missing(run: MarginRun, context: str, ids: Sequence[str] | None = None) -> str:
    """``context 'text' is missing for 1 of 7 items of run (...): 'i3' (…skipped…)`` for messages."""
    ids = missing_items(run, context) if ids is None else list(ids)
    return (f"context {context!r} is missing for {len(ids)} of {run.n} items of {run.name}: "
            f"{_name_items(ids)}{run.skipped_note}")


def require_contexts(run: MarginRun, contexts: Sequence[str], index: np.ndarray | None = None) -> None:
    """InputError naming the items (of ``index``, default all) that lack one of ``contexts``."""
    for context in contexts:
        have = run.available(context)
        lacking = ~have if index is None else np.zeros(run.n, dtype=bool)
        if index is not None:
            lacking[np.asarray(index)] = ~have[np.asarray(index)]
        if lacking.any():
            ids = [str(i) for i in run.item_ids[lacking]]
            raise InputError(describe_missing(run, context, ids), path=run.source, field="context")


def _check_groups(ids: Sequence[str], accs: Sequence[_ItemAcc], run_name: str, *, path: str | Path) -> None:
    members: dict[str, list[tuple[str, _ItemAcc]]] = {}
    for item_id, acc in zip(ids, accs, strict=True):
        if acc.group is None:
            continue
        if acc.statement is None:
            raise InputError(f"item {item_id!r} of group {acc.group!r} ({run_name}) has no statement "
                             f"(true/false)", path=path, record=f"row {acc.first_row}", field="statement")
        members.setdefault(acc.group, []).append((item_id, acc))
    for group, entries in members.items():
        true_ids = [i for i, acc in entries if acc.statement == "yes"]
        if len(true_ids) != 1:
            raise InputError(
                f"group {group!r} of {run_name} has {len(true_ids)} true statements (expected exactly one)"
                + (f": {_name_items(true_ids)}" if true_ids else ""),
                path=path, record=f"row {entries[0][1].first_row} (group {group!r})", field="statement")
        if len(entries) < 2:
            raise InputError(f"group {group!r} of {run_name} has no false statement", path=path,
                             record=f"row {entries[0][1].first_row} (group {group!r})", field="statement")


def read_margins(path: str | Path) -> list[MarginRun]:
    """Read and validate a MARGINS table (Parquet, CSV or JSONL); one :class:`MarginRun` per run."""
    path = Path(path)
    table = read_table(path, required=KEY_COLUMNS)
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    n_rows = table.num_rows
    if n_rows == 0:
        raise InputError("no rows in file", path=path)
    rows = [{name: values[i] for name, values in columns.items()} for i in range(n_rows)]
    return runs_from_rows(rows, path=path)
