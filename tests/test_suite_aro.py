"""ARO VG-Relation, VG-Attribution, COCO/Flickr30k-Order: the readers and the official metrics beside a
re-expression of the official code (mertyg/vision-language-models-are-bows @ 81fdd20).

No ARO annotation file is in ../shared/data (the JSONs are on Google Drive, the Hub copies are parquet shards
of images): the tests read files written here in the published layouts.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from vlaudit.analysis.suites.captions import ENTRIES
from vlaudit.errors import InputError
from vlaudit.metrics.suites import SuiteScores
from vlaudit.metrics.suites import aro as metric
from vlaudit.records import SuiteImage
from vlaudit.results.missing import Missing
from vlaudit.sources.suites import aro

ENTRY = {entry.name: entry for entry in ENTRIES}


# ----------------------------------------------------------------- the official code, re-expressed (numpy/pandas)
# dataset_zoo/aro_datasets.py @ 81fdd20: VG_Relation.evaluate_scores, VG_Attribution.evaluate_scores,
# COCO_Order.evaluate_scores; notebooks/Replicate ARO! VG-Relation, VG-Attribution.ipynb (the macro means).

def official_vg_relation(dataset: list[dict], scores: np.ndarray) -> float:
    all_relations = [item["relation_name"] for item in dataset]
    scores_i2t = scores
    preds = np.argmax(np.squeeze(scores_i2t, axis=1), axis=-1)
    correct_mask = (preds == 1)
    all_relations = np.array(all_relations)
    result_records = []
    for relation in np.unique(all_relations):
        relation_mask = (all_relations == relation)
        if relation_mask.sum() == 0:
            continue
        result_records.append({"Relation": relation, "Accuracy": correct_mask[relation_mask].mean(),
                               "Count": relation_mask.sum(), "Dataset": "Visual Genome Relation"})
    df = pd.DataFrame(result_records)
    df = df[~df.Relation.isin(list(metric.SYMMETRIC_RELATIONS))]
    return float(df.Accuracy.mean())


def official_vg_attribution(dataset: list[dict], scores: np.ndarray) -> float:
    all_attributes = [f"{item['attributes'][0]}_{item['attributes'][1]}" for item in dataset]
    preds = np.argmax(np.squeeze(scores, axis=1), axis=-1)
    correct_mask = (preds == 1)
    result_records = []
    all_attributes = np.array(all_attributes)
    for attr in np.unique(all_attributes):
        attr_mask = (all_attributes == attr)
        if attr_mask.sum() < 25:
            continue
        result_records.append({"Attributes": attr, "Accuracy": correct_mask[attr_mask].mean(),
                               "Count": attr_mask.sum(), "Dataset": "Visual Genome Attribution"})
    df = pd.DataFrame(result_records)
    return float(df.Accuracy.mean())


def official_order(scores: np.ndarray) -> float:
    preds = np.argmax(np.squeeze(scores, axis=1), axis=-1)
    correct_mask = (preds == 0)
    return float(np.mean(correct_mask))


# ------------------------------------------------------------------------------------------- small files
def vg_record(relation: str, true: str, false: str, k: int) -> dict:
    return {"image_id": f"{k}", "relation_name": relation, "bbox_x": 1, "bbox_y": 2, "bbox_w": 30, "bbox_h": 40,
            "true_caption": true, "false_caption": false, "image_path": f"{2300000 + k}.jpg"}


RELATIONS = ["on", "on", "on", "eating", "eating", "next to", "next to", "sitting on"]


def vgr_file(tmp_path) -> tuple[list[dict], object]:
    records = [vg_record(rel, f"the cat is {rel} the mat", f"the mat is {rel} the cat", k)
               for k, rel in enumerate(RELATIONS)]
    path = tmp_path / "visual_genome_relation.json"
    path.write_text(json.dumps(records))
    return records, path


def vga_records(pairs: dict[str, int]) -> list[dict]:
    out = []
    for pair, n in pairs.items():
        a, b = pair.split("_")
        for _ in range(n):
            out.append({"image_id": str(len(out)), "bbox_x": 0, "bbox_y": 0, "bbox_w": 10, "bbox_h": 10,
                        "attributes": [a, b], "true_caption": f"the {a} cat and the {b} dog",
                        "false_caption": f"the {b} cat and the {a} dog", "image_path": f"{len(out)}.jpg"})
    return out


def bag_score(text: str) -> float:
    """An order-blind scorer: a function of the multiset of words only (equal for permuted texts)."""
    return float(sum((i + 1) * ord(c) for i, c in enumerate(" ".join(sorted(text.lower().split())))) % 997)


def scores_of(read, matrices: np.ndarray) -> SuiteScores:
    return SuiteScores([np.asarray(matrix, dtype=np.float64) for matrix in matrices])


def figure(figures, key):
    return next(f for f in figures if f.key == key)


# ------------------------------------------------------------------------------------------- VG-Relation
def test_vg_relation_reads_the_published_layout(tmp_path):
    records, path = vgr_file(tmp_path)
    read = aro.read_aro_vg_relation(path)
    assert read.counts == {"read": 8, "kept": 8}
    item = read.items[0]
    assert item.texts == ("the mat is on the cat", "the cat is on the mat")  # [false, true], the loader's order
    assert item.positives == ((0, 1),)
    assert item.images == (SuiteImage("2300000.jpg", (1.0, 2.0, 30.0, 40.0)),)
    assert item.subset == "on" and item.item_id == "0" and item.record == "item 0"


def test_vg_relation_equals_the_official_code_with_ties(tmp_path):
    records, path = vgr_file(tmp_path)
    # [false, true] scores per item: right, tie (wrong), wrong | right, tie | right, wrong (symmetric) | right
    raw = np.array([[[0.1, 0.3]], [[0.2, 0.2]], [[0.5, 0.4]], [[0.0, 1.0]], [[0.7, 0.7]], [[0.1, 0.2]],
                    [[0.3, 0.1]], [[0.2, 0.25]]])
    read = aro.read_aro_vg_relation(path)
    entry = ENTRY["aro-vg-relation"]
    figures = entry.aggregate(read.items, entry.outcomes(read.items, scores_of(read, raw)))
    macro = figure(figures, "macro_accuracy")
    assert macro.value == pytest.approx(official_vg_relation(records, raw), abs=0)
    assert macro.value == pytest.approx((1 / 3 + 1 / 2 + 1) / 3)
    assert macro.subsets == {"eating": 0.5, "on": pytest.approx(1 / 3), "sitting on": 1.0}
    assert macro.n == 6 and macro.n_subsets == 3
    assert figure(figures, "accuracy").value == pytest.approx(4 / 8)


def test_symmetric_relations_are_the_notebooks_list():
    assert len(metric.SYMMETRIC_RELATIONS) == len(set(metric.SYMMETRIC_RELATIONS)) == 157
    assert metric.SYMMETRIC_RELATIONS[0] == "adjusting" and metric.SYMMETRIC_RELATIONS[-1] == "around"
    assert "on" not in metric.SYMMETRIC_RELATIONS and "next to" in metric.SYMMETRIC_RELATIONS


def test_an_order_blind_scorer_scores_zero_on_vg(tmp_path):
    _, path = vgr_file(tmp_path)
    read = aro.read_aro_vg_relation(path)
    scores = SuiteScores([np.array([[bag_score(t) for t in item.texts]]) for item in read.items])
    entry = ENTRY["aro-vg-relation"]
    figures = entry.aggregate(read.items, entry.outcomes(read.items, scores))
    assert figure(figures, "macro_accuracy").value == 0.0
    records = vga_records({"white_black": 25})
    (tmp_path / "a.json").write_text(json.dumps(records))
    read = aro.read_aro_vg_attribution(tmp_path / "a.json")
    scores = SuiteScores([np.array([[bag_score(t) for t in item.texts]]) for item in read.items])
    entry = ENTRY["aro-vg-attribution"]
    assert figure(entry.aggregate(read.items, entry.outcomes(read.items, scores)), "macro_accuracy").value == 0.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=8, max_size=8),
       st.integers(1, 5), st.integers(-4, 4))
def test_vg_relation_is_invariant_to_a_positive_affine_map(pairs, scale, shift):
    records = [vg_record(rel, "a b", "b a", k) for k, rel in enumerate(RELATIONS)]
    raw = np.array(pairs, dtype=np.float64).reshape(8, 1, 2)
    from vlaudit.records import SuiteItem
    items = [SuiteItem("aro-vg-relation", str(k), rel, (SuiteImage("x.jpg"),), ("b a", "a b"), ((0, 1),),
                       f"item {k}") for k, rel in enumerate(RELATIONS)]
    entry = ENTRY["aro-vg-relation"]
    one = figure(entry.aggregate(items, entry.outcomes(items, SuiteScores(list(raw)))), "macro_accuracy").value
    two = figure(entry.aggregate(items, entry.outcomes(items, SuiteScores(list(raw * scale + shift)))),
                 "macro_accuracy").value
    assert one == two == pytest.approx(official_vg_relation(records, raw), abs=0)


# ------------------------------------------------------------------------------------------- VG-Attribution
def test_vg_attribution_equals_the_official_code_with_ties(tmp_path):
    records = vga_records({"white_black": 26, "red_blue": 25, "big_small": 24})
    path = tmp_path / "visual_genome_attribution.json"
    path.write_text(json.dumps(records))
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 3, size=(len(records), 1, 2)).astype(np.float64)  # many exact ties
    read = aro.read_aro_vg_attribution(path)
    assert read.items[0].subset == "white_black" and read.counts["kept"] == 75
    entry = ENTRY["aro-vg-attribution"]
    figures = entry.aggregate(read.items, entry.outcomes(read.items, scores_of(read, raw)))
    macro = figure(figures, "macro_accuracy")
    assert macro.value == pytest.approx(official_vg_attribution(records, raw), abs=0)
    assert sorted(macro.subsets) == ["red_blue", "white_black"] and macro.n == 51  # big_small (24) dropped
    ties = raw[:, 0, 0] == raw[:, 0, 1]
    assert ties.sum() > 10


def test_vg_attribution_with_no_pair_of_25_is_missing(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(vga_records({"red_blue": 3})))
    read = aro.read_aro_vg_attribution(path)
    entry = ENTRY["aro-vg-attribution"]
    figures = entry.aggregate(read.items, entry.outcomes(read.items, SuiteScores([np.ones((1, 2))] * 3)))
    assert isinstance(figure(figures, "macro_accuracy").value, Missing)


# ------------------------------------------------------------------------------------------- Order sets
def order_cases() -> list[dict]:
    cases = []
    for k, caption in enumerate(["a dog runs on the beach", "two men ride horses", "a red bus in the street"]):
        words = caption.split()
        cases.append({"image": f"val2014/COCO_val2014_{k:012d}.jpg",
                      "caption_options": [caption, " ".join(reversed(words)), " ".join(words[1:] + words[:1]),
                                          " ".join(sorted(words)), " ".join(words[::2] + words[1::2])]})
    return cases


def test_order_equals_the_official_code_and_a_tie_counts_right(tmp_path):
    path = tmp_path / "coco_order.json"
    path.write_text(json.dumps(order_cases()))
    read = aro.read_aro_coco_order(path)
    assert read.counts == {"read": 3, "kept": 3} and read.items[0].positives == ((0, 0),)
    assert read.items[0].images[0].path == "val2014/COCO_val2014_000000000000.jpg"
    assert any("does not re-draw" in note for note in read.notes)
    raw = np.array([[[0.3, 0.3, 0.1, 0.0, 0.3]], [[0.1, 0.5, 0.2, 0.2, 0.1]], [[0.9, 0.1, 0.1, 0.1, 0.1]]])
    entry = ENTRY["aro-coco-order"]
    figures = entry.aggregate(read.items, entry.outcomes(read.items, scores_of(read, raw)))
    assert figures[0].value == pytest.approx(official_order(raw), abs=0) == pytest.approx(2 / 3)
    bag = SuiteScores([np.array([[bag_score(t) for t in item.texts]]) for item in read.items])
    assert entry.aggregate(read.items, entry.outcomes(read.items, bag))[0].value == 1.0


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (200, 10, 10)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_the_hub_rows_are_read_as_users_load_them(tmp_path):
    image = {"bytes": png_bytes(), "path": "x.png"}
    table = pa.table({"images": [image, image], "correct_caption": ["a b c", "d e f"],
                      "hard_text_1": ["b a c", "e d f"], "hard_text_2": ["c b a", "f e d"],
                      "hard_text_3": ["a c b", "d f e"], "hard_text_4": ["b c a", "e f d"]})
    pq.write_table(table, tmp_path / "order.parquet")
    read = aro.read_aro_flickr_order(tmp_path / "order.parquet", images=tmp_path / "img")
    assert read.items[1].texts == ("d e f", "e d f", "f e d", "d f e", "e f d")
    assert read.items[0].images[0].path.endswith(".png") and (tmp_path / "img" / read.items[0].images[0].path).is_file()
    assert read.items[0].record == "row 1"
    vgr = pa.table({"image": [image], "true_caption": ["the cat on the mat"], "false_caption": ["the mat on the cat"],
                    "relation_name": ["on"], "bbox": [{"x": 1.0, "y": 2.0, "w": 3.0, "h": 4.0}]})
    pq.write_table(vgr, tmp_path / "vgr.parquet")
    item = aro.read_aro_vg_relation(tmp_path / "vgr.parquet").items[0]
    assert item.images[0].crop == (1.0, 2.0, 3.0, 4.0) and item.subset == "on"
    assert item.texts == ("the mat on the cat", "the cat on the mat")


# ------------------------------------------- the Order rebuild beside the official TextShuffler/COCO_Order
LEXICON = {"dog": "NN", "beach": "NN", "men": "NNS", "horses": "NNS", "bus": "NN", "street": "NN", "red": "JJ",
           "big": "JJ", "cat": "NN", "sofa": "NN", "black": "JJ", "white": "JJ", "man": "NN", "grass": "NN"}


class FakeToken:
    def __init__(self, text):
        self.text, self.tag_ = text, LEXICON.get(text.lower().strip(".,"), "DT")


def fake_nlp(text):
    return [FakeToken(word) for word in text.split()]


def fake_tag(text):
    return [(token.text, token.tag_) for token in fake_nlp(text)]


def official_order_cases(annotation, max_words=30):
    """COCO_Order.__init__ with TextShuffler (dataset_zoo @ 81fdd20), spaCy/NLTK replaced by the fakes, after
    main_aro.py's seed_all(1) (random.seed, np.random.seed); the global generators are restored after."""
    import random
    import re

    def pre_caption(caption, max_words=50):
        caption = re.sub(r"([.!\"()*#:;~])", ' ', caption.lower())
        caption = re.sub(r"\s{2,}", ' ', caption)
        caption = caption.rstrip('\n')
        caption = caption.strip(' ')
        caption_words = caption.split(' ')
        if len(caption_words) > max_words:
            caption = ' '.join(caption_words[:max_words])
        return caption

    class TextShuffler:
        def shuffle_nouns_and_adj(self, ex):
            doc = fake_nlp(ex)
            tokens = [token.text for token in doc]
            text = np.array(tokens)
            noun_idx = [i for i, token in enumerate(doc) if token.tag_ in ['NN', 'NNS', 'NNP', 'NNPS']]
            adjective_idx = [i for i, token in enumerate(doc) if token.tag_ in ['JJ', 'JJR', 'JJS']]
            text[noun_idx] = np.random.permutation(text[noun_idx])
            text[adjective_idx] = np.random.permutation(text[adjective_idx])
            return " ".join(text)

        def shuffle_allbut_nouns_and_adj(self, ex):
            doc = fake_nlp(ex)
            tokens = [token.text for token in doc]
            text = np.array(tokens)
            noun_adj_idx = [i for i, token in enumerate(doc)
                            if token.tag_ in ['NN', 'NNS', 'NNP', 'NNPS', 'JJ', 'JJR', 'JJS']]
            else_idx = np.ones(text.shape[0])
            else_idx[noun_adj_idx] = 0
            else_idx = else_idx.astype(bool)
            text[else_idx] = np.random.permutation(text[else_idx])
            return " ".join(text)

        def get_trigrams(self, sentence):
            trigrams = []
            trigram = []
            for i in range(len(sentence)):
                trigram.append(sentence[i])
                if i % 3 == 2:
                    trigrams.append(trigram[:])
                    trigram = []
            if trigram:
                trigrams.append(trigram)
            return trigrams

        def trigram_shuffle(self, sentence):
            trigrams = self.get_trigrams(sentence)
            for trigram in trigrams:
                random.shuffle(trigram)
            return " ".join([" ".join(trigram) for trigram in trigrams])

        def shuffle_within_trigrams(self, ex):
            return self.trigram_shuffle(ex.split())

        def shuffle_trigrams(self, ex):
            trigrams = self.get_trigrams(ex.split())
            random.shuffle(trigrams)
            return " ".join([" ".join(trigram) for trigram in trigrams])

    saved = random.getstate(), np.random.get_state()
    try:
        random.seed(1)
        np.random.seed(1)
        shuffler = TextShuffler()
        perturb_functions = [shuffler.shuffle_nouns_and_adj, shuffler.shuffle_allbut_nouns_and_adj,
                             shuffler.shuffle_within_trigrams, shuffler.shuffle_trigrams]
        test_cases = []
        for img_id, ann in enumerate(annotation):  # noqa: B007 (verbatim)
            for i, caption in enumerate(ann['caption']):  # noqa: B007 (verbatim)
                test_case = {}
                test_case["image"] = ann["image"]
                test_case["caption_options"] = [pre_caption(caption, max_words)]
                for perturb_fn in perturb_functions:
                    test_case["caption_options"].append(pre_caption(perturb_fn(caption), max_words))
                test_cases.append(test_case)
        return test_cases
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])


