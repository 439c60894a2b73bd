"""MMStar's published ``mmstar.parquet`` holds 7 MathVista questions whose ``(A) …`` options follow the question
with neither an ``Options:`` nor a ``Choices:`` header; the reader refused the whole file at the first (row 777).
They are read here, in the release's layout; the real file is used when it is under
../shared/data (it is not in this workplace)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from benchmark_releases import IMAGE, RED, S, image, write_parquet

from vlaudit.errors import InputError
from vlaudit.sources.benchmarks.choice import read_mmstar

HINT = "Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, D, at the end.\n"
QUESTIONS = [
    ("Which is red?\nOptions: A: apple, B: sky, C: grass, D: coal", "Which is red?",
     ("apple", "sky", "grass", "coal")),
    (HINT + "Question: What fraction is blue?\nChoices:\n(A) 3/11\n(B) 8/11", HINT + "Question: What fraction is blue?",
     ("3/11", "8/11")),
    # the headerless layout: one option a line ...
    (HINT + "Question: Is the bar (A) taller than the bar (B)?\n(A) Yes\n(B) No",
     HINT + "Question: Is the bar (A) taller than the bar (B)?", ("Yes", "No")),
    (HINT + "Question: What is the value of x?\n(A) 2\n(B) 4\n(C) 6\n(D) 8", HINT + "Question: What is the value of x?",
     ("2", "4", "6", "8")),
    # ... or on the question's line
    ("Question: Which angle is largest? (A) 30° (B) 45° (C) 60°", "Question: Which angle is largest?",
     ("30°", "45°", "60°")),
]

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # as tests/conftest.py finds it


def _release(root: Path, questions: list[str]) -> Path:
    meta = pa.struct([("source", S), ("split", S), ("image_path", S)])
    n = len(questions)
    return write_parquet(root / "mmstar.parquet", {
        "index": (pa.int64(), list(range(n))), "question": (S, questions), "image": (IMAGE, [image(RED)] * n),
        "answer": (S, ["B"] * n), "category": (S, ["math"] * n), "l2_category": (S, ["geometry"] * n),
        "meta_info": (meta, [{"source": "MathVista", "split": "val", "image_path": f"images/{k}.jpg"}
                             for k in range(n)])})


def test_headerless_options_are_read_and_counted(tmp_path: Path) -> None:
    read = read_mmstar(_release(tmp_path, [q for q, _, _ in QUESTIONS]))
    assert [(i.question, i.options) for i in read.items] == [(q, o) for _, q, o in QUESTIONS]
    assert [i.label for i in read.items] == ["B"] * len(QUESTIONS)
    (note,) = read.notes
    assert note.startswith("3 question(s) list their options as '(A) …' with neither 'Options:' nor 'Choices:'")
    assert "row 3" in note


def test_a_question_without_any_option_list_is_still_refused_by_row(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_mmstar(_release(tmp_path, [QUESTIONS[0][0], "How many apples (A) are there?"]))
    message = str(caught.value)
    assert "row 2" in message and "'(A) … (B) …'" in message and "question" in message


@pytest.mark.skipif(not (SHARED_DATA / "mmstar" / "mmstar.parquet").exists(),
                    reason="MMStar's published mmstar.parquet is not under ../shared/data")
def test_the_published_file_reads_whole() -> None:  # pragma: no cover - the file is not in this workplace
    read = read_mmstar(SHARED_DATA / "mmstar" / "mmstar.parquet")
    assert len(read.items) == 1500
    assert any(note.startswith("7 question(s) list their options as '(A) …'") for note in read.notes)
