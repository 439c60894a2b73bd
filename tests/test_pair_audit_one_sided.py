"""An all-positive pair table has no negatives: its TVs are undefined (—, null), not 1.000, and a warning says so."""

from __future__ import annotations

import json
from pathlib import Path

from vlaudit.metrics.pair_audit import audit_pairs
from vlaudit.records import LabelledPair


def test_all_positive_table_warns_and_leaves_tv_undefined(cli, tmp_path: Path) -> None:
    table = tmp_path / "pos.jsonl"
    table.write_text("".join(json.dumps({"image_id": f"u{k}", "caption": f"a dog {k}", "label": 1}) + "\n"
                             for k in range(4)))
    code, out, err = cli("cycles", "audit-pairs", str(table), "--out", str(tmp_path / "audit"))
    assert code == 0, err
    pos_row = next(line for line in out.splitlines() if line.strip().startswith("pos"))
    assert pos_row.split()[2:5] == ["—", "—", "—"], pos_row
    assert "no negatives" in " ".join(err.split())
    row = json.loads((tmp_path / "audit" / "audit_pairs.json").read_text())["rows"][0]
    assert row["tv_image"] is None and row["tv_caption"] is None and row["tv_caption_length"] is None


def test_two_sided_table_keeps_its_tv() -> None:
    pairs = [LabelledPair(image_id="u", caption="v", label=True, text="a b"),
             LabelledPair(image_id="u", caption="w", label=False, text="a b c")]
    result = audit_pairs(pairs)
    assert result["tv_image"] == 0.0 and result["tv_caption"] == 1.0 and result["tv_caption_length"] == 1.0
