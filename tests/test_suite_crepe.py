"""CREPE: the reader of the hard-negatives CSVs, the official R@1/3/5/10, both readings of argsort's tie order.

The official ranking and metrics are re-expressed below from RAIVNLab/CREPE @ 1fa81c4 : crepe_eval_utils.py
(``get_one2many_rank``, ``get_one2many_metrics``; the rows as ``CsvDataset`` builds them, true caption first),
with the encoders replaced by a table of scores, and run beside vlaudit on CSVs in the published layout (no
published file is here: the CSVs are zips in the repository, not stored). ``torch.argsort`` leaves the order of
ties undefined: the test runs it with the two orders a stable sort gives (the true caption before or after its
ties) and checks vlaudit's bounds against each and its expectation against every order.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.analysis.suites.registry import suite_named
from vlaudit.errors import InputError
from vlaudit.metrics.suites import SuiteScores
from vlaudit.metrics.suites.crepe import aggregate, outcomes, recall_at
from vlaudit.sources.suites.crepe import read_crepe


def get_one2many_rank(logits_per_image, ground_truth=0, stable=True):
    """crepe_eval_utils.py, with the features' product given; ``stable`` and a ground truth that is not first
    stand for the tie orders the original ``torch.argsort(..., descending=True)`` leaves undefined."""
    ranking = torch.argsort(logits_per_image, descending=True, stable=stable)
    pred = torch.where(ranking == ground_truth)[1].detach().cpu().numpy()
    return pred


def get_one2many_metrics(preds, name='image_to_text'):
    metrics = {}
    metrics[f"{name}_mean_rank"] = preds.mean() + 1
    metrics[f"{name}_rank_std"] = preds.std()
    metrics[f"{name}_median_rank"] = np.floor(np.median(preds)) + 1
    for k in [1, 3, 5, 10]:
        metrics[f"{name}_R@{k}"] = np.mean(preds < k)
        metrics[f"{name}_R@{k}_std"] = np.std(preds < k)
    return metrics


def official(rows: list[list[float]], ties: str = "first") -> dict[str, float]:
    """``evaluate`` (one2many, batch size 1) over the rows' logits ``[caption, *hard_negs]``; ``ties="last"`` puts
    the true caption after its ties (the candidates reversed, the true caption last)."""
    all_ranks = []
    for row in rows:
        logits = torch.tensor([row], dtype=torch.float64)
        if ties == "first":
            all_ranks.append(get_one2many_rank(logits))
        else:
            all_ranks.append(get_one2many_rank(logits.flip(-1), ground_truth=len(row) - 1))
    return get_one2many_metrics(np.array(all_ranks))


HEADER = ["image_id", "caption", "x", "y", "width", "height", "hard_negs"]


def write_prod(path: Path, rows: list[tuple[int, str, list[str]]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for image_id, caption, negatives in rows:
            writer.writerow([image_id, caption, 10, 20, 30.5, 40, repr(negatives)])
    return path


ROWS = [(1, "a dog on a sofa", ["a sofa on a dog", "a cat on a sofa", "a dog under a sofa"]),
        (2, "a red cup on a table", ["a table on a red cup", "a red table on a cup", "a cup"]),
        (3, "a man riding a horse", ["a horse riding a man", "a man", "a horse", "a man feeding a horse"])]


def scores_of(read, rows_scores) -> SuiteScores:
    return SuiteScores([np.array([row]) for row in rows_scores])


def test_reader_rows(tmp_path: Path) -> None:
    read = read_crepe(write_prod(tmp_path / "prod_vg_hard_negs_swap_complexity_4.csv", ROWS))
    assert read.counts == {"read": 3, "kept": 3} and read.notes == ()
    item = read.items[0]
    assert item.images[0].path == "1.jpg" and item.images[0].crop == (10.0, 20.0, 30.5, 40.0)
    assert item.images[0].key == "1.jpg#10,20,30.5,40"
    assert item.texts == ("a dog on a sofa", "a sofa on a dog", "a cat on a sofa", "a dog under a sofa")
    assert item.positives == ((0, 0),) and item.subset == "prod_vg_hard_negs_swap_complexity_4"
    root = tmp_path / "vg"
    (root / "VG_100K_2").mkdir(parents=True)
    (root / "VG_100K").mkdir()
    for image_id, folder in ((1, "VG_100K"), (2, "VG_100K_2"), (3, "VG_100K_2")):
        (root / folder / f"{image_id}.jpg").touch()
    (root / "VG_100K_2" / "1.jpg").touch()  # VG_100K is looked in first, as get_image_by_id does
    read = suite_named("crepe").read_file(tmp_path / "prod_vg_hard_negs_swap_complexity_4.csv", image_root=root)
    assert [item.images[0].path for item in read.items] == ["VG_100K/1.jpg", "VG_100K_2/2.jpg", "VG_100K_2/3.jpg"]


def test_official_recalls_equal_the_official_code_both_tie_readings(tmp_path: Path) -> None:
    read = read_crepe(write_prod(tmp_path / "crepe.csv", ROWS * 4))
    rng = np.random.default_rng(0)
    for _ in range(5):
        rows = [list(rng.integers(0, 3, size=len(item.texts)).astype(float)) for item in read.items]  # ties
        values = outcomes(read.items, scores_of(read, rows))
        figures = aggregate(read.items, values)
        first, last = official(rows, "first"), official(rows, "last")
        for figure, k in zip(figures, (1, 3, 5, 10), strict=True):
            assert values.column(f"r@{k}_ties_first").mean() == first[f"image_to_text_R@{k}"]
            assert values.column(f"r@{k}_ties_last").mean() == last[f"image_to_text_R@{k}"]
            assert last[f"image_to_text_R@{k}"] <= figure.value <= first[f"image_to_text_R@{k}"]
            assert figure.note == (f"ties first {first[f'image_to_text_R@{k}']:.4f}, "
                                   f"ties last {last[f'image_to_text_R@{k}']:.4f}")
        assert figures[0].key == "recall_at_1" and figures[0].n == 12 and "1fa81c4" in figures[0].source


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=2, max_size=6), st.sampled_from([1, 3, 5, 10]))
def test_expectation_is_the_mean_over_every_tie_order(row: list[float], k: int) -> None:
    expected, first, last = recall_at(np.array(row), 0, k)
    orders = list(itertools.permutations(range(len(row))))
    hits = []
    for order in orders:  # every candidate order, then a stable sort: every order of the ties, equally often
        logits = torch.tensor([[row[i] for i in order]], dtype=torch.float64)
        hits.append(float(get_one2many_rank(logits, ground_truth=order.index(0))[0] < k))
    assert expected == pytest.approx(np.mean(hits), abs=1e-12) and last <= expected <= first


def test_planted_order_blind_model(tmp_path: Path) -> None:
    read = read_crepe(write_prod(tmp_path / "crepe.csv", ROWS))

    def bag(text: str, own: str) -> float:  # order-blind: the caption's bag against the image's own caption's
        return float(len(set(text.split()) & set(own.split())) - len(set(text.split()) - set(own.split())))
    rows = [[bag(text, item.texts[0]) for text in item.texts] for item in read.items]
    r1 = aggregate(read.items, outcomes(read.items, scores_of(read, rows)))[0]
    # the swap negatives have the true caption's bag: rows 1 and 3 tie two ways at the top, row 2 three ways
    assert r1.value == pytest.approx((1 / 2 + 1 / 3 + 1 / 2) / 3) and r1.note == "ties first 1.0000, ties last 0.0000"


def test_systematicity_columns_and_look_alikes(tmp_path: Path) -> None:
    path = tmp_path / "syst_vg_hard_negs_seen_compounds_in_laion.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["image_id", "caption", "x", "y", "width", "height", "valid_hard_negs_atom",
                         "valid_hard_negs_comp", "valid_hard_negs_combined"])
        writer.writerow([7, "a white dog", 0, 0, 5, 5, "['a black dog']", "['a white cat']",
                         "['a black dog', 'a white cat']"])
    read = read_crepe(path)
    assert [item.subset for item in read.items] == [f"{path.stem}:valid_hard_negs_{t}" for t in ("atom", "comp",
                                                                                                  "combined")]
    assert read.items[2].texts == ("a white dog", "a black dog", "a white cat") and read.counts["read"] == 1
    assert [item.texts for item in read_crepe(path, hard_neg_key="valid_hard_negs_comp").items] == [
        ("a white dog", "a white cat")]
    with pytest.raises(InputError, match=r"no negatives column 'hard_negs'"):
        read_crepe(path, hard_neg_key="hard_negs")
    other = tmp_path / "svo.csv"
    other.write_text("sentence,pos_triplet,neg_triplet\na dog runs,dog run,cat run\n")
    with pytest.raises(InputError, match=r"not a CREPE file: expected a CSV of image_id.*missing"):
        read_crepe(other)
    bad = write_prod(tmp_path / "bad.csv", [(1, "a dog", ["a cat"])])
    bad.write_text(bad.read_text().replace("['a cat']", "__import__('os').system('true')"))
    with pytest.raises(InputError, match=r"record row 2, field 'hard_negs': not a Python-literal list"):
        read_crepe(bad)
    bad.write_text(",".join(HEADER) + "\n1,a dog,0,0,5,5,[]\n")
    with pytest.raises(InputError, match=r"field 'hard_negs': expected a non-empty list"):
        read_crepe(bad)
    bad.write_text(",".join(HEADER) + "\n1,a dog,0,0,wide,5,\"['a cat']\"\n")
    with pytest.raises(InputError, match=r"field 'width': not a number"):
        read_crepe(bad)
    bad.write_text(",".join(HEADER) + "\nx1,a dog,0,0,5,5,\"['a cat']\"\n")
    with pytest.raises(InputError, match=r"field 'image_id'"):
        read_crepe(bad)
