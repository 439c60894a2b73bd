"""The text-neighbor object family (``coco-object-text-neighbor``; cycle paper §5.4, Table 3).

The paper names a "text-neighbor" split without defining it. Operationalised here as **object cycles whose two
captions are mutual nearest neighbours under a fixed, model-free text similarity, among the captions one word
away**, so that the swap changes little text and a probe cannot succeed on gross caption differences:

* candidates: the same human captions as ``coco-object-coarse`` (every mentioned category annotated in the
  caption's own image), per split;
* tokens: lower-cased words (``\\b\\w+\\b``); a caption is the *bag* (multiset) of its tokens;
* one word away: two bags that are equal, or differ by one substitution (``a dog on a couch`` / ``a cat on a
  couch``) or by one inserted word (``a dog on grass`` / ``a dog on the grass``); word order is ignored;
* similarity: cosine of TF-IDF vectors of the bags — raw counts × smooth IDF ``ln((1 + n) / (1 + df)) + 1``,
  l2 rows, fitted on the candidates of the split (scikit-learn's ``TfidfVectorizer`` defaults, computed
  here without importing it); a deterministic function of the text, no model;
* neighbour of caption i: among the captions of a *different image* one word away from i, the one with the
  highest cosine, ties (within 1e-12) broken by a seeded random priority; a caption with no such caption, or
  only ones sharing no token (cosine 0), has no neighbour;
* a block is (i, j) with nn(i) = j and nn(j) = i (mutual), accepted when both swaps are invalid under the
  object predicate (a mentioned category is absent from the other image). A mutual pair that fails the check is
  dropped, not re-paired with a further neighbour. Each image is used at most once per family and split
  (pairs taken in a seeded random order), as in every other family.

**Change of definition.** Earlier versions took as neighbour the most similar caption among *all* captions
of other images, found by an all-pairs similarity (quadratic: 14.6 of a 16.1 s build at 20% of train2017).
Restricting the candidates to one-word edits keeps the family's meaning — a neighbour one word away is the
least text a swap can change — and finds them exactly by a hash join: each bag is keyed by itself and by each
bag with one word removed (an additive 64-bit multiset hash, so a key costs one subtraction), and two bags are
one word apart exactly when they share a key. Identical captions are tokenized once and identical bags scored
once. The work is linear in the captions times their length, plus the pairs within a key. A nearest-neighbour
library was not used: the sparse-input search of scikit-learn is brute force (all pairs again) and the fast
ones (pynndescent, faiss) are approximate or need dense vectors, so a seeded, exact, tie-aware answer would
not be guaranteed. Block counts, before → after: on the synthetic train2017-shaped benchmark at 20% scale
(``benchmarks/cycle_build_scale.py --scales 0.2``, seed 0) 80 train + 69 val → 254 + 107 (the all-pairs
neighbour was usually a verbatim duplicate from another image, cosine 1, whose swap is valid and so dropped);
on 120 rendered scenes (``data scenes``, seed 0, one split) 29 → 16 (templated captions whose nearest one-word
edit is often a colour word, a valid swap).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

TEXT_NEIGHBOR_FAMILY = "coco-object-text-neighbor"
TOKEN_PATTERN = r"(?u)\b\w+\b"
TIE_TOLERANCE = 1e-12  # cosines this close are tied (float sums of the same terms in another order)
_HASH_SEED = 0x7E47  # fixed: the token hashes are part of the definition, not of the user's seed
_TOKEN = re.compile(TOKEN_PATTERN)
_SEPARATOR = "\x00"  # between captions: not a word character, so never inside a token
_TOKEN_OR_SEPARATOR = re.compile(TOKEN_PATTERN + "|" + _SEPARATOR)
_ASCII_NON_WORD = str.maketrans({chr(c): " " for c in range(1, 128) if not (chr(c).isalnum() or chr(c) == "_")})
_COSINE_BITS = 42  # 2^-42 < TIE_TOLERANCE / 4
_SPARE_EDGES = 8  # edges a special caption expands beyond its clashes before checking that the ties end


def _words(texts: Sequence[str]) -> list[str]:
    """Lower-cased ``\\b\\w+\\b`` tokens of all captions, one :data:`_SEPARATOR` between two captions."""
    lowered = f" {_SEPARATOR} ".join(texts).lower()
    if lowered.count(_SEPARATOR) != len(texts) - 1:  # a caption holds the separator itself: one by one
        return [w for k, text in enumerate(texts) for w in ([_SEPARATOR] if k else []) + _TOKEN.findall(text.lower())]
    if lowered.isascii():  # ASCII \w is [a-z0-9_]: blank every other character and split, 3× faster than re
        return lowered.translate(_ASCII_NON_WORD).split()
    return _TOKEN_OR_SEPARATOR.findall(lowered)


def tokenize(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Token ids of all captions, flat, and each caption's start offset (``n + 1`` offsets); vocabulary size."""
    if len(texts) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64), 0
    words = _words(texts)
    vocabulary = {word: k for k, word in enumerate(dict.fromkeys(words))}
    ids = np.fromiter(map(vocabulary.__getitem__, words), dtype=np.int64, count=len(words))
    if _SEPARATOR not in vocabulary:
        return ids, np.array([0, len(ids)], dtype=np.int64), len(vocabulary)
    separator = vocabulary.pop(_SEPARATOR)
    at = np.nonzero(ids == separator)[0]
    # drop the separator's id and renumber the ids above it, so that the vocabulary stays dense
    starts = np.concatenate([[0], at - np.arange(len(at)), [len(ids) - len(at)]])
    ids = ids[ids != separator]
    ids -= ids > separator
    return ids, starts.astype(np.int64), len(vocabulary)


