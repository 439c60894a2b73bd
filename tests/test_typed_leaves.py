"""Typed to the leaves, as a ratchet: every field of every JSON result a command writes
(:data:`vlaudit.results.catalog.RESULT_TYPES` and each record inside one) is a typed record, a scalar or a
container of those — not a JSON bag (``dict[str, json]``, ``json``, ``Any``, ``object``) read by key.

The fields still untyped are listed below, each by its record and field. The list may only shrink: a new
untyped field fails the first test, and a field typed since fails the second until its line is deleted here.
"""

from __future__ import annotations

import re

from vlaudit.results.catalog import RESULT_TYPES
from vlaudit.results.versioned import field_types, nested_records

UNTYPED = re.compile(r"\bjson\b|\bAny\b|\bobject\b")

# record.field of every result field still a JSON bag (remove a line when its field gets a record)
STILL_UNTYPED: set[str] = set()


def untyped_fields() -> dict[str, str]:
    """record.field → its type, for every JSON-bag field of a result or a record inside one."""
    found: dict[str, str] = {}
    for result in RESULT_TYPES:
        for record in (result, *nested_records(result)):
            for name, kind in field_types(record).items():
                if UNTYPED.search(kind):
                    found[f"{record.__name__}.{name}"] = kind
    return found


def test_no_new_result_field_is_a_json_bag() -> None:
    new = {name: kind for name, kind in untyped_fields().items() if name not in STILL_UNTYPED}
    assert new == {}, "a result field holds a typed record (vlaudit/results/), not a JSON bag"


def test_a_field_typed_since_leaves_the_list() -> None:
    assert STILL_UNTYPED - set(untyped_fields()) == set()


def test_the_scan_sees_a_json_bag_and_passes_a_record() -> None:
    assert UNTYPED.search("list[dict[str, json]]") and UNTYPED.search("dict[str, json] | null")
    assert UNTYPED.search("Mapping[str, object]") and UNTYPED.search("Any")
    assert not UNTYPED.search("list[RunAudit]") and not UNTYPED.search("dict[str, Interval] | null")
