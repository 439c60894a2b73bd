"""How the ``openai:`` backend reads the answer words' log-probs out of one chat-completions response (the
module docstring of :mod:`vlaudit.backends.openai.endpoint`: exact ids, or the top k with censoring)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vlaudit.backends.openai.pool import EndpointError, EndpointRunError
from vlaudit.backends.prompt.verbalizers import Verbalizer

_TOKEN_ID = re.compile(r"^token_id:(-?\d+)$")


def answer_table(entries: Sequence[Mapping[str, Any]]) -> dict[int | str, float]:
    """Each returned candidate's log-prob by token id (``token_id:N``, vLLM's ``return_tokens_as_token_ids``)
    or by its text (``token``, and ``bytes`` decoded as UTF-8)."""
    table: dict[int | str, float] = {}
    for entry in entries:
        token, logprob = entry.get("token"), entry.get("logprob")
        if not isinstance(token, str) or not isinstance(logprob, (int, float)):
            continue
        match = _TOKEN_ID.match(token)
        keys: list[int | str] = [int(match.group(1))] if match else [token]
        raw = entry.get("bytes")
        if not match and isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
            keys.append(bytes(raw).decode("utf-8", errors="replace"))
        for key in keys:
            table.setdefault(key, float(logprob))
    return table


def read_answers(body: Any, answers: Sequence[Verbalizer], *, by_id: bool, exact: bool, what: str = "a response"
                 ) -> tuple[list[float], list[str], int]:
    """(log p of each answer, the words censored, prompt tokens) from one chat-completions response.

    ``by_id``: match the ids (``token_id:N`` entries), else the continuation texts. ``exact``: the request
    asked for these very tokens (``logprob_token_ids``), so a missing one is an error; otherwise a missing
    one is censored at the smallest returned top log-prob (the k-th). A log-prob that is not a finite number
    (NaN, ±infinity: a model overflowing in its served dtype) is refused, naming ``what``: it would make a NaN
    or infinite margin that no statistic of the run can hold."""
    try:
        first = body["choices"][0]["logprobs"]["content"][0]
    except (KeyError, IndexError, TypeError):
        first = None
    if not isinstance(first, Mapping):
        raise EndpointRunError("the server returned no log-probs for logprobs=true; vlaudit reads the answer "
                               "words from them and cannot score this server")
    top = [e for e in first.get("top_logprobs") or () if isinstance(e, Mapping)]
    table = answer_table([first, *top])
    floor = min((float(e["logprob"]) for e in top if isinstance(e.get("logprob"), (int, float))),
                default=float(first.get("logprob", float("nan"))))
    values: list[float] = []
    censored: list[str] = []
    for answer in answers:
        value = table.get(answer.token_id if by_id else answer.text)
        if value is None:
            if exact:
                raise EndpointRunError(f"the server did not return the log-prob of token {answer.token_id} "
                                       f"({answer.text!r}) that logprob_token_ids asked for")
            censored.append(answer.word)
            value = floor
        if not math.isfinite(value):
            raise EndpointError(f"the server returned the log-prob {value} for {answer.text!r} in {what}; a "
                                "log-prob must be a finite number, and vlaudit scores no NaN or infinite margin "
                                "(is the model served in a dtype it overflows in? check the server's --dtype)")
        values.append(value)
    usage = body.get("usage") if isinstance(body, Mapping) else None
    n_tokens = usage.get("prompt_tokens") if isinstance(usage, Mapping) else None
    return values, censored, int(n_tokens) if isinstance(n_tokens, int) else 0
