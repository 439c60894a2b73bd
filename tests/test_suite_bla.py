"""BLA: the reader of the layout the evaluation code documents, the rank accuracy beside a re-expression of
shin-ee-chen/BLA @ 812685b : evaluation_models/clip/utils.py (rank_captions, get_accuracy) and
evaluation_models/blip2/bla_utils.py (get_rank_count, get_sent_acc, get_rank_statistics), both tie readings.

Only printed examples are published here (../shared/data/compositionality/bla/demo_printed_examples.txt,
from dataset/demo/*.ipynb, which print image_id, True1, True2, False1, False2): the real-data test writes them
into the documented layout and reads that.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from vlaudit.analysis.suites.captions import ENTRIES
from vlaudit.errors import InputError
from vlaudit.metrics.suites import SuiteScores
from vlaudit.metrics.suites import bla as metric
from vlaudit.records import SuiteImage
from vlaudit.sources.suites.bla import read_bla

ENTRY = next(entry for entry in ENTRIES if entry.name == "bla")


# ------------------------------------------------------------ the official code, re-expressed (torch on CPU)
def rank_captions(similarity: torch.Tensor, clamp: bool = True):
    clip_score = 2.5 * torch.max(similarity, torch.zeros(similarity.shape)) if clamp else similarity
    _, indices = clip_score[0].topk(similarity.shape[1])
    rank = list(range(similarity.shape[1]))
    for i, value in enumerate(indices.numpy()):
        rank[value] = i + 1
    return rank, clip_score


def get_rank_count(ranks):
    rank_count = {}
    for rank in ranks:
        rank_key = ''.join([str(r) for r in rank])
        rank_count[rank_key] = rank_count.get(rank_key, 0) + 1
    return rank_count


def get_sent_acc(rank):
    correct_count = 0
    total = len(rank)
    for i, r in enumerate(rank):
        r = int(r)
        if i < total / 2 and r <= total / 2:
            correct_count += 1
        elif i >= total / 2 and r > total / 2:
            correct_count += 1
    return correct_count / total


def rank_acc(results):
    ranks = get_rank_count(results)
    total = sent_acc = 0
    for r, c in ranks.items():
        total += c
        sent_acc += get_sent_acc(r) * c
    return sent_acc / total  # get_rank_statistics's "rank_acc" (there rounded, in percent)


def groups(n: int = 4) -> list[dict]:
    return [{"image_id": str(2400000 + k), "caption_group": [
        {"True1": f"the man lifts the child {k}", "True2": f"the child is lifted by the man {k}",
         "False1": f"the child lifts the man {k}", "False2": f"the man is lifted by the child {k}"}]}
        for k in range(n)]


def write(tmp_path, data, name="active_passive_captions.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def figures(read, rows):
    scores = SuiteScores([np.array([row], dtype=np.float64) for row in rows])
    return {f.key: f for f in ENTRY.aggregate(read.items, ENTRY.outcomes(read.items, scores))}


def test_the_documented_layout_is_read(tmp_path):
    data = groups()
    data[1]["caption_group"].append({"True1": "x", "True2": "y", "False1": "z", "False2": "w"})
    read = read_bla(write(tmp_path, data))
    item = read.items[0]
    assert item.texts == ("the man lifts the child 0", "the child is lifted by the man 0",
                          "the child lifts the man 0", "the man is lifted by the child 0")
    assert item.images == (SuiteImage("2400000.jpg"),) and item.positives == ((0, 0), (0, 1))
    assert item.subset == "active_passive" and read.counts == {"read": 4, "kept": 4}
    assert any("caption_group[0]" in note for note in read.notes)
    flat = {g["image_id"]: list(g["caption_group"][0].values()) for g in groups(2)}
    other = read_bla(write(tmp_path, flat, "coordination.json"))
    assert other.items[1].texts[2] == "the child lifts the man 1" and other.items[1].record == "2400001"


def test_rank_accuracy_equals_the_official_code_without_ties(tmp_path):
    read = read_bla(write(tmp_path, groups()))
    rows = [[0.4, 0.3, 0.2, 0.1], [0.1, 0.4, 0.3, 0.2], [0.1, 0.2, 0.3, 0.4], [0.3, 0.2, 0.35, 0.1]]
    ours = figures(read, rows)
    theirs = rank_acc([rank_captions(torch.tensor([row], dtype=torch.float64))[0] for row in rows])
    assert ours["rank_acc"].value == ours["rank_acc_ties_against"].value == pytest.approx(theirs)
    assert theirs == pytest.approx((1 + 0.5 + 0 + 0.5) / 4)


def test_both_tie_readings_against_the_two_orders_topk_may_give():
    """A tie across the halves: the two readings are the two orders an unspecified topk can return."""
    row = [0.3, 0.2, 0.3, 0.1]  # True1 ties False1
    assert metric.ranks(row) == [1, 3, 2, 4] and metric.ranks(row, ties_first=False) == [2, 3, 1, 4]
    assert metric.sentence_accuracy(metric.ranks(row)) == get_sent_acc([1, 3, 2, 4]) == 0.5
    assert metric.sentence_accuracy(metric.ranks(row, ties_first=False)) == get_sent_acc([2, 3, 1, 4]) == 0.5
    row = [0.3, 0.2, 0.2, 0.1]  # True2 ties False1 at the boundary
    assert metric.sentence_accuracy(metric.ranks(row)) == 1.0
    assert metric.sentence_accuracy(metric.ranks(row, ties_first=False)) == 0.5
    official_ranks, _ = rank_captions(torch.tensor([row], dtype=torch.float64))
    assert get_sent_acc(official_ranks) in (1.0, 0.5)  # whichever order this torch build's topk takes


def test_the_clip_scripts_clamp_ties_negative_scores():
    """The CLIP script ranks 2.5 * max(cos, 0): negative cosines all tie at 0; vlaudit ranks the score as given."""
    similarity = torch.tensor([[-0.1, 0.2, -0.3, 0.1]], dtype=torch.float64)
    _, clamped = rank_captions(similarity)
    assert clamped[0, 0] == clamped[0, 2] == 0
    unclamped, _ = rank_captions(similarity, clamp=False)
    assert metric.ranks(similarity[0].numpy()) == unclamped == [3, 1, 4, 2]


def test_an_order_blind_scorer_lands_at_half(tmp_path):
    read = read_bla(write(tmp_path, groups()))

    def bag(text):
        return float(sum(len(w) * ord(w[0]) for w in sorted(text.split())) % 89)

    out = figures(read, [[bag(t) for t in item.texts] for item in read.items])
    assert out["rank_acc"].value == 0.5 and out["rank_acc_ties_against"].value == 0.5


def test_the_printed_examples_read_in_the_documented_layout(shared_data, tmp_path):
    text = (shared_data / "compositionality" / "bla" / "demo_printed_examples.txt").read_text()
    tasks: dict[str, list[dict]] = {}
    for block in text.split("## ")[1:]:
        lines = [line for line in block.splitlines() if line.strip()]
        task = {"demo_active_passive.ipynb": "active_passive", "demo_coordination.ipynb": "coordination",
                "demo_rc.ipynb": "relative_clause"}[lines[0].split()[0]]
        tasks.setdefault(task, []).append({"image_id": lines[1], "caption_group": [dict(zip(
            ("True1", "True2", "False1", "False2"), lines[2:6], strict=True))]})
    reads = {task: read_bla(write(tmp_path, data, f"{task}_captions.json")) for task, data in tasks.items()}
    assert {task: r.counts["kept"] for task, r in reads.items()} == {"active_passive": 5, "coordination": 5,
                                                                      "relative_clause": 10}
    first = reads["active_passive"].items[0]
    assert first.images[0].path == "1159399.jpg" and first.texts[2] == "the child lifts the man"


def test_look_alikes_and_bad_records_are_refused(tmp_path):
    sugarcrepe = {"0": {"filename": "1.jpg", "caption": "a", "negative_caption": "b"}}
    with pytest.raises(InputError, match="not a BLA file.*found a SugarCrepe file"):
        read_bla(write(tmp_path, sugarcrepe, "s.json"))
    with pytest.raises(InputError, match="not a BLA file.*COLA multi-object"):
        read_bla(write(tmp_path, [["http://x/1.jpg", "a", "http://x/2.jpg", "b"]], "cola.json"))
    data = groups()
    del data[2]["caption_group"][0]["False2"]
    with pytest.raises(InputError, match="record item 2, field 'False2'"):
        read_bla(write(tmp_path, data))
