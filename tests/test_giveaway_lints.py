"""The giveaway text lints and the order-blind ceiling (vlaudit.metrics.giveaway): known answers on hand-made sets,
and properties — exact cycles give nothing away, swapping the sides flips the signs, a caption pool and a pure
paraphrase set are not flagged."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.metrics.giveaway import lints
from vlaudit.metrics.giveaway.metric import DEFAULT_METRIC, ItemMetric, item_rates, paired_difference
from vlaudit.metrics.giveaway.table import PairTable, norm_text
from vlaudit.metrics.suites import Outcomes, SuiteScores, first_argmax
from vlaudit.records import SuiteImage, SuiteItem


def item(item_id: str, images: list[str], texts: list[str], positives: list[tuple[int, int]],
         subset: str = "s") -> SuiteItem:
    return SuiteItem("test", item_id, subset, tuple(SuiteImage(p) for p in images), tuple(texts), tuple(positives),
                     f"item {item_id}")


def one(item_id: str, positive: str, negative: str, image: str | None = None) -> SuiteItem:
    return item(item_id, [image or f"{item_id}.jpg"], [positive, negative], [(0, 0)])


HAND = [
    one("a", "a dog chases a cat", "a cat chases a dog"),       # BoW-identical, never a positive: flagged
    one("b", "a red car", "a blue car"),
    one("c", "a man rides a horse", "A man rides a horse."),    # the negative is the positive: identical
    one("d", "a red car", "a blue car", image="b.jpg"),         # repeats b
]


def test_hand_made_set_known_answers() -> None:
    table = PairTable.from_items(HAND)
    assert table.n_pairs == 8 and len(table.texts) == 6 and len(set(table.fold.tolist())) == 5
    bow = lints.bow_identical(table)
    assert (bow.flagged, bow.design, bow.negatives, bow.items_flagged) == (1, 0, 4, 1)
    assert [(f.item, f.positive, f.negative) for f in bow.flags] == [(0, 0, 1)]
    dup = lints.duplicates(table)
    assert (dup.duplicate_items, dup.identical, dup.labelled_both_ways) == (1, 1, 1)
    whys = sorted(f.why for f in dup.flags)
    assert whys[0] == "negative text is the positive text" and "repeats item b" in whys
    # the ceiling: a (same bag) and c (same text) tie, strict > counts a tie wrong; b and d are solved
    ceiling = lints.order_blind_ceiling(table, DEFAULT_METRIC)
    assert ceiling.tolist() == [0.0, 1.0, 0.0, 1.0]


def test_unigram_tv_and_length_known_answers() -> None:
    table = PairTable.from_items([one("x", "a b", "a c")])
    tv = lints.unigram_tv(table)
    assert tv.tv == 0.5 and tv.positive_words == [("b", 0.5)] and tv.negative_words == [("c", -0.5)]
    table = PairTable.from_items([one("x", "a dog", "a big brown dog"), one("y", "two cats here", "two cats"),
                                  one("z", "a b", "a c")])
    length = lints.length_difference(table)
    assert length.comparisons == 3 and length.mean == pytest.approx(-1 / 3)
    assert (length.longer, length.shorter, length.equal) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert length.histogram == {-2: 1, 0: 1, 1: 1} and length.quantiles[0] == -2 and length.quantiles[-1] == 1


def test_one_side_tokens_are_case_sensitive() -> None:
    """VL-CheckList's upper-case predicate in the positives: "ON" vs "on" is one bag of words (the ceiling is
    0) but a case-sensitive rule solves every item."""
    items = [one(str(k), f"cup{k} ON table", f"cup{k} on table") for k in range(10)]
    table = PairTable.from_items(items)
    tokens = lints.one_side_tokens(table, min_count=5)
    assert [(t.token, t.side, t.pairs, t.share) for t in tokens] == [("on", "negative", 10, 1.0),
                                                                      ("ON", "positive", 10, 1.0)]
    rule = DEFAULT_METRIC.solved(table, table.text_scores(lints.side_token_scores(table, tokens)))
    assert rule.tolist() == [1.0] * 10
    assert lints.order_blind_ceiling(table, DEFAULT_METRIC).tolist() == [0.0] * 10
    # the same caption case aside: identical (every caseless model ties), not a BoW-identical artifact
    assert lints.bow_identical(table).flagged == 0 and lints.duplicates(table).identical == 10
    assert lints.one_side_tokens(table, min_count=11) == []


def test_two_by_two_design_is_not_flagged() -> None:
    """Winoground-style: both texts are positives (of the other image); the same bag of words is the design."""
    block = item("w", ["w0.png", "w1.png"], ["a dog bites a man", "a man bites a dog"], [(0, 0), (1, 1)])
    table = PairTable.from_items([block])
    bow = lints.bow_identical(table)
    assert (bow.flagged, bow.design) == (0, 2)
    assert lints.unigram_tv(table).tv == 0.0 and lints.length_difference(table).mean == 0.0
    assert lints.duplicates(table).labelled_both_ways == 0
    # an order-blind scorer ties both rows: the text score is 0
    assert lints.order_blind_ceiling(table, DEFAULT_METRIC).tolist() == [0.0]


def _aro_outcomes(items, scores: SuiteScores) -> Outcomes:
    """ARO VG-Relation's rule: argmax over the texts of image 0, ties to the first (the suites' first_argmax)."""
    values = [[float(first_argmax(m[0]) in {j for i, j in it.positives if i == 0})]
              for it, m in zip(items, scores.pairs, strict=True)]
    return Outcomes(("correct",), np.asarray(values, dtype=np.float64))


def test_the_ceiling_follows_the_tie_rule() -> None:
    """The planted order-blind oracle lands where the tie rule puts it: ARO VG-R's ``[false, true]`` order gives
    a tie to the false caption (0), the ``[true, false]`` order gives it to the true one (1)."""
    aro = ItemMetric("aro-like", "first argmax", _aro_outcomes)
    false_first = [item(str(k), [f"{k}.jpg"], [f"the horse is on the man{k}", f"the man{k} is on the horse"],
                        [(0, 1)]) for k in range(4)]
    true_first = [item(str(k), [f"{k}.jpg"], [f"the man{k} is on the horse", f"the horse is on the man{k}"],
                       [(0, 0)]) for k in range(4)]
    assert lints.order_blind_ceiling(PairTable.from_items(false_first), aro).tolist() == [0.0] * 4
    assert lints.order_blind_ceiling(PairTable.from_items(true_first), aro).tolist() == [1.0] * 4


def test_default_metric_needs_every_positive_above_every_negative() -> None:
    table = PairTable.from_items([item("k", ["k.jpg"], ["p1", "n1", "p2", "n2"], [(0, 0), (0, 2)]),
                                  item("m", ["m.jpg"], ["only"], [(0, 0)])])
    flat = np.array([3.0, 1.0, 2.0, 2.0, 9.0])  # p2 ties n2: wrong; item m has no comparison
    solved = DEFAULT_METRIC.solved(table, flat)
    assert solved[0] == 0.0 and np.isnan(solved[1])
    flat[3] = 1.5
    assert DEFAULT_METRIC.solved(table, flat)[0] == 1.0


def test_item_rates_and_paired_difference() -> None:
    values = np.array([1.0, 0.0, 1.0, 1.0, np.nan])
    (rate,) = item_rates(values, n_resamples=200, seed=1)
    assert rate.value == 0.75 and rate.n == 4 and 0.0 <= rate.low <= rate.value <= rate.high <= 1.0
    keep = np.array([True, True, False, False, True])
    full, kept, diff = paired_difference(values, keep, n_resamples=200, seed=1)
    assert (full.value, kept.value, diff.value) == (0.75, 0.5, -0.25) and kept.n == 2
    assert diff.low <= diff.value <= diff.high


# ----------------------------------------------------------------------------------------------- properties

WORDS = st.sampled_from(["a", "dog", "cat", "man", "red", "on", "ON", "under", "big", "the"])
CAPTION = st.lists(WORDS, min_size=1, max_size=6).map(" ".join)


@st.composite
def cycle_sets(draw: st.DrawFn) -> list[SuiteItem]:
    n = draw(st.integers(1, 6))
    out = []
    for k in range(n):
        t1 = draw(CAPTION)
        t2 = draw(CAPTION.filter(lambda t, t1=t1: norm_text(t) != norm_text(t1)))
        out.append(item(f"c{k}", [f"u{k}a", f"u{k}b"], [t1, t2], [(0, 0), (1, 1)]))
    return out


@settings(max_examples=60, deadline=None)
@given(cycle_sets())
def test_exact_cycles_give_nothing_away(items: list[SuiteItem]) -> None:
    table = PairTable.from_items(items)
    assert lints.unigram_tv(table).tv == 0.0
    assert lints.bow_identical(table).flagged == 0
    assert lints.length_difference(table).mean == 0.0
    assert lints.one_side_tokens(table, min_count=1, min_share=0.0) == []
    assert lints.duplicates(table).labelled_both_ways == 0
    # every text-only scorer ties or loses one of the two rows: a blind reading solves no cycle
    rng = np.random.default_rng(len(items))
    per_text = rng.normal(size=len(table.texts))
    assert np.nansum(DEFAULT_METRIC.solved(table, table.text_scores(per_text))) == 0.0


@st.composite
def pair_sets(draw: st.DrawFn) -> list[tuple[str, str]]:
    return draw(st.lists(st.tuples(CAPTION, CAPTION), min_size=1, max_size=8))


@settings(max_examples=60, deadline=None)
@given(pair_sets())
def test_swapping_the_sides_flips_the_signs(pairs: list[tuple[str, str]]) -> None:
    forward = PairTable.from_items([one(str(k), p, n) for k, (p, n) in enumerate(pairs)])
    swapped = PairTable.from_items([item(str(k), [f"{k}.jpg"], [p, n], [(0, 1)]) for k, (p, n) in enumerate(pairs)])
    a, b = lints.length_difference(forward), lints.length_difference(swapped)
    assert a.mean == pytest.approx(-b.mean) and a.longer == b.shorter
    tv_a, tv_b = lints.unigram_tv(forward), lints.unigram_tv(swapped)
    assert tv_a.tv == pytest.approx(tv_b.tv)
    if tv_a.tv:
        assert tv_a.positive_words[0][1] == pytest.approx(-tv_b.negative_words[0][1])
    flip = {"positive": "negative", "negative": "positive"}
    tokens_a = {(t.token, flip[t.side], t.pairs) for t in lints.one_side_tokens(forward, min_count=1, min_share=0)}
    tokens_b = {(t.token, t.side, t.pairs) for t in lints.one_side_tokens(swapped, min_count=1, min_share=0)}
    assert tokens_a == tokens_b


@settings(max_examples=40, deadline=None)
@given(st.lists(CAPTION, min_size=2, max_size=8, unique_by=norm_text))
def test_a_caption_pool_and_a_paraphrase_set_are_not_flagged(captions: list[str]) -> None:
    """Negatives drawn from the other items' positives (each text once on each side), and SugarCrepe++-style
    items whose texts are all positives: nothing is flagged, no side differs."""
    n = len(captions)
    pool = PairTable.from_items([one(str(k), captions[k], captions[(k + 1) % n]) for k in range(n)])
    assert lints.bow_identical(pool).flagged == 0 and lints.unigram_tv(pool).tv == 0.0
    assert lints.length_difference(pool).mean == 0.0
    assert lints.one_side_tokens(pool, min_count=1, min_share=0) == []
    paraphrases = PairTable.from_items([item(str(k), [f"{k}.jpg"], [captions[k], captions[k] + " indeed"],
                                             [(0, 0), (0, 1)]) for k in range(n)])
    assert lints.bow_identical(paraphrases).flagged == 0
    assert lints.duplicates(paraphrases).identical == 0 and lints.length_difference(paraphrases).comparisons == 0


def test_lints_are_linear_in_pairs() -> None:
    """Every lint runs on a flat table: 20,000 pairs in a moment (no quadratic join)."""
    rng = np.random.default_rng(0)
    vocab = np.array(["a", "dog", "cat", "man", "red", "blue", "on", "under", "big", "small"])
    items = [one(str(k), " ".join(rng.choice(vocab, 5)), " ".join(rng.choice(vocab, 6))) for k in range(10_000)]
    table = PairTable.from_items(items)
    assert table.n_pairs == 20_000
    assert lints.length_difference(table).mean == pytest.approx(-1.0)
    assert lints.bow_identical(table).negatives == 10_000
