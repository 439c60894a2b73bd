"""vlaudit's own suite layout (``pairs-suite``) and the exact cycles of any suite's items.

Known answers: a 2×2 item is one exact cycle, a SPEC-like K×K group K(K−1)/2, two pair items whose texts are each
other's negatives on different images one; an additive scorer a(image) + b(text) gets exactly ½ CycleAcc on every
cycle (Proposition 1), a planted coupling scorer (1 on the true pairs) gets 1; the generalised Winoground
scores count a tie wrong."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.analysis.suites.cycles import ACROSS, ACROSS_SUBSETS, WITHIN, suite_contrasts, suite_cycles
from vlaudit.analysis.suites.evaluate import evaluate_items
from vlaudit.analysis.suites.registry import suite_named
from vlaudit.errors import InputError
from vlaudit.metrics.cycles import cycle_acc
from vlaudit.metrics.suites import SuiteScores
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.pairs import read_pairs_suite


def _item(item_id: str, images: list[str], texts: list[str], positives: list[tuple[int, int]],
          subset: str = "all") -> SuiteItem:
    return SuiteItem(suite="pairs-suite", item_id=item_id, subset=subset, images=tuple(SuiteImage(p) for p in images),
                     texts=tuple(texts), positives=tuple(positives), record=item_id)


ITEMS = [
    _item("block", ["u1.png", "u2.png"], ["a cat left of a dog", "a dog left of a cat"], [(0, 0), (1, 1)], "2x2"),
    _item("spec", ["k0.png", "k1.png", "k2.png"], ["one", "two", "three"], [(0, 0), (1, 1), (2, 2)], "kway"),
    _item("p1", ["p.png"], ["a red cube", "a blue cube"], [(0, 0)], "pairs"),
    _item("p2", ["q.png"], ["a blue cube", "a red cube"], [(0, 0)], "pairs"),
    _item("p3", ["p.png"], ["a blue cube", "a red cube"], [(0, 0)], "pairs"),  # same image as p1: no cycle
    _item("lonely", ["r.png"], ["a green ball", "a ball green"], [(0, 0)], "other"),
]


def _scores(items: list[SuiteItem], score) -> SuiteScores:
    return SuiteScores([np.array([[score(image.key, text) for text in item.texts] for image in item.images],
                                 dtype=np.float64) for item in items])


def test_cycles_are_counted_within_and_across_items() -> None:
    cycles = suite_cycles(ITEMS)
    within = [c for c in cycles if c.kind == WITHIN]
    across = [c for c in cycles if c.kind == ACROSS]
    assert [c.a for c in within] == [0, 1, 1, 1]  # the 2×2 block once, every minor of the 3×3 group
    # p1–p2 complete a cycle; p1–p3 share their image; p2 and p3 state the same (true, false) texts
    assert [(c.a, c.b) for c in across] == [(2, 3)]
    assert (across[0].image_a, across[0].text_a, across[0].swap_a, across[0].text_b, across[0].swap_b) == (0, 0, 1, 0, 1)
    assert {c.subset for c in across} == {"pairs"}
    mixed = [*ITEMS[:2], _item("x", ["u3.png"], ["one", "two"], [(0, 1)], "kway2")]
    crossing = [c for c in suite_cycles(mixed) if c.kind == ACROSS]
    assert len(crossing) == 1 and crossing[0].subset == ACROSS_SUBSETS  # k1 says "two" true, "one" false
    assert suite_cycles(ITEMS, across=False) == within


def test_additive_scorer_is_exactly_half_and_a_coupling_scorer_is_one() -> None:
    rng = np.random.default_rng(0)
    a = {image.key: float(rng.normal()) * 3 for item in ITEMS for image in item.images}
    b = {text: float(rng.normal()) for item in ITEMS for text in item.texts}
    cycles = suite_cycles(ITEMS)
    additive = suite_contrasts(cycles, _scores(ITEMS, lambda u, v: a[u] + b[v]))
    assert cycle_acc(additive) == 0.5
    true = {(item.images[i].key, item.texts[j]) for item in ITEMS for i, j in item.positives}
    planted = suite_contrasts(cycles, _scores(ITEMS, lambda u, v: a[u] + b[v] + float((u, v) in true)))
    assert cycle_acc(planted) == 1.0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=12, max_size=12), st.lists(st.floats(-1e3, 1e3), min_size=13,
                                                                          max_size=13))
def test_additive_part_never_changes_a_contrast_sign(image_terms: list[float], text_terms: list[float]) -> None:
    keys = sorted({image.key for item in ITEMS for image in item.images})
    texts = sorted({text for item in ITEMS for text in item.texts})
    a, b = dict(zip(keys, image_terms, strict=False)), dict(zip(texts, text_terms, strict=False))
    cycles = suite_cycles(ITEMS)
    base = suite_contrasts(cycles, _scores(ITEMS, lambda u, v: float(len(u) * 7 % 5 + len(v) % 3 * (u < v))))
    moved = suite_contrasts(cycles, _scores(ITEMS, lambda u, v: float(len(u) * 7 % 5 + len(v) % 3 * (u < v))
                                            + a[u] + b[v]))
    np.testing.assert_allclose(moved, base, atol=1e-9)
    assert cycle_acc(suite_contrasts(cycles, _scores(ITEMS, lambda u, v: a[u] + b[v]))) == 0.5


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_reader_reads_the_layout_and_refuses_look_alikes(tmp_path: Path) -> None:
    good = _write(tmp_path / "suite.jsonl", [
        {"id": 1, "images": ["a.png", {"path": "b.png", "crop": [1, 2, 3, 4]}], "texts": ["x", "y"],
         "positives": [[0, 0], [1, 1]], "subset": "s", "note": "kept"},
        {"id": "two", "images": ["c.png"], "texts": ["x", "y"], "positives": [[0, 1]]}])
    read = read_pairs_suite(good)
    assert read.counts == {"read": 2, "kept": 2}
    first, second = read.items
    assert first.images[1] == SuiteImage("b.png", (1.0, 2.0, 3.0, 4.0)) and first.extra == {"note": "kept"}
    assert second.subset == "all" and second.positives == ((0, 1),)
    whatsup = _write(tmp_path / "whatsup.jsonl", [{"image": "a.png", "caption_options": ["x", "y"]}])
    with pytest.raises(InputError, match="not a pairs-suite file: expected JSONL"):
        read_pairs_suite(whatsup)
    cola = tmp_path / "cola.json"
    cola.write_text(json.dumps([["u1", "c1", "u2", "c2"]]))
    with pytest.raises(InputError, match="not a pairs-suite file.*a list of 4-lists"):
        read_pairs_suite(cola)
    bad = _write(tmp_path / "bad.jsonl", [{"id": 1, "images": ["a.png"], "texts": ["x"], "positives": [[0, 3]]}])
    with pytest.raises(InputError, match=r"bad.jsonl, record line 1 \(id 1\), field 'positives\[0\]'"):
        read_pairs_suite(bad)
    escape = _write(tmp_path / "escape.jsonl", [{"id": 1, "images": ["../a.png"], "texts": ["x"],
                                                 "positives": [[0, 0]]}])
    with pytest.raises(InputError, match="leaves the images folder"):
        read_pairs_suite(escape)


def test_winoground_scores_count_a_tie_wrong() -> None:
    suite = suite_named("pairs-suite")
    items = [ITEMS[0], ITEMS[2]]
    # block: image 1 ties its two texts → text score wrong; both texts pick their image → image score right;
    # p1: one image, so no image score
    scores = SuiteScores([np.array([[2.0, 0.4], [1.0, 1.0]]), np.array([[1.0, 0.0]])])
    result = evaluate_items(suite, SuiteRead("pairs-suite", "<mem>", items, {"read": 2, "kept": 2}), scores, tol=1e-9,
                            n_resamples=50, seed=0)
    figures = {f.key: f for f in result.figures}
    assert figures["text"].value == 0.5 and figures["text"].n == 2
    assert figures["image"].value == 1.0 and figures["image"].n == 1
    assert figures["group"].value == 0.0 and figures["text"].subsets == {"2x2": 0.0, "pairs": 1.0}
    cells = {cell.subset: cell for cell in result.cycles}
    assert list(cells) == ["all", "2x2", "pairs"]
    assert cells["all"].within == 1 and cells["all"].cell.cycle_acc == 1.0  # Δ = 2 + 1 − 0.4 − 1 > 0
    assert cells["pairs"].cell.n == 0 and cells["pairs"].cell.cycle_acc is None
    audit = {cell.subset: cell for cell in result.audit}
    assert audit["2x2"].tv_image == 0 and audit["2x2"].degree_imbalance == 0  # an exact cycle is balanced
    assert audit["pairs"].tv_image == 0 and audit["pairs"].tv_caption == 1  # one image: caption side unbalanced


def test_a_cycle_several_items_state_is_counted_once() -> None:
    texts = ["a red chair to the left of a blue clock", "a blue clock to the left of a red chair"]
    items = [_item("block", ["l.png", "r.png"], texts, [(0, 0), (1, 1)], "2x2"),
             _item("pair-l", ["l.png"], texts, [(0, 0)], "pairs"),
             _item("pair-r", ["r.png"], texts, [(0, 1)], "pairs"),
             _item("block-again", ["l.png", "r.png"], texts, [(0, 0), (1, 1)], "2x2")]
    (cycle,) = suite_cycles(items)
    assert cycle.kind == WITHIN and cycle.a == 0
    (alone,) = suite_cycles(items[1:3])  # without the block, the two pair items complete it
    assert alone.kind == ACROSS and (alone.a, alone.b) == (0, 1)


def test_cross_item_cycles_stop_at_the_limit() -> None:
    from vlaudit.analysis.suites.cycles import across_item_cycles

    texts = ["a red chair to the left of a blue clock", "a blue clock to the left of a red chair"]
    items = [_item(f"l{k}", [f"l{k}.png"], texts, [(0, 0)]) for k in range(3)]
    items += [_item(f"r{k}", [f"r{k}.png"], texts, [(0, 1)]) for k in range(2)]
    assert len(across_item_cycles(items, None)) == 3 * 2  # every left image with every right image
    assert len(across_item_cycles(items, 4)) == 4
