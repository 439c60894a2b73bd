"""The HTTP side of ``openai:`` — one pool of OpenAI-compatible servers of the same model, reached with retries.

:class:`EndpointPool` holds one ``httpx.Client`` per endpoint (the URL of the spec and each ``--replica``;
thread-safe, connections kept alive) and sends each request to the next endpoint in turn (round-robin:
data-parallel over replicas). A request that fails in a way that may pass — a refused or dropped connection,
a time-out, HTTP 429 or 5xx, a success (2xx) whose body is not a JSON object (a proxy's error page, a body
cut short) — is sent again, to the next endpoint, after an exponential back-off with jitter
(``backoff × 2^attempt``, between half and all of it; HTTP 429 waits at least its ``Retry-After``), up to
``max_retries`` times. A ``Retry-After`` holds its endpoint: no request of this run is sent to that server
before that time has passed (a rate-limited server asked the client to wait, not one request), whether or not
the request that heard it has tries left. Any other refusal (400, 401, 404, ...) is final and raised at once as one line: an
unreachable server, a model the server does not serve, a refused key, or the server's own message.

The API key is read from the environment variable the user names and sent as a Bearer token; every message
this module raises is passed through :meth:`EndpointPool.redact` first, so the key appears in no error, log or
manifest. httpx is the optional extra ``vlaudit[openai]``; it is imported when a pool is made.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from vlaudit.errors import EXIT_INCOMPLETE, InputError, MissingDependencyError, VlauditError

if TYPE_CHECKING:
    import httpx

#: HTTP statuses worth another try: rate limited, or the server (or a proxy before it) failed this time
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: the longest Retry-After honoured, in seconds (a longer one is a server asking to be left alone: fail)
MAX_RETRY_AFTER = 600.0


class EndpointError(VlauditError):
    """A server that cannot serve the run: unreachable, not serving the model, refusing the key, or without
    log-probs. Raised before any record is scored (nothing to resume)."""


class EndpointRunError(EndpointError):
    """A request that still failed after its retries, mid-run: the finished chunks are cached, the same
    command resumes."""

    exit_code = EXIT_INCOMPLETE


def import_httpx() -> Any:
    """httpx, or a one-line error saying how to install it."""
    try:
        import httpx  # optional extra [openai]: a clear error without it
    except ImportError as exc:
        raise MissingDependencyError("the openai: backend needs httpx: `pip install 'vlaudit[openai]'`") from exc
    return httpx


def check_base_url(url: str, *, field: str = "model") -> str:
    """``url`` without its trailing slash, refused (one line) unless it is http(s)://HOST[:PORT][/PATH] without
    credentials, query or fragment — a key in a URL would be written to the manifest with the spec."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{url!r} is not an http(s) base URL such as http://127.0.0.1:8000/v1", field=field)
    if parts.username or parts.password or parts.query:
        raise InputError(f"{parts.scheme}://{parts.hostname}...: credentials or a query in the URL would be "
                         "recorded with the spec; name the key's environment variable with --api-key-env",
                         field=field)
    return url.rstrip("/")


def server_root(base_url: str) -> str:
    """The server's root for vLLM's non-OpenAI routes (``/tokenize``): the base URL without a final ``/v1``."""
    return base_url[:-3] if base_url.endswith("/v1") else base_url


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (a number or an HTTP date), None without one."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value.strip() else None
        return None if parsed is None else max(0.0, parsed.timestamp() - time.time())


def server_message(response: httpx.Response) -> str:
    """The server's own reason for a refusal, on one line: OpenAI's ``error.message``, vLLM's ``message``,
    FastAPI's ``detail``, or the body's start."""
    try:
        body = response.json()
    except ValueError:
        body = None
    text: object = None
    if isinstance(body, dict):
        error = body.get("error")
        text = error.get("message") if isinstance(error, dict) else error or body.get("message") or body.get("detail")
    if not text:
        text = response.text
    return " ".join(str(text).split())[:300]


def json_problem(response: httpx.Response) -> str | None:
    """Why a successful response's body is not the JSON object every route answers (None when it is)."""
    try:
        body = response.json()
    except ValueError as exc:  # json's JSONDecodeError, or a body that is not UTF-8
        start = " ".join(response.text[:60].split())
        return f"a body that is not JSON ({type(exc).__name__}: {exc}; it starts {start!r})"
    return None if isinstance(body, dict) else f"a JSON {type(body).__name__} where an object was expected"


