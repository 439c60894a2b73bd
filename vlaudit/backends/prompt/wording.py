"""The words every yes/no backend of a chat model sends, torch-free: the question text of each interface, the
answer prefix, the Qwen system message and the fingerprint of them all (VCA §9, §11, §18).

:mod:`vlaudit.backends.hf.mllm` renders them through the model's chat template in-process; an endpoint backend
(:mod:`vlaudit.backends.openai.endpoint`) sends the same messages to a server that renders them with the same
template — so both score one prompt, and a served model's margins are comparable with the HF backend's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlaudit.backends.base import ANSWER_WORDS
from vlaudit.backends.prompt.letters import LETTER_INTERFACE
from vlaudit.backends.prompt.verbalizers import QUESTION_TEMPLATES, check_interface
from vlaudit.settings import NAMED_SYSTEM_MESSAGES

#: the assistant turn's opening that every answer word continues (VCA §11)
GENERATION_PREFIX = "Answer:"
QWEN_SYSTEM = "You are a helpful assistant."
QWEN_FAMILIES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl")


def resolve_system(system: str | None) -> str | None:
    """A system message: a name of :data:`vlaudit.settings.NAMED_SYSTEM_MESSAGES` (e.g. ``qwen-neutral``, the
    neutral instruction of VCA §18's Qwen system diagnostic) stands for its text; any other text is itself."""
    return NAMED_SYSTEM_MESSAGES.get(system, system) if system is not None else None


def template_fingerprint(question_templates: Mapping[str, str] | None = None,
                         system: str | None = None) -> dict[str, Any]:
    """The prompt pieces (question templates, generation prefix, system message). With the defaults it holds
    only the built-in templates (no override entries), so every default run shares its cache keys; a ``system``
    override (``vca score --system``) is added as its own entry."""
    out = {"question_templates": question_templates or QUESTION_TEMPLATES, "generation_prefix": GENERATION_PREFIX,
           "qwen_system": QWEN_SYSTEM, "verbalizers": ANSWER_WORDS}
    if system is not None:
        out["system"] = system
    return out


def question_text(question: str, interface: str) -> str:
    """The user text of one query: the question and the interface's answer instruction (under the letter
    interface ``question`` already holds the options and the instruction, :func:`letters.item_question`)."""
    if interface == LETTER_INTERFACE:
        return question
    positive, negative = check_interface(interface)
    template = QUESTION_TEMPLATES.get(interface, f"{{question}} Answer {positive} or {negative}.")
    return template.format(question=question)


def user_text(question: str, interface: str, templates: Mapping[str, str]) -> str:
    """The user turn's text under ``templates`` (the defaults with a run's ``--template`` overrides)."""
    return templates[interface].format(question=question) if interface in templates \
        else question_text(question, interface)