def _bag_rows(tokens: np.ndarray, starts: np.ndarray, vocabulary: int) -> tuple[np.ndarray, ...]:
    """Bag of each caption (identical bags share an id) and, per bag, its
    multiset hash, its first caption and the (bag, token, count) rows of its distinct tokens."""
    n = len(starts) - 1
    h = np.random.default_rng(_HASH_SEED).integers(0, 2 ** 63, vocabulary, dtype=np.uint64) * np.uint64(2) + 1
    lengths = np.diff(starts)
    bag_hash = np.zeros(n, dtype=np.uint64)
    nonempty = lengths > 0
    if len(tokens):
        bag_hash[nonempty] = np.add.reduceat(h[tokens], starts[:-1][nonempty])
    unique_hash, first, bag = np.unique(bag_hash, return_index=True, return_inverse=True)
    is_first = np.zeros(n, dtype=bool)
    is_first[first] = True
    caption = np.repeat(np.arange(n), lengths)
    keep = is_first[caption]
    row_key, count = np.unique(bag[caption[keep]] * vocabulary + tokens[keep], return_counts=True)
    return bag.ravel(), unique_hash, h, row_key // vocabulary, row_key % vocabulary, count


def one_word_edges(tokens: np.ndarray, starts: np.ndarray, vocabulary: int, copies: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bag id of each text and every (bag, other bag one word away or itself, TF-IDF cosine > 0) edge.

    ``copies[t]``: how many captions have text t (default one each); IDF counts captions, as if each were
    tokenized.

    Keys: the bag's multiset hash H = Σ h[token], and H − h[t] for each distinct token t of the bag. Two distinct
    bags share a key exactly when one substitution or one insertion turns one into the other (up to a 64-bit
    hash collision, which could only add a candidate). Within a key group the bags are the key's bag K plus at
    most one word, so a dot product of two members is ``|K|² + x_a + x_b`` (x: the added word's share), with
    no per-pair gather. TF-IDF as ``TfidfVectorizer``: raw counts × ``ln((1 + n) / (1 + df)) + 1``, l2 rows.
    """
    copies = np.ones(len(starts) - 1) if copies is None else np.asarray(copies, dtype=np.float64)
    n = copies.sum()
    bag, bag_hash, h, owner, token, count = _bag_rows(tokens, starts, vocabulary)
    n_bags = len(bag_hash)
    multiplicity = np.bincount(bag, weights=copies, minlength=n_bags)
    df = np.bincount(token, weights=multiplicity[owner], minlength=vocabulary)
    w2 = (np.log((1.0 + n) / (1.0 + df)) + 1.0) ** 2  # squared IDF
    c = count.astype(np.float64)
    norm2 = np.bincount(owner, weights=c * c * w2[token], minlength=n_bags)
    # rows: each bag keyed by itself (adds nothing to K), then by itself minus each distinct word
    key = np.concatenate([bag_hash, bag_hash[owner] - h[token]])
    member = np.concatenate([np.arange(n_bags), owner])
    extra = np.concatenate([np.zeros(n_bags), (c - 1.0) * w2[token]])
    key_norm2 = np.concatenate([norm2, norm2[owner] - (2.0 * c - 1.0) * w2[token]])
    order = np.argsort(key)
    key, member, extra, key_norm2 = key[order], member[order], extra[order], key_norm2[order]
    group_start = np.concatenate([[0], np.nonzero(key[1:] != key[:-1])[0] + 1]).astype(np.int64)
    size = np.diff(np.concatenate([group_start, [len(key)]]))
    # each unordered pair within a group once: a row pairs with the rows after it in its group
    row_group_start = np.repeat(group_start, size)
    later = np.repeat(size, size) - 1 - (np.arange(len(key)) - row_group_start)
    a = np.repeat(np.arange(len(key)), later)
    b = a + 1 + (np.arange(len(a)) - np.repeat(np.cumsum(later) - later, later))
    head_norm2 = key_norm2[row_group_start[a]]  # |K|² of the group's first row
    norm = np.sqrt(norm2)
    pair_src, pair_dst = member[a], member[b]
    with np.errstate(invalid="ignore", divide="ignore"):
        pair_cosine = (head_norm2 + extra[a] + extra[b]) / (norm[pair_src] * norm[pair_dst])
    self_edge = np.nonzero(norm2 > 0)[0]
    src = np.concatenate([self_edge, pair_src, pair_dst])
    dst = np.concatenate([self_edge, pair_dst, pair_src])
    cosine = np.concatenate([np.ones(len(self_edge)), pair_cosine, pair_cosine])
    positive = cosine > 0
    return bag, src[positive], dst[positive], cosine[positive]


def _group_heads(sorted_values: np.ndarray) -> np.ndarray:
    """Mask of the first element of each run of equal values."""
    return np.concatenate([[True], sorted_values[1:] != sorted_values[:-1]]) if len(sorted_values) else \
        np.zeros(0, dtype=bool)


def _lowest_priority_tied(who: np.ndarray, candidate: np.ndarray, sim: np.ndarray, priority: np.ndarray,
                          by_priority: np.ndarray, out: np.ndarray) -> None:
    """For each ``who``: among its candidates with ``sim`` within the tolerance of its best, the one of lowest
    priority (written into ``out``). Rows come grouped by ``who``; ``by_priority[p]`` is the caption of
    priority p."""
    if len(who) == 0:
        return
    head = _group_heads(who)
    at = np.flatnonzero(head)
    best = np.maximum.reduceat(sim, at)[np.cumsum(head) - 1]
    rank = np.where(sim >= best - TIE_TOLERANCE, priority[candidate], len(priority))
    out[who[at]] = by_priority[np.minimum.reduceat(rank, at)]


def _ranges(start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row k repeated ``length[k]`` times, and the positions ``start[k] .. start[k] + length[k] − 1``."""
    row = np.repeat(np.arange(len(start)), length)
    return row, np.repeat(start - (np.cumsum(length) - length), length) + np.arange(len(row))


def _bag_offers(bag: np.ndarray, image: np.ndarray, by_priority: np.ndarray, n_bags: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """What each bag offers a caption of image g: its lowest-priority member ("first"), or, when that one is of
    image g, its lowest-priority member of another image ("second"; −1 if none)."""
    ranked = by_priority[np.argsort(bag[by_priority], kind="stable")]  # by bag, then priority
    head = _group_heads(bag[ranked])
    first = np.full(n_bags, -1, dtype=np.int64)
    first[bag[ranked][head]] = ranked[head]
    other = ranked[image[ranked] != image[first[bag[ranked]]]]
    second = np.full(n_bags, -1, dtype=np.int64)
    other_head = _group_heads(bag[other])
    second[bag[other][other_head]] = other[other_head]
    return first, second


def _clashes(bag: np.ndarray, image: np.ndarray, first: np.ndarray, edge_key: np.ndarray, n_bags: int
             ) -> np.ndarray:
    """Per caption, how many edges of its bag lead to a bag whose first member is of the caption's own image
    (itself included): the edges whose offer changes for it. ``edge_key``: ``src * n_bags + dst``."""
    firsts = first[np.argsort(image[first], kind="stable")]
    lo = np.searchsorted(image[firsts], image, side="left")
    who, at = _ranges(lo, np.searchsorted(image[firsts], image, side="right") - lo)
    edge_key = np.sort(edge_key)
    probe = bag[who] * n_bags + bag[firsts[at]]
    found = edge_key[np.minimum(np.searchsorted(edge_key, probe), len(edge_key) - 1)] == probe
    return np.bincount(who[found], minlength=len(bag))


def nearest_neighbors(texts: Sequence[str], image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Index of each caption's TF-IDF cosine nearest neighbour among the captions of other images one word away
    (−1: none); see the module docstring for the definition."""
    n = len(texts)
    if n < 2:
        return np.full(n, -1, dtype=np.int64)
    image = np.asarray(image, dtype=np.int64)
    priority = rng.permutation(n).astype(np.int64)
    by_priority = np.empty(n, dtype=np.int64)
    by_priority[priority] = np.arange(n)
    # identical captions (common: short, formulaic) are tokenized once
    distinct = {text: k for k, text in enumerate(dict.fromkeys(texts))}
    text_of = np.fromiter(map(distinct.__getitem__, texts), dtype=np.int64, count=n)
    tokens, starts, vocabulary = tokenize(list(distinct))
    bag_of_text, src, dst, cosine = one_word_edges(tokens, starts, vocabulary,
                                                   np.bincount(text_of, minlength=len(distinct)))
    bag = bag_of_text[text_of]
    n_bags = int(bag.max()) + 1
    first, second = _bag_offers(bag, image, by_priority, n_bags)
    out = np.full(n, -1, dtype=np.int64)
    if len(src) == 0:
        return out
    # each bag's edges by decreasing cosine: one integer sort key (8× faster than a lexsort), the cosine to
    # _COSINE_BITS bits, finer than half the tie tolerance, which the checks below allow for
    fraction = np.clip(np.rint((1.0 - cosine) * 2.0 ** _COSINE_BITS), 0, 2 ** _COSINE_BITS - 1).astype(np.int64)
    order = np.argsort(src * 2 ** _COSINE_BITS + fraction) if n_bags < 2 ** (62 - _COSINE_BITS) else \
        np.lexsort((-cosine, src))
    src, dst, cosine = src[order], dst[order], cosine[order]
    edge_start = np.searchsorted(src, np.arange(n_bags + 1))
    degree = np.diff(edge_start)
    generic = np.full(n_bags, -1, dtype=np.int64)
    _lowest_priority_tied(src, first[dst], cosine, priority, by_priority, generic)
    clashes = _clashes(bag, image, first, src * n_bags + dst, n_bags)
    plain = clashes == 0  # every offer of its bag's edges is of another image: the bag's answer is its own
    out[plain] = generic[bag[plain]]
    special = np.nonzero(~plain)[0]
    # a special caption loses at most `clashes` edges to its image, so its best cosine is at least the
    # (clashes + 1)-th of its bag: expand it over the edges down to that cosine (all of them if ties run on)
    b_of, lost = bag[special], clashes[special]
    deg = degree[b_of]
    threshold = cosine[edge_start[b_of] + np.minimum(lost, deg - 1)]
    take = np.minimum(deg, lost + 1 + _SPARE_EDGES)
    beyond = np.minimum(edge_start[b_of] + take, len(cosine) - 1)
    take = np.where((take < deg) & (cosine[beyond] >= threshold - 2 * TIE_TOLERANCE), deg, take)
    row, edge = _ranges(edge_start[b_of], take)
    who, target = special[row], dst[edge]
    candidate = first[target]
    clash = image[candidate] == image[who]
    candidate[clash] = second[target[clash]]
    valid = candidate >= 0
    _lowest_priority_tied(who[valid], candidate[valid], cosine[edge[valid]], priority, by_priority, out)
    return out


def mutual_neighbor_pairs(texts: Sequence[str], image: np.ndarray, check: Callable[[np.ndarray, np.ndarray], np.ndarray],
                          rng: np.random.Generator, max_pairs: int | None = None,
                          image_uses: int = 1) -> list[tuple[int, int]]:
    """Accepted (i, j) candidate pairs: mutual nearest neighbours passing ``check``, at most ``image_uses``
    pairs per image."""
    image = np.asarray(image, dtype=np.int64)
    nn = nearest_neighbors(texts, image, rng)
    i = np.nonzero(nn >= 0)[0]
    i = i[(i < nn[i]) & (nn[nn[i]] == i)]
    j = nn[i]
    if len(i) == 0:
        return []
    ok = np.asarray(check(i, j), dtype=bool)
    i, j = i[ok], j[ok]
    used: Counter[int] = Counter()
    accepted: list[tuple[int, int]] = []
    for k in rng.permutation(len(i)).tolist():
        a, b = int(i[k]), int(j[k])
        if used[int(image[a])] >= image_uses or used[int(image[b])] >= image_uses:
            continue
        used.update((int(image[a]), int(image[b])))
        accepted.append((a, b))
        if max_pairs is not None and len(accepted) >= max_pairs:
            break
    return accepted
