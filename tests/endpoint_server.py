"""A small real OpenAI-compatible server for the ``openai:`` backend's tests: stdlib ThreadingHTTPServer on
127.0.0.1 (port 0) speaking the chat-completions shape of vLLM's server, with planted log-probs.

Routes: ``GET /v1/models``, ``POST /v1/chat/completions`` and (vLLM's) ``POST /tokenize`` and ``GET /version``. The "model" is a
table: each request's candidates (the answer words " yes", " no", " true", " false", the letters " A".." Z" and
filler words) get log-probs drawn from a generator seeded by the request's messages (image included), so a
test knows every value the server will send (:meth:`EndpointServer.planted`). A toy tokenizer (words and
punctuation, a leading space kept with its word) serves ``/tokenize`` as vLLM does for chat messages with
``continue_final_message``: the rendered prompt ends at the last message's text.

What the server offers is set per instance: ``token_ids`` (honour ``logprob_token_ids``, else ignore it as
an older server does), ``tokenize``, ``logprobs`` (return any), ``api_key`` (require this Bearer token,
echoing a wrong one in the 401 so a test can check it is redacted), ``delay`` (seconds per chat request) and
``faults``: a queue of what the next chat requests get instead of an answer — ``"drop"`` (the connection is
closed without a response), an HTTP status (500, 503, 429 with ``Retry-After``), ``("slow", seconds)``,
``"badjson"`` (HTTP 200 whose body is cut mid-JSON) or ``("logprob", value)`` (every log-prob of the answer is
``value``, NaN or infinity included: Python's json writes them as ``NaN``/``Infinity``). ``model_faults`` is the
same queue for ``GET /v1/models`` (``"badjson"``). ``throttle=n``: every n-th chat request is refused with HTTP
429 and ``Retry-After: retry_after`` (a rate-limited server), counting only the requests ``spare`` (a
predicate on the request body) does not spare; ``dtype``: the ``dtype`` its model listing reports
(vLLM's does not; another server's might).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import zlib
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

ANSWERS = {" yes": 101, " no": 102, " true": 103, " false": 104,
           **{f" {chr(ord('A') + i)}": 201 + i for i in range(26)}}
FILLERS = {f" w{i}": 301 + i for i in range(24)}
CANDIDATES = {**ANSWERS, **FILLERS}
ID_TO_TOKEN = {v: k for k, v in CANDIDATES.items()}
_WORDS = re.compile(r" ?[A-Za-z0-9]+| ?[^A-Za-z0-9\s]|\s+")
IMAGE_TOKENS = 4
#: what ``GET /version`` answers, as vLLM's does
VERSION = "0.0-test"


def token_id(piece: str) -> int:
    """The toy tokenizer's id of one piece: a candidate's fixed id, any other piece a stable hash."""
    return CANDIDATES.get(piece, 1000 + zlib.crc32(piece.encode("utf-8")) % 90000)


def render(messages: list[dict[str, Any]]) -> tuple[str, int]:
    """The prompt text (the final message left open) and its number of images."""
    parts, images = [], 0
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            images += sum(1 for c in content if c.get("type") == "image_url")
            content = "".join(c.get("text", "") for c in content if c.get("type") == "text")
        parts.append(f"<|{message['role']}|>\n{content}")
    return "\n".join(parts), images


def tokenize(messages: list[dict[str, Any]]) -> tuple[list[int], list[str]]:
    text, images = render(messages)
    pieces = ["<image>"] * images + _WORDS.findall(text)
    return [token_id(p) for p in pieces], pieces


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up before its answer is sent (it timed out, or gave up after an error) is the
    client's business: no traceback on the test process's stderr, which the tests read."""

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)  # type: ignore[arg-type]  # socketserver's own types


