"""The MMStar tutorial's offline block recovers the planted credit, and the figures the page prints are the
ones the report prints: D-CC is the share of image-read items (VCA §3), MG = Acc − Acc_text (MMStar)."""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from vlaudit.commands._introspect import shell_commands
from vlaudit.reference.scene_mcq import IMAGE_FRACTION, SceneMcq
from vlaudit.sources.items import read_items

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "tutorials" / "mmstar-credit.md"
SAMPLE = Path("docs") / "samples" / "mmstar-sample.parquet"


def _fenced(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)


def _squeezed(text: str) -> set[str]:
    return {" ".join(line.split()) for line in text.splitlines() if line.strip()}


def test_the_sample_is_in_mmstars_published_schema() -> None:
    schema = pq.read_schema(REPO / SAMPLE)
    assert schema.names == ["index", "question", "image", "answer", "category", "l2_category", "meta_info"]
    assert str(schema.field("index").type) == "int64"
    assert [field.name for field in schema.field("image").type] == ["bytes", "path"]
    rows = pq.read_table(REPO / SAMPLE).to_pylist()
    assert all(row["image"]["bytes"].startswith(b"\x89PNG") and "\nOptions: A: " in row["question"]
               for row in rows)


@pytest.mark.slow
def test_the_offline_block_recovers_the_planted_credit_the_page_prints(tmp_path: Path) -> None:
    (block,) = [code for code in _fenced("bash") if code.startswith("# offline") and "scene-mcq" in code]
    (printed,) = _fenced("text")[1:]
    shutil.copytree(REPO / SAMPLE.parent, tmp_path / SAMPLE.parent)
    env = os.environ | {"VLAUDIT_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    stdout = ""
    for line in shell_commands(block):
        argv = [sys.executable, "-m", "vlaudit", *shlex.split(line, comments=True)[1:]]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        stdout = done.stdout

    mechanism = SceneMcq("scene-mcq-mixture", IMAGE_FRACTION)
    items = read_items(tmp_path / "mmstar.jsonl")
    planted = {item.item_id for item in items if mechanism.reads_image(item.question)}
    with (tmp_path / "mmstar-report" / "items.csv").open(encoding="utf-8") as handle:
        credited = {row["item_id"] for row in csv.DictReader(handle) if row["dcc"] == "true"}
    assert credited == planted and len(planted) == 8 and len(items) == 24

    (run,) = json.loads((tmp_path / "mmstar-report" / "vca.json").read_text(encoding="utf-8"))["runs"]
    gain = run["benchmark"]["mmstar"]
    assert gain["mg"] == pytest.approx(gain["acc_image"] - gain["acc_text"]) and gain["acc_image"] == run["acc"]
    assert (run["acc"] * 24, gain["acc_text"] * 24, run["dcc"] * 24) == pytest.approx((12, 5, 8))

    table_rows = [line for line in _squeezed(printed) if re.match(r"(letter|ref:|horizontal|vertical|\d)", line)]
    assert len(table_rows) == 6 and set(table_rows) <= _squeezed(stdout)
    # items without object boxes have no erasure view, so the report shows no (empty) Table 11
    assert "Erasure geometry" not in stdout
