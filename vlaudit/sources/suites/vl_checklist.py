"""VL-CheckList (placeholder: the reader follows)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def looks_like_vl_checklist(data: Any) -> bool:
    """Whether a parsed JSON value has VL-CheckList's shape: a list whose first entry is
    ``[image_rel_path, {"POS": [...], "NEG": [...]}]``."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], list) and len(data[0]) == 2
            and isinstance(data[0][0], str) and isinstance(data[0][1], Mapping)
            and {"POS", "NEG"} <= set(data[0][1]))