KARPATHY = [{"image": "val2014/COCO_val2014_000000000001.jpg", "image_id": 1,
             "caption": ["A big dog runs on the beach.", "Two men ride horses down the street!",
                         "A red bus (in the street)."]},
            {"image": "val2014/COCO_val2014_000000000002.jpg", "image_id": 2,
             "caption": ["A black cat sleeps on a white sofa.", "The man cuts the grass with a big red mower "
                         "while a dog watches the man and the cat from the black porch."]}]


def test_order_rebuilt_from_karpathy_equals_the_official_loader(tmp_path):
    path = tmp_path / "coco_karpathy_test.json"
    path.write_text(json.dumps(KARPATHY))
    read = aro.read_aro_coco_order(path, tagger=fake_tag, tokenizer=str.split)
    cases = official_order_cases(KARPATHY)
    assert [list(item.texts) for item in read.items] == [case["caption_options"] for case in cases]
    assert [item.images[0].path for item in read.items] == [case["image"] for case in cases]
    assert read.counts == {"read": 5, "kept": 5} and read.items[0].texts[0] == "a big dog runs on the beach"
    assert any("seed 1" in note for note in read.notes)
    assert any(item.texts[1] != item.texts[0] for item in read.items)  # the shuffles did shuffle
    other = aro.read_aro_coco_order(path, tagger=fake_tag, tokenizer=str.split, seed=2)
    assert [item.texts for item in other.items] != [item.texts for item in read.items]


