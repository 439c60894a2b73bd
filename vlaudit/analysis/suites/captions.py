"""Registry entries of the one-image, candidate-caption suites: ARO, VALSE, SugarCrepe++, BLA, SVO-Probes."""

from __future__ import annotations

from vlaudit.analysis.suites.suite import Suite

ENTRIES: tuple[Suite, ...] = ()
