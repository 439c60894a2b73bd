"""Every compositionality suite by name: its reader, its official metric, its tie rule and source (:data:`SUITES`).

A suite is one frozen :class:`~vlaudit.analysis.suites.suite.Suite` entry: ``read`` (a
:mod:`vlaudit.sources.suites` reader), ``outcomes`` and ``aggregate`` (a :mod:`vlaudit.metrics.suites`
module), the one-line ``layout`` it reads, the ``metric`` and ``tie_rule`` in words and the ``official`` code
they re-express (repo @ commit : path). The entries are declared beside each other in :mod:`.captions` (one
image, candidate captions) and :mod:`.groups` (paired images, K-way groups), and vlaudit's own layout in :mod:`.generic`; this module is the one list.
"""

from __future__ import annotations

from vlaudit.analysis.suites.captions import ENTRIES as CAPTION_SUITES
from vlaudit.analysis.suites.generic import ENTRIES as GENERIC_SUITES
from vlaudit.analysis.suites.groups import ENTRIES as GROUP_SUITES
from vlaudit.analysis.suites.suite import Suite
from vlaudit.errors import InputError, unknown_names

SUITES: dict[str, Suite] = {suite.name: suite for suite in (*CAPTION_SUITES, *GROUP_SUITES, *GENERIC_SUITES)}
assert len(SUITES) == len(CAPTION_SUITES) + len(GROUP_SUITES) + len(GENERIC_SUITES), "a suite name is registered twice"


def suite_named(name: str) -> Suite:
    """The registered suite ``name``; an unknown name is one :class:`InputError` with "did you mean"."""
    if name not in SUITES:
        error = unknown_names([name], SUITES, what="suite", field="suite")
        raise error if error is not None else InputError(f"unknown suite {name!r}", field="suite")
    return SUITES[name]