def test_order_rebuild_without_spacy_is_refused_with_the_reason(tmp_path):
    import importlib.util
    if importlib.util.find_spec("spacy") is not None and importlib.util.find_spec("nltk") is not None:
        pytest.skip("spaCy and NLTK are installed here")
    path = tmp_path / "coco_karpathy_test.json"
    path.write_text(json.dumps(KARPATHY))
    with pytest.raises(InputError, match="Karpathy caption file.*spaCy.*cannot be rebuilt without them"):
        aro.read_aro_coco_order(path)


# ------------------------------------------------------------------------------------------- refusals
def test_look_alike_files_are_refused_by_name(tmp_path):
    (tmp_path / "vga.json").write_text(json.dumps(vga_records({"red_blue": 2})))
    with pytest.raises(InputError, match="not a ARO VG-Relation file.*found an ARO VG-Attribution file"):
        aro.read_aro_vg_relation(tmp_path / "vga.json")
    _, vgr = vgr_file(tmp_path)
    with pytest.raises(InputError, match="not a ARO VG-Attribution file.*found an ARO VG-Relation file"):
        aro.read_aro_vg_attribution(vgr)
    with pytest.raises(InputError, match="not a ARO COCO-Order file.*found an ARO VG-Relation file"):
        aro.read_aro_coco_order(vgr)
    (tmp_path / "order.json").write_text(json.dumps(order_cases()))
    with pytest.raises(InputError, match="not a ARO VG-Relation file.*found an ARO Order file"):
        aro.read_aro_vg_relation(tmp_path / "order.json")
    sugarcrepe = {"0": {"filename": "1.jpg", "caption": "a", "negative_caption": "b"}}
    (tmp_path / "swap_att.json").write_text(json.dumps(sugarcrepe))
    with pytest.raises(InputError, match="not a ARO VG-Relation file.*found a SugarCrepe file"):
        aro.read_aro_vg_relation(tmp_path / "swap_att.json")


def test_a_bad_record_names_file_record_and_field(tmp_path):
    records, path = vgr_file(tmp_path)
    records[3]["false_caption"] = ""
    path.write_text(json.dumps(records))
    with pytest.raises(InputError, match=r"visual_genome_relation.json, record item 3, field 'false_caption'"):
        aro.read_aro_vg_relation(path)
    records[3]["false_caption"] = "x"
    records[5]["image_path"] = "../../etc/passwd"
    path.write_text(json.dumps(records))
    with pytest.raises(InputError, match="record item 5, field 'image_path'.*leaves the images folder"):
        aro.read_aro_vg_relation(path)
    records[5]["image_path"] = "1.jpg"
    records[6]["bbox_w"] = 0
    path.write_text(json.dumps(records))
    with pytest.raises(InputError, match="record item 6, field 'bbox_w'.*no area"):
        aro.read_aro_vg_relation(path)
    records[6]["bbox_w"] = 3
    for part in "xywh":
        del records[7][f"bbox_{part}"]
    path.write_text(json.dumps(records))
    with pytest.raises(InputError, match="record item 7, field 'bbox_x': missing"):
        aro.read_aro_vg_relation(path)
