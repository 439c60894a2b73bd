"""Text lints of a benchmark's items: what its captions alone give away (pure numpy over a :class:`PairTable`).

Each lint is linear in the number of pairs (the comparisons of a row are positives × negatives of one image,
bounded by the item's size). Normal forms (text identity, words, bag of words, cased tokens) are those of
:mod:`vlaudit.metrics.giveaway.table`. "Positive side" is every positive (image, text) pair of the set,
"negative side" every negative pair; a text counts once per pair it is in.

* :func:`bow_identical` — **role-aware BoW-identical negatives**: a negative (i, j⁻) whose bag of words equals
  that of a positive (i, j⁺) of the same image, with a different caption (case aside), is *flagged* only when
  the caption j⁻ is never a positive anywhere in the set. Such a negative pins an order-blind model at a tie it can never break
  — an artifact of how the negative was made (SugarCrepe's swaps). A BoW-identical negative that is some other
  image's positive (Winoground, ColorSwap, exact cycles: both texts are positives) is the design and is
  counted apart (``design``), not flagged.
* :func:`unigram_tv` — TV(p, q) = ½ Σ_w |p(w) − q(w)| between the word distributions of the positive and the
  negative side (0 on exact cycles: the same texts on both sides), with the words that move most mass.
* :func:`length_difference` — over every comparison (positive vs negative of one image): d = len(j⁺) − len(j⁻)
  in words; mean, quantiles and signs. Swapping the sides negates it.
* :func:`one_side_tokens` — case-sensitive tokens found on one side only, in at least ``max(min_count,
  min_share × pairs of that side)`` pairs of that side (VL-CheckList keeps Visual Genome's upper-case "ON",
  "WEARING" in its positives and lower-cases its negatives).
* :func:`duplicates` — items repeating an earlier item (same image keys, texts and positives), comparisons
  whose negative is the positive's same caption (case aside: every caseless model ties), (image, caption)
  pairs labelled both ways.
* :func:`order_blind_ceiling` — see its docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlaudit.metrics.giveaway.metric import ItemMetric
from vlaudit.metrics.giveaway.table import PairTable, cased_tokens, words

_QUANTILES = (0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0)


@dataclass(frozen=True)
class Flag:
    """One flagged comparison or item: item index, the positive and negative text indices (-1: none), why."""

    item: int
    positive: int
    negative: int
    why: str


def _local_text(table: PairTable, pair: np.ndarray) -> np.ndarray:
    return table.column[pair]


def _flags(table: PairTable, positive: np.ndarray, negative: np.ndarray, why: str) -> list[Flag]:
    items = table.item[negative]
    pos_j, neg_j = _local_text(table, positive), _local_text(table, negative)
    return [Flag(int(k), int(a), int(b), why) for k, a, b in zip(items, pos_j, neg_j, strict=True)]


@dataclass(frozen=True)
class BowLint:
    """Role-aware BoW-identical negatives: ``flagged`` (never a positive), ``design`` (a positive elsewhere),
    ``negatives`` (negative pairs in all), ``items_flagged`` (items with a flagged negative)."""

    flagged: int
    design: int
    negatives: int
    items_flagged: int
    flags: list[Flag]


def bow_identical(table: PairTable) -> BowLint:
    """See the module docstring (role-aware: a negative text that is a positive anywhere is not flagged)."""
    positive, negative = table.comparisons()
    same_bow = (table.bow[positive] == table.bow[negative]) & (table.fold[positive] != table.fold[negative])
    ever_positive = np.zeros(int(table.fold.max(initial=-1)) + 1, dtype=bool)
    ever_positive[table.fold[table.label == 1]] = True
    flagged = same_bow & ~ever_positive[table.fold[negative]]
    design = same_bow & ever_positive[table.fold[negative]]
    flagged_neg = np.unique(negative[flagged])
    design_neg = np.unique(negative[design & ~np.isin(negative, flagged_neg)])
    _, first = np.unique(negative[flagged], return_index=True)
    keep = np.flatnonzero(flagged)[first]
    return BowLint(flagged=int(flagged_neg.size), design=int(design_neg.size),
                   negatives=int((table.label == 0).sum()), items_flagged=int(np.unique(table.item[flagged_neg]).size),
                   flags=_flags(table, positive[keep], negative[keep], "negative has the positive's bag of words "
                                "and is never a positive"))


def _side_counts(table: PairTable, tokens_of: list[list[str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Vocabulary and per-side counts (occurrences over pairs) of the tokens of each distinct text."""
    vocab: dict[str, int] = {}
    tok_text = []
    tok_code = []
    for code, tokens in enumerate(tokens_of):
        for token in tokens:
            tok_code.append(vocab.setdefault(token, len(vocab)))
            tok_text.append(code)
    codes = np.asarray(tok_code, dtype=np.int64)
    owners = np.asarray(tok_text, dtype=np.int64)
    n_texts = len(tokens_of)
    pos_w = np.bincount(table.text[table.label == 1], minlength=n_texts).astype(np.float64)
    neg_w = np.bincount(table.text[table.label == 0], minlength=n_texts).astype(np.float64)
    pos = np.bincount(codes, weights=pos_w[owners], minlength=len(vocab)) if codes.size else np.zeros(len(vocab))
    neg = np.bincount(codes, weights=neg_w[owners], minlength=len(vocab)) if codes.size else np.zeros(len(vocab))
    return list(vocab), pos, neg


