"""The K-way letter interface: a multiple-choice item's options read from one forward pass (VCA §3, §11).

The user text follows the convention of the multiple-choice benchmarks (LLaVA's MMBench/SEED prompt, as
VLMEvalKit and lmms-eval render it): the benchmark's hint where it has one, the question, one line
"A. <option>" per option, and :data:`LETTER_INSTRUCTION`. The backend wraps it in its native chat template
exactly as it wraps a yes/no question, so the scoring prefix is the same and the option letters are read at
the position the yes/no verbalizers are read today: log p(letter | prompt) for every letter from the one
log-softmax row at the prompt's end. Each letter's continuation must be one token after that prefix
(:func:`resolve_letters`, the same rule as :func:`vlaudit.backends.prompt.verbalizers.resolve_verbalizers`);
otherwise the backend refuses, naming the model and the letter, before any scoring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from vlaudit.backends.prompt.verbalizers import Verbalizer, VerbalizerError, answer_continuation
from vlaudit.sources.items import BenchmarkItem, option_letters

LETTER_INTERFACE = "letter"
LETTER_INSTRUCTION = "Answer with the option's letter from the given choices directly."
#: the letters every backend resolves at load (A..Z); an item needs only its own first K
ALL_LETTERS = option_letters(26)
#: the question used to render the probe prompt whose tail the letters follow
PROBE_OPTIONS = ("left", "right")


def letter_question(question: str, options: Sequence[str], hint: str | None = None) -> str:
    """The user text of a multiple-choice query: hint (if any), question, "A. …" lines, the instruction."""
    lines = [hint] if hint else []
    lines.append(question)
    lines.extend(f"{letter}. {text}" for letter, text in zip(option_letters(len(options)), options, strict=True))
    lines.append(LETTER_INSTRUCTION)
    return "\n".join(lines)


def item_question(item: BenchmarkItem, interface: str) -> str:
    """The text a backend's question template receives for ``item`` under ``interface``."""
    if interface != LETTER_INTERFACE:
        return item.question
    if not item.options:
        raise VerbalizerError(f"item {item.item_id!r} has no options; --interface letter scores multiple-choice "
                              "items", record=item.item_id, field="options")
    return letter_question(item.question, item.options, item.hint)


def resolve_letters(model: str, *, after_text: bool,
                    tokenize: Callable[[str], tuple[Sequence[int], Sequence[int]]],
                    pieces: Callable[[Sequence[int]], list[str]],
                    letters: Sequence[str] = ALL_LETTERS) -> tuple[dict[str, Verbalizer], dict[str, str]]:
    """Each letter's single token after the scoring prompt, and why the others are refused.

    Returns ``(resolved, refused)``: letter → :class:`Verbalizer`, and letter → how its continuation splits.
    A backend resolves every letter at load and refuses an item only when it needs a refused letter
    (:func:`require_letters`), so a tokenizer without a single-token "Z" still scores four-option items.
    """
    resolved: dict[str, Verbalizer] = {}
    refused: dict[str, str] = {}
    for letter in letters:
        text = answer_continuation(letter, after_text=after_text)
        prompt_ids, full_ids = (list(ids) for ids in tokenize(text))
        tail = full_ids[len(prompt_ids):]
        if full_ids[:len(prompt_ids)] != prompt_ids:
            refused[letter] = f"{text!r} re-tokenizes the prompt's end"
        elif len(tail) != 1:
            refused[letter] = f"{text!r} -> {tail} {pieces(tail)}"
        else:
            resolved[letter] = Verbalizer(LETTER_INTERFACE, letter, text, int(tail[0]), pieces(tail)[0])
    return resolved, refused


def require_letters(model: str, refused: dict[str, str], k: int) -> None:
    """Refuse (one line naming model and letter) when one of the first ``k`` letters is not one token."""
    bad = [letter for letter in option_letters(k) if letter in refused]
    if bad:
        raise VerbalizerError(f"model {model}: option letter {bad[0]} is not one token after the scoring prompt "
                              f"({refused[bad[0]]}); --interface letter needs every letter of a {k}-option "
                              "item to be one token", field="interface")


def letter_ids(resolved: dict[str, Verbalizer]) -> tuple[int, ...]:
    """The token ids of the resolved letters A, B, ... up to the first refused one."""
    out = []
    for letter in ALL_LETTERS:
        if letter not in resolved:
            break
        out.append(resolved[letter].token_id)
    return tuple(out)


def settle_letters(model: str, found: Sequence[tuple[dict[str, Verbalizer], dict[str, str]]]
                   ) -> tuple[dict[str, str], tuple[int, ...], tuple[Verbalizer, ...]]:
    """``(refused letters, letter ids, their verbalizers)`` from the letters resolved without and with the image
    (:func:`resolve_letters` on each prompt), which must agree; a refused letter among the probe's options is
    refused here (:func:`require_letters`)."""
    if found[0][0] != found[1][0]:
        raise VerbalizerError(f"model {model}: the option letters resolve to different tokens with and without "
                              "the image", field="interface")
    resolved, refused = found[0]
    require_letters(model, refused, len(PROBE_OPTIONS))
    ids = letter_ids(resolved)
    return refused, ids, tuple(resolved[letter] for letter in ALL_LETTERS[:len(ids)])


def max_options(items: Sequence[Any]) -> int:
    """The largest option count among ``items`` (0 when none is multiple choice)."""
    return max((len(getattr(item, "options", None) or ()) for item in items), default=0)
