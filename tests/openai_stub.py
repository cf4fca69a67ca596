"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests, scripted per test.

    def test_retry(openai_stub):
        openai_stub.script([Status(429, retry_after=0), Reply({"answer": "hi"})])
        ...  # point a client at openai_stub.base_url ("http://127.0.0.1:<port>/v1")
        assert len(openai_stub.requests) == 2

The server runs uvicorn in a background thread with its own event loop, so it serves sync
tests, async tests and subprocesses alike. Each request takes the next behaviour from the
queue; when the queue is empty `default_reply` answers. Run `python -m tests.openai_stub`
to serve default replies by hand.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import aiohappyeyeballs
import pytest
import uvicorn
from aiohttp import resolver

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


# --- behaviours -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A 200 completion; `content` is text, or any other value sent as its JSON text."""

    content: Any = None
    usage: tuple[int, int] | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Status:
    """An OpenAI-style error answer with the given status (and a Retry-After header if set)."""

    code: int
    retry_after: float | None = None
    message: str = "stub error"


@dataclass(frozen=True)
class RejectJsonSchema:
    """An error as a server that does not know `response_format: json_schema` answers it.

    llama-cpp-python's server answers 500 here; most others 400.
    """

    status: int = 400


@dataclass(frozen=True)
class Malformed:
    """A 200 whose content is not valid JSON (default: the default reply with a stray comma)."""

    text: str | None = None


@dataclass(frozen=True)
class Truncated:
    """A 200 whose content is cut off half-way, with `finish_reason: "length"`."""

    text: str | None = None


@dataclass(frozen=True)
class BrokenBody:
    """A 200 whose HTTP body is not JSON at all."""


@dataclass(frozen=True)
class Drop:
    """Start a response, send part of the body, then close the connection."""


@dataclass(frozen=True)
class StreamError:
    """A 200 stream that sends part of an answer, then an error event (as vLLM does), then ends."""

    message: str = "stub error"
    code: int = 400


@dataclass(frozen=True)
class Linger:
    """A streamed answer whose body stays open after `[DONE]` until the client hangs up."""

    content: Any = None


@dataclass(frozen=True)
class Hang:
    """Never answer; the request ends when the client gives up (or the stub stops)."""


@dataclass(frozen=True)
class Hold:
    """Block until `stub.release()`, then answer with `then` (default reply when None)."""

    then: Any = None


@dataclass(frozen=True)
class NotUtf8:
    """A 200 stream whose answer event carries a byte that is not UTF-8 (0xff), as a broken proxy might send."""


@dataclass(frozen=True)
class CallTools:
    """A 200 answer that calls tools: `calls` are (name, arguments) pairs, streamed as OpenAI streams
    `delta.tool_calls` (the arguments' JSON in pieces), with `finish_reason: "tool_calls"`. `as_text`:
    written into the content instead, as llama-cpp-python's server sends the calls of a model whose
    chat template asks for `<tool_call>` blocks: "tagged" (the blocks), "bare" (the objects alone: for
    Qwen2.5 the tags are special tokens the server leaves out). A `default` may return one too."""

    calls: tuple[tuple[str, dict[str, Any]], ...]
    content: str = ""
    as_text: str = ""


@dataclass(frozen=True)
class RejectTools:
    """An error as vLLM answers a request with `tools` when it was started without tool parsing."""

    status: int = 400


Behaviour = (Reply | Status | RejectJsonSchema | Malformed | Truncated | BrokenBody | Drop | StreamError | Linger
             | Hang | Hold | NotUtf8 | CallTools | RejectTools)


@dataclass
class Record:
    """One request as the stub saw it."""

    body: dict[str, Any]
    headers: dict[str, str]
    bytes_received: int
    bytes_sent: int = 0
    status: int = 0
    usage: tuple[int, int] = (0, 0)
    behaviour: str = ""
    disconnected: bool = False
    path: str = ""  # e.g. "/r1/v1/chat/completions": several clients tell themselves apart by a prefix
    answered_at: float = 0.0  # time.monotonic() when the answer was sent
    text: str = ""  # the content of a 200 answer
    client_port: int = 0  # the client's end of the connection: requests on one connection share it
    pieces: list[tuple[float, int]] = field(default_factory=list)  # (time.monotonic(), chars sent) per piece


@dataclass
class Pace:
    """How a streamed answer is written: `chars` per piece, `delay` seconds between pieces (a model
    writing at a pace), and one pause of `pause_seconds` after the piece that completes the first
    `pause_after` of the text (the planner's answer, before its plan)."""

    chars: int = 16
    delay: float = 0.0
    pause_after: str | None = None
    pause_seconds: float = 0.0


