"""Registry entries of the paired-image and K-way suites: COLA, MMVP-VLM, ColorSwap, SPEC, VL-CheckList, CREPE."""

from __future__ import annotations

from vlaudit.analysis.suites.suite import Suite
from vlaudit.metrics.suites import cola as cola_metric
from vlaudit.metrics.suites import mmvp as mmvp_metric
from vlaudit.sources.suites import cola, mmvp

COLA = Suite(
    name=cola.SUITE, title=cola.TITLE, layout=cola.LAYOUT, read=cola.read_cola,
    outcomes=cola_metric.outcomes, aggregate=cola_metric.aggregate,
    metric="multi-object accuracy: each caption scores higher on its own image than on the other (mean over items)",
    tie_rule=cola_metric.TIE_RULE, official=cola_metric.SOURCE, directions="t2i")

MMVP_VLM = Suite(
    name=mmvp.SUITE, title=mmvp.TITLE, layout=mmvp.LAYOUT, read=mmvp.read_mmvp,
    outcomes=mmvp_metric.outcomes, aggregate=mmvp_metric.aggregate,
    metric="pair accuracy: both statements pick their image (softmax over the two images); per pattern, mean "
           "over the 9 patterns",
    tie_rule=mmvp_metric.TIE_RULE, official=mmvp_metric.SOURCE, directions="t2i")

ENTRIES: tuple[Suite, ...] = (COLA, MMVP_VLM)
