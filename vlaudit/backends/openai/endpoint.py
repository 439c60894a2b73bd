"""``openai:URL#MODEL`` — yes/no margins of a model behind an OpenAI-compatible chat-completions server (``vllm
serve``, SGLang, a hosted API that returns log-probs), read like the ``hf:`` backend's (VCA §3, §9, §11).

**Request.** One chat completion per query, the messages the HF backend renders in-process
(:mod:`vlaudit.backends.prompt.wording`): the system message (Qwen families by default, as ``hf:``), a user
turn holding the image as a ``data:image/png;base64`` URL (none for the text-only context; an item's several
images as several such parts, in order) and the question text, and an assistant turn ``"Answer:"`` that the server continues (``continue_final_message=true``,
``add_generation_prompt=false``), with ``max_tokens=1``, ``temperature=0`` and ``logprobs=true``. The server
renders them with the model's own chat template, so the scored prompt is the HF backend's. PNG is lossless:
the server decodes the pixels the HF backend is handed.

**Answer words.** When the server tokenizes (vLLM's ``/tokenize``), each answer word's token id is read as
``hf:`` reads it (:func:`vlaudit.backends.prompt.verbalizers.resolve_verbalizers`): the tokens of the prompt ending
"Answer:" must be a prefix of those of "Answer: yes", and exactly one token must follow (" yes", the
leading-space variant, as the server's tokenizer writes it). The request then asks for those ids:

* ``logprob_token_ids`` (vLLM; ``--logprob-token-ids auto`` finds out at load with one probe request): the
  server returns log p of exactly these tokens, so both NLLs — and the margin m = NLL(no) − NLL(yes) — are
  exact, with ``return_tokens_as_token_ids`` so each is matched by id, never by its text.
* otherwise ``top_logprobs=k`` (``--top-logprobs``, up to the server's limit, 20 on OpenAI's API): a word among
  the top k is exact; a word missing from it is **censored** — its log-prob is only bounded above by the k-th
  value, which its field then holds, and the result names it (``censored``; the margins table's ``censored``
  column, the run summary's ``n_censored``; ``vca report`` refuses such a table). A server without
  ``/tokenize`` is matched by the token's text: an entry whose ``token`` (or ``bytes``) is exactly the
  continuation " yes"; other spellings (" Yes", "yes") are other tokens and are not added in.

**The exact serialized prompt** of this backend (:meth:`OpenAIEndpointBackend.prompt`, hashed into the cache keys) is
the request's messages as canonical JSON with the image's URL left out (the image enters every cache key by
its pixels' hash). Concurrency, retries, time-outs and replicas are :mod:`vlaudit.backends.openai.pool`'s.
"""

from __future__ import annotations

import base64
import io
import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

from vlaudit.backends.base import (
    ANSWER_WORDS,
    MAX_IMAGES,
    YesNoBackendBase,
    YesNoRequest,
    YesNoResult,
    with_finished,
)
from vlaudit.backends.openai.answers import read_answers
from vlaudit.backends.openai.pool import (
    EndpointError,
    EndpointPool,
    EndpointRunError,
    check_base_url,
    server_message,
)
from vlaudit.backends.openai.server_report import read_server_report
from vlaudit.backends.options import EndpointOptions, RunOptions
from vlaudit.backends.prompt.letters import (
    ALL_LETTERS,
    LETTER_INTERFACE,
    PROBE_OPTIONS,
    letter_question,
    resolve_letters,
    settle_letters,
)
from vlaudit.backends.prompt.verbalizers import (
    PROBE_QUESTION,
    QUESTION_TEMPLATES,
    Verbalizer,
    answer_continuation,
    check_interface,
    merge_question_templates,
    resolve_verbalizers,
)
from vlaudit.backends.prompt.wording import (
    GENERATION_PREFIX,
    QWEN_SYSTEM,
    resolve_system,
    template_fingerprint,
    user_text,
)
from vlaudit.backends.yesno_common import check_interfaces
from vlaudit.errors import InputError
from vlaudit.hashing import sha256_text
from vlaudit.results.backend_description import BackendDescription

if TYPE_CHECKING:
    from PIL import Image

#: how the answer words' log-probs are read (recorded in ``describe()``, hence in every cache key)
TOKEN_IDS, TOP_LOGPROBS = "logprob_token_ids", "top_logprobs"
_IMAGE_PLACEHOLDER = "<image>"


