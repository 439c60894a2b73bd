"""ARO COCO-Order / Flickr30k-Order rebuilt from the Karpathy test JSON, as the official loader builds them.

Re-expresses mertyg/vision-language-models-are-bows @ 81fdd20 : dataset_zoo/aro_datasets.py
(``COCO_Order.__init__``, ``Flickr30k_Order.__init__``), dataset_zoo/perturbations.py (``TextShuffler``) and
dataset_zoo/retrieval.py (``pre_caption``): for each annotation in file order and each of its captions,
``[pre_caption(c, 30)] + [pre_caption(p(c), 30) for p in (shuffle_nouns_and_adj, shuffle_allbut_nouns_and_adj,
shuffle_within_trigrams, shuffle_trigrams)]``.

The shuffles draw from NumPy's and Python's global generators, seeded once by main_aro.py's ``seed_all(1)``
before the dataset is built; here they draw from ``np.random.RandomState(seed)`` and ``random.Random(seed)``,
whose streams are those of ``np.random.seed(seed)`` / ``random.seed(seed)``, in the same call order. The
captions are then the official ones exactly when the tagger and tokenizer agree with the official run's:
spaCy ``en_core_web_sm`` fine-grained tags (``token.tag_``) and ``nltk.word_tokenize``. Their versions are not
pinned by the official code, so the rebuild records the versions it used (:func:`build_notes`); a caption
set read materialised (:mod:`.aro`) needs no such trust.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlaudit.errors import MissingDependencyError

NOUNS = ("NN", "NNS", "NNP", "NNPS")
ADJECTIVES = ("JJ", "JJR", "JJS")
MAX_WORDS = 30

#: ``tag(text) -> [(token text, fine-grained tag), ...]`` (spaCy's ``[(t.text, t.tag_) for t in nlp(text)]``)
Tagger = Callable[[str], Sequence[tuple[str, str]]]
#: ``tokenize(text) -> [token, ...]`` (``nltk.word_tokenize``)
Tokenizer = Callable[[str], Sequence[str]]


def pre_caption(caption: str, max_words: int = 50) -> str:
    """dataset_zoo/retrieval.py ``pre_caption``: lower case, ``.!"()*#:;~`` to spaces, spaces collapsed,
    stripped, cut to ``max_words`` words."""
    caption = re.sub(r"([.!\"()*#:;~])", " ", caption.lower())
    caption = re.sub(r"\s{2,}", " ", caption)
    caption = caption.rstrip("\n").strip(" ")
    words = caption.split(" ")
    if len(words) > max_words:
        caption = " ".join(words[:max_words])
    return caption


def _trigrams(sentence: Sequence[str]) -> list[list[str]]:
    trigrams, trigram = [], []
    for i in range(len(sentence)):
        trigram.append(sentence[i])
        if i % 3 == 2:
            trigrams.append(trigram[:])
            trigram = []
    if trigram:
        trigrams.append(trigram)
    return trigrams


@dataclass
class Shuffler:
    """``TextShuffler`` with its tagger, tokenizer and generators given (module docstring)."""

    tag: Tagger
    tokenize: Tokenizer
    numpy_random: np.random.RandomState
    python_random: random.Random

    def shuffle_nouns_and_adj(self, ex: str) -> str:
        doc = list(self.tag(ex))
        text = np.array([token for token, _ in doc])
        noun_idx = [i for i, (_, tag) in enumerate(doc) if tag in NOUNS]
        adjective_idx = [i for i, (_, tag) in enumerate(doc) if tag in ADJECTIVES]
        text[noun_idx] = self.numpy_random.permutation(text[noun_idx])
        text[adjective_idx] = self.numpy_random.permutation(text[adjective_idx])
        return " ".join(text)

    def shuffle_allbut_nouns_and_adj(self, ex: str) -> str:
        doc = list(self.tag(ex))
        text = np.array([token for token, _ in doc])
        noun_adj_idx = [i for i, (_, tag) in enumerate(doc) if tag in NOUNS + ADJECTIVES]
        else_idx = np.ones(text.shape[0])
        else_idx[noun_adj_idx] = 0
        else_idx = else_idx.astype(bool)
        text[else_idx] = self.numpy_random.permutation(text[else_idx])
        return " ".join(text)

    def shuffle_within_trigrams(self, ex: str) -> str:
        trigrams = _trigrams(list(self.tokenize(ex)))
        for trigram in trigrams:
            self.python_random.shuffle(trigram)
        return " ".join(" ".join(trigram) for trigram in trigrams)

    def shuffle_trigrams(self, ex: str) -> str:
        trigrams = _trigrams(list(self.tokenize(ex)))
        self.python_random.shuffle(trigrams)
        return " ".join(" ".join(trigram) for trigram in trigrams)


def order_cases(annotation: Sequence[Mapping[str, Any]], tag: Tagger, tokenize: Tokenizer, *, seed: int = 1,
                max_words: int = MAX_WORDS) -> Iterator[dict[str, Any]]:
    """The loader's test cases ``{"image", "caption_options": [true, 4 perturbed]}``, one per caption, in the
    loader's order; ``annotation`` is the parsed Karpathy JSON (``[{"image", "caption": [...]}, ...]``)."""
    shuffler = Shuffler(tag, tokenize, np.random.RandomState(seed), random.Random(seed))
    perturb_functions = (shuffler.shuffle_nouns_and_adj, shuffler.shuffle_allbut_nouns_and_adj,
                         shuffler.shuffle_within_trigrams, shuffler.shuffle_trigrams)
    for ann in annotation:
        for caption in ann["caption"]:
            options = [pre_caption(caption, max_words)]
            options += [pre_caption(perturb(caption), max_words) for perturb in perturb_functions]
            yield {"image": ann["image"], "caption_options": options}


def official_tools() -> tuple[Tagger, Tokenizer, str]:
    """spaCy ``en_core_web_sm`` and ``nltk.word_tokenize``, as the official code loads them, and a line naming
    their versions; :class:`MissingDependencyError` when either is not installed."""
    try:
        import nltk  # type: ignore[import-not-found]  # optional, untyped: only for a Karpathy rebuild
        import spacy  # type: ignore[import-not-found]  # optional, untyped: only for a Karpathy rebuild
    except ImportError as exc:
        raise MissingDependencyError(
            "rebuilding ARO Order from the Karpathy JSON needs spaCy with en_core_web_sm and NLTK with punkt "
            f"({exc.name} is not installed); or give the materialised test cases") from exc
    try:
        nlp = spacy.load("en_core_web_sm")
    except OSError as exc:
        raise MissingDependencyError("rebuilding ARO Order needs the spaCy model en_core_web_sm") from exc

    def tag(text: str) -> list[tuple[str, str]]:
        return [(token.text, token.tag_) for token in nlp(text)]

    versions = (f"spaCy {spacy.__version__}, en_core_web_sm {nlp.meta.get('version', '?')}, "
                f"NLTK {nltk.__version__}")
    return tag, nltk.word_tokenize, versions


def build_notes(seed: int, versions: str) -> tuple[str, ...]:
    """What a rebuilt Order set's :attr:`SuiteRead.notes` say."""
    return (f"rebuilt from the Karpathy JSON as the official loader builds it: seed {seed} (main_aro.py "
            f"seed_all), the four shuffles per caption in the loader's order, pre_caption(max_words={MAX_WORDS})",
            f"the perturbations equal the official ones only under the official tagger/tokenizer; used: {versions}")