@dataclass(frozen=True)
class TvLint:
    """Unigram TV between the sides and the words that move most mass (word, p − q), each way."""

    tv: float
    positive_words: list[tuple[str, float]]
    negative_words: list[tuple[str, float]]


def unigram_tv(table: PairTable, *, top: int = 5) -> TvLint:
    """See the module docstring."""
    vocab, pos, neg = _side_counts(table, [words(t) for t in table.texts])
    if not vocab or pos.sum() == 0 or neg.sum() == 0:
        return TvLint(0.0 if pos.sum() == neg.sum() else 1.0, [], [])
    diff = pos / pos.sum() - neg / neg.sum()
    order = np.argsort(diff, kind="stable")
    return TvLint(float(0.5 * np.abs(diff).sum()),
                  [(vocab[c], float(diff[c])) for c in order[::-1][:top] if diff[c] > 0],
                  [(vocab[c], float(diff[c])) for c in order[:top] if diff[c] < 0])


@dataclass(frozen=True)
class LengthLint:
    """Length differences len(j⁺) − len(j⁻) in words over ``comparisons``: mean, quantiles (min, 5, 25, 50,
    75, 95 %, max), the shares longer / shorter / equal, and the histogram (difference → count)."""

    comparisons: int
    mean: float
    quantiles: list[float]
    longer: float
    shorter: float
    equal: float
    histogram: dict[int, int]


def word_lengths(table: PairTable) -> np.ndarray:
    """The length in words of each distinct text (by identity code)."""
    return np.fromiter((len(words(t)) for t in table.texts), dtype=np.float64, count=len(table.texts))


def length_difference(table: PairTable) -> LengthLint:
    """See the module docstring."""
    positive, negative = table.comparisons()
    lengths = word_lengths(table)
    d = lengths[table.text[positive]] - lengths[table.text[negative]]
    if d.size == 0:
        return LengthLint(0, float("nan"), [float("nan")] * len(_QUANTILES), float("nan"), float("nan"),
                          float("nan"), {})
    values, counts = np.unique(d.astype(np.int64), return_counts=True)
    return LengthLint(int(d.size), float(d.mean()), [float(q) for q in np.quantile(d, _QUANTILES)],
                      float((d > 0).mean()), float((d < 0).mean()), float((d == 0).mean()),
                      {int(v): int(c) for v, c in zip(values, counts, strict=True)})


@dataclass(frozen=True)
class SideToken:
    """A case-sensitive token found on one ``side`` only, in ``pairs`` pairs (``share`` of that side's)."""

    token: str
    side: str
    pairs: int
    share: float


