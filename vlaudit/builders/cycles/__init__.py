"""Exact counterfactual pairing cycles built from annotations (cycle paper §4, §D.1–D.5).

Library entry points: :func:`build_coco_cycles`, :func:`build_gqa_cycles`, :func:`build_jsonl_cycles`
and :func:`audit_cycles_file`. Outputs: ``CYCLES.jsonl`` (one block per row), ``CYCLES.captions.jsonl``
(the captions it uses, generated ones included) and ``CYCLES.meta.json`` (rules, seed, splits, Table-6
counts, unavailable families, warnings).
"""

from __future__ import annotations

from vlaudit.builders.cycles.audit import audit_cycles_file
from vlaudit.builders.cycles.coco import COCO_FAMILIES, build_coco_cycles
from vlaudit.builders.cycles.gqa import DEFAULT_GQA_SPLITS, GQA_FAMILIES, build_gqa_cycles
from vlaudit.builders.cycles.jsonl import JSONL_FAMILIES, build_jsonl_cycles
from vlaudit.builders.cycles.rules import GeometryRules

__all__ = ["COCO_FAMILIES", "DEFAULT_GQA_SPLITS", "GQA_FAMILIES", "GeometryRules", "JSONL_FAMILIES",
           "audit_cycles_file", "build_coco_cycles", "build_gqa_cycles", "build_jsonl_cycles"]
