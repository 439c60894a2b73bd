"""What the yes/no backends of multimodal LLMs share: the question text, the interface check, the results read
from one log-softmax row, and the model config (VCA §9, §11).

:mod:`vlaudit.backends.hf.mllm` (transformers prompts) and :mod:`vlaudit.backends.mistral.mllm`
(mistral-common prompts) both build on these, so neither imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import transformers

from vlaudit.backends.base import YesNoRequest, YesNoResult
from vlaudit.backends.prompt.letters import LETTER_INTERFACE
from vlaudit.errors import InputError
from vlaudit.hashing import sha256_text


def check_interfaces(requests: Sequence[YesNoRequest], verbalizer_ids: dict[str, Any],
                     letter_ids: Sequence[int] = ()) -> None:
    """Every request's interface had its verbalizers resolved at load (a later one would read wrong ids)."""
    for request in requests:
        if request.interface == LETTER_INTERFACE:
            if not 2 <= request.n_options <= len(letter_ids):
                raise InputError(f"a letter request needs 2 to {len(letter_ids)} options (the letters resolved at "
                                 f"load), got {request.n_options}", record=request.key, field="options")
        elif request.interface not in verbalizer_ids:
            raise InputError(f"interface {request.interface!r} was not validated at load "
                             f"(loaded: {', '.join(verbalizer_ids)})", record=request.key)


def yes_no_results(requests: Sequence[YesNoRequest], prompts: Sequence[str], logprobs: Any,
                   n_tokens: Sequence[int], verbalizer_ids: dict[str, tuple[int, int]],
                   letter_ids: Sequence[int] = ()) -> list[YesNoResult]:
    """Both verbalizer NLLs from each row's last-position log-softmax; margin m = NLL(no) − NLL(yes) (VCA §3).

    A letter request reads log p of its first K option letters from the same row instead (the yes/no fields
    are then NaN)."""
    out = []
    for request, prompt, row, n in zip(requests, prompts, logprobs, n_tokens, strict=True):
        if request.interface == LETTER_INTERFACE:
            ids = tuple(int(i) for i in letter_ids[:request.n_options])
            nan = float("nan")
            out.append(YesNoResult(key=request.key, nll_yes=nan, nll_no=nan, margin=nan, yes_token_id=-1,
                                   no_token_id=-1, prompt=prompt, prompt_hash=sha256_text(prompt),
                                   n_prompt_tokens=int(n), logp_options=tuple(float(row[i]) for i in ids),
                                   option_token_ids=ids))
            continue
        yes_id, no_id = verbalizer_ids[request.interface]
        nll_yes = -float(row[yes_id])
        nll_no = -float(row[no_id])
        out.append(YesNoResult(key=request.key, nll_yes=nll_yes, nll_no=nll_no, margin=nll_no - nll_yes,
                               yes_token_id=yes_id, no_token_id=no_id, prompt=prompt,
                               prompt_hash=sha256_text(prompt), n_prompt_tokens=int(n)))
    return out


def load_config(name: str, kwargs: dict[str, Any]) -> Any:
    """The model's config alone (no weights)."""
    try:
        return transformers.AutoConfig.from_pretrained(name, **kwargs)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot load hf:{name}: {exc}", field="model") from exc