# --- default answers ------------------------------------------------------------------------------


def example_for(schema: Mapping[str, Any]) -> Any:
    """Return a small value valid for the JSON-schema subset the project uses."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: example_for(sub) for name, sub in props.items()}
    if kind == "array":
        return [example_for(schema.get("items", {"type": "string"}))] * max(1, schema.get("minItems", 1))
    return {"string": "stub", "integer": 1, "number": 1.5, "boolean": True, "null": None}.get(kind, "stub")


def request_schema(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The JSON schema a chat request asks for through `response_format`, if any."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    if fmt.get("type") == "json_object":
        return fmt.get("schema")
    return None


def default_reply(body: Mapping[str, Any]) -> Any:
    """Answer a schema request with an example instance and anything else with plain text."""
    schema = request_schema(body)
    return example_for(schema) if schema is not None else "stub reply"


def response_format_type(body: Mapping[str, Any]) -> str:
    """The `response_format.type` of a recorded request, or "text" when none was sent."""
    return (body.get("response_format") or {}).get("type", "text")


def count_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: about four characters a token."""
    return max(1, len(text) // 4)


# --- the server --------------------------------------------------------------------------------


class OpenAIStub:
    """A scripted OpenAI-compatible server; use as a context manager or via `openai_stub`."""

    model = "stub-model"

    def __init__(self, default: Callable[[dict[str, Any]], Any] = default_reply) -> None:
        # Streaming requests (`"stream": true`) are answered with server-sent events.
        self.default = default
        self.delay = 0.0  # seconds every answer takes (a slow provider), on the stub's own loop
        # Requests this says yes to, with no scripted behaviour, are held as `Hold()` (until `release()`).
        self.hold_when: Callable[[Record], bool] | None = None
        self.pace = Pace()  # how streamed answers are written, piece by piece
        # Response-format types ("json_schema", "json_object") refused by every Reply, and how.
        self.reject_formats: set[str] = set()
        self.reject_status = 400
        self.records: list[Record] = []
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._disconnected = threading.Event()
        self._released = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._stopping = False
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        # Listening before uvicorn starts lets clients connect at once; the kernel queues them.
        self._sock.listen(64)
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(
            self._app, log_level="warning", access_log=False, lifespan="off", ws="none",
            http="h11", interface="asgi3", timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name=f"openai-stub-{self.port}", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat requests received so far, in order."""
        with self._lock:
            return [r.body for r in self.records]

    def records_of(self, client: str) -> list[Record]:
        """The requests that came in through `url_for(client)`."""
        with self._lock:
            return [r for r in self.records if r.path.startswith(f"/{client}/")]

    def url_for(self, client: str) -> str:
        """A base URL for one of several clients: the same stub, its requests recorded under `/<client>`."""
        return f"http://127.0.0.1:{self.port}/{client}/v1"

    @property
    def open_connections(self) -> int:
        """How many client connections the server holds open now."""
        return len(self._server.server_state.connections)

    @property
    def usage_total(self) -> tuple[int, int]:
        """Prompt and completion tokens reported across every answer sent."""
        with self._lock:
            return (sum(r.usage[0] for r in self.records), sum(r.usage[1] for r in self.records))

    @property
    def bytes_total(self) -> tuple[int, int]:
        """Request body bytes received and response body bytes sent, across every request."""
        with self._lock:
            return (sum(r.bytes_received for r in self.records), sum(r.bytes_sent for r in self.records))

    def start(self) -> OpenAIStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping = True
        self._wake_waiters()
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, behaviours: Iterable[Behaviour | Any]) -> None:
        """Queue behaviours for the next requests; a bare value means `Reply(value)`."""
        with self._lock:
            self._queue.extend(b if isinstance(b, Behaviour) else Reply(b) for b in behaviours)

    @property
    def pending(self) -> int:
        """How many scripted behaviours are still queued."""
        with self._lock:
            return len(self._queue)

    def release(self) -> None:
        """Let every held request (now and later) answer."""
        with self._lock:
            self._released = True
        self._wake_waiters()

    def wait_requests(self, count: int, timeout: float = 5.0) -> bool:
        """Block until `count` requests have arrived; False when the deadline passes first."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self.records) >= count, timeout=timeout)

    def wait_disconnected(self, timeout: float = 5.0) -> bool:
        """Block until a held or hanging request saw its client close the connection."""
        return self._disconnected.wait(timeout)

    async def until_requests(self, count: int, timeout: float = 5.0) -> bool:
        """`wait_requests` for async tests, without blocking their event loop."""
        return await asyncio.to_thread(self.wait_requests, count, timeout)

    async def until_disconnected(self, timeout: float = 5.0) -> bool:
        """`wait_disconnected` for async tests, without blocking their event loop."""
        return await asyncio.to_thread(self.wait_disconnected, timeout)

    # --- ASGI side, runs on the stub's own loop -------------------------------------------------

    def _wake_waiters(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(wake.set)
            except RuntimeError:  # the loop closed between the check and the call
                pass

    async def _app(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        if self._loop is None:
            self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        path, method = scope["path"], scope["method"]
        if method == "GET" and path.rstrip("/") in ("/v1/models", "/models"):
            await _send_json(send, 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
            return
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            await _send_json(send, 404, _error("not found", "invalid_request_error"))
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        record = Record(body=body, headers=headers, bytes_received=len(raw), path=path,
                        client_port=(scope.get("client") or ("", 0))[1])
        with self._arrived:
            if response_format_type(body) in self.reject_formats:
                # A server without the feature refuses before the script gets a say.
                behaviour: Behaviour = RejectJsonSchema(self.reject_status)
            else:
                behaviour = self._queue.popleft() if self._queue else Reply(None)
                if self.hold_when is not None and behaviour == Reply(None) and self.hold_when(record):
                    behaviour = Hold()
            record.behaviour = type(behaviour).__name__
            self.records.append(record)
            self._arrived.notify_all()
        if self.delay:
            await asyncio.sleep(self.delay)
        await self._answer(behaviour, body, record, receive, send)
        record.answered_at = time.monotonic()

    async def _answer(self, behaviour: Behaviour, body: dict[str, Any], record: Record,
                      receive: Callable, send: Callable) -> None:
        if isinstance(behaviour, (Hang, Hold)):
            if not await self._wait_gate(receive, forever=isinstance(behaviour, Hang)):
                record.disconnected = True
                self._disconnected.set()
                return
            if self._stopping:
                behaviour = Status(503, message="stub stopping")
            else:
                then = behaviour.then
                behaviour = then if isinstance(then, Behaviour) else Reply(then)
        if isinstance(behaviour, Reply) and behaviour.content is None:
            made = self.default(body)  # once: a default may count what it answered
            behaviour = made if isinstance(made, CallTools) else replace(behaviour, content=made)
        if isinstance(behaviour, RejectTools):
            behaviour = Status(behaviour.status, message='"auto" tool choice requires --enable-auto-tool-choice '
                                                         'and --tool-call-parser to be set')
        if isinstance(behaviour, CallTools) and behaviour.as_text:
            tags = ("<tool_call>\n", "\n</tool_call>") if behaviour.as_text == "tagged" else ("", "")
            blocks = "".join(f"{tags[0]}{json.dumps({'name': n, 'arguments': a})}{tags[1]}" for n, a in behaviour.calls)
            behaviour = Reply(behaviour.content + blocks)
        if isinstance(behaviour, CallTools):
            record.bytes_sent = await _send_calls(send, body, behaviour, record)
            record.status = 200
            return
        fmt = response_format_type(body)
        if isinstance(behaviour, RejectJsonSchema):
            message = f"response_format: input should be 'text' or 'json_object', got {fmt!r}"
            behaviour = Status(behaviour.status, message=message)
        if isinstance(behaviour, Status):
            extra = [] if behaviour.retry_after is None else [(b"retry-after", str(behaviour.retry_after).encode())]
            kind = "rate_limit_error" if behaviour.code == 429 else "invalid_request_error"
            record.bytes_sent = await _send_json(send, behaviour.code, _error(behaviour.message, kind), extra)
            record.status = behaviour.code
            return
        if isinstance(behaviour, BrokenBody):
            record.bytes_sent = await _send_raw(send, 200, b"<html>not json</html>", b"application/json")
            record.status = 200
            return
        if isinstance(behaviour, NotUtf8):
            event = b'data: {"choices": [{"index": 0, "delta": {"content": "caf\xff"}}]}\n\n'
            record.bytes_sent = await _send_raw(send, 200, event, b"text/event-stream")
            record.status = 200
            return
        if isinstance(behaviour, Drop):
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", b"1000")]})
            await send({"type": "http.response.body", "body": b'{"id": "chat', "more_body": True})
            record.status = 200
            return  # uvicorn closes the connection because the response is incomplete
        if isinstance(behaviour, StreamError):
            first = {"choices": [{"index": 0, "delta": {"content": "Half an ans"}, "finish_reason": None}]}
            error = {"error": {"message": behaviour.message, "code": behaviour.code}}
            if self.pace.pause_seconds:  # the half answer is on its way a while before the error
                record.bytes_sent = await _send_events(send, [first], end=False)
                await asyncio.sleep(self.pace.pause_seconds)
                chunk = f"data: {json.dumps(error)}\n\n".encode()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
                record.bytes_sent += len(chunk)
            else:
                record.bytes_sent = await _send_events(send, [first, error])
            record.status = 200
            return
        finish = "stop"
        if isinstance(behaviour, (Reply, Linger)):
            content = behaviour.content if behaviour.content is not None else self.default(body)
            finish = getattr(behaviour, "finish_reason", finish)
        else:
            content = behaviour.text if behaviour.text is not None else self.default(body)
        text = content if isinstance(content, str) else json.dumps(content)
        if isinstance(behaviour, Malformed) and behaviour.text is None:
            text = text[:-1] + ",}" if text.endswith("}") else text + ",}"
        if isinstance(behaviour, Truncated):
            text, finish = (text if behaviour.text is not None else text[: max(1, len(text) // 2)]), "length"
        prompt = count_tokens(json.dumps(body.get("messages", [])))
        usage = behaviour.usage if isinstance(behaviour, Reply) and behaviour.usage else (prompt, count_tokens(text))
        answer = {
            "id": f"chatcmpl-stub-{len(self.records)}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", self.model),
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                      "total_tokens": usage[0] + usage[1]},
        }
        record.usage, record.status, record.text = usage, 200, text
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            record.bytes_sent = await _send_stream(send, answer, include_usage, self.pace, record)
            if isinstance(behaviour, Linger):
                if not await self._wait_gate(receive, forever=True):
                    record.disconnected = True
                    self._disconnected.set()
                return
            await send({"type": "http.response.body", "body": b""})
            return
        record.bytes_sent = await _send_json(send, 200, answer)

    async def _wait_gate(self, receive: Callable, forever: bool) -> bool:
        """Wait for release (unless `forever`) or stop; False when the client disconnected first."""
        assert self._wake is not None
        disconnect = asyncio.ensure_future(receive())  # only a disconnect can arrive after the body
        try:
            while True:
                if self._stopping or (self._released and not forever):
                    return True
                self._wake.clear()
                if self._stopping or (self._released and not forever):
                    return True
                woken = asyncio.ensure_future(self._wake.wait())
                done, _ = await asyncio.wait({disconnect, woken}, return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
                if disconnect in done:
                    return False
        finally:
            disconnect.cancel()


STREAM_PIECE = 16  # characters of content per streamed chunk


async def _send_stream(send: Callable, answer: dict[str, Any], include_usage: bool, pace: Pace | None = None,
                       record: Record | None = None) -> int:
    """The answer as server-sent events, the way OpenAI streams a chat completion (at `pace`)."""
    choice = answer["choices"][0]
    text = choice["message"]["content"]
    base = {k: answer[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    size = pace.chars if pace is not None else STREAM_PIECE
    pieces = [text[i:i + size] for i in range(0, len(text), size)] or [""]
    if pace is not None and (pace.delay or pace.pause_after):
        return await _send_paced(send, base, pieces, choice["finish_reason"],
                                 answer["usage"] if include_usage else None, pace, record)
    events = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": piece},
                                   "finish_reason": None}]) for piece in pieces]
    events.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]))
    if include_usage:
        events.append(dict(base, choices=[], usage=answer["usage"]))
    return await _send_events(send, events, done=True, end=False)


async def _send_events(send: Callable, events: list[dict[str, Any]], done: bool = False, end: bool = True) -> int:
    """Server-sent events, then `[DONE]` if `done`, then the body's end if `end`; the bytes sent."""
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
    sent = 0
    for data in [json.dumps(e) for e in events] + (["[DONE]"] if done else []):
        chunk = f"data: {data}\n\n".encode()
        sent += len(chunk)
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    if end:
        await send({"type": "http.response.body", "body": b""})
    return sent


async def _send_paced(send: Callable, base: dict[str, Any], pieces: list[str], finish: str,
                      usage: dict[str, Any] | None, pace: Pace, record: Record | None) -> int:
    """Each piece as its own event, `pace.delay` apart, with the one pause; records when each went."""
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
    sent, written, paused = 0, "", False
    events = [dict(base, choices=[{"index": 0, "delta": {"content": p}, "finish_reason": None}]) for p in pieces]
    events.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
    if usage is not None:
        events.append(dict(base, choices=[], usage=usage))
    for n, event in enumerate(events):
        chunk = f"data: {json.dumps(event)}\n\n".encode()
        sent += len(chunk)
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if n < len(pieces):
            written += pieces[n]
            if record is not None:
                record.pieces.append((time.monotonic(), len(written)))
            if pace.pause_after and not paused and pace.pause_after in written:
                paused = True
                await asyncio.sleep(pace.pause_seconds)
            elif pace.delay:
                await asyncio.sleep(pace.delay)
    data = b"data: [DONE]\n\n"
    await send({"type": "http.response.body", "body": data, "more_body": True})
    return sent + len(data)


async def _send_calls(send: Callable, body: Mapping[str, Any], calls: CallTools, record: Record) -> int:
    """A streamed answer whose tool calls come in `delta.tool_calls` pieces, as OpenAI sends them."""
    base = {"id": "chatcmpl-stub-calls", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model", "stub-model")}
    events: list[dict[str, Any]] = []
    if calls.content:
        events.append(dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": calls.content},
                                           "finish_reason": None}]))
    for index, (name, arguments) in enumerate(calls.calls):
        head = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": ""}}
        events.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}]))
        raw = json.dumps(arguments)
        for i in range(0, len(raw), 7):  # the arguments' JSON in pieces, cut anywhere
            piece = {"index": index, "function": {"arguments": raw[i:i + 7]}}
            events.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [piece]}, "finish_reason": None}]))
    events.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]))
    said = calls.content + "".join(json.dumps(a) for _, a in calls.calls)
    record.usage = (count_tokens(json.dumps(body.get("messages", []))), count_tokens(said))
    record.text = calls.content
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append(dict(base, choices=[], usage={"prompt_tokens": record.usage[0],
                                                    "completion_tokens": record.usage[1],
                                                    "total_tokens": sum(record.usage)}))
    return await _send_events(send, events, done=True)


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


