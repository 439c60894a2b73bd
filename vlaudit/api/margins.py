"""A scoring run's result as the API returns it: its ``margins.parquet`` and its summary.

Its own module so that ``vca score`` (:mod:`vlaudit.api.runs`) imports neither the VCA report nor pandas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq

from vlaudit.results.backend_description import PrefixCacheDecision
from vlaudit.results.vca.outputs import DualScoringSummary, ScoringSummary

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Margins:
    """A scoring run folder: ``path`` is its ``margins.parquet``; ``summary`` the run's counts, the typed
    record ``summary.json`` holds (a dual-encoder run's own record); ``warnings``: runs of the table that gave no
    answer (:func:`vlaudit.analysis.vca.no_answer.no_answer_warning`)."""

    path: Path
    summary: ScoringSummary | DualScoringSummary
    #: the shared image-prefix reuse decision (manifest.json's ``prefix_cache``: what the backend's prepare() returned)
    prefix_cache: PrefixCacheDecision | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def failure_line(self) -> str:
        """One line counting the records not scored, by reason and by context (``failures.jsonl`` lists them)."""
        if isinstance(self.summary, DualScoringSummary):
            return f"{self.summary.n_not_scored} not scored"
        return self.summary.failure_line

    @property
    def schema_version(self) -> int:
        """The version of ``summary.json``'s shape."""
        return self.summary.schema_version

    def to_frame(self) -> pd.DataFrame:
        """The margins as a pandas DataFrame (schema: :mod:`vlaudit.sources.margins`)."""
        return pq.read_table(self.path).to_pandas()
