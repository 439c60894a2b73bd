"""matplotlib for every plot of the package: loaded when the first figure is drawn, always on the Agg backend.

A leaf module, so that the report, the analyses and the demo draw with the same set-up and write PNGs the
same way (atomically, closed afterwards).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlaudit.files import atomic_write


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend (no display needed)."""
    import matplotlib  # heavy (~0.3 s) and needed only when a plot is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after use("Agg"): pyplot picks its backend on import

    return plt


def save_png(fig: Any, path: str | Path, dpi: int = 110) -> Path:
    """Write a matplotlib figure as PNG atomically and close it."""
    path = Path(path)
    with atomic_write(path, "wb") as handle:
        fig.savefig(handle, format="png", dpi=dpi)
    pyplot().close(fig)
    return path
