"""VL-CheckList: the reader (with its corpus YAML), the official itc accuracy (first 1,000 items), look-alikes.

The official loader and itc scoring are re-expressed below from om-ai-lab/VL-CheckList @ 6f8d6a3 :
vl_checklist/data_loader.py (``load_itc_samples``) and vl_checklist/evaluate.py (``Evaluate.eval``, ``itc``), with
the model's ``predict`` replaced by a table of match scores, and run beside vlaudit on files in the published layout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from vlaudit.analysis.suites.registry import suite_named
from vlaudit.errors import InputError
from vlaudit.metrics.suites import SuiteScores
from vlaudit.metrics.suites.vl_checklist import aggregate, outcomes
from vlaudit.sources.suites.vl_checklist import read_corpus_yaml, read_vl_checklist


def chunks(l, n=5):  # noqa: E741 (vl_checklist/utils.py, verbatim)
    for i in range(0, len(l), n):
        yield l[i:i + n]


def load_itc_samples(cur_dir, version, corpus_names, type):  # noqa: A002 (the official names)
    corpus = {}
    for corpus_name in corpus_names:
        corpus[corpus_name] = []
        config = yaml.load(open(os.path.join(cur_dir, 'corpus', version, type, f'{corpus_name}.yaml'), 'r'),  # noqa: SIM115, UP015
                           Loader=yaml.FullLoader)
        m = json.load(open(os.path.join(cur_dir, config["ANNO_PATH"])))  # noqa: SIM115
        for x in m:
            path, texts_dict = x
            path = os.path.join(config["IMG_ROOT"], path)
            if os.path.exists(path):
                corpus[corpus_name].append({
                    "path": path,
                    "texts_pos": texts_dict["POS"],
                    "texts_neg": texts_dict["NEG"]
                })
    return corpus


def official_itc(cur_dir, data_names, data_type, predict, max_number=2000, batch_size=4):
    """``Evaluate.eval`` for ``task == 'itc'``, the scoring only (no sample images written)."""
    data = load_itc_samples(cur_dir, "v1", data_names, data_type)
    results = {}
    for name in data:
        num_t, num_f = 0, 0
        if max_number:
            data[name] = data[name][:int(max_number/2)]
        for batch in chunks(data[name], batch_size):
            images = [z["path"] for z in batch]
            texts_pos = [z['texts_pos'][0] for z in batch]
            texts_neg = [z['texts_neg'][0] for z in batch]
            result_pos = predict(images, texts_pos)
            result_neg = predict(images, texts_neg)
            result_tmp = list(zip(result_pos["probs"], result_neg["probs"], strict=True))
            for i in range(len(result_tmp)):
                if result_tmp[i][0][1] > result_tmp[i][1][1]:
                    num_t += 1
                else:
                    num_f += 1
        results[name] = float(num_t) / (num_t + num_f)
    return results


def build(root: Path, entries: list, missing: set[int] = frozenset()) -> Path:
    """``data/Relation/vg/spatial.json``, its corpus YAML and the image files (but those of ``missing``)."""
    (root / "data" / "Relation" / "vg").mkdir(parents=True)
    (root / "corpus" / "v1" / "Relation" / "spatial").mkdir(parents=True)
    (root / "corpus" / "v1" / "Relation" / "spatial" / "vg.yaml").write_text(
        'ANNO_PATH: "data/Relation/vg/spatial.json"\nIMG_ROOT: "vg/"\nTYPE: "TUPLE_JSON"\n')
    path = root / "data" / "Relation" / "vg" / "spatial.json"
    path.write_text(json.dumps(entries))
    for k, (image, _) in enumerate(entries):
        if k not in missing:
            (root / "vg" / image).parent.mkdir(parents=True, exist_ok=True)
            (root / "vg" / image).touch()
    return path


def entries(n: int) -> list:
    return [[f"VG_100K/{k}.jpg", {"POS": [f"cup {k} ON table"], "NEG": [f"cup {k} under table"]}]
            for k in range(n)]


def match_score(seed: int):
    rng = np.random.default_rng(seed)
    table: dict[tuple[str, str], float] = {}

    def score(image: str, text: str) -> float:  # a few levels: many exact ties
        return table.setdefault((image, text), float(rng.integers(0, 3)) / 2)
    return score


def test_official_itc_equals_the_official_code_first_1000(tmp_path: Path, monkeypatch) -> None:
    path = build(tmp_path, entries(1010), missing={3, 500})
    read = read_vl_checklist(path, corpus=tmp_path / "corpus" / "v1" / "Relation" / "spatial" / "vg.yaml")
    assert read.counts == {"read": 1010, "kept": 1010} and read.items[0].images[0].path == "vg/VG_100K/0.jpg"
    assert read.items[0].texts == ("cup 0 ON table", "cup 0 under table") and read.items[0].positives == ((0, 0),)
    assert read.items[0].subset == "Relation/vg/spatial"
    # the pipeline scores the items whose images it finds, as the official loader keeps them
    found = [item for item in read.items if (tmp_path / item.images[0].path).exists()]
    assert len(found) == 1008
    monkeypatch.chdir(tmp_path)
    for seed in range(3):
        score = match_score(seed)

        def predict(images, texts, score=score):
            return {"probs": [[1 - score(image, text), score(image, text)] for image, text in
                              zip(images, texts, strict=True)]}
        expected = official_itc(str(tmp_path), ["vg"], "Relation/spatial", predict)["vg"]
        scores = SuiteScores([np.array([[score(item.images[0].path, text) for text in item.texts]]) for item in found])
        official, every = aggregate(found, outcomes(found, scores))
        assert official.value == expected and official.n == 1000 and official.subsets == {"Relation/vg/spatial": expected}
        every_expected = official_itc(str(tmp_path), ["vg"], "Relation/spatial", predict, max_number=None)["vg"]
        assert every.value == every_expected and every.n == 1008


def test_a_tie_counts_wrong_and_the_planted_bag_model(tmp_path: Path) -> None:
    path = tmp_path / "spatial.json"
    path.write_text(json.dumps([["a.jpg", {"POS": ["dog ON sofa"], "NEG": ["sofa ON dog"]}],
                                ["b.jpg", {"POS": ["cat left of man", "cat by man"], "NEG": ["cat right of man"]}]]))
    read = read_vl_checklist(path)
    assert read.items[1].texts == ("cat left of man", "cat by man", "cat right of man")
    assert read.items[1].positives == ((0, 0), (0, 1))

    def bag(text: str) -> float:  # order-blind: the same bag of words scores the same
        return float(sum(len(word) for word in text.split()))
    scores = SuiteScores([np.array([[bag(t) for t in item.texts]]) for item in read.items])
    values = outcomes(read.items, scores)
    # item 0: same bag → tie → wrong; item 1: "left" (4) vs "right" (5) → wrong (NEG[0] wins; POS[1] unused)
    assert values.column("itc_correct").tolist() == [0.0, 0.0]
    scores = SuiteScores([np.array([[1.0, 0.0]]), np.array([[0.5, 9.0, 0.4]])])
    assert outcomes(read.items, scores).column("itc_correct").tolist() == [1.0, 1.0]
    assert aggregate(read.items, outcomes(read.items, scores))[0].value == 1.0


def test_published_spatial_file_read_whole(shared_data: Path) -> None:
    folder = shared_data / "compositionality" / "vl_checklist"
    suite = suite_named("vl-checklist")
    read = suite.read_file(folder / "Relation__vg__spatial.json", corpus=folder / "corpus__v1__Relation__spatial__vg.yaml")
    assert read.counts == {"read": 30650, "kept": 30650} and len(read.items) == 30650
    assert {item.subset for item in read.items} == {"Relation/vg/spatial"}
    assert read.items[0].images[0].path == "vg/VG_100K/2361911.jpg"
    assert read.items[0].texts == ("control switch ON oven", "control switch under oven")
    assert sum(item.images[0].path.startswith("vg/VG_100K_2/") for item in read.items) == 12089
    assert len({item.images[0].path for item in read.items}) == 8686
    assert all(len(item.texts) == 2 and item.positives == ((0, 0),) for item in read.items)
    scores = SuiteScores([np.array([[1.0, 1.0]])] * len(read.items))  # a blind model: every item ties
    official, every = suite.aggregate(read.items, suite.outcomes(read.items, scores))
    assert official.value == every.value == 0.0 and official.n == 1000 and every.n == 30650
    color = suite.read_file(folder / "Attribute__vg__color.json", corpus=folder / "corpus__v1__Attribute__color__vg.yaml")
    assert len(color.items) == 4 and color.items[2].texts == ("woman IN pink vest", "woman IN cream colored vest")
    with pytest.raises(InputError, match=r"ANNO_PATH 'data/Attribute/vg/color.json' is not this file"):
        suite.read_file(folder / "Relation__vg__spatial.json", corpus=folder / "corpus__v1__Attribute__color__vg.yaml")
    with pytest.raises(InputError, match=r"not a VL-CheckList file"):
        suite.read_file(shared_data / "compositionality" / "cola" / "COLA_multiobjects_matching_benchmark.json")


@pytest.mark.parametrize(("data", "found"), [
    ([[1, "a dog left of a cat", "a dog right of a cat"]], "a list of 3-lists"),
    ([["u1", "c1", "u2", "c2"]], "a list of 4-lists"),
    ([["a.jpg", {"pos": ["a"], "neg": ["b"]}]], "a list of 2-lists"),
    ({"0": {"caption": "x"}}, "an object with keys"),
])
def test_look_alikes_refused_by_name(tmp_path: Path, data, found: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=rf"not a VL-CheckList file: expected a JSON list of \[image_rel_path.*{found}"):
        read_vl_checklist(path)


def test_bad_records_and_yaml(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps([["a.jpg", {"POS": ["a"], "NEG": ["b"]}], ["b.jpg", {"POS": ["a"], "NEG": []}]]))
    with pytest.raises(InputError, match=r"record entry 1, field 'NEG'"):
        read_vl_checklist(path)
    path.write_text(json.dumps([["../a.jpg", {"POS": ["a"], "NEG": ["b"]}]]))
    with pytest.raises(InputError, match=r"field 'image_rel_path'.*leaves the images folder"):
        read_vl_checklist(path)
    config = tmp_path / "c.yaml"
    config.write_text('ANNO_PATH: "data/x.json"\nIMG_ROOT: "vg/"\n')
    with pytest.raises(InputError, match=r"missing \['TYPE'\]"):
        read_corpus_yaml(config)
    config.write_text("- a list\n")
    with pytest.raises(InputError, match=r"record line 1"):
        read_corpus_yaml(config)
    with pytest.raises(InputError, match=r"takes only corpus="):
        read_vl_checklist(path, max_num=5)
