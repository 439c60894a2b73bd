"""The caption-only classifier baseline: bag-of-words + length features, logistic regression, cross-fitted.

Every (image, text) pair of the set is one training example, labelled as the pair is (1 positive, 0
negative), with features of the *text only*: binary counts of its case-sensitive ``\\w+`` tokens (scikit-learn
``CountVectorizer(lowercase=False, binary=True)``) and its length in words and characters (each divided by the
set's maximum). A 2×2 block's text is once a positive and once a negative, so the classifier learns nothing
from it — as it should.

Cross-fitting: items are dealt into ``folds`` folds by a seeded permutation; the model of fold f is fitted on
the pairs of the other folds' items and scores the pairs of fold f, so **no item scores itself** (a text
repeated in another item is learned from that item, as a blind model would). The per-pair score is the
decision function; the suite's metric then says which items it solves. With one fold (or fewer than two
items) there is nothing to fit on and every score is 0 (a tie).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from vlaudit.metrics.giveaway.table import PairTable, words


def fold_of_items(n_items: int, folds: int, seed: int) -> np.ndarray:
    """The fold of each item: a seeded permutation dealt round-robin (fold sizes differ by at most one)."""
    order = np.random.default_rng(seed).permutation(n_items)
    fold = np.empty(n_items, dtype=np.int64)
    fold[order] = np.arange(n_items) % max(folds, 1)
    return fold


def classifier_scores(table: PairTable, *, folds: int = 5, seed: int = 0, c: float = 1.0) -> np.ndarray:
    """Cross-fitted per-pair scores of the caption-only classifier (module docstring)."""
    from sklearn import feature_extraction, linear_model  # scikit-learn loads only when the classifier runs

    n_items = len(table.items)
    scores = np.zeros(table.n_pairs)
    if n_items < 2 or folds < 2 or not table.texts:
        return scores
    vectorizer = feature_extraction.text.CountVectorizer(lowercase=False, binary=True, token_pattern=r"\w+", dtype=np.float64)
    bag = vectorizer.fit_transform(table.texts)
    lengths = np.array([[len(words(t)), len(t)] for t in table.texts], dtype=np.float64)
    lengths /= np.maximum(lengths.max(axis=0), 1.0)
    features = sparse.hstack([bag, sparse.csr_matrix(lengths)], format="csr")
    x = features[table.text]
    y = table.label.astype(np.int64)
    fold = fold_of_items(n_items, folds, seed)[table.item]
    for f in range(folds):
        test = fold == f
        train = ~test
        if not test.any():
            continue
        if np.unique(y[train]).size < 2:
            continue  # one class only: no direction to learn, scores stay tied at 0
        model = linear_model.LogisticRegression(C=c, max_iter=1000, solver="liblinear", random_state=seed)
        model.fit(x[train], y[train])
        scores[test] = model.decision_function(x[test])
    return scores
