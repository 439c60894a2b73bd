"""Suite items as one flat, integer-coded pair table (every (image, text) pair of every item, row-major).

Text normal forms (used by every lint, stated once here):

* **text identity** :func:`norm_text` — whitespace collapsed, a trailing full stop dropped, case kept
  ("a dog." and "a  dog" are one text; "a dog" and "A dog" are two, so that case-sensitive tokens stay whole);
* **same caption** :func:`folded_text` — the identity case-folded ("A dog." and "a dog" are the same caption:
  what the identical / labelled-both-ways / ever-a-positive checks compare);
* **words** :func:`words` — the ``\\w+`` runs of the case-folded text; a caption's **bag of words** is the
  multiset of its words (word order and punctuation ignored); its **length** is its number of words;
* **case-sensitive tokens** :func:`cased_tokens` — the ``\\w+`` runs as written (VL-CheckList's "ON" is not
  "on").

Pair ``p`` of item ``k`` is ``(images[i], texts[j])`` for ``i``, ``j`` row-major, label 1 when ``(i, j)`` is a
positive; ``row[p]`` is its (item, image) group — the texts one image is compared across.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.records import SuiteItem

_WORD = re.compile(r"\w+")


def norm_text(text: str) -> str:
    """The text identity: whitespace collapsed, a trailing full stop dropped, case kept."""
    return " ".join(text.split()).rstrip(" .")


def folded_text(text: str) -> str:
    """The same-caption form: :func:`norm_text` case-folded."""
    return norm_text(text).casefold()


def words(text: str) -> list[str]:
    """The case-folded ``\\w+`` words of a text (a bag of words is their multiset)."""
    return _WORD.findall(text.casefold())


def cased_tokens(text: str) -> list[str]:
    """The ``\\w+`` tokens of a text as written (case kept)."""
    return _WORD.findall(text)


def _codes(values: Sequence[object]) -> tuple[np.ndarray, list[object]]:
    index: dict[object, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    return codes, list(index)


@dataclass(frozen=True)
class PairTable:
    """The flat pair table of a list of items (see the module docstring); arrays are per pair unless named.

    ``text``/``fold``/``bow``/``image`` are dense codes of the pair's text identity, same-caption form, bag of
    words and image key;
    ``texts[c]`` is the first text as written with identity code ``c``; ``item_texts[k]`` the identity codes of
    item ``k``'s texts in order; ``offsets[k]`` the first pair of item ``k`` (``offsets[-1]`` = number of pairs)."""

    items: Sequence[SuiteItem]
    item: np.ndarray
    column: np.ndarray
    row: np.ndarray
    label: np.ndarray
    image: np.ndarray
    text: np.ndarray
    fold: np.ndarray
    bow: np.ndarray
    texts: list[str]
    item_texts: list[np.ndarray]
    offsets: np.ndarray

    @classmethod
    def from_items(cls, items: Sequence[SuiteItem]) -> PairTable:
        item_text_norm: list[str] = []
        firsts: dict[str, str] = {}
        sizes = []
        for entry in items:
            for written in entry.texts:
                key = norm_text(written)
                firsts.setdefault(key, written)
                item_text_norm.append(key)
            sizes.append((len(entry.images), len(entry.texts)))
        text_codes, text_keys = _codes(item_text_norm)
        bow_of_text, _ = _codes([tuple(sorted(words(firsts[str(key)]))) for key in text_keys])
        fold_of_text, _ = _codes([folded_text(str(key)) for key in text_keys])
        n_img = np.array([s[0] for s in sizes], dtype=np.int64)
        n_txt = np.array([s[1] for s in sizes], dtype=np.int64)
        per_item = n_img * n_txt
        offsets = np.concatenate([[0], np.cumsum(per_item)]).astype(np.int64)
        text_offsets = np.concatenate([[0], np.cumsum(n_txt)]).astype(np.int64)
        n = int(offsets[-1])
        item = np.repeat(np.arange(len(items), dtype=np.int64), per_item)
        local = np.arange(n, dtype=np.int64) - offsets[item]
        i = local // n_txt[item]
        j = local % n_txt[item]
        row_offsets = np.concatenate([[0], np.cumsum(n_img)]).astype(np.int64)
        row = row_offsets[item] + i
        text = text_codes[text_offsets[item] + j]
        label = np.zeros(n, dtype=np.int8)
        positive_flat = [offsets[k] + a * len(it.texts) + b for k, it in enumerate(items) for a, b in it.positives]
        label[np.asarray(positive_flat, dtype=np.int64)] = 1
        image_keys = [image.key for it in items for image in it.images]
        image_codes, _ = _codes(image_keys)
        image = image_codes[row]
        item_texts = [text_codes[text_offsets[k]:text_offsets[k + 1]] for k in range(len(items))]
        return cls(items=items, item=item, column=j, row=row, label=label, image=image, text=text,
                   fold=fold_of_text[text], bow=bow_of_text[text], texts=[firsts[str(key)] for key in text_keys], item_texts=item_texts, offsets=offsets)

    @property
    def n_pairs(self) -> int:
        return int(self.item.size)

    def text_scores(self, per_text: np.ndarray) -> np.ndarray:
        """Per-pair scores of a text-only scorer: ``per_text[c]`` for every pair whose text has code ``c``."""
        return np.asarray(per_text, dtype=np.float64)[self.text]

    def matrices(self, flat: np.ndarray) -> list[np.ndarray]:
        """Per-pair scores as each item's ``(images, texts)`` matrix (:class:`~vlaudit.metrics.suites.SuiteScores`)."""
        flat = np.asarray(flat, dtype=np.float64)
        return [flat[self.offsets[k]:self.offsets[k + 1]].reshape(len(it.images), len(it.texts))
                for k, it in enumerate(self.items)]

    def comparisons(self) -> tuple[np.ndarray, np.ndarray]:
        """(positive pair, negative pair) index arrays of every positive against every negative of the same
        image row — the comparisons of the default metric; linear in pairs for bounded rows."""
        positives = np.flatnonzero(self.label == 1)
        negatives = np.flatnonzero(self.label == 0)
        order = positives[np.argsort(self.row[positives], kind="stable")]
        pos_rows = self.row[order]
        start = np.searchsorted(pos_rows, self.row[negatives], side="left")
        count = np.searchsorted(pos_rows, self.row[negatives], side="right") - start
        repeat = np.repeat(np.arange(negatives.size), count)
        within = np.arange(repeat.size) - np.repeat(np.cumsum(count) - count, count)
        return order[start[repeat] + within], negatives[repeat]
