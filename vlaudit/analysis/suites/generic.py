"""Registry entry of vlaudit's own suite layout, ``pairs-suite`` (:mod:`vlaudit.sources.suites.pairs`)."""

from __future__ import annotations

from vlaudit.analysis.suites.suite import Suite
from vlaudit.metrics.suites import pairs as pairs_metric
from vlaudit.sources.suites.pairs import LAYOUT, NAME, read_pairs_suite

ENTRIES: tuple[Suite, ...] = (
    Suite(name=NAME, title="vlaudit pairs suite (hand-written items)", layout=LAYOUT, read=read_pairs_suite,
          outcomes=pairs_metric.outcomes, aggregate=pairs_metric.aggregate,
          metric="Winoground-style text, image and group scores, mean over items",
          tie_rule=pairs_metric.TIE_RULE, official=pairs_metric.SOURCE, directions="both"),
)
