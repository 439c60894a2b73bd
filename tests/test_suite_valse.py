"""VALSE: the reader (validity filter counted), the official per-piece figures beside a re-expression of
Heidelberg-NLP/VALSE @ 2152d90 : lxmert_valse_eval.py, and all eleven published pieces read whole."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.analysis.suites.captions import ENTRIES
from vlaudit.errors import InputError
from vlaudit.metrics.suites import SuiteScores
from vlaudit.records import SuiteImage, SuiteItem
from vlaudit.sources.suites.valse import read_valse

ENTRY = next(entry for entry in ENTRIES if entry.name == "valse")

#: kept (mturk.caption >= 2) / read, per piece of data/ @ 2152d90 (counted from the files)
PIECES = {"actant-swap": (949, 1042), "action-replacement": (648, 779), "coreference-hard": (104, 141),
          "coreference-standard": (708, 916), "counting-adversarial": (691, 756), "counting-hard": (868, 1000),
          "counting-small-quant": (900, 1000), "existence": (505, 534), "foil-it": (943, 1000),
          "plurals": (851, 1000), "relations": (535, 614)}


# -------------------------------------------- lxmert_valse_eval.py @ 2152d90, the scoring loop, re-expressed
def official(foils_data: dict, margins: dict[str, tuple[float, float]], skip_zero_foil: bool = True) -> dict:
    """The script's loop with ``cross_score[t] = [0, margin_t]`` (the no-match logit 0, the match logit the
    margin): the figures it prints, as fractions. ``skip_zero_foil=False`` is the reading without its
    tokenisation check."""
    count, foil_accuracy, capt_fits, foil_detected, pairwise_acc = 0, 0, 0, 0, 0
    for foil_id, foil in foils_data.items():
        caption_fits = foil['mturk']['caption']
        if caption_fits >= 2:  # valid examples only (validated by mturkers)
            cross_score = np.array([[0.0, margins[foil_id][0]], [0.0, margins[foil_id][1]]])
            if skip_zero_foil and cross_score[1, 0] == cross_score[1, 1]:
                pass  # "something is wrong with the tokenisation"
            else:
                if cross_score[0, 0] < cross_score[0, 1]:
                    foil_accuracy += 1
                    capt_fits += 1
                if cross_score[1, 0] >= cross_score[1, 1]:
                    foil_detected += 1
                    foil_accuracy += 1
                if cross_score[0, 1] > cross_score[1, 1]:
                    pairwise_acc += 1
                count += 1
    return {"acc": foil_accuracy / count * 50 / 100, "p_c": capt_fits / count, "p_f": foil_detected / count,
            "acc_r": pairwise_acc / count, "count": count}


def sample(caption: str, foil: str, votes: int, image: str = "img.jpg") -> dict:
    return {"dataset": "SWiG", "original_split": "test", "dataset_idx": image, "linguistic_phenomena": "actions",
            "image_file": image, "caption": caption, "classes": "x", "classes_foil": "y",
            "mturk": {"foil": 0, "caption": votes, "other": 3 - votes}, "foil": foil}


def piece_file(tmp_path, name="actant-swap"):
    data = {f"actions_test_{k}": sample(f"a man pushes a cart {k}", f"a cart pushes a man {k}", votes, f"{k}.jpg")
            for k, votes in enumerate([3, 2, 1, 3, 0, 2, 3, 2])}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return data, path


def figures_for(read, margins):
    scores = SuiteScores([np.array([margins[item.record]], dtype=np.float64) for item in read.items])
    return {f.key: f for f in ENTRY.aggregate(read.items, ENTRY.outcomes(read.items, scores))}


def test_the_validity_filter_is_applied_and_counted(tmp_path):
    _, path = piece_file(tmp_path)
    read = read_valse(path)
    assert read.counts == {"read": 8, "kept": 6, "mturk.caption < 2": 2}
    assert [item.item_id for item in read.items] == [f"actant-swap/actions_test_{k}" for k in (0, 1, 3, 5, 6, 7)]
    assert read.items[0].record == "actions_test_0"
    item = read.items[0]
    assert item.texts == ("a man pushes a cart 0", "a cart pushes a man 0") and item.positives == ((0, 0),)
    assert item.images == (SuiteImage("0.jpg"),) and item.subset == "actant-swap"
    assert read.notes == ("actant-swap: kept 6 of 8 samples (mturk.caption >= 2, the official validity filter)",)


def test_figures_equal_the_official_script_with_ties(tmp_path):
    data, path = piece_file(tmp_path)
    read = read_valse(path)
    # (caption margin, foil margin): ties between caption and foil, a caption margin of exactly 0
    margins = {"actions_test_0": (0.5, 0.5), "actions_test_1": (1.0, -1.0), "actions_test_3": (0.0, -0.5),
               "actions_test_5": (-0.2, 0.3), "actions_test_6": (2.0, 1.0), "actions_test_7": (0.1, 0.1),
               "actions_test_2": (9.0, 9.0), "actions_test_4": (9.0, 9.0)}
    ours = figures_for(read, margins)
    theirs = official(data, margins)
    assert theirs["count"] == 6
    for key in ("acc_r", "p_c", "p_f", "acc"):
        assert ours[key].value == pytest.approx(theirs[key], abs=1e-15), key
        assert ours[key].subsets == {"actant-swap": ours[key].value}
    assert ours["acc_r"].value == pytest.approx(3 / 6)


def test_a_zero_foil_margin_is_skipped_by_the_script_and_counted_in_acc_r(tmp_path):
    """Both readings of the script's tokenisation check: the margin figures follow it, acc_r does not."""
    data, path = piece_file(tmp_path)
    read = read_valse(path)
    margins = {key: (1.0, 0.5) for key in data}
    margins["actions_test_1"] = (-1.0, 0.0)  # the script skips it: a foil margin of exactly 0
    ours = figures_for(read, margins)
    skipped, unskipped = official(data, margins), official(data, margins, skip_zero_foil=False)
    assert skipped["count"] == 5 and unskipped["count"] == 6
    assert ours["acc_r"].value == pytest.approx(unskipped["acc_r"]) == pytest.approx(5 / 6)
    assert skipped["acc_r"] == 1.0
    assert ours["acc_r"].n == 6 and ours["p_c"].n == 5
    for key in ("p_c", "p_f", "acc"):
        assert ours[key].value == pytest.approx(skipped[key]), key


