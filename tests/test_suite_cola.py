"""COLA multi-object: the reader of the published JSON, the official image score, look-alikes refused by name.

The official scoring code is re-expressed below from arijitray1993/COLA @ 1fa52fb : scripts/eval.py
(``ColaMultiObjAcc`` and its ``__main__`` loop) and run beside vlaudit on a file in the published layout.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.analysis.suites.registry import suite_named
from vlaudit.errors import InputError
from vlaudit.metrics.suites import SuiteScores
from vlaudit.metrics.suites.cola import aggregate, outcomes
from vlaudit.sources.labelled_pairs import read_labelled_pairs
from vlaudit.sources.suites.cola import read_cola

URL = "https://cs-people.bu.edu/array/data/vg_gqa_images/{}.jpg"


# ---- arijitray1993/COLA @ 1fa52fb : scripts/eval.py, verbatim but for the names of the test
def ColaMultiObjAcc(preds):  # noqa: N802 (the official name)
    im0_c0 = preds[0, 0]
    im0_c1 = preds[0, 1]

    im1_c0 = preds[1, 0]
    im1_c1 = preds[1, 1]

    image_correct = im0_c0 > im1_c0 and im1_c1 > im0_c1

    return image_correct


def official_multi_obj_accuracy(multi_obj_data, score):
    """The ``__main__`` loop with ``compute_score_using_your_mmodel`` filled in: ``score(row, image, caption)``."""
    batch_acc = []
    for row in multi_obj_data:
        image_1, caption_1, image_2, caption_2 = row
        pred = np.array([[score(row, image_1, caption_1), score(row, image_1, caption_2)],
                         [score(row, image_2, caption_1), score(row, image_2, caption_2)]])
        batch_acc.append(ColaMultiObjAcc(pred))
    return np.mean(batch_acc)
# ----


def write(path: Path, rows: list) -> Path:
    path.write_text(json.dumps(rows))
    return path


ROWS = [[URL.format(1), "red cube left of blue ball", URL.format(2), "blue cube left of red ball"],
        [URL.format(3), "tall tree behind small house", URL.format(4), "small tree behind tall house"],
        [URL.format(5), "dog on the sofa", URL.format(6), "cat under the table"],
        [URL.format(7), "man to the left of woman", URL.format(8), "woman to the left of man"]]
# hand-written scores s(image URL, caption), with exact ties (row 2: a tie on caption 1; row 4: all equal)
SCORES = {(URL.format(1), ROWS[0][1]): 0.9, (URL.format(1), ROWS[0][3]): 0.2,
          (URL.format(2), ROWS[0][1]): 0.3, (URL.format(2), ROWS[0][3]): 0.8,
          (URL.format(3), ROWS[1][1]): 0.5, (URL.format(3), ROWS[1][3]): 0.1,
          (URL.format(4), ROWS[1][1]): 0.5, (URL.format(4), ROWS[1][3]): 0.9,
          (URL.format(5), ROWS[2][1]): 0.4, (URL.format(5), ROWS[2][3]): 0.6,
          (URL.format(6), ROWS[2][1]): 0.1, (URL.format(6), ROWS[2][3]): 0.7,
          (URL.format(7), ROWS[3][1]): 0.5, (URL.format(7), ROWS[3][3]): 0.5,
          (URL.format(8), ROWS[3][1]): 0.5, (URL.format(8), ROWS[3][3]): 0.5}


def vlaudit_scores(read, rows, score) -> SuiteScores:
    """The score matrices of the items from ``score(row, image URL, caption)``, as the rows give them."""
    matrices = []
    for item, row in zip(read.items, rows, strict=True):
        urls = (row[0], row[2])
        matrices.append(np.array([[score(row, url, text) for text in item.texts] for url in urls]))
    return SuiteScores(matrices)


def test_reader_items_are_native_2x2_blocks(tmp_path: Path) -> None:
    read = read_cola(write(tmp_path / "COLA_multiobjects_matching_benchmark.json", ROWS))
    assert read.counts == {"read": 4, "kept": 4} and read.suite == "cola-multi-object"
    item = read.items[0]
    assert [image.path for image in item.images] == ["1.jpg", "2.jpg"]
    assert item.texts == (ROWS[0][1], ROWS[0][3]) and item.positives == ((0, 0), (1, 1))
    assert item.pairs() == ((0, 0, 1), (0, 1, 0), (1, 0, 0), (1, 1, 1)) and item.subset == "multi-object"


def test_official_figure_equals_the_official_code_with_ties(tmp_path: Path) -> None:
    read = read_cola(write(tmp_path / "cola.json", ROWS))
    score = SCORES.__getitem__
    scores = vlaudit_scores(read, ROWS, lambda row, url, text: score((url, text)))
    values = outcomes(read.items, scores)
    # row 2: a tie on caption 1 counts wrong; row 3: image 0 prefers caption 2 (text score wrong), yet each
    # caption picks its own image (the image score, t2i, is right); row 4: all equal, wrong
    assert values.column("image_correct").tolist() == [1.0, 0.0, 1.0, 0.0]
    (figure,) = aggregate(read.items, values)
    expected = official_multi_obj_accuracy(ROWS, lambda row, url, text: score((url, text)))
    assert figure.value == expected == 0.5 and figure.n == 4 and "1fa52fb" in figure.source


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=16, max_size=16), st.floats(0.1, 10), st.floats(-5, 5))
def test_official_figure_matches_the_official_code_and_a_positive_affine_map(raw, scale, shift) -> None:
    rows = ROWS
    table = {key: float(v) for key, v in zip(SCORES, raw, strict=True)}  # small integers: many exact ties
    items = read_cola_rows(rows)
    scores = vlaudit_scores(items, rows, lambda row, url, text: table[(url, text)])
    (figure,) = aggregate(items.items, outcomes(items.items, scores))
    assert figure.value == official_multi_obj_accuracy(rows, lambda row, url, text: table[(url, text)])
    mapped = SuiteScores([scale * m + shift for m in scores.pairs])
    assert aggregate(items.items, outcomes(items.items, mapped))[0].value == figure.value


def read_cola_rows(rows: list):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return read_cola(write(Path(folder) / "cola.json", rows))


def bag_scorer(rows: list | None = None):
    """An order-blind model: s(image, caption) = cosine of the caption's bag of words with the bag of the
    image's own caption in that row (equal scores for captions with the same bag of words)."""

    def bag(text: str) -> dict[str, int]:
        words: dict[str, int] = {}
        for word in text.lower().split():
            words[word] = words.get(word, 0) + 1
        return words

    def score(row: list, url: str, text: str) -> float:
        a, b = bag(row[1] if url == row[0] else row[3]), bag(text)
        dot = sum(n * b.get(w, 0) for w, n in a.items())
        return dot / np.sqrt(sum(n * n for n in a.values()) * sum(n * n for n in b.values()))
    return score


