"""The edited outcomes ``vlaudit data edits analyze`` writes (``edit_outcomes.csv``), read for the §15 Swap
targets of ``vlaudit vca validity|proxies --edits``."""

from __future__ import annotations

from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.files import read_records


def read_edit_outcomes(path: str | Path, edit_items: str | Path | None = None) -> list[dict[str, object]]:
    """``edit_outcomes.csv`` of ``vlaudit data edits analyze`` (or its folder), one row per (model, edit).

    Each row needs ``source_item_id``; older outcome tables lack it, and ``edit_items`` (the edits build's
    ``items.jsonl``) then maps each edit to the source item of its ``src-r`` probe.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "edit_outcomes.csv"
    records = read_records(path, required=("model", "edit_id", "flip_vis", "strict", "rel_o"))
    if records and records[0].get("source_item_id") in (None, ""):
        if edit_items is None:
            raise InputError("the edit outcomes have no source_item_id: give --edit-items (the edits build's "
                             "items.jsonl)", path=path, field="source_item_id")
        probes = read_records(edit_items, required=("edit_id", "probe", "source_item_id"))
        source = {str(p["edit_id"]): str(p["source_item_id"]) for p in probes if p["probe"] == "src-r"}
        for k, r in enumerate(records, start=1):
            if str(r["edit_id"]) not in source:
                raise InputError(f"edit {r['edit_id']!r} has no src-r probe in {edit_items}", path=path,
                                 record=f"row {k}", field="edit_id")
            r["source_item_id"] = source[str(r["edit_id"])]
    return records