def bag_score(text: str) -> float:
    """An order-blind scorer: a function of the multiset of words only."""
    return float(sum((i + 1) * ord(c) for i, c in enumerate(" ".join(sorted(text.lower().split())))) % 997)


def test_an_order_blind_scorer_scores_zero_on_swapped_foils(tmp_path):
    _, path = piece_file(tmp_path)
    read = read_valse(path)
    bag = SuiteScores([np.array([[bag_score(t) for t in item.texts]]) for item in read.items])
    figures = {f.key: f for f in ENTRY.aggregate(read.items, ENTRY.outcomes(read.items, bag))}
    assert figures["acc_r"].value == 0.0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=4, max_size=4), st.integers(1, 4))
def test_acc_r_is_invariant_to_a_positive_affine_map(pairs, scale):
    items = [SuiteItem("valse", str(k), "p", (SuiteImage("x.jpg"),), ("a", "b"), ((0, 0),), str(k))
             for k in range(4)]
    raw = [np.array([pair], dtype=np.float64) for pair in pairs]
    one = ENTRY.aggregate(items, ENTRY.outcomes(items, SuiteScores(raw)))[0].value
    two = ENTRY.aggregate(items, ENTRY.outcomes(items, SuiteScores([m * scale + 7 for m in raw])))[0].value
    assert one == two == np.mean([a > b for a, b in pairs])


def test_a_folder_reads_every_piece_as_its_own_subset(tmp_path):
    piece_file(tmp_path, "existence")
    piece_file(tmp_path, "plurals")
    read = read_valse(tmp_path)
    assert read.counts == {"read": 16, "kept": 12, "mturk.caption < 2": 4}
    assert {item.subset for item in read.items} == {"existence", "plurals"}
    scores = SuiteScores([np.array([[1.0, 0.0]]) if item.subset == "existence" else np.array([[0.0, 1.0]])
                          for item in read.items])
    acc_r = ENTRY.aggregate(read.items, ENTRY.outcomes(read.items, scores))[0]
    assert acc_r.subsets == {"existence": 1.0, "plurals": 0.0} and acc_r.value == 0.5 and acc_r.n_subsets == 2


def test_all_eleven_published_pieces_read_whole(shared_data):
    folder = shared_data / "compositionality" / "valse"
    read = read_valse(folder)
    per = {piece: sum(item.subset == piece for item in read.items) for piece in PIECES}
    assert per == {piece: kept for piece, (kept, _) in PIECES.items()}
    assert read.counts == {"read": 8782, "kept": 7702, "mturk.caption < 2": 1080}
    assert len(read.notes) == 11 and read.notes[0].startswith("actant-swap: kept 949 of 1042")
    existence = read_valse(folder / "existence.json")
    assert existence.counts == {"read": 534, "kept": 505, "mturk.caption < 2": 29}


def test_look_alike_files_are_refused_by_name(tmp_path):
    sugarcrepe = {"0": {"filename": "1.jpg", "caption": "a", "negative_caption": "b"}}
    (tmp_path / "swap_att.json").write_text(json.dumps(sugarcrepe))
    with pytest.raises(InputError, match="not a VALSE file.*found a SugarCrepe file"):
        read_valse(tmp_path / "swap_att.json")
    pp = [{"id": 0, "filename": "1.jpg", "caption": "a", "caption2": "c", "negative_caption": "b"}]
    (tmp_path / "pp.json").write_text(json.dumps(pp))
    with pytest.raises(InputError, match="not a VALSE file.*found a SugarCrepe\\+\\+ file"):
        read_valse(tmp_path / "pp.json")
    (tmp_path / "foil.json").write_text(json.dumps({"annotations": [], "images": []}))
    with pytest.raises(InputError, match="original FOIL-COCO release"):
        read_valse(tmp_path / "foil.json")


def test_a_bad_record_names_file_record_and_field(tmp_path):
    data, path = piece_file(tmp_path)
    data["actions_test_3"]["mturk"] = {"foil": 0}
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="actant-swap.json, record actions_test_3, field 'mturk.caption'"):
        read_valse(path)
    data["actions_test_3"]["mturk"] = {"caption": 3}
    data["actions_test_5"]["foil"] = ""
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="record actions_test_5, field 'foil'"):
        read_valse(path)


def test_item_ids_are_unique_across_pieces_and_piece_folders_name_images(shared_data):
    read = read_valse(shared_data / "compositionality" / "valse", piece_folders=True)
    assert len({item.item_id for item in read.items}) == len(read.items) == 7702
    first = read.items[0]
    assert first.item_id == f"actant-swap/{first.record}" and first.images[0].path.startswith("actant-swap/")
