"""Hypothesis over the benchmark readers' other row sources: a VLMEvalKit TSV with base64 images damaged byte by
byte, and mutated rows stored as a Parquet export. Whatever comes out, a reader returns or raises a
:class:`~vlaudit.errors.VlauditError` (one line on the command line), never another exception."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
from benchmark_releases import mmbench_tsv
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_reader_fuzz import AI2D, CV_BENCH, MMBENCH, MME, MMMU, MMSTAR, POPE, _mutate

from vlaudit.errors import VlauditError
from vlaudit.sources.registry import read_benchmark_items
from vlaudit.sources.rows import ImageFolder
from vlaudit.tables import rows_to_table, write_parquet

PARQUET_SEEDS = {"pope": POPE, "mme": MME, "mmstar": MMSTAR, "mmbench": MMBENCH, "mmmu": MMMU,
                 "cv-bench": CV_BENCH, "ai2d": AI2D}


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_damaged_tsv_gives_a_clean_error_or_items(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = mmbench_tsv(Path(folder))
        content = bytearray(path.read_bytes())
        position = data.draw(st.integers(0, len(content) - 1))
        if data.draw(st.booleans()):
            content = content[:position]
        else:
            content[position] = data.draw(st.integers(0, 255))
        path.write_bytes(bytes(content))
        try:
            read_benchmark_items("mmbench", path, images=ImageFolder(Path(folder) / "images"))
        except VlauditError:
            pass


@settings(max_examples=40, deadline=None)
@given(fmt=st.sampled_from(sorted(PARQUET_SEEDS)), data=st.data())
def test_mutated_rows_in_parquet_give_a_clean_error_or_items(fmt: str, data: st.DataObject) -> None:
    rows = _mutate(data, PARQUET_SEEDS[fmt])
    assume(isinstance(rows, list) and rows and all(isinstance(r, dict) and r for r in rows))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "release.parquet"
        try:
            write_parquet(path, rows_to_table(rows))
        except (pa.ArrowException, OverflowError):
            assume(False)  # Arrow cannot store these values: no Parquet export can hold them
        try:
            read_benchmark_items(fmt, path)
        except VlauditError:
            pass
