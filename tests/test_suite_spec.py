"""SPEC: the reader (K×K test cases from image2text.json / text2image.json), the official i2t / t2i accuracy.

The official scoring is re-expressed below from wjpoom/SPEC @ ad982a4 : spec/dataset.py (the two datasets),
spec/models/clip_wrapper.py (``i2t_evaluate``, ``t2i_evaluate``: ``argmax(dim=-1) == label``) and spec/eval.py
(``main``: the mean over subsets), with the encoders replaced by a table of scores, and run beside vlaudit on a
data root in the published layout (no published file is here: the data is a zip on the Hub).
"""

from __future__ import annotations

import json
import os
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
from vlaudit.metrics.suites.spec import aggregate, outcomes
from vlaudit.sources.suites.spec import read_spec

COUNT_TEXTS = ["there is one cup", "there are two cups", "there are three cups"]
SPATIAL_TEXTS = ["the cat is to the left of the dog", "the dog is to the left of the cat"]


def write_root(root: Path) -> Path:
    """Two subsets: ``count`` (K = 3, one whole test case, one partial) and ``relative_spatial`` (K = 2)."""
    count = root / "count"
    count.mkdir(parents=True)
    i2t = [{"query": f"images/c{k}.jpg", "keys": COUNT_TEXTS, "label": k} for k in (2, 0, 1)]
    i2t.append({"query": "images/d0.jpg", "keys": ["there is one dog", "there are two dogs", "there are three dogs"],
                "label": 1})  # a partial group: one sample of its test case
    t2i = [{"query": COUNT_TEXTS[k], "keys": ["images/c0.jpg", "images/c1.jpg", "images/c2.jpg"], "label": k}
           for k in range(3)]
    (count / "image2text.json").write_text(json.dumps(i2t))
    (count / "text2image.json").write_text(json.dumps(t2i))
    spatial = root / "relative_spatial"
    spatial.mkdir()
    i2t = [{"query": f"images/s{g}{k}.jpg", "keys": [text.replace("cat", f"cat{g}") for text in SPATIAL_TEXTS],
            "label": k} for g in range(2) for k in range(2)]
    t2i = [{"query": SPATIAL_TEXTS[k].replace("cat", f"cat{g}"), "keys": [f"images/s{g}1.jpg", f"images/s{g}0.jpg"],
            "label": 1 - k} for g in range(2) for k in range(2)]  # the image keys in the other order
    (spatial / "image2text.json").write_text(json.dumps(i2t))
    (spatial / "text2image.json").write_text(json.dumps(t2i))
    return root


def official(data_root: Path, subset_names, score, batch_size=2):
    """eval.py ``main`` over ``model.evaluate``: ``score(subset, image path, text)`` stands for the einsum of the
    normalized embeddings; accuracies in percent, as printed."""
    i2t_acc = 0.
    t2i_acc = 0.
    subset_num = 0
    result = {}
    for subset_nm in subset_names:
        subset_root = os.path.join(data_root, subset_nm)
        with open(os.path.join(subset_root, 'image2text.json'), 'r') as f:  # noqa: UP015 (verbatim)
            i2t_samples = json.load(f)
        with open(os.path.join(subset_root, 'text2image.json'), 'r') as f:  # noqa: UP015 (verbatim)
            t2i_samples = json.load(f)
        i2t_correct_num, total_num = 0, 0
        for start in range(0, len(i2t_samples), batch_size):
            batch = i2t_samples[start:start + batch_size]
            bs = len(batch)
            batch_i2t_scores = torch.tensor([[score(subset_nm, s['query'], t) for t in s['keys']] for s in batch],
                                            dtype=torch.float64)
            gt_labels = torch.tensor([s['label'] for s in batch])
            pred_labels = batch_i2t_scores.argmax(dim=-1)
            correct_num = (gt_labels == pred_labels).sum()
            i2t_correct_num += correct_num.item()
            total_num += bs
        i2t = 100 * i2t_correct_num / total_num
        t2i_correct_num, total_num = 0, 0
        for start in range(0, len(t2i_samples), batch_size):
            batch = t2i_samples[start:start + batch_size]
            bs = len(batch)
            batch_t2i_scores = torch.tensor([[score(subset_nm, img, s['query']) for img in s['keys']] for s in batch],
                                            dtype=torch.float64)
            gt_labels = torch.tensor([s['label'] for s in batch])
            pred_labels = batch_t2i_scores.argmax(dim=-1)
            correct_num = (gt_labels == pred_labels).sum()
            t2i_correct_num += correct_num.item()
            total_num += bs
        t2i = 100 * t2i_correct_num / total_num
        result[subset_nm] = {'i2t_accuracy': i2t, 't2i_accuracy': t2i}
        i2t_acc += i2t
        t2i_acc += t2i
        subset_num += 1
    return i2t_acc / subset_num, t2i_acc / subset_num, result


def scores_of(read, score) -> SuiteScores:
    return SuiteScores([np.array([[score(*image.path.split("/", 1), text) for text in item.texts]
                                  for image in item.images]) for item in read.items])