def split_name(name: str) -> tuple[str, str]:
    """``URL#MODEL`` → (base URL, served model name); one-line error naming what is missing."""
    url, sep, model = name.partition("#")
    if not sep or not model.strip():
        raise InputError(f"openai:{name} names no model; write openai:URL#MODEL, e.g. "
                         "openai:http://127.0.0.1:8000/v1#Qwen/Qwen2-VL-7B-Instruct", field="model")
    return check_base_url(url), model.strip()


def png_data_url(image: Image.Image) -> str:
    """The image as a ``data:image/png;base64,...`` URL (lossless: the server decodes these very pixels)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class OpenAIEndpointBackend(YesNoBackendBase):
    """A served chat model read through its literal answer words (see the module docstring)."""

    tokenizer_kind = "server (/tokenize)"
    #: the chat format takes several image parts in one user turn, in order; whether the served model does is
    #: the server's to say (vLLM: ``--limit-mm-per-prompt``), and a refusal fails the request with its message
    max_images = MAX_IMAGES

    def __init__(self, spec: str, pool: EndpointPool, model: str, *, options: EndpointOptions,
                 interfaces: Sequence[str], question_templates: Mapping[str, str] | None = None) -> None:
        self.spec = spec
        self.pool = pool
        self.model = model
        self.options = options
        self.batch_size = options.concurrency  # requests in flight: the batch the server sees
        self._template_overrides = dict(question_templates or {})
        merge_question_templates(self._template_overrides)
        self.system_override = resolve_system(options.system)
        self.system = self.system_override if self.system_override is not None else (
            QWEN_SYSTEM if "qwen" in model.lower() else None)
        self.interfaces = list(interfaces)
        self.served: dict[str, Any] = {}
        self.server: dict[str, Any] = {"dtype_said": options.served_dtype}  # what the server says of itself
        self.mode = TOP_LOGPROBS
        self.by_id = False
        self._pieces: dict[int, str] = {}
        self.verbalizers: dict[str, tuple[Verbalizer, ...]] = {}
        self.verbalizer_ids: dict[str, tuple[int, int]] = {}
        self.refused_letters: dict[str, str] = {}

    # ------------------------------------------------------------------------------------------ prompts

    @property
    def question_templates(self) -> dict[str, str]:
        return {**QUESTION_TEMPLATES, **self._template_overrides}

    def messages(self, question: str, interface: str, image_urls: Sequence[str] | None = (), *,
                 answer: str = GENERATION_PREFIX) -> list[dict[str, Any]]:
        """system (when any) + user (the image URLs first, in order, then the text) + assistant ``answer`` to
        continue."""
        content: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": url}} for url in image_urls or ()]
        content.append({"type": "text", "text": user_text(question, interface, self.question_templates)})
        turns: list[dict[str, Any]] = [{"role": "system", "content": self.system}] if self.system else []
        return [*turns, {"role": "user", "content": content}, {"role": "assistant", "content": answer}]

    def prompt(self, question: str, interface: str, with_image: int) -> str:
        """The messages sent, as canonical JSON, each image's URL replaced by ``<image>``."""
        messages = self.messages(question, interface, [_IMAGE_PLACEHOLDER] * int(with_image))
        return json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    def describe(self) -> BackendDescription:
        """What changes the margins (manifest, cache keys): the server's model and how answers are read —
        never the replicas, the concurrency or the key's variable; and ``server``, what the server says of
        itself (:mod:`vlaudit.backends.openai.server_report`), recorded but left out of the cache keys."""
        return BackendDescription.of({
            "spec": self.spec, "model": self.model, "served": self.served, "server": self.server,
            "logprobs": self.mode,
            "top_logprobs": self.options.top_logprobs if self.mode == TOP_LOGPROBS else None,
            "answers_matched_by": "token id" if self.by_id else "token text",
            "request": {"continue_final_message": True, "add_generation_prompt": False, "max_tokens": 1,
                        "temperature": 0, "image": "data:image/png;base64"},
            "system": self.system, "template": template_fingerprint(self.question_templates, self.system_override),
            "verbalizers": {name: [v.text for v in found] for name, found in self.verbalizers.items()},
            "verbalizer_ids": {k: list(v) for k, v in self.verbalizer_ids.items()},
            **({"letter_ids": list(self.letter_ids)} if self.letter_ids else {}),
        })

    # ------------------------------------------------------------------------------------------ requests

    def body(self, messages: list[dict[str, Any]], answers: Sequence[Verbalizer]) -> dict[str, Any]:
        """The chat-completions request of one query (see the module docstring)."""
        out: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": 1, "temperature": 0,
                               "logprobs": True, "add_generation_prompt": False, "continue_final_message": True}
        if self.mode == TOKEN_IDS:
            out["logprob_token_ids"] = [a.token_id for a in answers]
        else:
            out["top_logprobs"] = self.options.top_logprobs
        if self.by_id:
            out["return_tokens_as_token_ids"] = True
        return out

    def answers(self, request: YesNoRequest) -> tuple[Verbalizer, ...]:
        if request.interface == LETTER_INTERFACE:
            return self.verbalizers[LETTER_INTERFACE][:request.n_options]
        return self.verbalizers[request.interface]

    def _score_one(self, request: YesNoRequest) -> YesNoResult:
        answers = self.answers(request)
        urls = [png_data_url(image) for image in request.images]
        body = self.pool.post_json("/chat/completions", self.body(self.messages(request.question, request.interface,
                                                                                urls), answers),
                                   what=f"request {request.key[:12]}")
        values, censored, n_tokens = read_answers(body, answers, by_id=self.by_id, exact=self.mode == TOKEN_IDS,
                                                  what=f"request {request.key[:12]}")
        prompt = self.prompt(request.question, request.interface, len(request.images))
        if request.interface == LETTER_INTERFACE:
            nan = float("nan")
            return YesNoResult(key=request.key, nll_yes=nan, nll_no=nan, margin=nan, yes_token_id=-1, no_token_id=-1,
                               prompt=prompt, prompt_hash=sha256_text(prompt), n_prompt_tokens=n_tokens,
                               logp_options=tuple(values), option_token_ids=tuple(a.token_id for a in answers),
                               censored=tuple(censored))
        nll_yes, nll_no = -values[0], -values[1]
        return YesNoResult(key=request.key, nll_yes=nll_yes, nll_no=nll_no, margin=nll_no - nll_yes,
                           yes_token_id=answers[0].token_id, no_token_id=answers[1].token_id, prompt=prompt,
                           prompt_hash=sha256_text(prompt), n_prompt_tokens=n_tokens, censored=tuple(censored))

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        """One request per query, ``batch_size`` (``--concurrency``) in flight at once; results in order. The
        first request that fails after its retries stops the rest (those in flight finish, the others are not
        sent) and is raised carrying the results that finished (:func:`~vlaudit.backends.base.with_finished`):
        the run records them, so a rerun sends only the requests still missing."""
        check_interfaces(requests, self.verbalizer_ids, self.letter_ids)
        if not requests:
            return []
        with ThreadPoolExecutor(max_workers=max(1, self.batch_size), thread_name_prefix="vlaudit-endpoint") as pool:
            futures = [pool.submit(self._score_one, request) for request in requests]
            try:
                done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            except BaseException as exc:  # Ctrl-C while waiting: keep what finished
                pool.shutdown(wait=True, cancel_futures=True)
                with_finished(exc, _finished(futures))
                raise
            failed = next((f for f in futures if f in done and f.exception() is not None), None)
            error = None if failed is None else failed.exception()
            if error is not None:
                pool.shutdown(wait=True, cancel_futures=True)
                finished = _finished(futures)
                if isinstance(error, EndpointRunError):
                    error = EndpointRunError(f"{error}; the {len(finished)} other request(s) that finished are "
                                             "recorded: rerun the same command to send the rest")
                raise with_finished(error, finished)
            return [future.result() for future in futures]

    # ------------------------------------------------------------------------------------------ at load

    def connect(self) -> None:
        """Check every endpoint serves the model, resolve the answer words and find how to read them (one
        probe request); each failure is one line: unreachable, not served, no log-probs, key refused."""
        for index in range(len(self.pool.urls)):
            self._check_served(index)
        tokenize = self._server_tokenizer()
        for interface in self.interfaces:
            if interface == LETTER_INTERFACE:
                self.letter_ids = self._letters(tokenize)
            else:
                self.verbalizers[interface] = self._answer_words(interface, tokenize)
                yes, no = self.verbalizers[interface]
                self.verbalizer_ids[interface] = (yes.token_id, no.token_id)
        self.by_id = tokenize is not None
        wanted = self.options.logprob_token_ids
        if self.by_id and wanted != "off":
            self.mode = TOKEN_IDS
            refusal = self._probe()
            if refusal is not None:
                if wanted == "on":
                    raise EndpointError(f"the server at {self.pool.urls[0]} does not return logprob_token_ids "
                                        f"({refusal}); --logprob-token-ids on needs it (auto falls back to "
                                        "top_logprobs, censoring answer words outside the top k)")
                self.mode = TOP_LOGPROBS
        elif wanted == "on":
            raise EndpointError(f"--logprob-token-ids on needs the answer words' token ids, but the server at "
                                f"{self.pool.urls[0]} has no /tokenize route to read them from")
        if self.mode == TOP_LOGPROBS:
            refusal = self._probe()
            if refusal is not None:
                raise EndpointError(f"the server at {self.pool.urls[0]} cannot score {self.model!r}: {refusal}")

    def _reach(self, call: Callable[[], Any], url: str) -> Any:
        try:
            return call()
        except EndpointRunError as exc:  # at load nothing is cached yet: a plain refusal, not "resume"
            raise EndpointError(f"cannot reach the server at {url}: {exc}") from None

    def _check_served(self, index: int) -> None:
        url = self.pool.urls[index]
        response = self._reach(lambda: self.pool.request("GET", "/models", what="listing models", endpoint=index),
                               url)
        if response.status_code == 404:
            return  # a server without the listing: the probe request says whether it serves the model
        if response.status_code >= 400:
            raise self.pool.refusal(response, f"listing the models of {url}")
        served = [m for m in response.json().get("data") or () if isinstance(m, Mapping)]
        names = [str(m.get("id")) for m in served]
        if self.model not in names:
            raise EndpointError(f"model {self.model!r} is not served at {url} (it serves: "
                                f"{', '.join(names) or 'nothing'})")
        if index == 0:
            entry = served[names.index(self.model)]
            self.served = {k: entry.get(k) for k in ("root", "max_model_len") if entry.get(k) is not None}
            dtype, self.server, warning = read_server_report(self.pool, entry, self.options.served_dtype)
            if dtype is not None:  # a dtype the server reports is part of what the margins are
                self.served["dtype"] = dtype
            if warning is not None:
                warnings.warn(warning, stacklevel=2)

    def _server_tokenizer(self) -> Callable[[list[dict[str, Any]]], list[int]] | None:
        """vLLM's ``/tokenize`` of chat messages (as the chat route renders them), or None without one."""
        def tokenize(messages: list[dict[str, Any]]) -> list[int]:
            body = {"model": self.model, "messages": messages, "add_generation_prompt": False,
                    "continue_final_message": True, "return_token_strs": True}
            response = self._reach(lambda: self.pool.request("POST", "/tokenize", body, what="tokenizing",
                                                             endpoint=0, root=True), self.pool.urls[0])
            if response.status_code >= 400:
                raise self.pool.refusal(response, "tokenizing the probe prompt")
            answer = response.json()
            if not isinstance(answer.get("tokens"), list):
                raise EndpointError(f"tokenizing at {self.pool.urls[0]}: the answer holds no token list")
            tokens = [int(t) for t in answer["tokens"]]
            self._pieces.update(zip(tokens, answer.get("token_strs") or (), strict=False))
            return tokens

        probe = self.messages(PROBE_QUESTION, next(iter(ANSWER_WORDS)))
        response = self._reach(lambda: self.pool.request(
            "POST", "/tokenize", {"model": self.model, "messages": probe, "add_generation_prompt": False,
                                  "continue_final_message": True}, what="tokenizing", endpoint=0, root=True),
            self.pool.urls[0])
        return tokenize if response.status_code < 400 else None

    def _continuations(self, question: str, interface: str,
                       tokenize: Callable[[list[dict[str, Any]]], list[int]]
                       ) -> Callable[[str], tuple[list[int], list[int]]]:
        prompt_ids = tokenize(self.messages(question, interface))
        return lambda continuation: (prompt_ids, tokenize(self.messages(
            question, interface, answer=GENERATION_PREFIX + continuation)))

    def _piece_names(self, ids: Sequence[int]) -> list[str]:
        return [self._pieces.get(int(i), str(i)) for i in ids]

    def _answer_words(self, interface: str, tokenize: Callable[[list[dict[str, Any]]], list[int]] | None
                      ) -> tuple[Verbalizer, ...]:
        if tokenize is None:  # matched by text: the continuation after "Answer:", id unknown (-1)
            return tuple(Verbalizer(interface, word, text, -1, text) for word in check_interface(interface)
                         for text in [answer_continuation(word, after_text=True)])
        return resolve_verbalizers(self.spec, interface, after_text=True, pieces=self._piece_names,
                                   tokenize=self._continuations(PROBE_QUESTION, interface, tokenize))

    def _letters(self, tokenize: Callable[[list[dict[str, Any]]], list[int]] | None) -> tuple[int, ...]:
        if tokenize is None:
            self.verbalizers[LETTER_INTERFACE] = tuple(
                Verbalizer(LETTER_INTERFACE, letter, f" {letter}", -1, f" {letter}") for letter in ALL_LETTERS)
            return (-1,) * len(ALL_LETTERS)
        question = letter_question(PROBE_QUESTION, PROBE_OPTIONS)
        found = resolve_letters(self.spec, after_text=True, pieces=self._piece_names,
                                tokenize=self._continuations(question, LETTER_INTERFACE, tokenize))
        self.refused_letters, ids, self.verbalizers[LETTER_INTERFACE] = settle_letters(self.spec, [found, found])
        return ids

    def _probe(self) -> str | None:
        """Why one text-only request is not read as this run will read it (None when it is)."""
        interface = self.interfaces[0]
        answers = self.answers(YesNoRequest("probe", PROBE_QUESTION, None, interface, n_options=2))
        question = letter_question(PROBE_QUESTION, PROBE_OPTIONS) if interface == LETTER_INTERFACE else PROBE_QUESTION
        body = self.body(self.messages(question, interface), answers)
        response = self._reach(lambda: self.pool.request("POST", "/chat/completions", body, what="the probe request",
                                                         endpoint=0), self.pool.urls[0])
        if response.status_code in (401, 403):
            raise self.pool.refusal(response, "the probe request")
        if response.status_code == 404:
            raise EndpointError(f"model {self.model!r} is not served at {self.pool.urls[0]} "
                                f"({server_message(response)})")
        if response.status_code >= 400:
            return self.pool.redact(f"HTTP {response.status_code}: {server_message(response)}")
        try:
            read_answers(response.json(), answers, by_id=self.by_id, exact=self.mode == TOKEN_IDS,
                         what="the probe request")
        except EndpointRunError as exc:
            return str(exc)
        return None


