"""Registry entries of the paired-image and K-way suites: COLA, MMVP-VLM, ColorSwap, SPEC, VL-CheckList, CREPE."""

from __future__ import annotations

from vlaudit.analysis.suites.suite import Suite

ENTRIES: tuple[Suite, ...] = ()
