"""Answer verbalizers resolved per backend from the backend's own scoring prompt (VCA §11).

The answer words are fixed per interface (:data:`vlaudit.backends.base.ANSWER_WORDS`: yes/no, true/false);
how a word is *written* after the prompt is not: the paper's AutoProcessor backends (Qwen, InternVL, LLaVA)
read the leading-space words " yes"/" no"/" true"/" false" after the answer prefix (Qwen ids
9834/902/830/895), while Ministral, scored through MistralCommon, reads its native continuation right after
``[/INST]`` with no space ("yes" = 13059, "no" = 2649, "true" = 5876, "false" = 11339 on tekken).

Rule (:func:`answer_continuation`): a word that follows written text (the prompt ends with a visible
character, e.g. "Answer:") is separated by one space; a word that opens the assistant turn (the prompt ends
with a control token or whitespace) is written as is. The id is then read from how prompt + continuation
tokenizes: the prompt's tokens must be a prefix of the result, and exactly one token must follow —
otherwise the verbalizer is refused with the model, the continuation and the pieces it split into.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlaudit.backends.base import ANSWER_WORDS
from vlaudit.errors import InputError
from vlaudit.files import read_json

# A question used only to render the scoring prompt whose tail the verbalizers follow.
PROBE_QUESTION = "Is the cat to the left of the dog?"
# The question templates of the answer interfaces; ``--template`` overrides them (:func:`read_question_templates`).
QUESTION_TEMPLATES: dict[str, str] = {
    "yesno": "{question} Answer yes or no.",
    "truefalse": "{question} Answer true or false.",
}


class VerbalizerError(InputError):
    """A verbalizer that does not continue the scoring prompt as exactly one token."""


@dataclass(frozen=True)
class Verbalizer:
    """One answer word as the backend reads it: the continuation text and its single token."""

    interface: str
    word: str
    text: str
    token_id: int
    piece: str


def answer_continuation(word: str, *, after_text: bool) -> str:
    """The text of ``word`` right after the prompt: " word" after written text, ``word`` opening a turn."""
    return f" {word}" if after_text else word


def check_interface(interface: str) -> tuple[str, str]:
    """The (positive, negative) answer words of ``interface``; unknown names raise with the list."""
    if interface not in ANSWER_WORDS:
        raise InputError(f"unknown interface {interface!r}; available: {', '.join(ANSWER_WORDS)}",
                         field="interface")
    return ANSWER_WORDS[interface]


def resolve_verbalizers(model: str, interface: str, *, after_text: bool,
                        tokenize: Callable[[str], tuple[Sequence[int], Sequence[int]]],
                        pieces: Callable[[Sequence[int]], list[str]]) -> tuple[Verbalizer, Verbalizer]:
    """Resolve both answer words of ``interface`` to single token ids in the backend's prompt context.

    ``tokenize(continuation)`` returns (prompt ids, ids of prompt + continuation) for the backend's real
    scoring prompt; ``pieces(ids)`` names tokens for messages. Raises :class:`VerbalizerError` naming the
    model and the pieces when a continuation is not exactly one token appended to the prompt.
    """
    out = []
    bad = []
    for word in check_interface(interface):
        text = answer_continuation(word, after_text=after_text)
        prompt_ids, full_ids = (list(ids) for ids in tokenize(text))
        tail = full_ids[len(prompt_ids):]
        if full_ids[:len(prompt_ids)] != prompt_ids:
            bad.append(f"{text!r} re-tokenizes the prompt's end (prompt ends {pieces(prompt_ids[-3:])}, "
                       f"with the answer {pieces(full_ids[len(prompt_ids) - 3:])})")
        elif len(tail) != 1:
            bad.append(f"{text!r} -> {tail} {pieces(tail)}")
        else:
            out.append(Verbalizer(interface, word, text, int(tail[0]), pieces(tail)[0]))
    if bad:
        raise VerbalizerError(
            f"model {model}: interface {interface!r} needs single-token verbalizers after the scoring prompt, "
            f"but the tokenizer splits {'; '.join(bad)}", field="interface")
    return out[0], out[1]


def merge_question_templates(overrides: dict[str, Any] | None, *, path: str | Path | None = None) -> dict[str, str]:
    """The default :data:`QUESTION_TEMPLATES` with ``overrides`` (interface → template with one ``{question}``
    field) applied; an unknown interface or a template without exactly one ``{question}`` is an InputError."""
    merged = dict(QUESTION_TEMPLATES)
    for interface, template in (overrides or {}).items():
        if interface not in QUESTION_TEMPLATES:
            raise InputError(f"unknown interface {interface!r}; templates exist for {', '.join(QUESTION_TEMPLATES)}",
                             path=path, field=str(interface))
        fields = [name for _, name, _, _ in string.Formatter().parse(template)] if isinstance(template, str) else None
        if fields is None or [f for f in fields if f is not None] != ["question"]:
            raise InputError("a template must be a string with exactly one {question} field and no other",
                             path=path, field=str(interface))
        merged[interface] = template
    return merged


def read_question_templates(path: str | Path) -> dict[str, str]:
    """A ``--template`` file: a JSON object interface → template with one ``{question}`` field, e.g.
    ``{"yesno": "{question} Please answer yes or no."}``; interfaces it omits keep their default template."""
    value = read_json(path)
    if not isinstance(value, dict) or not value:
        raise InputError("a template file must be a non-empty JSON object: interface -> template", path=path)
    merge_question_templates(value, path=path)
    return {str(k): str(v) for k, v in value.items()}
