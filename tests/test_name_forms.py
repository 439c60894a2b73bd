"""Names are compared in one normal form (:func:`vlaudit.sources.names.norm_name`): a mention typed in another
Unicode normal form, case or spacing than its object matches it, so no cycle is lost without a word."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vlaudit.sources.names import norm_name


@given(st.text(max_size=30))
def test_every_normal_form_of_a_name_is_one_name(text) -> None:
    forms = {unicodedata.normalize(form, text) for form in ("NFC", "NFD")}
    assert len({norm_name(f) for f in forms}) == 1
    assert norm_name(norm_name(text)) == norm_name(text)


def _rows(object_name: str, mention: str) -> list[dict]:
    left = [{"name": object_name, "box": [5, 40, 20, 20]}, {"name": "chair", "box": [70, 40, 20, 20]}]
    right = [{"name": object_name, "box": [70, 40, 20, 20]}, {"name": "chair", "box": [5, 40, 20, 20]}]
    return [
        {"image_id": "a", "width": 100, "height": 100, "objects": left, "caption_id": "a1",
         "caption": f"a {mention} left of a chair", "mentions": [mention, "chair"],
         "triples": [{"subject": mention, "relation": "left of", "object": "chair"}]},
        {"image_id": "b", "width": 100, "height": 100, "objects": right, "caption_id": "b1",
         "caption": f"a {mention} right of a chair", "mentions": [mention],
         "triples": [{"subject": mention, "relation": "right of", "object": "chair"}]},
        {"image_id": "c", "width": 100, "height": 100, "objects": [{"name": "cat"}], "caption_id": "c1",
         "caption": "a cat", "mentions": ["cat"]},
    ]


@pytest.mark.parametrize(("object_name", "mention"), [
    (unicodedata.normalize("NFC", "café table"), unicodedata.normalize("NFD", "café table")),
    (unicodedata.normalize("NFD", "Ångström"), unicodedata.normalize("NFC", "ångström")),
    ("crème  brûlée", unicodedata.normalize("NFD", " Crème brûlée ")),
])
def test_a_mention_in_another_normal_form_builds_the_same_cycles(object_name, mention, tmp_path: Path) -> None:
    from vlaudit.builders.cycles import build_jsonl_cycles

    counts = []
    for name, (obj, said) in {"same": (object_name, object_name), "other": (object_name, mention)}.items():
        pairs = tmp_path / f"{name}.jsonl"
        pairs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _rows(obj, said)))
        summary = build_jsonl_cycles(pairs, tmp_path / f"{name}-cycles.jsonl", splits="test", min_cycles=1)
        counts.append(summary["counts"])
    assert counts[0] == counts[1] and counts[0]["pairs-relation"]["test"] == 1, counts
