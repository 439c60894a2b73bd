"""Image paths confined to the user's images folder.

Confinement is lexical: a relative path from a table may not be absolute and may not climb out with ``..``.
Symbolic links the user placed *inside* the folder are followed (dataset folders are often symlinked
together); only the table's text is distrusted.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath


def confine(images_dir: str | Path, relative: str) -> Path | None:
    """``images_dir / relative`` if ``relative`` stays inside ``images_dir`` lexically, else None."""
    text = str(relative).replace("\\", "/")
    if not text or PurePosixPath(text).is_absolute() or os.path.isabs(text):
        return None
    normal = os.path.normpath(text)
    if normal == ".." or normal.startswith("../") or normal == ".":
        return None
    return Path(images_dir) / normal