def test_planted_order_blind_model_fails_every_same_bag_item(tmp_path: Path) -> None:
    read = read_cola(write(tmp_path / "cola.json", ROWS))
    scores = vlaudit_scores(read, ROWS, bag_scorer(ROWS))
    # rows 1, 2 and 4 swap words (same bag): all four scores tie, a tie counts wrong; row 3 differs in words
    assert outcomes(read.items, scores).column("image_correct").tolist() == [0.0, 0.0, 1.0, 0.0]


def test_published_file_read_whole(shared_data: Path) -> None:
    path = shared_data / "compositionality" / "cola" / "COLA_multiobjects_matching_benchmark.json"
    suite = suite_named("cola-multi-object")
    read = suite.read_file(path)
    assert read.counts == {"read": 210, "kept": 210} and len(read.items) == 210
    assert len({image.path for item in read.items for image in item.images}) == 218
    assert read.items[0].images[0].path == "2390970.jpg" and read.items[-1].images[0].path == "150391.jpg"
    rows = json.loads(path.read_text())
    scores = vlaudit_scores(read, rows, bag_scorer(rows))
    (figure,) = suite.aggregate(read.items, suite.outcomes(read.items, scores))
    # the order-blind model ties on the 10 rows whose two captions have one bag of words, wins the other 200
    assert figure.value == official_multi_obj_accuracy(rows, bag_scorer(rows)) == 200 / 210


@pytest.mark.parametrize(("data", "found"), [
    ([[1, "a dog left of a cat", "a dog right of a cat"]], "a list of 3-lists"),
    ([["vg/1.jpg", {"POS": ["a"], "NEG": ["b"]}]], "a list of 2-lists"),
    ({"0": {"caption": "x"}}, "an object with keys"),
    ([{"caption": "a", "negative_caption": "b"}], "a list of objects"),
])
def test_look_alikes_refused_by_name(tmp_path: Path, data, found: str) -> None:
    with pytest.raises(InputError, match=rf"not a COLA multi-object file: expected a JSON list of \[image1_url.*{found}"):
        read_cola(write(tmp_path / "other.json", data))


def test_bad_records_name_file_record_field(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"record entry 1, field 'caption2'"):
        read_cola(write(tmp_path / "c.json", [ROWS[0], [URL.format(1), "a", URL.format(2), " "]]))
    with pytest.raises(InputError, match=r"record entry 0, field 'image1_url'.*names no file"):
        read_cola(write(tmp_path / "c.json", [["https://host/", "a", URL.format(2), "b"]]))
    with pytest.raises(InputError, match=r"record entry 1.*expected \[image1_url"):
        read_cola(write(tmp_path / "c.json", [ROWS[0], ROWS[0][:3]]))


def test_audit_pairs_refuses_suite_files_by_name_not_as_whats_up(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"looks like a COLA multi-object file .*suite 'cola-multi-object'"):
        read_labelled_pairs(write(tmp_path / "cola.json", ROWS))
    checklist = [["vg/1.jpg", {"POS": ["a dog on a sofa"], "NEG": ["a sofa on a dog"]}]]
    with pytest.raises(InputError, match=r"looks like a VL-CheckList file .*suite 'vl-checklist'"):
        read_labelled_pairs(write(tmp_path / "spatial.json", checklist))
    with pytest.raises(InputError, match=r"unknown JSON pair format: a list of 5-lists"):
        read_labelled_pairs(write(tmp_path / "five.json", [[1, 2, 3, 4, 5]]))
    fmt, pairs = read_labelled_pairs(write(tmp_path / "coco_qa_two_obj.json", [[1, "a dog", "a cat"]]))
    assert fmt == "whatsup-spatial" and len(pairs) == 2  # a 3-list is still What's Up