def _finished(futures: Sequence[Future[YesNoResult]]) -> list[YesNoResult]:
    """The results of the futures that finished without an error, in order."""
    return [f.result() for f in futures if f.done() and not f.cancelled() and f.exception() is None]


def max_images_of(name: str, options: EndpointOptions = EndpointOptions()) -> int:
    """How many images one query may hold, before connecting: as many as the chat format takes
    (:attr:`OpenAIEndpointBackend.max_images`); the served model's own limit is the server's."""
    return OpenAIEndpointBackend.max_images


def load_backend(name: str, options: EndpointOptions = EndpointOptions(), run: RunOptions = RunOptions(), *,
                 interfaces: Sequence[str] = tuple(ANSWER_WORDS), question_templates: Mapping[str, str] | None = None,
                 weights: bool = True) -> OpenAIEndpointBackend:
    """Connect to ``openai:URL#MODEL`` (``weights`` has no meaning here: the server holds them); ``run`` is
    unused (the server places and batches the forwards; ``options.concurrency`` is the batch it sees)."""
    url, model = split_name(name)
    key = None
    if options.api_key_env:
        key = os.environ.get(options.api_key_env) or None
        if key is None:
            raise InputError(f"environment variable {options.api_key_env} is not set or empty",
                             field="--api-key-env")
    pool = EndpointPool([url, *options.replicas], api_key=key, key_name=options.api_key_env,
                        timeout=options.timeout, max_retries=options.max_retries, backoff=options.backoff,
                        concurrency=options.concurrency)
    backend = OpenAIEndpointBackend(f"openai:{name}", pool, model, options=options, interfaces=interfaces,
                              question_templates=question_templates)
    try:
        backend.connect()
    except BaseException:
        pool.close()
        raise
    return backend
