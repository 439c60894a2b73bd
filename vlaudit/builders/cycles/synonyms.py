"""Which COCO categories a caption mentions, under the shipped synonym table (cycle paper §4, §D.2).

The table (``coco_synonyms.json`` beside this module) maps each of the 80 COCO categories to lower-case
phrases: singular, plural and common synonyms ("man", "women" → person; "sofa" → couch). A caption
mentions a category iff one of its phrases occurs as whole words. Matching is longest-first over up to
four words, so "hot dog" is not "dog" and "teddy bear" is not "bear"; *blocked phrases* ("bus stop",
"tennis court", "toilet paper", "jet ski", "man made") are matched the same way and mention nothing.
Ambiguous words that are usually something else are left out of the table on purpose (a false mention
could make a valid swap look invalid), so a mention is conservative: the table may miss a category but
should not invent one. Words that name a category in one sense only (*context-required*: "pitcher",
"batter", "bat", "glove" → baseball; "mouse" → computer; "meter" → parking) mention it only when the caption
also holds a word of that sense: "the pitcher throws the ball" mentions a person, "a pitcher of beer" does
not; "a mouse next to the keyboard" mentions the device, "a cat chasing a mouse" does not. The tested table
of tricky phrases is ``tests/test_cycles_build_synonyms.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

_TABLE_PATH = Path(__file__).with_name("coco_synonyms.json")
_NON_LETTERS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalpha()})
_BLOCKED = -1
_BYTE_TABLE = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 else 32 for c in range(256))
# the batch path joins captions with NUL, which (unlike every other non-letter) survives as a token
_SEPARATOR = b"\x00"
_BATCH_TABLE = _SEPARATOR + _BYTE_TABLE[1:]
# token codes of the batch path; _START + (code + _SHIFT) marks a phrase start; _COND a context-required word
_NONE, _SEP, _COND, _START, _SHIFT = -2, -3, -4, 1 << 20, 4


@lru_cache(maxsize=1)
def synonym_table() -> dict[str, list[str]]:
    """The shipped table: category name → phrases."""
    return json.loads(_TABLE_PATH.read_text(encoding="utf-8"))["categories"]


@lru_cache(maxsize=1)
def _blocked_phrases() -> tuple[str, ...]:
    return tuple(json.loads(_TABLE_PATH.read_text(encoding="utf-8"))["blocked_phrases"])


@lru_cache(maxsize=1)
def context_required() -> dict[str, list[str]]:
    """Single words that mention their category only beside one of the listed context words."""
    return json.loads(_TABLE_PATH.read_text(encoding="utf-8")).get("context_required", {})


class _Vocabulary(dict):
    """Token → code; a word seen for the first time is stored as "no category", so that every later
    lookup of it stays in C (``map(vocabulary.__getitem__, tokens)``)."""

    def __missing__(self, key: bytes) -> int:
        self[key] = _NONE
        return _NONE


class MentionMatcher:
    """Maps a caption to the sorted indexes (into ``category_names``) of the categories it mentions.

    Categories of the file that are not in the table are matched by their own name (and name + "s").
    """

    def __init__(self, category_names: list[str]) -> None:
        table = synonym_table()
        self.category_names = list(category_names)
        phrases: dict[str, int] = {}
        for index, name in enumerate(self.category_names):
            for phrase in table.get(name, [name, name + "s"]):
                phrases[" ".join(phrase.lower().translate(_NON_LETTERS).split())] = index
        for phrase in _blocked_phrases():
            phrases.setdefault(phrase, _BLOCKED)
        # word → (category, context words); such a word is never an unconditional single-word mention
        self._conditional = {word.encode(): (phrases.pop(word), frozenset(w.encode() for w in context))
                             for word, context in context_required().items() if word in phrases}
        # bytes keys: encoding + bytes.translate tokenises about twice as fast as str.translate
        self._single = {p.encode(): c for p, c in phrases.items() if " " not in p}
        self._multi = {p.encode(): c for p, c in phrases.items() if " " in p}
        self._starts = frozenset(p.split()[0] for p in self._multi)
        self._single_keys = frozenset(self._single)
        self._max_words = max((len(p.split()) for p in self._multi), default=1)
        self._lookup: _Vocabulary | None = None
        lengths: dict[bytes, set[int]] = {}
        for encoded in self._multi:
            lengths.setdefault(encoded.split()[0], set()).add(len(encoded.split()))
        self._start_lengths = {word: sorted(n, reverse=True) for word, n in lengths.items()}

    @staticmethod
    def words(text: str) -> list[bytes]:
        """Lower-case ASCII words of a caption (anything else separates words)."""
        return text.encode("utf-8").translate(_BYTE_TABLE).split()

    def __call__(self, text: str) -> tuple[int, ...]:
        tokens = self.words(text)
        single, multi, starts = self._single, self._multi, self._starts
        if starts.isdisjoint(tokens):
            # no multi-word phrase can start here: whole-word lookups suffice (the common, fast case)
            found: set[int] = {single[w] for w in self._single_keys.intersection(tokens)}
            if not self._conditional.keys().isdisjoint(tokens):
                found |= self._in_context(set(tokens), set(tokens))
            return tuple(sorted(found - {_BLOCKED}))
        # longest match first, so the words of "hot dog" or "bus stop" are not read as "dog" or "bus"
        found = set()
        unmatched: set[bytes] = set()  # words not inside a multi-word phrase: candidates for a conditional mention
        i, n = 0, len(tokens)
        while i < n:
            word = tokens[i]
            step = 1
            category = None
            if word in starts:
                for length in range(min(self._max_words, n - i), 1, -1):
                    category = multi.get(b" ".join(tokens[i:i + length]))
                    if category is not None:
                        step = length
                        break
            if category is None:
                category = single.get(word)
                unmatched.add(word)
            if category is not None:
                found.add(category)
            i += step
        found |= self._in_context(unmatched, set(tokens))
        found.discard(_BLOCKED)
        return tuple(sorted(found))

    def _in_context(self, candidates: set[bytes], tokens: set[bytes]) -> set[int]:
        """Categories of the context-required words among ``candidates`` whose context is in ``tokens``."""
        return {category for word, (category, context) in self._conditional.items()
                if word in candidates and not context.isdisjoint(tokens)}

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), n_categories) bool: row k is ``self(texts[k])`` — the same longest-first matching,
        done on all captions at once (one encode, translate and split; per-token work only at the few
        positions where a multi-word phrase can start)."""
        out = np.zeros((len(texts), len(self.category_names)), dtype=bool)
        blob = " \x00 ".join(texts).encode("utf-8")
        if not texts or blob.count(_SEPARATOR) != len(texts) - 1:  # a caption containing NUL: one by one
            for row, text in enumerate(texts):
                out[row, list(self(text))] = True
            return out
        if self._lookup is None:
            lookup = _Vocabulary(self._single)
            for word in self._conditional:
                lookup[word] = _COND
            for word in self._starts:
                lookup[word] = _START + lookup.get(word, _NONE) + _SHIFT
            lookup[_SEPARATOR] = _SEP
            self._lookup = lookup
        tokens = blob.translate(_BATCH_TABLE).split()
        codes = np.fromiter(map(self._lookup.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        caption = np.cumsum(codes == _SEP)
        starts = np.nonzero(codes >= _START)[0]
        codes[starts] -= _START + _SHIFT
        hits: list[int] = []
        categories: list[int] = []
        consumed: list[int] = []
        consumed_until = -1
        multi, lengths_of = self._multi, self._start_lengths
        for i in starts.tolist():  # left to right, so a phrase's own words are never re-read
            if i < consumed_until:
                continue
            for length in lengths_of[tokens[i]]:  # longest first; a phrase never spans a NUL token
                category = multi.get(b" ".join(tokens[i:i + length]))
                if category is not None:
                    hits.append(i)
                    categories.append(category)
                    consumed.extend(range(i + 1, i + length))
                    consumed_until = i + length
                    break
        codes[consumed] = _NONE
        codes[hits] = categories
        hit = codes >= 0
        out[caption[hit], codes[hit]] = True
        # the few captions with a context-required word outside a phrase: decided one by one
        for row in np.unique(caption[codes == _COND]).tolist():
            out[row] = False
            out[row, list(self(texts[row]))] = True
        return out

    def names(self, text: str) -> list[str]:
        """The category names a caption mentions, in table order."""
        return [self.category_names[i] for i in self(text)]
