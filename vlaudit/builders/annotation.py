"""Blinded annotation of object-swap edits (VCA §14, §17): export batches, import answers, majority consensus.

Export: every annotator gets a separately shuffled batch (seeded) of all edits plus ``ceil(repeat × n)``
repeated edits at shuffled positions, as ``batches/<annotator>/tasks.csv`` + ``images/``. Tasks are numbered
``T001 ...`` and images renamed after the task, so model outputs, strata and sample ids (edit ids, image ids,
file names) are hidden; the private ``key.csv`` (annotator, task, edit_id, repeat) stays outside the batches.

Answers: each of the four fields is ``yes``/``no``/``unsure`` (also y/n/1/0/true/false; empty = unsure).
Consensus per field: ``yes`` (or ``no``) when more than half of the annotators of the edit say so, otherwise
no majority. An edit is *accepted* when all four fields are ``yes``, *rejected* when any field is ``no``, and
*no-majority* otherwise (e.g. a three-way yes/no/unsure split). Each annotator's first occurrence of an edit
(the lower task number) votes; the repeat measures within-annotator consistency.

* pairwise agreement (per annotator pair): share of (edit, field) answers that are equal, over the edits both
  annotated;
* repeat agreement (per annotator, and pooled): share of the four fields answered identically on the first
  and repeated occurrence of an edit.
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.builders.edits import copy_atomic
from vlaudit.errors import InputError
from vlaudit.files import atomic_write
from vlaudit.settings import EDIT_REPEAT_FRACTION, EDIT_SEED

FIELDS = ("original_relation_valid", "edited_relation_flipped", "both_objects_visible", "no_blocking_artifacts")
TASK_COLUMNS = ("task", "original_image", "edited_image", "original_statement", "edited_statement",
                "subject", "object", *FIELDS, "comment")
INSTRUCTIONS = """Annotation instructions (object-swap edits)

For every row of tasks.csv look at the two images named in the row (images/) and answer each field with
yes, no or unsure:

  original_relation_valid   the original image shows the original statement
  edited_relation_flipped   the edited image shows the edited statement (the relation has flipped)
  both_objects_visible      both named objects are still recognisable in the edited image
  no_blocking_artifacts     editing artifacts do not prevent a judgement

Some rows may look familiar; answer each row on its own. Leave the other columns as they are.
"""
_ANSWERS = {"yes": "yes", "y": "yes", "1": "yes", "true": "yes", "no": "no", "n": "no", "0": "no",
            "false": "no", "unsure": "unsure", "?": "unsure", "": "unsure", "na": "unsure"}


def _write_csv(path: Path, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    with atomic_write(path) as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in columns})


def _read_csv(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        raise InputError("file not found", path=path)
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def export_batches(edits: Sequence[Mapping[str, Any]], images_root: str | Path, out_dir: str | Path,
                   annotators: Sequence[str], *, repeat_fraction: float = EDIT_REPEAT_FRACTION,
                   seed: int = EDIT_SEED) -> dict[str, Any]:
    """Write one blinded batch per annotator and the private key; returns the export summary.

    ``edits``: rows with ``edit_id, source_image, edited_image, original_statement, edited_statement,
    subject, object`` (image paths relative to ``images_root``).
    """
    images_root, out_dir = Path(images_root), Path(out_dir)
    if len(set(annotators)) != len(annotators) or not annotators:
        raise InputError("annotator names must be distinct and non-empty", field="annotators")
    n = len(edits)
    if n == 0:
        raise InputError("no edits to export")
    n_repeat = min(n, math.ceil(repeat_fraction * n)) if repeat_fraction > 0 else 0
    key_rows = []
    for k, annotator in enumerate(annotators):
        rng = np.random.default_rng([seed, k])
        sequence = [(int(i), 0) for i in rng.permutation(n)]
        sequence += [(int(i), 1) for i in rng.choice(n, size=n_repeat, replace=False)]
        sequence = [sequence[j] for j in rng.permutation(len(sequence))]
        # The first occurrence (lower task number) votes; a repeat flag marks the later one.
        seen: set[int] = set()
        batch_dir = out_dir / "batches" / annotator
        (batch_dir / "images").mkdir(parents=True, exist_ok=True)
        rows = []
        for position, (index, _) in enumerate(sequence, start=1):
            edit = edits[index]
            task = f"T{position:0{max(3, len(str(len(sequence))))}d}"
            names = {}
            for role, column in (("original", "source_image"), ("edited", "edited_image")):
                source = images_root / str(edit[column])
                if not source.exists():
                    raise InputError("image not found", path=source, record=edit["edit_id"], field=column)
                names[role] = f"{task}_{role}{source.suffix.lower()}"
                copy_atomic(source, batch_dir / "images" / names[role])
            rows.append({"task": task, "original_image": f"images/{names['original']}",
                         "edited_image": f"images/{names['edited']}",
                         "original_statement": edit["original_statement"],
                         "edited_statement": edit["edited_statement"], "subject": edit["subject"],
                         "object": edit["object"]})
            key_rows.append({"annotator": annotator, "task": task, "edit_id": edit["edit_id"],
                             "repeat": int(index in seen)})
            seen.add(index)
        _write_csv(batch_dir / "tasks.csv", TASK_COLUMNS, rows)
        with atomic_write(batch_dir / "INSTRUCTIONS.txt") as handle:
            handle.write(INSTRUCTIONS)
    _write_csv(out_dir / "key.csv", ("annotator", "task", "edit_id", "repeat"), key_rows)
    return {"n_edits": n, "n_repeat_per_annotator": n_repeat, "annotators": list(annotators),
            "tasks_per_annotator": n + n_repeat, "seed": seed, "repeat_fraction": repeat_fraction,
            "key": str(out_dir / "key.csv")}


def read_answers(path: str | Path, key: Mapping[str, tuple[str, int]]) -> dict[str, dict[str, str]]:
    """One annotator's filled ``tasks.csv`` → task → {field: yes/no/unsure}; unknown tasks are errors."""
    path = Path(path)
    out = {}
    for number, row in enumerate(_read_csv(path), start=2):
        task = (row.get("task") or "").strip()
        if task not in key:
            raise InputError(f"unknown task '{task}'", path=path, record=f"line {number}", field="task")
        if task in out:
            raise InputError(f"task '{task}' is answered twice", path=path, record=f"line {number}", field="task")
        answers = {}
        for name in FIELDS:
            if name not in row:
                raise InputError("missing answer column", path=path, record=f"line {number}", field=name)
            value = (row[name] or "").strip().lower()
            if value not in _ANSWERS:
                raise InputError(f"unrecognised answer {row[name]!r} (expected yes/no/unsure)", path=path,
                                 record=f"line {number}", field=name)
            answers[name] = _ANSWERS[value]
        out[task] = answers
    return out


