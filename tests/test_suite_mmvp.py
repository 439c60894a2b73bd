"""MMVP-VLM: the reader of ``Questions.csv``, the official pair accuracy per pattern, look-alikes refused.

The official scoring is re-expressed below from tsb0601/MMVP @ 7635005 : scripts/evaluate_vlm.py
(``benchmark_model``), with the CLIP forward pass replaced by a table of logits, and run beside vlaudit on a
``Questions.csv`` in the published layout (9 patterns × 15 pairs; no published file is here: the data is on the Hub).
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.analysis.suites.registry import suite_named
from vlaudit.errors import InputError
from vlaudit.metrics.suites import SuiteScores
from vlaudit.metrics.suites.mmvp import aggregate, first_image_probability, outcomes
from vlaudit.sources.suites.mmvp import CATEGORIES, read_mmvp

FOLDERS = ("Orientation", "Presence", "State", "Quantity", "Spatial", "Color", "Structure", "Text",
           "Camera_Perspective")


def official(csv_file: Path, logit) -> dict[str, float]:
    """``benchmark_model`` with ``model(imgs, text)`` replaced by ``logit(image path, text)`` (float64)."""
    categories = [
        'Orientation and Direction', 'Presence of Specific Features',
        'State and Condition', 'Quantity and Count',
        'Positional and Relational Context', 'Color and Appearance',
        'Structural Characteristics', 'Texts',
        'Viewpoint and Perspective'
    ]
    pair_accuracies = {category: 0 for category in categories}
    num_pairs = 0
    with open(csv_file, 'r') as f:  # noqa: UP015 (verbatim)
        reader = csv.reader(f)
        next(reader)  # skip header
        for i, row in enumerate(reader):  # noqa: B007 (verbatim)
            qid1, qtype1, statement1 = row
            row = next(reader, None)
            if not row:
                break
            qid2, qtype2, statement2 = row
            qid1, qid2 = int(qid1), int(qid2)
            img1 = f'{qtype1}/{qid1}.jpg'
            img2 = f'{qtype1}/{qid2}.jpg'
            text1 = 'a photo of ' + statement1
            text2 = 'a photo of ' + statement2
            logits_per_text1 = torch.tensor([[logit(img1, text1), logit(img2, text1)]], dtype=torch.float64)
            logits_per_text2 = torch.tensor([[logit(img1, text2), logit(img2, text2)]], dtype=torch.float64)
            probs1 = logits_per_text1.softmax(dim=-1).cpu().numpy()
            probs2 = logits_per_text2.softmax(dim=-1).cpu().numpy()
            img1_score1 = probs1[0][0]
            img1_score2 = probs2[0][0]
            pred1 = "img1" if img1_score1 > 0.5 else "img2"
            pred2 = "img1" if img1_score2 > 0.5 else "img2"
            gt1 = "img1" if qid1 % 2 == 1 else "img2"
            gt2 = "img1" if qid2 % 2 == 1 else "img2"
            current_category = categories[num_pairs // 15]
            if pred1 == gt1 and pred2 == gt2:
                pair_accuracies[current_category] += 1
            num_pairs += 1
    for category in pair_accuracies:
        pair_accuracies[category] = (pair_accuracies[category] / (num_pairs // len(categories))) * 100
    return pair_accuracies


def statement(qid: int) -> str:
    """Pairs whose two statements have one bag of words every third pair (an order-blind model ties on them)."""
    pair = (qid - 1) // 2
    first, second = ("dog left of cat", "cat left of dog") if pair % 3 == 0 else (f"one red thing {pair}",
                                                                                  f"two blue things {pair}")
    return first if qid % 2 == 1 else second


def write_questions(path: Path, pairs: int = 135) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question ID", "Type", "Statement"])
        for qid in range(1, 2 * pairs + 1):
            writer.writerow([qid, FOLDERS[min(((qid - 1) // 2) // 15, 8)], statement(qid)])
    return path


def scores_of(read, logit) -> SuiteScores:
    return SuiteScores([np.array([[logit(image.path, text) for text in item.texts] for image in item.images])
                        for item in read.items])


def table_logit(seed: int):
    """Small integer logits (many exact ties), one per (image, text)."""
    rng = np.random.default_rng(seed)
    cache: dict[tuple[str, str], float] = {}

    def logit(image: str, text: str) -> float:
        return cache.setdefault((image, text), float(rng.integers(0, 3)))
    return logit


def test_reader_pairs_consecutive_rows(tmp_path: Path) -> None:
    read = read_mmvp(write_questions(tmp_path / "Questions.csv"))
    assert read.counts == {"read": 270, "kept": 270} and len(read.items) == 135 and read.notes == ()
    item = read.items[0]
    assert [image.path for image in item.images] == ["Orientation/1.jpg", "Orientation/2.jpg"]
    assert item.texts == ("a photo of dog left of cat", "a photo of cat left of dog")
    assert item.positives == ((0, 0), (1, 1)) and item.subset == "Orientation and Direction"
    assert [read.items[k].subset for k in (14, 15, 134)] == [CATEGORIES[0], CATEGORIES[1], CATEGORIES[8]]


def test_official_figures_equal_the_official_code(tmp_path: Path) -> None:
    path = write_questions(tmp_path / "Questions.csv")
    read = read_mmvp(path)
    for seed in range(3):
        logit = table_logit(seed)
        (figure,) = aggregate(read.items, outcomes(read.items, scores_of(read, logit)))
        expected = official(path, logit)
        assert figure.subsets == pytest.approx({name: value / 100 for name, value in expected.items()}, abs=1e-12)
        assert figure.value == pytest.approx(np.mean(list(expected.values())) / 100, abs=1e-12)
        assert figure.n == 135 and figure.n_subsets == 9 and figure.note is None


def test_a_tie_goes_to_the_second_image(tmp_path: Path) -> None:
    read = read_mmvp(write_questions(tmp_path / "Questions.csv", pairs=2))
    tie = np.array([[1.0, 1.0], [1.0, 1.0]])
    right = np.array([[2.0, 1.0], [1.0, 2.0]])
    values = outcomes(read.items, SuiteScores([tie, right]))
    # the tie: statement 1 (truth image 1) is wrong, statement 2 (truth image 2) is right
    assert values.values.tolist() == [[0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    assert first_image_probability(np.array([1e-17, 0.0])) == 0.5  # below float64's resolution: a tie, as in torch
    (figure,) = aggregate(read.items, values)
    assert figure.value == 0.5 and "not the published 9 × 15" in (figure.note or "")


def test_planted_order_blind_model(tmp_path: Path) -> None:
    path = write_questions(tmp_path / "Questions.csv")
    read = read_mmvp(path)

    def bag_logit(image: str, text: str) -> float:  # the image's own statement's bag of words vs the text's
        own = set(statement(int(image.split("/")[1][:-4])).split())
        return float(len(own & set(text.split()[3:])))
    (figure,) = aggregate(read.items, outcomes(read.items, scores_of(read, bag_logit)))
    # every third pair swaps words: all four logits tie, statement 1 loses (a tie goes to image 2); the rest win
    assert figure.value == pytest.approx(2 / 3) and figure.subsets[CATEGORIES[0]] == pytest.approx(10 / 15)
    assert figure.value == pytest.approx(np.mean(list(official(path, bag_logit).values())) / 100)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([-1.0, 0.0, 0.5, 2.0]), min_size=8, max_size=8), st.floats(0.5, 20))
def test_positive_scale_keeps_the_figure(values, scale) -> None:
    with tempfile.TemporaryDirectory() as folder:
        items = read_mmvp(write_questions(Path(folder) / "Questions.csv", pairs=2)).items
    scores = SuiteScores([np.array(values[:4]).reshape(2, 2), np.array(values[4:]).reshape(2, 2)])
    scaled = SuiteScores([scale * m for m in scores.pairs])
    assert outcomes(items, scores).values.tolist() == outcomes(items, scaled).values.tolist()


def test_odd_rows_and_look_alikes(tmp_path: Path) -> None:
    path = tmp_path / "Questions.csv"
    path.write_text("Question ID,Type,Statement\n1,Color,a red cup\n2,Color,a blue cup\n3,Color,a cup\n")
    read = suite_named("mmvp-vlm").read_file(path)
    assert read.counts == {"read": 3, "kept": 2, "unpaired last row": 1} and "row 4" in read.notes[0]
    path.write_text("Index,Question,Options,Correct Answer\n1,Is the dog facing left?,(a) Yes (b) No,(a)\n")
    with pytest.raises(InputError, match=r"not a MMVP-VLM file: expected Questions.csv.*MMVP MLLM benchmark"):
        read_mmvp(path)
    path.write_text("Question ID,Type,Statement\n1,Color,a red cup\nx,Color,a blue cup\n")
    with pytest.raises(InputError, match=r"record row 3, field 'qid'"):
        read_mmvp(path)
    path.write_text("Question ID,Type,Statement\n1,../up,a red cup\n2,../up,a blue cup\n")
    with pytest.raises(InputError, match=r"leaves the images folder"):
        read_mmvp(path)
    with pytest.raises(InputError, match=r"pair 136 has no pattern"):
        read_mmvp(write_questions(tmp_path / "Q.csv", pairs=136))


def test_type_column_disagreeing_with_position_is_noted(tmp_path: Path) -> None:
    path = tmp_path / "Questions.csv"
    path.write_text("Question ID,Type,Statement\n1,Color,a red cup\n2,Color,a blue cup\n3,Text,a sign\n4,Text,a name\n")
    read = read_mmvp(path)
    assert {item.subset for item in read.items} == {CATEGORIES[0]} and "by position" in read.notes[0]
