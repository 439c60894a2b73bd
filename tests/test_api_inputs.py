"""The input shapes of the public API (vlaudit.api.inputs): a path, a pyarrow Table, a pandas DataFrame, a list
of rows or the records themselves give the same records; a bad row is one InputError naming row and field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from vlaudit.api.input_records import as_cycles, as_items, as_margin_runs, as_matrix, as_scores
from vlaudit.errors import InputError
from vlaudit.files import write_table

CYCLES = [{"cycle_id": f"c{i}", "family": "f", "split": "test", "image_1": f"u{i}a", "caption_1": f"v{i}a",
           "image_2": f"u{i}b", "caption_2": f"v{i}b"} for i in range(3)]
ITEMS = [{"item_id": f"i{i}", "image": f"img{i}.png", "question": "Is the cat left of the dog?", "label": i % 2,
          "dataset": "d", "split": "test"} for i in range(3)]


def test_every_cycles_shape_gives_the_same_cycles(tmp_path: Path) -> None:
    path = write_table(tmp_path / "cycles.jsonl", CYCLES)
    expected = as_cycles(path)
    for shape in (str(path), pd.DataFrame(CYCLES), pa.Table.from_pylist(CYCLES), CYCLES, expected):
        assert as_cycles(shape) == expected


def test_every_items_shape_gives_the_same_items(tmp_path: Path) -> None:
    path = write_table(tmp_path / "items.jsonl", ITEMS)
    expected = as_items(path)
    for shape in (pd.DataFrame(ITEMS), pa.Table.from_pylist(ITEMS), ITEMS, expected):
        assert as_items(shape) == expected


def test_scores_from_a_frame_a_mapping_and_a_tensor_scorer_agree() -> None:
    cycles = as_cycles(CYCLES)
    pairs = list(dict.fromkeys((u, v) for c in cycles for u, v, _ in c.entries()))
    table = {pair: float(i) for i, pair in enumerate(pairs)}
    rows = [{"image_id": u, "caption_id": v, "score": np.float32(s)} for (u, v), s in table.items()]
    assert as_scores(pd.DataFrame(rows), cycles) == table
    assert as_scores(table, cycles) == table
    assert as_scores(lambda images, captions: torch.arange(len(images), dtype=torch.float32), cycles) == table


def test_bad_rows_are_one_line_input_errors() -> None:
    cycles = as_cycles(CYCLES)
    with pytest.raises(InputError, match=r"row 2, field 'score'.*not a number"):
        as_scores([{"image_id": "u0a", "caption_id": "v0a", "score": 1.0},
                   {"image_id": "u0a", "caption_id": "v0b", "score": "high"}], cycles)
    with pytest.raises(InputError, match=r"row 1, field 'score'.*True is not a number"):
        as_scores([{"image_id": "u0a", "caption_id": "v0a", "score": True}], cycles)
    with pytest.raises(InputError, match=r"<cycles>, record row 1, field 'family'"):
        as_cycles([{k: v for k, v in CYCLES[0].items() if k != "family"}])
    with pytest.raises(InputError, match="expected a path, a pandas DataFrame, a pyarrow Table"):
        as_margin_runs(42)
    with pytest.raises(InputError, match=r"2-D matrix.*shape \(3,\)"):
        as_matrix(torch.ones(3), what="image_embeddings")


def test_the_input_names_import_neither_pandas_nor_torch() -> None:
    code = ("import sys, vlaudit.api.inputs; "
            "print(sorted(m for m in ('pandas', 'torch') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