def table_score(seed: int):
    rng = np.random.default_rng(seed)
    table: dict[tuple[str, str, str], float] = {}

    def score(subset: str, image: str, text: str) -> float:
        return table.setdefault((subset, image, text), float(rng.integers(0, 3)))  # many exact ties
    return score


def test_reader_groups_whole_test_cases_into_kxk_items(tmp_path: Path) -> None:
    read = read_spec(write_root(tmp_path / "data"))
    assert read.counts == {"read": 15, "kept": 15}
    count_i2t = [item for item in read.items if item.subset == "count" and item.direction == "i2t"]
    whole, single = count_i2t
    assert [image.path for image in whole.images] == ["count/images/c0.jpg", "count/images/c1.jpg",
                                                      "count/images/c2.jpg"]
    assert whole.texts == tuple(COUNT_TEXTS) and whole.positives == ((0, 0), (1, 1), (2, 2))
    assert single.images[0].path == "count/images/d0.jpg" and single.positives == ((0, 1),)
    spatial_t2i = [item for item in read.items if item.subset == "relative_spatial" and item.direction == "t2i"]
    assert len(spatial_t2i) == 2 and [image.path for image in spatial_t2i[0].images] == [
        "relative_spatial/images/s01.jpg", "relative_spatial/images/s00.jpg"]  # the keys' own order
    assert spatial_t2i[0].texts == ("the dog is to the left of the cat0", "the cat0 is to the left of the dog")
    assert spatial_t2i[0].positives == ((0, 0), (1, 1))
    assert read.notes[0].startswith("6 whole K×K test cases (one item each), 1 sample(s) of partial groups")
    one = read_spec(tmp_path / "data" / "count" / "image2text.json")
    assert one.items[0].images[0].path == "images/c0.jpg" and one.items[0].subset == "count"


def test_official_figures_equal_the_official_code_with_ties(tmp_path: Path) -> None:
    root = write_root(tmp_path / "data")
    read = suite_named("spec").read_file(root)
    for seed in range(4):
        score = table_score(seed)
        i2t, t2i = aggregate(read.items, outcomes(read.items, scores_of(read, score)))
        expected_i2t, expected_t2i, per = official(root, ["count", "relative_spatial"], score)
        assert i2t.value == pytest.approx(expected_i2t / 100, abs=1e-12)
        assert t2i.value == pytest.approx(expected_t2i / 100, abs=1e-12)
        assert i2t.subsets == pytest.approx({name: v["i2t_accuracy"] / 100 for name, v in per.items()}, abs=1e-12)
        assert i2t.n == 8 and t2i.n == 7 and i2t.n_subsets == 2


def test_a_tie_goes_to_the_first_candidate_and_the_planted_bag_model(tmp_path: Path) -> None:
    root = write_root(tmp_path / "data")
    read = read_spec(root / "relative_spatial")

    def bag(subset: str, image: str, text: str) -> float:  # order-blind: both spatial texts have one bag
        return float(len(set(text.split())))
    i2t, t2i = aggregate(read.items, outcomes(read.items, scores_of(read, bag)))
    # every row ties: the first candidate wins, which is right for the label-0 sample of each K = 2 test case
    assert i2t.value == 0.5 and t2i.value == 0.5
    assert (i2t.value, t2i.value) == tuple(v / 100 for v in official(root, ["relative_spatial"], bag)[:2])


def test_look_alikes_and_bad_records(tmp_path: Path) -> None:
    path = tmp_path / "image2text.json"
    path.write_text(json.dumps([["a.jpg", "a caption", "another"]]))
    with pytest.raises(InputError, match=r"not a SPEC file: expected image2text.json .*a list of 3-lists"):
        read_spec(path)
    other = tmp_path / "captions.json"
    other.write_text(json.dumps([{"query": "a.jpg", "keys": ["a", "b"], "label": 0}]))
    with pytest.raises(InputError, match=r"not a SPEC file.*a file named 'captions.json'"):
        read_spec(other)
    path.write_text(json.dumps([{"query": "a.jpg", "keys": ["a", "b"], "label": 2}]))
    with pytest.raises(InputError, match=r"record sample 0, field 'label'"):
        read_spec(path)
    path.write_text(json.dumps([{"query": "/etc/a.jpg", "keys": ["a", "b"], "label": 0}]))
    with pytest.raises(InputError, match=r"field 'query'.*leaves the images folder"):
        read_spec(path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no image2text.json"):
        read_spec(tmp_path / "empty")


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.01, 100), st.floats(-50, 50))
def test_a_positive_affine_map_keeps_the_figures(seed: int, scale: float, shift: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        read = read_spec(write_root(Path(folder) / "data"))
    scores = scores_of(read, table_score(seed))
    mapped = SuiteScores([scale * matrix + shift for matrix in scores.pairs])
    assert [f.value for f in aggregate(read.items, outcomes(read.items, scores))] == [
        f.value for f in aggregate(read.items, outcomes(read.items, mapped))]
