"""The one normal form in which names are compared across sources (object names, mentions, captions' nouns).

Unicode lets one name be written in several code-point sequences ("café" as NFC ``é`` or NFD ``e`` + ``◌́``);
compared raw, a mention typed on one system never matches its object annotated on another, and cycles are
lost without a word. Every reader that matches names goes through :func:`norm_name`.
"""

from __future__ import annotations

import unicodedata


def norm_text(text: str) -> str:
    """``text`` in Unicode NFC with whitespace runs collapsed to one space and the ends stripped."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def norm_name(text: str) -> str:
    """A name as matched across sources: NFC, lowercase, whitespace runs collapsed, ends stripped."""
    return norm_text(text).lower()
