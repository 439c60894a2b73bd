"""SugarCrepe and SugarCrepe++: the suite readers, the official per-file figures beside a re-expression of
RAIVNLab/sugar-crepe @ 0047054 : main_eval.py and Sri-Harsha/scpp @ c083bbf : VLMs/test_Variants_CLIP.py,
the published files read whole, and each refused by the other's reader (and by the old pair reader)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.analysis.suites.captions import ENTRIES
from vlaudit.errors import InputError
from vlaudit.metrics.suites import SuiteScores
from vlaudit.results.missing import Missing
from vlaudit.sources.sugarcrepe import read_sugarcrepe
from vlaudit.sources.suites.sugarcrepe import read_sugarcrepe_pp, read_sugarcrepe_suite

ENTRY = {entry.name: entry for entry in ENTRIES}
SC_FILES = {"add_att": 692, "add_obj": 2062, "replace_att": 788, "replace_obj": 1652, "replace_rel": 1406,
            "swap_att": 666, "swap_obj": 245}
PP_FILES = {"replace_att": 788, "replace_obj": 1652, "replace_rel": 1406, "swap_att": 666, "swap_obj": 245}


# ------------------------------------------------------ main_eval.py @ 0047054 ``evaluate``, re-expressed
def official_sugarcrepe(dataset: dict[str, dict], score) -> dict[str, float]:
    metrics = {}
    for c, data_dict in dataset.items():
        correct_cnt = 0
        for i, data in data_dict.items():
            pos_score, neg_score = score(c, i, data['caption']), score(c, i, data['negative_caption'])
            correct = 1 if pos_score > neg_score else 0  # text_retrieval's return
            correct_cnt += correct
        count = len(data_dict)
        metrics[c] = correct_cnt / count
    return metrics


# ------------------------------------------- VLMs/test_Variants_CLIP.py @ c083bbf, the per-file loop, re-expressed
def official_pp(data: list[dict], cos_image, cos_text) -> dict[str, float]:
    total = correct_img_p1 = correct_img_p2 = correct_full = correct_text = 0
    for line in data:
        p1, neg, p2 = line['caption'], line['negative_caption'], line['caption2']
        cos_p1, cos_p2, cos_neg = cos_image(line, p1), cos_image(line, p2), cos_image(line, neg)
        cos_p1p2, cos_p1_neg, cos_p2_neg = cos_text(p1, p2), cos_text(p1, neg), cos_text(p2, neg)
        total += 1
        if cos_p1 > cos_neg and cos_p2 > cos_neg:
            correct_full += 1
        if cos_p1 > cos_neg:
            correct_img_p1 += 1
        if cos_p2 > cos_neg:
            correct_img_p2 += 1
        if cos_p1p2 > cos_p1_neg and cos_p1p2 > cos_p2_neg:
            correct_text += 1
    return {"itt": correct_full / total, "p1_neg": correct_img_p1 / total, "p2_neg": correct_img_p2 / total,
            "tot": correct_text / total}


def bag(text: str) -> frozenset[str]:
    return frozenset(text.lower().replace(".", "").split())


def bag_score(text: str) -> float:
    """An order-blind image-text scorer: a function of the words only."""
    return float(sum(len(w) * ord(w[0]) for w in bag(text)) % 101)


def jaccard(a: str, b: str) -> float:
    """An order-blind text-text similarity (exact in binary fractions here: small integers over small ones)."""
    return len(bag(a) & bag(b)) / len(bag(a) | bag(b))


SC_DATA = {"0": {"filename": "000000000001.jpg", "caption": "a white cat on a black sofa",
                 "negative_caption": "a black cat on a white sofa"},
           "1": {"filename": "000000000002.jpg", "caption": "a dog runs", "negative_caption": "a dog sleeps"},
           "2": {"filename": "000000000003.jpg", "caption": "two men ride", "negative_caption": "two men walk"},
           "3": {"filename": "000000000004.jpg", "caption": "a red bus", "negative_caption": "a red bus"}}
PP_DATA = [{"id": k, "filename": e["filename"], "caption": e["caption"], "caption2": f"there is {e['caption']}",
            "negative_caption": e["negative_caption"]} for k, e in enumerate(SC_DATA.values())]
HAND = {"a white cat on a black sofa": 0.3, "a black cat on a white sofa": 0.3, "a dog runs": 0.5,
        "a dog sleeps": 0.1, "two men ride": 0.1, "two men walk": 0.4, "a red bus": 0.2,
        "there is a white cat on a black sofa": 0.4, "there is a dog runs": 0.05, "there is two men ride": 0.5,
        "there is a red bus": 0.9}


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def figures(entry, read, texts=None, score=lambda text: HAND[text]):
    pairs = SuiteScores([np.array([[score(t) for t in item.texts]]) for item in read.items], texts)
    return {f.key: f for f in entry.aggregate(read.items, entry.outcomes(read.items, pairs))}


# ------------------------------------------------------------------------------------------- SugarCrepe
def test_sugarcrepe_items_keep_every_entry(tmp_path):
    read = read_sugarcrepe_suite(write(tmp_path, "swap_att.json", SC_DATA))
    assert read.counts == {"read": 4, "kept": 4}  # the identical pair too: main_eval.py counts len(data_dict)
    item = read.items[0]
    assert item.texts == ("a white cat on a black sofa", "a black cat on a white sofa")
    assert item.positives == ((0, 0),) and item.subset == "swap_att" and item.images[0].path == "000000000001.jpg"


def test_sugarcrepe_equals_main_eval_with_ties(tmp_path):
    write(tmp_path, "swap_att.json", SC_DATA)
    write(tmp_path, "add_obj.json", {"0": SC_DATA["1"], "1": SC_DATA["0"]})
    read = read_sugarcrepe_suite(tmp_path)
    ours = figures(ENTRY["sugarcrepe"], read)["accuracy"]
    theirs = official_sugarcrepe({"add_obj": {"0": SC_DATA["1"], "1": SC_DATA["0"]}, "swap_att": SC_DATA},
                                 lambda c, i, text: HAND[text])
    assert ours.subsets == theirs == {"add_obj": 0.5, "swap_att": 0.25}
    assert ours.value == pytest.approx(0.375) and ours.n == 6 and ours.n_subsets == 2


def test_sugarcrepe_published_files_read_whole(shared_data):
    read = read_sugarcrepe_suite(shared_data / "sugarcrepe")
    assert {name: sum(item.subset == name for item in read.items) for name in SC_FILES} == SC_FILES
    assert read.counts == {"read": 7511, "kept": 7511}


# ------------------------------------------------------------------------------------------- SugarCrepe++
def test_sugarcrepe_pp_items_keep_caption2(tmp_path):
    read = read_sugarcrepe_pp(write(tmp_path, "swap_att.json", PP_DATA))
    item = read.items[2]
    assert item.texts == ("two men ride", "there is two men ride", "two men walk")
    assert item.positives == ((0, 0), (0, 1)) and item.item_id == "swap_att/2" and item.record == "item 2"


def test_itt_and_tot_equal_the_official_loop_with_ties(tmp_path):
    read = read_sugarcrepe_pp(write(tmp_path, "swap_att.json", PP_DATA))
    texts = [np.array([[jaccard(a, b) for b in item.texts] for a in item.texts]) for item in read.items]
    ours = figures(ENTRY["sugarcrepe-pp"], read, texts)
    theirs = official_pp(PP_DATA, lambda line, text: HAND[text], jaccard)
    for key in ("itt", "tot", "p1_neg", "p2_neg"):
        assert ours[key].value == pytest.approx(theirs[key], abs=0), key
    assert (theirs["itt"], theirs["p1_neg"], theirs["p2_neg"]) == (0.0, 0.25, 0.75)
    assert ours["tot"].subsets == {"swap_att": theirs["tot"]}


def test_tot_is_missing_without_a_text_encoder(tmp_path):
    read = read_sugarcrepe_pp(write(tmp_path, "replace_rel.json", PP_DATA))
    out = figures(ENTRY["sugarcrepe-pp"], read, None)
    assert out["tot"].value == Missing("no text encoder") and out["tot"].n == 0
    assert out["itt"].value == 0.0


def test_an_order_blind_model_fails_swaps_and_ties_count_wrong(tmp_path):
    swaps = [e for e in PP_DATA if bag(e["caption"]) == bag(e["negative_caption"])]
    read = read_sugarcrepe_pp(write(tmp_path, "swap_att.json", swaps))
    texts = [np.array([[jaccard(a, b) for b in item.texts] for a in item.texts]) for item in read.items]
    out = figures(ENTRY["sugarcrepe-pp"], read, texts, bag_score)
    assert out["itt"].value == 0.0 and out["p1_neg"].value == 0.0 and out["tot"].value == 0.0
    sc = read_sugarcrepe_suite(write(tmp_path, "swap_obj.json", {str(k): {"filename": e["filename"],
                               "caption": e["caption"], "negative_caption": e["negative_caption"]}
                               for k, e in enumerate(swaps)}))
    assert figures(ENTRY["sugarcrepe"], sc, None, bag_score)["accuracy"].value == 0.0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 2), st.integers(-2, 2), st.integers(-2, 2)), min_size=4, max_size=4),
       st.integers(1, 3), st.integers(-3, 3))
def test_itt_is_invariant_to_a_positive_affine_map(triples, scale, shift):
    from vlaudit.records import SuiteImage, SuiteItem
    items = [SuiteItem("sugarcrepe-pp", str(k), "f", (SuiteImage("x.jpg"),), ("a", "b", "c"), ((0, 0), (0, 1)),
                       str(k)) for k in range(4)]
    raw = [np.array([t], dtype=np.float64) for t in triples]
    entry = ENTRY["sugarcrepe-pp"]
    one = entry.aggregate(items, entry.outcomes(items, SuiteScores(raw)))[0].value
    two = entry.aggregate(items, entry.outcomes(items, SuiteScores([m * scale + shift for m in raw])))[0].value
    assert one == two == np.mean([a > c and b > c for a, b, c in triples])


def test_sugarcrepe_pp_published_files_read_whole(shared_data):
    read = read_sugarcrepe_pp(shared_data / "compositionality" / "sugarcrepe_pp")
    assert {name: sum(item.subset == name for item in read.items) for name in PP_FILES} == PP_FILES
    assert read.counts == {"read": 4757, "kept": 4757}
    assert all(len(item.texts) == 3 for item in read.items)


def test_hub_rows_are_read(tmp_path):
    table = pa.table({"filename": [e["filename"] for e in PP_DATA], "caption": [e["caption"] for e in PP_DATA],
                      "caption2": [e["caption2"] for e in PP_DATA],
                      "negative_caption": [e["negative_caption"] for e in PP_DATA]})
    pq.write_table(table, tmp_path / "swap_att.parquet")
    read = read_sugarcrepe_pp(tmp_path / "swap_att.parquet")
    assert read.items[3].item_id == "swap_att/3" and read.items[3].record == "row 4" and read.items[0].subset == "swap_att"
    with pytest.raises(InputError, match="not a SugarCrepe file.*SugarCrepe\\+\\+ file.*sugarcrepe-pp"):
        read_sugarcrepe_suite(tmp_path / "swap_att.parquet")
    with pytest.raises(InputError, match="this is a SugarCrepe\\+\\+ file.*keeps caption2"):
        read_sugarcrepe(tmp_path / "swap_att.parquet")  # the old pair reader no longer drops caption2


# ------------------------------------------------------------------------------------------- refusals
def test_each_is_refused_by_the_others_reader(tmp_path):
    sc, pp = write(tmp_path, "sc.json", SC_DATA), write(tmp_path, "pp.json", PP_DATA)
    with pytest.raises(InputError, match="not a SugarCrepe file.*found a SugarCrepe\\+\\+ file.*sugarcrepe-pp"):
        read_sugarcrepe_suite(pp)
    with pytest.raises(InputError, match="not a SugarCrepe\\+\\+ file.*found a SugarCrepe file"):
        read_sugarcrepe_pp(sc)
    with pytest.raises(InputError, match="this is a SugarCrepe\\+\\+ file"):
        read_sugarcrepe(pp)
    assert len(read_sugarcrepe(sc, warnings=[])) == 6  # the old reader is unchanged on SugarCrepe
    valse = {"s0": {"image_file": "1.jpg", "caption": "a", "foil": "b", "mturk": {"caption": 3}}}
    with pytest.raises(InputError, match="not a SugarCrepe file.*found a VALSE piece"):
        read_sugarcrepe_suite(write(tmp_path, "v.json", valse))


def test_a_bad_entry_names_file_record_and_field(tmp_path):
    bad = [dict(PP_DATA[0]), dict(PP_DATA[1], caption2="  ")]
    with pytest.raises(InputError, match="pp.json, record item 1, field 'caption2'"):
        read_sugarcrepe_pp(write(tmp_path, "pp.json", bad))