class EndpointPool:
    """The endpoints of one served model, reached round-robin with retries (see the module docstring).

    ``sleep`` is the wait between tries and ``clock`` the monotonic time a ``Retry-After`` is counted from
    (tests pass their own to keep time); ``sent`` counts the requests each endpoint answered or failed, in the
    order of ``urls``."""

    def __init__(self, urls: Sequence[str], *, api_key: str | None, key_name: str | None, timeout: float,
                 max_retries: int, backoff: float, concurrency: int,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
        httpx = import_httpx()
        self.urls = [check_base_url(url) for url in urls]
        self._key = api_key
        self.key_name = key_name
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.sleep = sleep
        self.clock = clock
        # per endpoint, the clock's time before which no request is sent to it (the server's Retry-After)
        self._not_before = [0.0] * len(self.urls)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self.clients = [httpx.Client(timeout=timeout, limits=limits, headers=headers) for _ in self.urls]
        self._timeout_error = httpx.TimeoutException
        self._transport_error = httpx.TransportError
        self._lock = threading.Lock()
        self._next = 0
        self.sent = [0] * len(self.urls)
        # jitter only spreads the retries of many clients apart; it never reaches a result, so it is seeded
        # from the operating system on purpose (a fixed seed would make every client retry in step)
        self._jitter = random.Random()

    def close(self) -> None:
        for client in self.clients:
            client.close()

    def redact(self, text: str) -> str:
        """``text`` with the API key, should a server have echoed it, replaced by ``***``."""
        return text.replace(self._key, "***") if self._key else text

    def _turn(self) -> int:
        with self._lock:
            index = self._next
            self._next = (self._next + 1) % len(self.urls)
            self.sent[index] += 1
            return index

    def _pause(self, attempt: int, asked: float | None, index: int) -> None:
        """Before try ``attempt`` (0: the first) on endpoint ``index``: one wait, for the back-off of a retry,
        the ``Retry-After`` the last try heard (``asked``) or the endpoint's hold, whichever ends last."""
        delay = self.backoff * (2 ** (attempt - 1)) * (0.5 + 0.5 * self._jitter.random()) if attempt else 0.0
        with self._lock:
            held = self._not_before[index] - self.clock()
        if attempt or held > 0:
            self.sleep(max(delay, held, asked or 0.0))

    def _hold(self, index: int, asked: float) -> None:
        """A server's ``Retry-After``: hold every request to endpoint ``index`` until ``asked`` seconds from now."""
        with self._lock:
            self._not_before[index] = max(self._not_before[index], self.clock() + asked)

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None, *, what: str,
                endpoint: int | None = None, root: bool = False) -> httpx.Response:
        """Send one request (to ``endpoint``, or the next in turn and the next again on each retry) and return
        a successful response or one of the final refusals the caller interprets (4xx other than 408/429).

        ``path`` is joined to the base URL, or to the server's root with ``root`` (vLLM's ``/tokenize``);
        after the last retry an :class:`EndpointRunError` says what failed where, and why."""
        reason = ""
        url = ""
        asked: float | None = None
        for attempt in range(self.max_retries + 1):
            index = endpoint if endpoint is not None else self._turn()
            url = (server_root(self.urls[index]) if root else self.urls[index]) + path
            self._pause(attempt, asked, index)
            asked = None
            try:
                response = self.clients[index].request(method, url, json=body)
            except self._timeout_error:
                reason = f"no answer within {self.timeout:g} s (--timeout)"
            except self._transport_error as exc:
                reason = f"connection failed ({type(exc).__name__}: {' '.join(str(exc).split()) or 'dropped'})"
            else:
                if response.status_code < 300:
                    problem = json_problem(response)
                    if problem is None:
                        return response
                    reason = f"HTTP {response.status_code} with {problem}"
                elif response.status_code not in RETRY_STATUSES:
                    return response
                else:
                    asked = retry_after(response.headers)
                    reason = f"HTTP {response.status_code}: {server_message(response)}"
                    if asked is not None and asked > MAX_RETRY_AFTER:
                        reason += f" (Retry-After {asked:g} s, past the {MAX_RETRY_AFTER:g} s vlaudit waits)"
                        break
                    if asked is not None:
                        self._hold(index, asked)
        tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
        raise EndpointRunError(self.redact(f"{what} at {url} failed after {tries}: {reason}"))

    def refusal(self, response: httpx.Response, what: str) -> EndpointError:
        """One line for a final refusal: the key (401/403), a model not served or a route the server lacks
        (404), or the server's own message."""
        message = server_message(response)
        status = response.status_code
        if status in (401, 403):
            key = f"the key in ${self.key_name}" if self.key_name else "no key (give --api-key-env)"
            text = f"{what}: the server refused the request (HTTP {status}: {message}); it was sent {key}"
        else:
            text = f"{what} at {response.request.url}: HTTP {status}: {message}"
        return EndpointError(self.redact(text))

    def post_json(self, path: str, body: Mapping[str, Any], *, what: str, endpoint: int | None = None,
                  root: bool = False) -> Any:
        """``request("POST", ...)``'s JSON body; a final refusal raises :meth:`refusal`'s error."""
        response = self.request("POST", path, body, what=what, endpoint=endpoint, root=root)
        if response.status_code >= 400:
            raise self.refusal(response, what)
        return response.json()
