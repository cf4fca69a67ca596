"""The OpenAI-compatible model client: with `app.llm.post`, the only module that imports `openai`.

It owns what the SDK would otherwise decide for us: a hard timeout per call, byte and token
accounting, and how one attempt goes over the wire and fails; what a call is beyond one attempt
(retries on transient failures only, drawn from the round's `RetryBudget`; structured output that
degrades from `json_schema` to `json_object` to a prompt; tool calls) is `app.llm.completions`', and
reading the streamed answer `app.llm.answers`'.

Calls stream (`stream=True`): when a round is stopped or a call times out, closing the stream
closes the connection, and servers such as llama.cpp stop generating only then.

The call path is lean, since a round makes many calls and 100 rounds share one process: the
body is built once as plain JSON values and sent as encoded bytes in a copy of the request the
SDK built once (`app.llm.post`: no per-call transform of typed parameters, no headers
merged per call), chunks arrive as the decoded dicts (no
model objects built per chunk), byte counts come from the body and the response, and the
connection pool is sized to the calls that can run at once. The SDK sends through its aiohttp
transport (`openai[aiohttp]`), which takes about half the CPU per call of its default one.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import openai

from agents.model import ModelError, ModelRequest, Usage
from app.llm.answers import Answer, AnswerStream, Spent
from app.llm.completions import Completions
from app.llm.iolog import ModelCall, log_call
from app.llm.modes import FormatRejectedError, rejects_format
from app.llm.post import CompletionsPost
from app.llm.retries import TransientError, is_transient, retry_after
from app.llm.streaming import Streamer
from app.llm.structured import cause, encode_streamed
from app.llm.tools import ToolsRejectedError, rejects_tools


def _sdk_http_module() -> Any:
    # openai 1.x sends through httpx, 3.x through its fork httpx2; our client must come from the
    # same package or the SDK cannot use it.
    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.split(".")[0])


httpx = _sdk_http_module()

DEFAULT_CONNECTIONS = 100


class OpenAIModel(Completions):
    """A `Model` backed by any OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        agent_models: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        retry_after_max: float = 10.0,
        max_tokens: int | None = None,
        temperature: float | None = None,
        agent_temperatures: Mapping[str, float] | None = None,
        log_io: bool = False,
        context_tokens: int | None = None,
        max_connections: int = DEFAULT_CONNECTIONS,
    ) -> None:
        super().__init__(model=model, agent_models=agent_models, max_retries=max_retries, backoff_base=backoff_base,
                         backoff_max=backoff_max, retry_after_max=retry_after_max, max_tokens=max_tokens,
                         temperature=temperature, agent_temperatures=agent_temperatures)
        self.context_tokens = context_tokens  # None: the served model's known context size
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.log_io = log_io
        self._stream_usage = True  # False once the server refuses `stream_options`
        # As many connections as calls can run at once: more would sit idle, fewer would queue
        # calls in the pool, whose every release scans the queue. The aiohttp session (made on
        # the first call, on the running loop) takes `max_connections` as its pool's limit.
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = openai.DefaultAioHttpClient(timeout=timeout, limits=limits, follow_redirects=False)
        # The SDK's own retries are off: they would hide attempts from our budget and meter.
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url, api_key=api_key, max_retries=0, timeout=timeout,
            http_client=self._http,
        )
        self._post = CompletionsPost(self._client, self._http)

    async def aclose(self) -> None:
        """Close the HTTP connections (the aiohttp session)."""
        await self._client.close()

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _attempt(self, body: dict[str, Any], mode: str | None, request: ModelRequest,
                       spent: Spent, streamer: Streamer | None = None) -> tuple[Answer, Usage]:
        """One streamed HTTP request; adds its cost to `spent` whatever happens."""
        started = time.monotonic()
        stream = AnswerStream(streamer, self._plain)
        error: str | None = None
        payload = encode_streamed(body, usage=self._stream_usage)
        sent = len(payload)
        response: Any = None  # the HTTP response, once there is one: its bytes are the cost
        opened = False
        try:
            async with asyncio.timeout(self.timeout):
                response, sent = await self._open(body, payload)
                opened = True
                if mode is not None:
                    self._modes.accept(body["model"], mode)
                try:
                    await stream.read(self._post.events(response))
                finally:
                    await response.aclose()  # a stop or timeout ends the generation on the server
            stream.end(body, request.tools)
        except (TimeoutError, openai.APIConnectionError, httpx.HTTPError, aiohttp.ClientError) as exc:
            error = (f"no answer within {self.timeout:g}s" if _timed_out(exc)
                     else f"connection failed: {self._plain(cause(exc))}")
            raise TransientError(error) from exc
        except UnicodeDecodeError as exc:  # a proxy or server that mangled the answer: another try may not
            error = "the model server's answer was not UTF-8 text"
            raise TransientError(error) from exc
        except openai.APIStatusError as exc:
            response = exc.response
            failure = self._classify(exc, mode, "tools" in body)
            error = str(failure)
            raise failure from exc
        except (TransientError, ModelError) as exc:
            error = str(exc)
            raise
        except asyncio.CancelledError:
            error = "cancelled"
            raise
        finally:
            said = stream.said()
            tokens = stream.tokens
            if tokens is None and not opened:
                tokens = (0, 0)  # refused or unreachable: the server processed nothing
            received = response.num_bytes_downloaded if response is not None else 0
            rest: dict[str, Any] = dict(bytes_sent=sent, bytes_received=received, calls=1,
                                        seconds=time.monotonic() - started)
            cost = (Usage(tokens[0], tokens[1], **rest) if tokens is not None  # else the server gave none: counted
                    else Usage.counted("\n".join(str(m.get("content", "")) for m in body["messages"]), said, **rest))
            spent.usage += cost
            if self.log_io:
                log_call(ModelCall(request=request, body=body, mode=mode, answer=stream.text,
                                   finish_reason=stream.finish, usage=cost, error=error,
                                   tool_calls=tuple(stream.calls)))
        return stream.answer(), cost

    async def _open(self, body: dict[str, Any], payload: bytes) -> tuple[Any, int]:
        """Start a streamed completion of the encoded `body`; again without `stream_options` when
        the server refuses it. Returns the streamed response and the bytes sent."""
        try:
            return await self._post(payload), len(payload)
        except openai.APIStatusError as exc:
            if (not self._stream_usage or exc.status_code not in (400, 422)
                    or "stream_options" not in _error_text(exc)):
                raise
            self._stream_usage = False
        plain = encode_streamed(body, usage=False)
        return await self._post(plain), len(payload) + len(plain)

    def _classify(self, exc: openai.APIStatusError, mode: str | None, tools: bool = False) -> Exception:
        status, detail = exc.status_code, _error_text(exc)
        if rejects_format(mode, status, detail):
            return FormatRejectedError(detail)
        if tools and rejects_tools(status, detail):
            return ToolsRejectedError(detail)
        if is_transient(status):
            return TransientError(f"HTTP {status}: {self._plain(detail)}", retry_after(exc.response.headers))
        return ModelError(f"The model server answered HTTP {status}: {self._plain(detail)}")

    def _plain(self, text: str) -> str:
        """`text` without the model server's address: users read model errors; the address is the operator's."""
        parts = urlsplit(self.base_url)
        for name in (self.base_url, parts.netloc, parts.hostname):
            if name:
                text = text.replace(name, "the model server")
        return text


def _timed_out(exc: BaseException) -> bool:
    """Whether a transport failure was a timeout (ours or the transport's) rather than a failed connection.

    The SDK's aiohttp transport reports every aiohttp connection error (refused, reset, a name that
    does not resolve, a server that hung up) as a connect timeout, so its `APITimeoutError` alone
    says nothing: a real timeout has a `TimeoutError` in its chain (aiohttp's own are one).
    """
    link: BaseException | None = exc
    while link is not None:
        if isinstance(link, TimeoutError):
            return True
        last, link = link, link.__cause__ or link.__context__
    # Nothing beneath the SDK's or the transport's own timeout: nothing else to go by.
    return isinstance(last, (openai.APITimeoutError, httpx.TimeoutException))


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body
        return message if isinstance(message, str) else json.dumps(message)[:300]
    return exc.response.text[:300] if exc.response is not None else str(exc)