async def _send_json(send: Callable, status: int, payload: Any,
                     headers: list[tuple[bytes, bytes]] | None = None) -> int:
    return await _send_raw(send, status, json.dumps(payload).encode(), b"application/json", headers)


async def _send_raw(send: Callable, status: int, data: bytes, content_type: bytes,
                    headers: list[tuple[bytes, bytes]] | None = None) -> int:
    head = [(b"content-type", content_type), (b"content-length", str(len(data)).encode()), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": data})
    return len(data)


# --- pytest glue -------------------------------------------------------------------------------


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A started stub server, stopped after the test."""
    with OpenAIStub() as stub:
        yield stub


@pytest.fixture
def no_remote_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any connection to a host other than loopback fail the test loudly.

    Name lookups and connects are refused where they happen, whichever event loop runs: the
    socket module (blocking clients, asyncio's own loop), and for the model client's aiohttp
    transport its resolvers (aiodns, or uvloop's `getaddrinfo`, never reach the socket module)
    and the happy-eyeballs connect it makes every connection through.
    """
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect
    real_start = aiohappyeyeballs.start_connection

    def check_name(host: Any) -> None:
        name = host.decode() if isinstance(host, bytes) else host
        if name not in LOOPBACK_HOSTS and name is not None:
            raise OSError(f"test guard: network access to {name!r} refused (use the stub on 127.0.0.1)")

    def check_address(host: Any) -> None:
        if host not in LOOPBACK_HOSTS:
            raise OSError(f"test guard: connection to {host!r} refused (use the stub on 127.0.0.1)")

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        check_name(host)
        return real_getaddrinfo(host, *args, **kwargs)

    def guarded_connect(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            check_address(address[0])
        return real_connect(sock, address)

    def guarded_resolve(real: Callable[..., Any]) -> Callable[..., Any]:
        async def resolve(self: Any, host: str, *args: Any, **kwargs: Any) -> Any:
            check_name(host)
            return await real(self, host, *args, **kwargs)
        return resolve

    async def guarded_start(addr_infos: Any, *args: Any, **kwargs: Any) -> Any:
        for info in addr_infos:  # (family, type, proto, canonname, sockaddr)
            check_address(info[4][0])
        return await real_start(addr_infos, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    for kind in (resolver.ThreadedResolver, resolver.AsyncResolver):
        monkeypatch.setattr(kind, "resolve", guarded_resolve(kind.resolve))
    monkeypatch.setattr(aiohappyeyeballs, "start_connection", guarded_start)


if __name__ == "__main__":
    with OpenAIStub() as stub:
        print(stub.base_url, flush=True)
        threading.Event().wait()
