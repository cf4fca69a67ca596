"""The OpenAI-compatible model client: with `app.llm.post`, the only module that imports `openai`.

It owns what the SDK would otherwise decide for us: a hard timeout per call, retries on
transient failures only (drawn from the round's `RetryBudget`, see `app.llm.retries`), byte and
token accounting, structured output that degrades from `json_schema` to `json_object` to a
prompt (see `app.llm.modes`), and tool calls (a request's `tools`, see `app.llm.tools`).

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
import contextlib
import importlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import openai

from agents.model import (
    STREAMED_FIELD,
    Model,
    ModelBudgetError,
    ModelError,
    ModelOutputError,
    ModelRequest,
    ModelResponse,
    ToolCall,
    Usage,
    current_budget,
    sink_for,
)
from app.llm.iolog import ModelCall, log_call
from app.llm.modes import FormatRejectedError, ModeProbes, rejects_format
from app.llm.post import CompletionsPost
from app.llm.retries import TransientError, backoff, is_transient, retry_after
from app.llm.streaming import Streamer
from app.llm.structured import (
    KIND_TEMPERATURES,
    cause,
    check,
    count,
    encode_streamed,
    parse,
    repair_instruction,
    request_body,
    with_instruction,
)
from app.llm.tools import (
    CallPieces,
    ToolsRejectedError,
    calls_in_text,
    rejects_tools,
    tools_body,
    without_calls,
)


def _sdk_http_module() -> Any:
    # openai 1.x sends through httpx, 3.x through its fork httpx2; our client must come from the
    # same package or the SDK cannot use it.
    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.split(".")[0])


httpx = _sdk_http_module()

DRAIN_SECONDS = 0.1  # for the rest of a body after `[DONE]`
DEFAULT_CONNECTIONS = 100


@dataclass
class _Answer:
    text: str
    finish_reason: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass
class _Spent:
    """The running cost of one `complete()`, kept even when it ends in an error."""

    usage: Usage = Usage()


class OpenAIModel(Model):
    """A `Model` backed by any OpenAI-compatible chat-completions endpoint."""

    offline = False

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
        self.name = model
        self.context_tokens = context_tokens  # None: the served model's known context size
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.agent_models = dict(agent_models or {})
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.agent_temperatures = dict(agent_temperatures or {})
        self.log_io = log_io
        self._modes = ModeProbes()
        self.modes = self._modes.modes  # which structured-output mode works, per served model name
        self._stream_usage = True  # False once the server refuses `stream_options`
        self._no_tools: set[str] = set()  # served models whose server refused `tools`: not offered again
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

    def model_for(self, agent: str | None) -> str:
        """The served model name an agent's requests go to."""
        return self.agent_models.get(agent or "", self.model)

    def temperature_for(self, request: ModelRequest) -> float | None:
        """The agent's setting, else the client's, else the call's own, else its kind's."""
        for value in (self.agent_temperatures.get(request.agent or ""), self.temperature,
                      request.temperature, KIND_TEMPERATURES.get(request.purpose)):
            if value is not None:
                return value
        return None

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer one request; raises `ModelError` (carrying the usage spent) when it cannot."""
        model = self.model_for(request.agent)
        spent = _Spent()
        try:
            if request.schema is None:
                answer = await self._call(model, request.messages, None, request, spent)
                return ModelResponse(text=answer.text, usage=spent.usage, model=model,
                                     finish_reason=answer.finish_reason, tool_calls=answer.tool_calls)
            return await self._complete_structured(model, request, spent)
        except ModelError as exc:
            exc.usage = spent.usage
            raise

    async def _complete_structured(self, model: str, request: ModelRequest,
                                   spent: _Spent) -> ModelResponse:
        assert request.schema is not None
        known = await self._modes.known(model)
        try:
            for mode in self._modes.candidates(known):
                messages = with_instruction(request.messages, request.schema, mode)
                try:
                    answer = await self._call(model, messages, mode, request, spent)
                except FormatRejectedError:
                    continue
                self._modes.accept(model, mode)
                if not request.validate:  # the caller validates and repairs
                    return self._response(answer, parse(answer.text), spent, model)
                data, problems = check(answer.text, answer.finish_reason, request.schema)
                if not problems:
                    return self._response(answer, data, spent, model)
                repair = [*messages, {"role": "assistant", "content": answer.text or "(empty answer)"},
                          repair_instruction(problems)]
                answer = await self._call(model, repair, mode, request, spent)
                data, problems = check(answer.text, answer.finish_reason, request.schema)
                if not problems:
                    return self._response(answer, data, spent, model)
                raise ModelOutputError(f"{model} gave invalid {request.schema_name} output after a "
                                       f"repair request: {'; '.join(problems[:5])}")
        finally:
            if known is None:
                self._modes.settle(model)
        # The prompt mode sends no response_format, so nothing can reject it.
        raise AssertionError("unreachable")

    @staticmethod
    def _response(answer: _Answer, data: Any, spent: _Spent, model: str) -> ModelResponse:
        return ModelResponse(text=answer.text, data=data, usage=spent.usage, model=model,
                             finish_reason=answer.finish_reason, tool_calls=answer.tool_calls)

    async def _call(self, model: str, messages: list[dict[str, str]], mode: str | None,
                    request: ModelRequest, spent: _Spent) -> _Answer:
        """One logical call: attempts with backoff until success, a hard failure or no budget."""
        budget = current_budget.get()
        if budget is not None and budget.tokens_exhausted:
            raise ModelBudgetError(f"the round's token budget is spent ({budget!r})")
        body = request_body(model, messages, mode, request.schema, request.schema_name,
                            request.max_tokens or self.max_tokens, self.temperature_for(request))
        if model not in self._no_tools:
            body.update(tools_body(request.tools, request.tool_choice))
        sink = sink_for(request)
        field = STREAMED_FIELD if request.schema is not None else None
        attempt = 0
        while True:
            streamer = None
            if sink is not None:  # a structured answer's draft holds one answer: a new call replaces it
                streamer = Streamer(sink, field, 0 if field else sink.mark())
                if field:
                    sink.mark()
                    sink.retract(0)
            try:
                answer, usage = await self._attempt(body, mode, request, spent, streamer)
            except ToolsRejectedError:  # the server takes no tools: asked again without them, not a retry
                if streamer is not None:
                    streamer.retract()
                self._no_tools.add(model)
                body = {k: v for k, v in body.items() if k not in ("tools", "tool_choice")}
                continue
            except TransientError as failure:
                if streamer is not None:
                    streamer.retract()
                if attempt >= self.max_retries:
                    raise ModelError(f"The model {model} failed after {attempt + 1} "
                                     f"attempts: {failure}") from failure
                if budget is not None and not budget.spend_retry():
                    raise ModelBudgetError(f"retry budget spent ({budget!r}); last failure: "
                                           f"{failure}") from failure
                await asyncio.sleep(backoff(attempt, failure.retry_after, base=self.backoff_base,
                                            cap=self.backoff_max, retry_after_max=self.retry_after_max))
                attempt += 1
                continue
            if budget is not None:
                budget.charge(usage)
            return answer

    async def _attempt(self, body: dict[str, Any], mode: str | None, request: ModelRequest,
                       spent: _Spent, streamer: Streamer | None = None) -> tuple[_Answer, Usage]:
        """One streamed HTTP request; adds its cost to `spent` whatever happens."""
        started = time.monotonic()
        tokens: tuple[int, int] | None = None
        parts: list[str] = []
        pieces = CallPieces()
        calls: list[ToolCall] = []
        finish = ""
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
                    events = self._post.events(response)
                    async for event in events:
                        if event.data.startswith("[DONE]"):
                            await _read_to_end(events)
                            break
                        chunk = self._chunk(event.data)
                        if chunk.get("error"):
                            raise self._stream_error(chunk["error"])
                        usage = chunk.get("usage")
                        if usage:
                            tokens = (usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
                        for choice in chunk.get("choices") or ():
                            delta = choice.get("delta") or {}
                            if delta.get("tool_calls"):
                                pieces.feed(delta["tool_calls"])
                            content = delta.get("content")
                            if content:
                                parts.append(content)
                                if streamer is not None:
                                    streamer.feed(content)
                            finish = choice.get("finish_reason") or finish
                finally:
                    await response.aclose()  # a stop or timeout ends the generation on the server
            if not finish:
                # OpenAI ends every choice with a finish_reason; a stream without one was cut
                # (llama-cpp-python ends a stream that way when a newer request interrupts it).
                raise TransientError("the response has no message" if not parts else
                                     "the answer stream ended before the answer was complete")
            calls = pieces.calls()
            if not calls and "tools" in body and (calls := calls_in_text("".join(parts), request.tools)):
                parts = [without_calls("".join(parts))]  # the calls are not the answer's text
                if streamer is not None:
                    streamer.retract()
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
            text = "".join(parts)
            said = text + "".join(json.dumps(dict(c.arguments)) for c in calls)
            if tokens is None and not opened:
                tokens = (0, 0)  # refused or unreachable: the server processed nothing
            elif tokens is None:  # the server gave no usage: count it ourselves
                tokens = (count("\n".join(str(m.get("content", "")) for m in body["messages"])),
                          count(said) if said else 0)
            received = response.num_bytes_downloaded if response is not None else 0
            cost = Usage(tokens[0], tokens[1], sent, received, 1, time.monotonic() - started)
            spent.usage += cost
            if self.log_io:
                log_call(ModelCall(request=request, body=body, mode=mode, answer=text,
                                   finish_reason=finish, usage=cost, error=error, tool_calls=tuple(calls)))
        return _Answer(text, finish, tuple(calls)), cost

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

    def _chunk(self, data: str) -> dict[str, Any]:
        try:
            chunk = json.loads(data)
        except ValueError:
            chunk = None
        if not isinstance(chunk, dict):
            raise ModelError(f"The model server sent an answer event that is not a JSON object: {data[:100]!r}")
        return chunk

    def _stream_error(self, error: Any) -> Exception:
        """An error the server sent as an event of its answer (vLLM does, for one)."""
        detail = error.get("message") if isinstance(error, Mapping) else error
        code = error.get("code") if isinstance(error, Mapping) else None
        text = f"The model server reported an error while answering: {self._plain(str(detail))}"
        return TransientError(text) if isinstance(code, int) and is_transient(code) else ModelError(text)

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


async def _read_to_end(events: Any) -> None:
    """Read what follows `[DONE]`: normally nothing but the end of the body, which puts the
    connection back in the pool and lets the decoder's generators finish; a server that keeps
    the body open gets `DRAIN_SECONDS`, as the SDK gives it, and the connection is closed."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in events:
                pass


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
