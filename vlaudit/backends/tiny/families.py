"""The families of tiny offline models ``vlaudit models tiny`` builds: names only (no torch), so the command
line can list them in its help without loading the builders (:mod:`vlaudit.backends.tiny.dual`,
:mod:`vlaudit.backends.tiny.mllm`)."""

from __future__ import annotations

DUAL_FAMILIES = ("clip", "siglip", "open_clip")
MLLM_FAMILIES = ("qwen2-vl", "qwen2.5-vl", "qwen3-vl", "llava-onevision", "gemma3", "internvl", "ministral")
# every family `vlaudit models tiny` builds, LLMs first (the order its help lists them)
TINY_FAMILIES = MLLM_FAMILIES + DUAL_FAMILIES
