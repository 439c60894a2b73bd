"""The ``vllm_server`` fixture serves the tiny model on loopback with the offline engine's numbers: a text-only
yes/no prompt sent to ``/v1/completions`` with ``logprob_token_ids`` gives the ``vllm:`` backend's margin
(the ``openai:`` backend's tests, tests/vllm/test_openai_server.py, build on this fixture)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from vlaudit.backends.base import YesNoRequest

MARGIN_TOL = 1e-5


@pytest.mark.slow
def test_the_server_gives_the_offline_engines_margin(vllm_server, vllm_backend) -> None:
    base_url, model = vllm_server
    assert base_url.startswith("http://127.0.0.1:")
    backend = vllm_backend("qwen2-vl")
    request = YesNoRequest("t", "Is the cat left of the dog?", None)
    yes_id, no_id = backend.verbalizer_ids["yesno"]
    body = {"model": model, "prompt": backend.prompt(request.question, "yesno", False), "max_tokens": 1,
            "temperature": 0, "logprobs": 2, "logprob_token_ids": [yes_id, no_id],
            "return_tokens_as_token_ids": True}
    sent = urllib.request.Request(f"{base_url}/completions", data=json.dumps(body).encode(),
                                  headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(sent, timeout=300) as response:  # noqa: S310 (loopback)
        top = json.load(response)["choices"][0]["logprobs"]["top_logprobs"][0]
    served = top[f"token_id:{yes_id}"] - top[f"token_id:{no_id}"]  # m = NLL(no) - NLL(yes)
    assert abs(served - backend.score([request])[0].margin) <= MARGIN_TOL