def consensus(votes: Sequence[str], n_annotators: int) -> str:
    """Field consensus: yes/no when more than half of ``n_annotators`` agree, else ``none``."""
    for answer in ("yes", "no"):
        if votes.count(answer) * 2 > n_annotators:
            return answer
    return "none"


def import_annotations(key_path: str | Path, answer_files: Mapping[str, str | Path]) -> dict[str, Any]:
    """Consensus rows per edit, pairwise and repeat agreement (see module docstring)."""
    key_path = Path(key_path)
    key_rows = _read_csv(key_path)
    keys: dict[str, dict[str, tuple[str, int]]] = {}
    for number, key_row in enumerate(key_rows, start=2):
        try:
            keys.setdefault(key_row["annotator"], {})[key_row["task"]] = (key_row["edit_id"], int(key_row["repeat"]))
        except (KeyError, ValueError) as exc:
            raise InputError(f"bad key row: {exc}", path=key_path, record=f"line {number}") from exc
    unknown = set(answer_files) - set(keys)
    if unknown:
        raise InputError(f"annotator(s) {sorted(unknown)} not in the key", path=key_path, field="annotator")
    first: dict[str, dict[str, dict[str, str]]] = {}  # annotator -> edit -> answers
    repeat_pairs: dict[str, list[tuple[dict[str, str], dict[str, str]]]] = {}
    missing: dict[str, int] = {}  # tasks in the key without an answer row (those edits lose that vote)
    for annotator, path in answer_files.items():
        answers = read_answers(path, keys[annotator])
        missing[annotator] = len(keys[annotator]) - len(answers)
        ordered = [task for task in keys[annotator] if task in answers]  # key.csv lists tasks in batch order
        first[annotator] = {}
        repeat_pairs[annotator] = []
        for task in ordered:
            edit_id = keys[annotator][task][0]
            if edit_id in first[annotator]:
                repeat_pairs[annotator].append((first[annotator][edit_id], answers[task]))
            else:
                first[annotator][edit_id] = answers[task]
    edit_ids = sorted({e for per in first.values() for e in per})
    rows = []
    for edit_id in edit_ids:
        voters = [a for a in first if edit_id in first[a]]
        row: dict[str, Any] = {"edit_id": edit_id, "n_annotators": len(voters)}
        decisions = []
        for name in FIELDS:
            votes = [first[a][edit_id][name] for a in voters]
            decisions.append(consensus(votes, len(voters)))
            row[name] = decisions[-1]
            row[f"{name}_votes"] = "/".join(votes)
        row["decision"] = ("accepted" if all(d == "yes" for d in decisions)
                           else "rejected" if "no" in decisions else "no-majority")
        rows.append(row)
    pairwise = {}
    for a, b in itertools.combinations(sorted(first), 2):
        shared = sorted(set(first[a]) & set(first[b]))
        cells = [first[a][e][f] == first[b][e][f] for e in shared for f in FIELDS]
        pairwise[f"{a}~{b}"] = {"n_edits": len(shared), "agreement": float(np.mean(cells)) if cells else None}
    repeat = {}
    pooled: list[bool] = []
    for annotator, pairs in repeat_pairs.items():
        cells = [x[f] == y[f] for x, y in pairs for f in FIELDS]
        pooled += cells
        repeat[annotator] = {"n_repeats": len(pairs), "agreement": float(np.mean(cells)) if cells else None}
    counts = {d: sum(r["decision"] == d for r in rows) for d in ("accepted", "rejected", "no-majority")}
    values = [v["agreement"] for v in pairwise.values() if v["agreement"] is not None]
    return {
        "rows": rows, "counts": counts, "n_edits": len(rows), "pairwise": pairwise,
        "pairwise_range": [min(values), max(values)] if values else None, "repeat": repeat,
        "missing_tasks": missing, "repeat_pooled": float(np.mean(pooled)) if pooled else None,
    }


def write_consensus(path: str | Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """The consensus table (one row per edit) as CSV, atomically."""
    columns = ["edit_id", "n_annotators", *FIELDS, *(f"{f}_votes" for f in FIELDS), "decision"]
    _write_csv(Path(path), columns, rows)
