"""Which COCO categories a caption mentions, under the shipped synonym table (cycle paper §4, §D.2).

The table (``coco_synonyms.json`` beside this module) maps each of the 80 COCO categories to lower-case
phrases: singular, plural and common synonyms ("man", "women" → person; "sofa" → couch). A caption
mentions a category iff one of its phrases occurs as whole words. Matching is longest-first over up to
four words, so "hot dog" is not "dog" and "teddy bear" is not "bear"; *blocked phrases* ("bus stop",
"tennis court", "toilet paper") are matched the same way and mention nothing. Ambiguous words that are
usually something else are left out of the table on purpose (a false mention could make a valid swap look
invalid), so a mention is conservative: the table may miss a category but should not invent one.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

_TABLE_PATH = Path(__file__).with_name("coco_synonyms.json")
_NON_LETTERS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalpha()})
_BLOCKED = -1
_BYTE_TABLE = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 else 32 for c in range(256))


@lru_cache(maxsize=1)
def synonym_table() -> dict[str, list[str]]:
    """The shipped table: category name → phrases."""
    return json.loads(_TABLE_PATH.read_text(encoding="utf-8"))["categories"]


@lru_cache(maxsize=1)
def _blocked_phrases() -> tuple[str, ...]:
    return tuple(json.loads(_TABLE_PATH.read_text(encoding="utf-8"))["blocked_phrases"])


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
        # bytes keys: encoding + bytes.translate tokenises about twice as fast as str.translate
        self._single = {p.encode(): c for p, c in phrases.items() if " " not in p}
        self._multi = {p.encode(): c for p, c in phrases.items() if " " in p}
        self._starts = frozenset(p.split()[0] for p in self._multi)
        self._single_keys = frozenset(self._single)
        self._max_words = max((len(p.split()) for p in self._multi), default=1)

    @staticmethod
    def words(text: str) -> list[bytes]:
        """Lower-case ASCII words of a caption (anything else separates words)."""
        return text.encode("utf-8").translate(_BYTE_TABLE).split()

    def __call__(self, text: str) -> tuple[int, ...]:
        tokens = self.words(text)
        single, multi, starts = self._single, self._multi, self._starts
        if starts.isdisjoint(tokens):
            # no multi-word phrase can start here: whole-word lookups suffice (the common, fast case)
            return tuple(sorted({single[w] for w in self._single_keys.intersection(tokens)} - {_BLOCKED}))
        # longest match first, so the words of "hot dog" or "bus stop" are not read as "dog" or "bus"
        found: set[int] = set()
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
            if category is not None:
                found.add(category)
            i += step
        found.discard(_BLOCKED)
        return tuple(sorted(found))

    def names(self, text: str) -> list[str]:
        """The category names a caption mentions, in table order."""
        return [self.category_names[i] for i in self(text)]