class EndpointServer:
    """One running server (see the module docstring); ``url`` is its ``/v1`` base URL."""

    def __init__(self, *, models: tuple[str, ...] = ("tiny-qwen",), token_ids: bool = True, tokenize: bool = True,
                 logprobs: bool = True, api_key: str | None = None, delay: float = 0.0, scale: float = 3.0,
                 throttle: int | None = None, retry_after: str = "0.05", spare: Any = None,
                 dtype: str | None = None) -> None:
        self.models = models
        self.token_ids = token_ids
        self.tokenize = tokenize
        self.logprobs = logprobs
        self.api_key = api_key
        self.delay = delay
        self.scale = scale
        self.throttle = throttle
        self.retry_after = retry_after
        self.spare = spare
        self.n_counted = 0
        self.dtype = dtype
        self.faults: deque[Any] = deque()
        self.model_faults: deque[Any] = deque()
        self.n_throttled = 0
        self.requests: list[dict[str, Any]] = []
        self.n_chat = 0
        self.n_active = 0
        self.last_request = time.monotonic()
        self._lock = threading.Lock()
        self.httpd = _QuietServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def wait_idle(self, quiet: float = 0.5, timeout: float = 30.0) -> None:
        """Return once no request is being handled and none has arrived for ``quiet`` seconds.

        A client killed mid-run leaves requests in the server's socket backlog; they are still
        counted after the kill, so a count read before they land would blame the next run.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self.n_active == 0 and time.monotonic() - self.last_request >= quiet:
                    return
            time.sleep(0.02)
        raise TimeoutError(f"the endpoint server did not go idle within {timeout} s")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def planted(self, messages: list[dict[str, Any]]) -> dict[str, float]:
        """log p of every candidate token after ``messages`` (float64 log-softmax of seeded logits)."""
        seed = int.from_bytes(hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).digest()[:8], "little")
        logits = np.random.default_rng(seed).normal(0.0, self.scale, size=len(CANDIDATES))
        logp = logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))
        return {token: float(value) for token, value in zip(CANDIDATES, logp, strict=True)}

    def answer(self, body: dict[str, Any], logprob: float | None = None) -> dict[str, Any]:
        table = self.planted(body["messages"])
        if logprob is not None:
            table = dict.fromkeys(table, logprob)
        ids, _ = tokenize(body["messages"])
        as_ids = bool(body.get("return_tokens_as_token_ids"))

        def entry(token: str) -> dict[str, Any]:
            text = f"token_id:{CANDIDATES[token]}" if as_ids else token
            return {"token": text, "logprob": table[token], "bytes": list(text.encode("utf-8"))}

        best = max(table, key=lambda t: table[t])
        logprobs = None
        if self.logprobs and body.get("logprobs"):
            wanted = body.get("logprob_token_ids") if self.token_ids else None
            if wanted:
                top = [entry(ID_TO_TOKEN[i]) for i in wanted if i in ID_TO_TOKEN]
            else:
                k = int(body.get("top_logprobs") or 0)
                top = [entry(t) for t in sorted(table, key=lambda t: -table[t])[:k]]
            logprobs = {"content": [{**entry(best), "top_logprobs": top}]}
        return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": best.strip()},
                             "logprobs": logprobs, "finish_reason": "length"}],
                "usage": {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1}}


def _handler(server: EndpointServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms delayed-ACK stall

        def log_message(self, *args: Any) -> None:  # quiet: pytest shows failures, not access logs
            return

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _send_bad_json(self) -> None:
            data = b'{"object": "list", "data": [{"id": '  # a 200 cut mid-body: a proxy's or a crashed worker's
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorised(self) -> bool:
            if server.api_key is None:
                return True
            given = self.headers.get("Authorization", "")
            if given == f"Bearer {server.api_key}":
                return True
            self._send(401, {"error": {"message": f"Incorrect API key provided: {given[7:]}"}})
            return False

        def do_GET(self) -> None:
            if not self._authorised():
                return
            if self.path == "/v1/models":
                with server._lock:
                    fault = server.model_faults.popleft() if server.model_faults else None
                if fault == "badjson":
                    self._send_bad_json()
                    return
                dtype = {"dtype": server.dtype} if server.dtype else {}
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "root": f"/models/{m}",
                                                             "max_model_len": 4096, **dtype} for m in server.models]})
            elif self.path == "/version":  # vLLM's route (the server's root, not /v1)
                self._send(200, {"version": VERSION})
            else:
                self._send(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            with server._lock:
                server.n_active += 1
                server.last_request = time.monotonic()
            try:
                self._post()
            finally:
                with server._lock:
                    server.n_active -= 1
                    server.last_request = time.monotonic()

        def _post(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if not self._authorised():
                return
            if self.path == "/tokenize" and server.tokenize:
                ids, pieces = tokenize(body["messages"])
                self._send(200, {"count": len(ids), "max_model_len": 4096, "tokens": ids,
                                 **({"token_strs": pieces} if body.get("return_token_strs") else {})})
                return
            if self.path != "/v1/chat/completions":
                self._send(404, {"detail": "Not Found"})
                return
            with server._lock:
                server.n_chat += 1
                server.requests.append(body)
                fault = server.faults.popleft() if server.faults else None
                if fault is None and server.throttle and not (server.spare and server.spare(body)):
                    server.n_counted += 1
                    if server.n_counted % server.throttle == 0:
                        fault = "throttled"
                        server.n_throttled += 1
            if fault == "throttled":
                self._send(429, {"error": {"message": "rate limit reached"}}, {"Retry-After": server.retry_after})
                return
            if fault == "badjson":
                self._send_bad_json()
                return
            if fault == "drop":
                self.close_connection = True  # no response at all: the client sees the connection end
                return
            if isinstance(fault, tuple) and fault[0] == "slow":
                time.sleep(fault[1])
            elif isinstance(fault, int):
                headers = {"Retry-After": "0.05"} if fault == 429 else {}
                self._send(fault, {"error": {"message": f"planted HTTP {fault}"}}, headers)
                return
            if server.delay:
                time.sleep(server.delay)
            if body.get("model") not in server.models:
                self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}})
                return
            logprob = fault[1] if isinstance(fault, tuple) and fault[0] == "logprob" else None
            self._send(200, server.answer(body, logprob))

    return Handler
