"""``openai:URL#MODEL`` against a small real HTTP server of the tests' own (tests/endpoint_server.py, loopback).

What a user would notice: exact margins where the server offers vLLM's ``logprob_token_ids``; censored rows
counted, flagged and refused by the report where it offers only ``top_logprobs``; retries through dropped
connections, 5xx and 429; time-outs; the API key read from the named variable and written nowhere; a kill -9
mid-run that resumes without losing or duplicating a record; replicas all used; one-line errors.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from endpoint_server import EndpointServer
from PIL import Image

from vlaudit.backends.base import YesNoRequest
from vlaudit.backends.conformance import check_backend
from vlaudit.backends.openai.pool import EndpointRunError
from vlaudit.backends.options import EndpointOptions
from vlaudit.backends.registry import ModelRef, load_backend

REPO = Path(__file__).resolve().parents[1]
SECRET = "sk-test-0123456789abcdef"


@pytest.fixture
def server():
    """``server(**settings)``: a running EndpointServer, shut down after the test."""
    running: list[EndpointServer] = []

    def start(**settings) -> EndpointServer:
        running.append(EndpointServer(**settings))
        return running[-1]

    yield start
    for one in running:
        one.close()


def _image(seed: int = 0) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, size=(12, 16, 3), dtype=np.uint8))


def _load(srv: EndpointServer, interfaces=("yesno",), model: str = "tiny-qwen", **options):
    return load_backend(ModelRef(f"openai:{srv.url}#{model}", EndpointOptions(**options)), interfaces=interfaces)


def _expected(srv: EndpointServer, body: dict) -> dict[str, float]:
    return srv.planted(body["messages"])


def _body(srv: EndpointServer, text: str) -> dict:
    """The one request the server received whose user text is ``text``."""
    (body,) = [b for b in srv.requests if b["messages"][-2]["content"][-1]["text"] == text]
    return body


def test_margins_are_exact_where_the_server_offers_logprob_token_ids(server) -> None:
    srv = server()
    backend = _load(srv, interfaces=("yesno", "truefalse", "letter"))
    assert backend.describe()["logprobs"] == "logprob_token_ids"
    assert backend.verbalizer_ids == {"yesno": (101, 102), "truefalse": (103, 104)}  # " yes", " no", ...
    image = _image()
    requests = [YesNoRequest("a", "Is the cat left of the dog?", image, "yesno"),
                YesNoRequest("b", "Is the cat left of the dog?", None, "truefalse"),
                YesNoRequest("c", "Which?\nA. cat\nB. dog\nC. car", image, "letter", n_options=3)]
    srv.requests.clear()
    results = backend.score(requests)
    by_text = {r.key: _body(srv, backend.messages(r.question, r.interface, None)[1]["content"][-1]["text"])
               for r in requests}
    for result, (yes, no) in zip(results[:2], [(" yes", " no"), (" true", " false")], strict=True):
        planted = _expected(srv, by_text[result.key])
        assert result.margin == planted[yes] - planted[no] and result.censored == ()
        assert result.n_prompt_tokens > 0
    planted = _expected(srv, by_text["c"])
    assert results[2].logp_options == (planted[" A"], planted[" B"], planted[" C"])
    assert results[2].option_token_ids == (201, 202, 203)
    # the request shape: system + user (PNG data URL, then the text) + assistant "Answer:" continued, one token
    body = by_text["a"]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant"]
    assert body["messages"][0]["content"] == "You are a helpful assistant."  # a Qwen model, as hf: sends
    assert body["messages"][2]["content"] == "Answer:"
    assert {k: body[k] for k in ("max_tokens", "temperature", "logprobs", "continue_final_message",
                                 "add_generation_prompt", "logprob_token_ids")} == {
        "max_tokens": 1, "temperature": 0, "logprobs": True, "continue_final_message": True,
        "add_generation_prompt": False, "logprob_token_ids": [101, 102]}
    url = body["messages"][1]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(url.partition(",")[2])))
    assert np.array_equal(np.asarray(sent), np.asarray(image))  # lossless: the server gets these pixels
    assert "image_url" not in json.dumps(by_text["b"]["messages"])  # text-only: no image, no placeholder
    assert check_backend(backend, [image], questions=["Is it red?", "Is it blue?"],
                         interfaces=["yesno", "truefalse"])[-1] == "batch_order"


def test_the_prompt_wording_is_the_hf_backends(server) -> None:
    from vlaudit.backends.prompt.verbalizers import QUESTION_TEMPLATES
    from vlaudit.backends.prompt.wording import GENERATION_PREFIX, user_text

    backend = _load(server(models=("Org/Some-Model",)), model="Org/Some-Model", system="qwen-neutral")
    messages = backend.messages("Is it?", "yesno", None)
    assert messages[0]["content"].startswith("Answer the user's question with exactly yes or no")
    assert messages[1]["content"] == [{"type": "text", "text": user_text("Is it?", "yesno", QUESTION_TEMPLATES)}]
    assert messages[2] == {"role": "assistant", "content": GENERATION_PREFIX}  # hf_mllm's, imported from there
    assert [m["role"] for m in _load(server(models=("Org/M",)), model="Org/M").messages("Q", "yesno", None)] == \
        ["user", "assistant"]  # not a Qwen model: no system turn, as hf: does


def _bench(root: Path, n_images: int = 3, questions: int = 2) -> Path:
    (root / "images").mkdir(parents=True)
    rows = []
    for i in range(n_images):
        _image(i).save(root / "images" / f"img{i}.png")
        rows += [{"item_id": f"i{i}_{j}", "image": f"img{i}.png", "question": f"Is the cat left {i}{j}?",
                  "label": "yes" if j == 0 else "no", "dataset": "toy", "split": "test"} for j in range(questions)]
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _score_args(url: str, bench: Path, out: Path, *more: str) -> list[str]:
    return ["vca", "score", "--model", f"{url}#tiny-qwen" if url.startswith("openai:") else f"openai:{url}#tiny-qwen",
            "--benchmark", str(bench / "items.jsonl"), "--images", str(bench / "images"), "--out", str(out),
            "--backoff", "0", *more]


@pytest.mark.slow  # ~15 s on a shared machine: vca score and vca report through the CLI, first imports included
def test_vca_score_end_to_end_with_top_logprobs_counts_and_flags_censored_rows(server, cli, one_error_line,
                                                                                 tmp_path) -> None:
    srv = server(token_ids=False)  # an OpenAI-compatible server without logprob_token_ids
    bench = _bench(tmp_path / "bench")
    out = tmp_path / "run"
    code, stdout, stderr = cli(*_score_args(srv.url, bench, out, "--top-logprobs", "20"))
    assert code == 0, stderr
    rows = pq.read_table(out / "margins.parquet").to_pylist()
    assert len(rows) == 18  # 6 items × original, text, blank
    n_censored = 0
    for body in srv.requests[2:]:  # after the load's two probes (token ids ignored, then top k), one a row
        planted = srv.planted(body["messages"])
        top = sorted(planted.values(), reverse=True)[:20]
        n_censored += planted[" yes"] < top[-1] or planted[" no"] < top[-1]
    flagged = [r for r in rows if r["censored"] is not None]
    assert 0 < len(flagged) == n_censored < len(rows)  # 20 of 54 candidates: some rows hold both words
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_censored"] == n_censored and sum(summary["censored_by_context"].values()) == n_censored
    assert f"censored: {n_censored} of 18 rows" in " ".join(stdout.split())
    for row in flagged:  # the censored word's NLL holds the bound: minus the k-th top log-prob
        assert set(row["censored"].split(",")) <= {"yes", "no"}
        assert row["margin"] == row["nll_no"] - row["nll_yes"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["backend"]["logprobs"] == "top_logprobs" and manifest["backend"]["top_logprobs"] == 20
    line = one_error_line(*cli("vca", "report", out / "margins.parquet", "--out", tmp_path / "report"))
    assert f"{n_censored} of 18 rows hold a censored margin" in line


def test_without_tokenize_answer_words_are_matched_by_their_text(server) -> None:
    srv = server(tokenize=False, token_ids=False)
    backend = _load(srv, top_logprobs=20)
    assert backend.describe()["answers_matched_by"] == "token text" and backend.verbalizer_ids["yesno"] == (-1, -1)
    exact = [r for r in backend.score([YesNoRequest(f"k{i}", f"Is it {i}?", _image(i), "yesno")
                                       for i in range(12)]) if not r.censored]
    assert exact  # 20 of the 54 candidates: some rows hold both words
    for result in exact:
        planted = _expected(srv, _body(srv, json.loads(result.prompt)[-2]["content"][-1]["text"]))
        assert result.margin == planted[" yes"] - planted[" no"]


def _sleeps(backend) -> list[float]:
    waited: list[float] = []
    backend.pool.sleep = waited.append
    return waited


def test_dropped_connections_5xx_and_429_are_retried(server) -> None:
    srv = server()
    backend = _load(srv, max_retries=4, backoff=0.01)
    waited = _sleeps(backend)
    reference = backend.score([YesNoRequest("a", "Is it?", _image(), "yesno")])
    srv.faults.extend(["drop", 500, 503, 429])
    again = backend.score([YesNoRequest("a", "Is it?", _image(), "yesno")])
    assert again == reference and len(waited) == 4
    assert waited[-1] >= 0.05  # the 429's Retry-After is honoured
    assert all(0.005 <= w for w in waited[:3])  # exponential back-off with jitter: half to all of 0.01 × 2^n
    srv.faults.extend([500] * 3)
    with pytest.raises(EndpointRunError, match=r"failed after 3 attempts: HTTP 500: planted HTTP 500"):
        backend.pool.max_retries = 2
        backend.score([YesNoRequest("b", "Is it?", None, "yesno")])


def test_a_request_past_its_timeout_is_retried_then_reported(server) -> None:
    srv = server()
    backend = _load(srv, timeout=0.2, max_retries=1, backoff=0.0)
    srv.faults.append(("slow", 0.6))
    assert backend.score([YesNoRequest("a", "Is it?", None, "yesno")])[0].censored == ()  # the retry answered
    srv.faults.extend([("slow", 0.6), ("slow", 0.6)])
    with pytest.raises(EndpointRunError, match=r"no answer within 0\.2 s \(--timeout\)"):
        backend.score([YesNoRequest("b", "Is it?", None, "yesno")])


def test_two_endpoints_are_both_used_and_agree(server, tmp_path, cli) -> None:
    first, second = server(), server()
    bench = _bench(tmp_path / "bench")
    code, _, stderr = cli(*_score_args(first.url, bench, tmp_path / "two", "--replica", second.url,
                                       "--concurrency", "4"))
    assert code == 0, stderr
    assert first.n_chat > 3 and second.n_chat > 3
    code, _, stderr = cli(*_score_args(first.url, bench, tmp_path / "one"))
    assert code == 0, stderr
    assert (tmp_path / "two" / "margins.parquet").read_bytes() == (tmp_path / "one" / "margins.parquet").read_bytes()


def test_the_api_key_is_read_from_the_named_variable_and_written_nowhere(server, cli, one_error_line, tmp_path,
                                                                          monkeypatch) -> None:
    srv = server(api_key=SECRET)
    bench = _bench(tmp_path / "bench", n_images=1)
    out = tmp_path / "run"
    monkeypatch.setenv("VLAUDIT_TEST_KEY", SECRET)
    code, stdout, stderr = cli(*_score_args(srv.url, bench, out, "--api-key-env", "VLAUDIT_TEST_KEY"))
    assert code == 0, stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["arguments"]["api_key_env"] == "VLAUDIT_TEST_KEY"
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written and not [p for p in written if SECRET.encode() in p.read_bytes()]
    assert SECRET not in stdout + stderr
    # a wrong key: the server echoes it in its refusal; the one-line error names the variable, not the key
    monkeypatch.setenv("VLAUDIT_WRONG_KEY", "sk-wrong-key-424242")
    line = one_error_line(*cli(*_score_args(srv.url, bench, tmp_path / "wrong", "--api-key-env",
                                            "VLAUDIT_WRONG_KEY")))
    assert "HTTP 401" in line and "$VLAUDIT_WRONG_KEY" in line and "sk-wrong-key-424242" not in line
    monkeypatch.delenv("VLAUDIT_UNSET_KEY", raising=False)
    line = one_error_line(*cli(*_score_args(srv.url, bench, tmp_path / "unset", "--api-key-env",
                                            "VLAUDIT_UNSET_KEY")))
    assert "environment variable VLAUDIT_UNSET_KEY is not set" in line
    assert repr(EndpointOptions(api_key_env="VLAUDIT_TEST_KEY")).count(SECRET) == 0


def test_clear_one_line_errors(server, cli, one_error_line, tmp_path) -> None:
    bench = _bench(tmp_path / "bench", n_images=1)
    # A port bound but not listening refuses connections; holding it keeps a server that another test (on the
    # other xdist worker) starts from taking it, as could happen to a closed server's freed port.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        closed_url = f"http://127.0.0.1:{held.getsockname()[1]}/v1"
        line = one_error_line(*cli(*_score_args(closed_url, bench, tmp_path / "a", "--max-retries", "1")))
    assert f"cannot reach the server at {closed_url}" in line and "connection failed" in line
    line = one_error_line(*cli(*_score_args(server(models=("other",)).url, bench, tmp_path / "b")))
    assert "model 'tiny-qwen' is not served at" in line and "(it serves: other)" in line
    line = one_error_line(*cli(*_score_args(server(logprobs=False).url, bench, tmp_path / "c")))
    assert "returned no log-probs for logprobs=true" in line
    line = one_error_line(*cli(*_score_args(server(token_ids=False).url, bench, tmp_path / "d",
                                            "--logprob-token-ids", "on")))
    assert "does not return logprob_token_ids" in line
    line = one_error_line(*cli(*_score_args(server().url, bench, tmp_path / "e", "--dtype", "bf16")))
    assert "openai: models do not take --dtype" in line
    line = one_error_line(*cli("vca", "score", "--model", "openai:http://127.0.0.1:1/v1", "--benchmark",
                               bench / "items.jsonl", "--images", bench / "images", "--out", tmp_path / "f"))
    assert "names no model; write openai:URL#MODEL" in line
    line = one_error_line(*cli(*_score_args("http://user:pw@127.0.0.1:1/v1", bench, tmp_path / "g")))
    assert "credentials or a query in the URL" in line and "pw" not in line


def test_a_rerun_may_change_how_requests_are_sent_not_what_they_read(server, cli, one_error_line, tmp_path) -> None:
    srv = server()
    bench = _bench(tmp_path / "bench", n_images=1)
    out = tmp_path / "run"
    assert cli(*_score_args(srv.url, bench, out))[0] == 0
    before = srv.n_chat
    code, _, stderr = cli(*_score_args(srv.url, bench, out, "--concurrency", "2", "--timeout", "9",
                                       "--max-retries", "1"))
    assert code == 0, stderr
    assert srv.n_chat == before + 1  # the load's probe only: every record came from the cache
    line = one_error_line(*cli(*_score_args(srv.url, bench, out, "--top-logprobs", "5")))
    assert "top_logprobs" in line


def test_every_endpoint_option_has_its_vca_score_flag(cli) -> None:
    from vlaudit.commands._introspect import iter_commands, root_command

    command = next(c for path, c in iter_commands(root_command()) if tuple(path[1:]) == ("vca", "score"))
    params = {p.name: p for p in command.params}
    for f in dataclasses.fields(EndpointOptions):
        param = params[f.name]
        assert f.metadata["flag"] in param.opts, f.name
        assert param.help.split("  [default:")[0] == f.metadata["help"], f.name
        assert tuple(param.default or ()) == f.default if f.name == "replicas" else param.default == f.default
        if "min" in f.metadata:
            assert param.min == f.metadata["min"], f.name


@pytest.mark.slow  # ~10 s: a subprocess run killed mid-run, then resumed
def test_kill_9_mid_run_resumes_without_losing_or_duplicating_records(server, tmp_path, cli) -> None:
    srv = server(delay=0.05)
    bench = _bench(tmp_path / "bench", n_images=6, questions=2)
    reference = tmp_path / "reference"
    assert cli(*_score_args(srv.url, bench, reference, "--chunk-size", "4", "--concurrency", "2"))[0] == 0
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "vlaudit", *_score_args(srv.url, bench, run, "--chunk-size", "4",
                                                            "--concurrency", "2")]
    process = subprocess.Popen(command, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if len(list((run / "cache").glob("chunk-*.jsonl"))) >= 2:
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    assert not (run / "summary.json").exists()
    n_partial = len(list((run / "cache").glob("chunk-*.jsonl")))
    srv.wait_idle()  # requests the killed run left in the server's backlog are counted before `before`
    before = srv.n_chat
    again = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_units_from_cache"] >= 2 * 4 and summary["n_units_scored_now"] > 0
    assert summary["n_units_from_cache"] + summary["n_units_scored_now"] == summary["n_unique_units"] == 36
    assert srv.n_chat - before == summary["n_units_scored_now"] + 1  # + the load's probe: nothing scored twice
    assert n_partial < summary["n_chunks"]
    keys = [json.loads(line)["key"] for path in sorted((run / "cache").glob("chunk-*.jsonl"))
            for line in path.read_text().splitlines()[:-1]]  # the last line seals the chunk
    assert len(keys) == len(set(keys)) == 36
    assert (run / "margins.parquet").read_bytes() == (reference / "margins.parquet").read_bytes()
