"""A scripted LLM server for tests: real HTTP on 127.0.0.1, no model, no network.

``ScriptedLLM`` speaks OpenAI's chat-completions API (``POST /v1/chat/completions``) and
Anthropic's Messages API (``POST /v1/messages``) and answers from a script: each request
takes the next ``Reply`` — a text answer with token counts, an HTTP error (429 with
``Retry-After``, 500, 400, ...) or an answer that comes too late for the client's timeout.
Every request is recorded (path, headers, JSON body) so tests can assert on what a provider
or an agent actually sent: the screenshot as an image part, the instruction, temperature 0.

    def test_something(scripted_llm: ScriptedLLM) -> None:
        scripted_llm.push("tap(3)", Reply.error(429, retry_after=1), "done")
        provider = build_provider(scripted_llm.provider_config("openai"), sleep=lambda s: None)
        ...
        assert scripted_llm.requests[0].images()

The ``scripted_llm`` fixture is available to every test module through tests/conftest.py.
When the script runs out the server answers 400 (never retried), so a test that makes more
calls than it scripted fails fast and says why; ``always(reply)`` sets an endless default.

For episodes running side by side, whose requests arrive in no fixed order, ``respond(fn)``
answers each request from what it carries (``fn(request)``, e.g. by the number of turns so
far); ``latency`` holds every answer back that long, as a remote model would, and every
request records when it arrived (``received``, ``time.monotonic()``).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest

from ghostei.providers import ProviderConfig
from ghostei.providers.preflight import PROBE_TEXT

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
MODEL = "scripted-model"


@dataclass(frozen=True)
class Reply:
    """One scripted answer: ``status`` 200 answers ``text``; any other status is an error
    whose body carries ``message``. ``delay`` holds the answer back that many seconds."""

    text: str = ""
    status: int = 200
    prompt_tokens: int = 10
    completion_tokens: int = 5
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    message: str = "scripted error"
    # Tool calls the answer makes, each (function name, its JSON arguments): OpenAI's
    # tool_calls, Anthropic's tool_use blocks
    tool_calls: tuple[tuple[str, str], ...] = ()
    # Why the model stopped, as the API says it (OpenAI's finish_reason, e.g. "length" or
    # "content_filter"; Anthropic's stop_reason, e.g. "max_tokens" or "refusal"); None: the
    # usual "stop" / "end_turn" (or the tool call's)
    finish_reason: str | None = None
    # An OpenAI refusal: the message's ``refusal`` field, its content null
    refusal: str | None = None

    @classmethod
    def answer(cls, text: str, prompt_tokens: int = 10, completion_tokens: int = 5) -> Reply:
        """A successful answer with the given usage numbers."""
        return cls(text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

    @classmethod
    def tool_call(cls, name: str, arguments: Mapping[str, Any]) -> Reply:
        """An answer that calls the tool ``name`` with ``arguments``."""
        return cls(tool_calls=((name, json.dumps(dict(arguments))),))

    @classmethod
    def error(
        cls, status: int, message: str = "scripted error", retry_after: float | None = None
    ) -> Reply:
        """An HTTP error, with a ``Retry-After`` header (seconds) when given."""
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        return cls(status=status, message=message, headers=headers)

    @classmethod
    def stall(cls, seconds: float, text: str = "too late") -> Reply:
        """An answer that arrives after ``seconds``: longer than the client timeout, it times
        the request out (the server gives up waiting when it is closed)."""
        return cls(text=text, delay=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]
    received: float = 0.0  # time.monotonic() on arrival

    @property
    def api(self) -> Literal["openai", "anthropic"]:
        """Which API the request was made to."""
        return "anthropic" if self.path == ANTHROPIC_PATH else "openai"

    def _parts(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(role, content part)`` for every message, strings as text parts."""
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                yield message["role"], {"type": "text", "text": content}
            else:
                for part in content or []:
                    yield message["role"], part

    def system(self) -> str | None:
        """The system prompt: Anthropic's ``system`` field or OpenAI's system messages."""
        if self.api == "anthropic":
            system = self.body.get("system")
            return system if isinstance(system, str) or system is None else json.dumps(system)
        texts = [p["text"] for role, p in self._parts() if role == "system" and "text" in p]
        return "\n\n".join(texts) if texts else None

    def texts(self, role: str | None = None) -> list[str]:
        """Every text part of the messages (of ``role`` when given), in order."""
        return [
            p["text"]
            for r, p in self._parts()
            if p.get("type") == "text" and (role is None or r == role)
        ]

    def turns(self, role: str) -> int:
        """How many messages of ``role`` the request carries (e.g. earlier answers)."""
        return sum(m.get("role") == role for m in self.body.get("messages", []))

    def image_parts(self) -> list[dict[str, Any]]:
        """The raw image parts (``image_url`` for OpenAI, ``image`` blocks for Anthropic)."""
        return [p for _, p in self._parts() if p.get("type") in ("image_url", "image")]

    def images(self) -> list[bytes]:
        """The decoded bytes of every image sent, in order."""
        out = []
        for part in self.image_parts():
            if part["type"] == "image_url":
                out.append(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
            else:
                out.append(base64.b64decode(part["source"]["data"]))
        return out


def _ok_body(api: str, model: str, reply: Reply, n: int) -> dict[str, Any]:
    if api == "anthropic":
        uses = [
            {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": json.loads(args)}
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
        text = [{"type": "text", "text": reply.text}] if reply.text or not uses else []
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [*text, *uses],
            "stop_reason": reply.finish_reason or ("tool_use" if uses else "end_turn"),
            "stop_sequence": None,
            "usage": {
                "input_tokens": reply.prompt_tokens,
                "output_tokens": reply.completion_tokens,
            },
        }
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": reply.text or None
                    if reply.tool_calls or reply.refusal is not None
                    else reply.text,
                    **({"refusal": reply.refusal} if reply.refusal is not None else {}),
                    **(
                        {
                            "tool_calls": [
                                {
                                    "id": f"call_{n}_{i}",
                                    "type": "function",
                                    "function": {"name": name, "arguments": arguments},
                                }
                                for i, (name, arguments) in enumerate(reply.tool_calls)
                            ]
                        }
                        if reply.tool_calls
                        else {}
                    ),
                },
                "finish_reason": reply.finish_reason
                or ("tool_calls" if reply.tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


def _error_body(api: str, reply: Reply) -> dict[str, Any]:
    kind = "rate_limit_error" if reply.status == 429 else "api_error"
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": reply.message}}
    return {"error": {"message": reply.message, "type": kind, "code": reply.status}}


Responder = Callable[[RecordedRequest], Reply | str | int]


class ScriptedLLM:
    """A local server that plays a script of replies; use as a context manager or through
    the ``scripted_llm`` fixture. ``latency`` (seconds) delays every answer, errors too."""

    def __init__(self, latency: float = 0.0) -> None:
        self._script: deque[Reply] = deque()
        self._default: Reply | None = None
        self._responder: Responder | None = None
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.latency = latency
        self.requests: list[RecordedRequest] = []
        self.answered: list[tuple[float, int]] = []  # (time.monotonic(), status) per answer
        # The endpoint checks ghostei makes before a run (PROBE_TEXT): answered as a server
        # would, kept apart from ``requests`` and never spending a scripted reply.
        self.probes: list[RecordedRequest] = []
        self._probe_script: deque[Reply] = deque()  # answers to probes before the usual OK
        self.reject_images = False  # a text-only server: any image gets a 500
        self.models: set[str] | None = None  # served models (None: any)
        # The context window the server reports: in ``GET /v1/models`` as vLLM and SGLang do
        # (``max_model_len``), or in ``GET /props`` as llama.cpp's llama-server does.
        self.context: int | None = None
        self.context_route: Literal["models", "props"] = "models"
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    # -- where to point a client ---------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """The ``base_url`` for the openai SDK (it appends ``/chat/completions``)."""
        return f"{self.base_url}/v1"

    @property
    def anthropic_url(self) -> str:
        """The ``base_url`` for the anthropic SDK (it appends ``/v1/messages``)."""
        return self.base_url

    def provider_config(self, provider: str = "openai", **overrides: Any) -> ProviderConfig:
        """A ProviderConfig pointed at this server (model ``scripted-model``, 5 s timeout)."""
        url = self.anthropic_url if provider == "anthropic" else self.openai_url
        fields: dict[str, Any] = {
            "provider": provider,
            "model": MODEL,
            "base_url": url,
            "timeout": 5.0,
            "api_key_env": "GHOSTEI_SCRIPTED_LLM_KEY",  # unset: local endpoints need no key
        }
        fields.update(overrides)
        return ProviderConfig(**fields)

    # -- the script ----------------------------------------------------------------------

    def push(self, *replies: Reply | str | int) -> None:
        """Queue replies: a ``str`` is a text answer, an ``int`` an HTTP error status."""
        with self._lock:
            for r in replies:
                if isinstance(r, str):
                    r = Reply.answer(r)
                elif isinstance(r, int):
                    r = Reply.error(r)
                self._script.append(r)

    def always(self, reply: Reply | str | int) -> None:
        """The reply given whenever the script is empty (instead of a 400)."""
        self.push(reply)
        with self._lock:
            self._default = self._script.pop()

    def respond(self, responder: Responder) -> None:
        """Answer each request the script does not from the request itself:
        ``responder(request)`` returns a Reply, a text answer or an HTTP error status."""
        with self._lock:
            self._responder = responder

    def push_probe(self, *replies: Reply | int) -> None:
        """Answer the next endpoint checks with these (an ``int``: that HTTP error), e.g. a
        429 at start; later checks get the usual OK."""
        with self._lock:
            self._probe_script.extend(Reply.error(r) if isinstance(r, int) else r for r in replies)

    @property
    def pending(self) -> int:
        """Replies still queued."""
        with self._lock:
            return len(self._script)

    def _refusal(self, request: RecordedRequest) -> Reply | None:
        # What a real server says to a request it cannot serve, before any script.
        model = str(request.body.get("model", ""))
        if self.models is not None and model not in self.models:
            return Reply.error(404, f"The model `{model}` does not exist.")
        if self.reject_images and request.images():
            return Reply.error(500, "image input is not supported by this model")
        return None

    def _next(self, request: RecordedRequest) -> Reply:
        if any(PROBE_TEXT in t for t in request.texts()):
            with self._lock:
                self.probes.append(request)
                scripted = self._probe_script.popleft() if self._probe_script else None
            return scripted or self._refusal(request) or Reply.answer("OK")
        refusal = self._refusal(request)
        if refusal is not None:
            with self._lock:
                self.requests.append(request)
            return refusal
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
            responder = self._responder
            if responder is None and self._default is not None:
                return self._default
        if responder is not None:
            reply = responder(request)
            if isinstance(reply, str):
                return Reply.answer(reply)
            return Reply.error(reply) if isinstance(reply, int) else reply
        return Reply.error(400, f"ScriptedLLM: script exhausted at request {len(self.requests)}")

    # -- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        """Stop serving and release stalled requests."""
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                route = llm.context_route if llm.context is not None else None
                if path == "/v1/models":
                    entries: list[dict[str, Any]] = [
                        {"id": name, "object": "model"} for name in sorted(llm.models or {MODEL})
                    ]
                    for entry in entries if route == "models" else []:
                        entry["max_model_len"] = llm.context
                    self._send(200, {"object": "list", "data": entries}, {})
                elif path == "/props" and route == "props":
                    self._send(200, {"default_generation_settings": {"n_ctx": llm.context}}, {})
                else:
                    self._send(404, {"error": {"message": f"no route {path}"}}, {})

            def do_POST(self) -> None:
                path = self.path.split("?", 1)[0]
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if path not in (OPENAI_PATH, ANTHROPIC_PATH):
                    self._send(404, {"error": {"message": f"no route {path}"}}, {})
                    return
                body = json.loads(raw or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = RecordedRequest(path, headers, body, received=time.monotonic())
                reply = llm._next(request)
                delay = llm.latency + reply.delay
                if delay and llm._closing.wait(delay):
                    return  # the server is closing: drop the stalled request
                api = request.api
                if reply.status == 200:
                    n = len(llm.requests)
                    payload = _ok_body(api, str(body.get("model", MODEL)), reply, n)
                else:
                    payload = _error_body(api, reply)
                self._send(reply.status, payload, reply.headers)

            def _send(
                self, status: int, payload: dict[str, Any], headers: Mapping[str, str]
            ) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    with llm._lock:  # before the client can have read it
                        llm.answered.append((time.monotonic(), status))
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up: that is what a stall is for

        return Handler


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    """A running ScriptedLLM, closed after the test."""
    with ScriptedLLM() as llm:
        yield llm


# A UI-TARS episode in three requests (home, back, finished): each answer depends on the turns
# the request carries, since the requests of episodes in flight together reach the server in
# no fixed order. Used by the concurrency tests and benchmarks/bench_concurrency.py.
UITARS_EPISODE = (
    "Thought: start from home\nAction: press_home()",
    "Thought: and back\nAction: press_back()",
    "Thought: done\nAction: finished(content='')",
)


def uitars_episode_reply(request: RecordedRequest) -> str:
    """The answer of a three-request UI-TARS episode to this request."""
    return UITARS_EPISODE[min(request.turns("assistant"), len(UITARS_EPISODE) - 1)]
