"""One compositionality suite as a frozen registry entry (:class:`Suite`); the entries are in :mod:`.registry`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.records import SuiteItem, SuiteRead
from vlaudit.results.suites import OfficialFigure


@dataclass(frozen=True)
class Suite:
    """One registered suite (see the module docstring). ``directions``: what its metric compares —
    ``"i2t"`` (texts for one image), ``"t2i"`` (images for one text) or ``"both"``. ``text_similarity``: the
    metric also needs text-to-text scores (:attr:`SuiteScores.texts`). ``options``: reader keywords a user may
    set (``{"name": "help"}``)."""

    name: str
    title: str
    layout: str
    read: Callable[..., SuiteRead]
    outcomes: Callable[[Sequence[SuiteItem], SuiteScores], Outcomes]
    aggregate: Callable[[Sequence[SuiteItem], Outcomes], list[OfficialFigure]]
    metric: str
    tie_rule: str
    official: str
    directions: str = "i2t"
    text_similarity: bool = False
    options: tuple[tuple[str, str], ...] = ()

    def read_file(self, path: str | Path, **options: Any) -> SuiteRead:
        return self.read(Path(path), **options)