def one_side_tokens(table: PairTable, *, min_count: int = 5, min_share: float = 0.01, top: int = 20
                    ) -> list[SideToken]:
    """See the module docstring; counts are pairs containing the token (a token counts once per text)."""
    vocab, pos, neg = _side_counts(table, [sorted(set(cased_tokens(t))) for t in table.texts])
    n_pos, n_neg = int((table.label == 1).sum()), int((table.label == 0).sum())
    found = []
    for side, mine, other, total in (("positive", pos, neg, n_pos), ("negative", neg, pos, n_neg)):
        threshold = max(min_count, min_share * total)
        for c in np.flatnonzero((other == 0) & (mine >= threshold)):
            found.append(SideToken(vocab[c], side, int(mine[c]), float(mine[c] / total)))
    found.sort(key=lambda t: (-t.pairs, t.side, t.token))
    return found[:top]


def side_token_scores(table: PairTable, tokens: list[SideToken]) -> np.ndarray:
    """Per-text scores of the case-sensitive rule: +1 per positive-side token present, −1 per negative-side."""
    weight = {t.token: (1.0 if t.side == "positive" else -1.0) for t in tokens}
    return np.fromiter((sum(weight.get(tok, 0.0) for tok in set(cased_tokens(text))) for text in table.texts),
                       dtype=np.float64, count=len(table.texts))


@dataclass(frozen=True)
class DuplicateLint:
    """``duplicate_items`` (items repeating an earlier one), ``identical`` (comparisons whose negative text is
    the positive text) and ``labelled_both_ways`` (distinct (image, text) pairs positive somewhere and negative
    somewhere), with the flags."""

    duplicate_items: int
    identical: int
    labelled_both_ways: int
    flags: list[Flag]


def duplicates(table: PairTable) -> DuplicateLint:
    """See the module docstring."""
    flags = []
    first: dict[tuple[object, ...], int] = {}
    repeats = 0
    for k, item in enumerate(table.items):
        key = (tuple(im.key for im in item.images), tuple(table.item_texts[k].tolist()), item.positives)
        if key in first:
            repeats += 1
            flags.append(Flag(k, -1, -1, f"repeats item {table.items[first[key]].item_id}"))
        else:
            first[key] = k
    positive, negative = table.comparisons()
    same = table.fold[positive] == table.fold[negative]
    flags += _flags(table, positive[same], negative[same], "negative text is the positive text")
    key = table.image * (int(table.fold.max(initial=0)) + 1) + table.fold
    both = np.intersect1d(key[table.label == 1], key[table.label == 0])
    if both.size:
        hit = np.flatnonzero(np.isin(key, both) & (table.label == 0))
        _, first_hit = np.unique(key[hit], return_index=True)
        shown = hit[first_hit]
        flags += [Flag(int(k), -1, int(j), "this (image, text) pair is labelled positive elsewhere")
                  for k, j in zip(table.item[shown], table.column[shown], strict=True)]
    return DuplicateLint(repeats, int(same.sum()), int(both.size), flags)


def order_blind_oracle(table: PairTable) -> np.ndarray:
    """Per-pair scores of the order-blind oracle: o(i, j) = the mean label of every pair of the set whose
    (image key, bag of words) equals that of (images[i], texts[j])."""
    key = table.image * (int(table.bow.max(initial=0)) + 1) + table.bow
    _, inverse = np.unique(key, return_inverse=True)
    total = np.bincount(inverse).astype(np.float64)
    return np.bincount(inverse, weights=table.label.astype(np.float64))[inverse] / total[inverse]


def order_blind_ceiling(table: PairTable, metric: ItemMetric) -> np.ndarray:
    """Per-item outcome of the order-blind ceiling under ``metric`` (1.0 solved, NaN no outcome).

    Definition: an *order-blind scorer* is any s(image, caption) that depends on the caption only through its
    bag of words (case-folded words, order and punctuation ignored), s(i, j) = f(image_i, BoW(text_j)). The
    ceiling is the accuracy, under the suite's metric and its tie rule, of the best such scorer. It is computed
    by scoring the :func:`order_blind_oracle`, constant on (image, bag) classes: a class holding only
    positives scores 1, only negatives 0, both (a BoW-identical negative of the same image) their mean label,
    so positives rank above negatives wherever a bag tells them apart and tie exactly where no order-blind
    scorer can separate them; the tie rule then decides those items (strict ``>``: wrong; ARO's first argmax:
    the earlier text). This is the maximum when no (image, bag) class is labelled both ways across items; with
    such conflicts it is an achievable accuracy (a lower bound on the maximum)."""
    return metric.solved(table, order_blind_oracle(table))
