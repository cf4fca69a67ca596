"""The OpenAI-compatible model client: the only module that imports `openai`.

It owns what the SDK would otherwise decide for us: a hard timeout per call, retries on
transient failures only (drawn from the round's `RetryBudget`), byte and token accounting,
and structured output that degrades from `json_schema` to `json_object` to a prompt.

Calls stream (`stream=True`): when a round is stopped or a call times out, closing the stream
closes the connection, and servers such as llama.cpp stop generating only then.
"""

from __future__ import annotations

import asyncio
import email.utils
import importlib
import json
import random
import time
from collections.abc import AsyncIterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import openai

from agents.model import (
    Model,
    ModelBudgetError,
    ModelError,
    ModelOutputError,
    ModelRequest,
    ModelResponse,
    Usage,
    current_budget,
)
from app.jsonschema import strict_compatible
from app.modellog import ModelCall, log_call
from app.structured import (
    KIND_TEMPERATURES,
    cause,
    check,
    count,
    format_name,
    parse,
    repair_instruction,
    with_instruction,
)


def _sdk_http_module() -> Any:
    # openai 1.x sends through httpx, 3.x through its fork httpx2; our client and transport
    # must come from the same package or the SDK cannot use them.
    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.split(".")[0])


httpx = _sdk_http_module()

# Structured-output modes, strongest first; an endpoint that rejects one moves to the next.
MODES = ("json_schema", "json_object", "prompt")
_REJECTION_MARKERS = ("response_format", "json_schema", "json_object")


@dataclass
class _Meter:
    """Bytes moved by the HTTP calls of one `complete()`; set in a ContextVar per call."""

    sent: int = 0
    received: int = 0


_meter: ContextVar[_Meter | None] = ContextVar("foreman_llm_meter", default=None)


class _CountingStream(httpx.AsyncByteStream):
    """Counts response body bytes as the SDK reads them (raw, before any decompression)."""

    def __init__(self, stream: httpx.AsyncByteStream, meter: _Meter) -> None:
        self._stream, self._meter = stream, meter

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            self._meter.received += len(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class MeteredTransport(httpx.AsyncBaseTransport):
    """Wraps a transport to count request and response body bytes into the current meter."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        meter = _meter.get()
        if meter is None:
            return await self._inner.handle_async_request(request)
        try:
            meter.sent += len(request.content)  # the SDK sends a buffered JSON body
        except httpx.RequestNotRead:
            pass  # a streamed upload; chat completions never send one
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _CountingStream(response.stream, meter)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Transient(Exception):
    """One attempt failed in a way worth retrying."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _FormatRejected(Exception):
    """The endpoint refused the `response_format` we sent."""


@dataclass
class _Answer:
    text: str
    finish_reason: str


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
        transport: httpx.AsyncBaseTransport | None = None,
        context_tokens: int | None = None,
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
        # Which structured-output mode works, per served model name (the base URL is fixed).
        self.modes: dict[str, str] = {}
        # A first structured call per model finds the mode; concurrent ones wait for its verdict.
        self._probes: dict[str, asyncio.Event] = {}
        self._stream_usage = True  # False once the server refuses `stream_options`
        self._http = httpx.AsyncClient(transport=MeteredTransport(transport), timeout=timeout)
        # The SDK's own retries are off: they would hide attempts from our budget and meter.
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url, api_key=api_key, max_retries=0, timeout=timeout,
            http_client=self._http,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
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
                return ModelResponse(text=answer.text, usage=spent.usage, model=model)
            return await self._complete_structured(model, request, spent)
        except ModelError as exc:
            exc.usage = spent.usage
            raise

    async def _complete_structured(self, model: str, request: ModelRequest,
                                   spent: _Spent) -> ModelResponse:
        assert request.schema is not None
        known = await self._known_mode(model)
        try:
            for mode in MODES[MODES.index(known or MODES[0]):]:
                messages = with_instruction(request.messages, request.schema, mode)
                try:
                    answer = await self._call(model, messages, mode, request, spent)
                except _FormatRejected:
                    continue
                self._accept(model, mode)
                if not request.validate:  # the caller validates and repairs
                    data = parse(answer.text)
                    return ModelResponse(text=answer.text, data=data, usage=spent.usage, model=model,
                                         finish_reason=answer.finish_reason)
                data, problems = check(answer.text, answer.finish_reason, request.schema)
                if not problems:
                    return ModelResponse(text=answer.text, data=data, usage=spent.usage,
                                         model=model, finish_reason=answer.finish_reason)
                repair = [*messages, {"role": "assistant", "content": answer.text or "(empty answer)"},
                          repair_instruction(problems)]
                answer = await self._call(model, repair, mode, request, spent)
                data, problems = check(answer.text, answer.finish_reason, request.schema)
                if not problems:
                    return ModelResponse(text=answer.text, data=data, usage=spent.usage,
                                         model=model, finish_reason=answer.finish_reason)
                raise ModelOutputError(f"{model} gave invalid {request.schema_name} output after a "
                                       f"repair request: {'; '.join(problems[:5])}")
        finally:
            if known is None:
                self._settle(model)
        # The prompt mode sends no response_format, so nothing can reject it.
        raise AssertionError("unreachable")

    async def _known_mode(self, model: str) -> str | None:
        """The mode that works for `model`, waiting for a probe under way; None: probe it now."""
        while model not in self.modes:
            probe = self._probes.get(model)
            if probe is None:
                self._probes[model] = asyncio.Event()
                return None
            await probe.wait()
        return self.modes[model]

    def _accept(self, model: str, mode: str) -> None:
        """The endpoint took `mode`: remember it and let waiting first calls go on."""
        self.modes[model] = mode
        self._settle(model)

    def _settle(self, model: str) -> None:
        probe = self._probes.pop(model, None)
        if probe is not None:
            probe.set()

    async def _call(self, model: str, messages: list[dict[str, str]], mode: str | None,
                    request: ModelRequest, spent: _Spent) -> _Answer:
        """One logical call: attempts with backoff until success, a hard failure or no budget."""
        budget = current_budget.get()
        if budget is not None and budget.tokens_exhausted:
            raise ModelBudgetError(f"the round's token budget is spent ({budget!r})")
        body = self._body(model, messages, mode, request)
        attempt = 0
        while True:
            try:
                answer, usage = await self._attempt(body, mode, request, spent)
            except _Transient as failure:
                if attempt >= self.max_retries:
                    raise ModelError(f"{model} at {self.base_url} failed after {attempt + 1} "
                                     f"attempts: {failure}") from failure
                if budget is not None and not budget.spend_retry():
                    raise ModelBudgetError(f"retry budget spent ({budget!r}); last failure: "
                                           f"{failure}") from failure
                await asyncio.sleep(self._delay(attempt, failure.retry_after))
                attempt += 1
                continue
            if budget is not None:
                budget.charge(usage)
            return answer

    async def _attempt(self, body: dict[str, Any], mode: str | None, request: ModelRequest,
                       spent: _Spent) -> tuple[_Answer, Usage]:
        """One streamed HTTP request; adds its cost to `spent` whatever happens."""
        meter = _Meter()
        token = _meter.set(meter)
        started = time.monotonic()
        tokens: tuple[int, int] | None = None
        parts: list[str] = []
        finish = ""
        error: str | None = None
        opened = False
        try:
            async with asyncio.timeout(self.timeout):
                stream = await self._open(body)
                opened = True
                if mode is not None:
                    self._accept(body["model"], mode)
                try:
                    async for chunk in stream:
                        if chunk.usage is not None:
                            tokens = (chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                        for choice in chunk.choices or ():
                            if choice.delta is not None and choice.delta.content:
                                parts.append(choice.delta.content)
                            finish = choice.finish_reason or finish
                finally:
                    await stream.close()  # a stop or timeout ends the generation on the server
            if not finish:
                # OpenAI ends every choice with a finish_reason; a stream without one was cut
                # (llama-cpp-python ends a stream that way when a newer request interrupts it).
                raise _Transient("the response has no message" if not parts else
                                 "the answer stream ended before the answer was complete")
        except (TimeoutError, openai.APITimeoutError) as exc:
            error = f"no answer within {self.timeout:g}s"
            raise _Transient(error) from exc
        except (openai.APIConnectionError, httpx.HTTPError) as exc:
            error = f"connection failed: {cause(exc)}"
            raise _Transient(error) from exc
        except openai.APIStatusError as exc:
            failure = self._classify(exc, mode)
            error = str(failure)
            raise failure from exc
        except _Transient as exc:
            error = str(exc)
            raise
        except asyncio.CancelledError:
            error = "cancelled"
            raise
        finally:
            _meter.reset(token)
            text = "".join(parts)
            if tokens is None and not opened:
                tokens = (0, 0)  # refused or unreachable: the server processed nothing
            elif tokens is None:  # the server gave no usage: count it ourselves
                tokens = (count(json.dumps(body["messages"], ensure_ascii=False)),
                          count(text) if text else 0)
            cost = Usage(tokens[0], tokens[1], meter.sent, meter.received, 1,
                         time.monotonic() - started)
            spent.usage += cost
            if self.log_io:
                log_call(ModelCall(request=request, body=body, mode=mode, answer=text,
                                   finish_reason=finish, usage=cost, error=error))
        return _Answer(text, finish), cost

    async def _open(self, body: dict[str, Any]) -> Any:
        """Start a streamed completion; without `stream_options` when the server refuses it."""
        if self._stream_usage:
            try:
                return await self._client.chat.completions.create(
                    **body, stream=True, stream_options={"include_usage": True})
            except openai.APIStatusError as exc:
                if exc.status_code not in (400, 422) or "stream_options" not in _error_text(exc):
                    raise
                self._stream_usage = False
        return await self._client.chat.completions.create(**body, stream=True)

    def _classify(self, exc: openai.APIStatusError, mode: str | None) -> Exception:
        status, detail = exc.status_code, _error_text(exc)
        # llama-cpp-python answers an unknown response_format with a 500, others with 400/422.
        if mode in ("json_schema", "json_object") and status in (400, 422, 500) and any(
                marker in detail.lower() for marker in _REJECTION_MARKERS):
            return _FormatRejected(detail)
        if status in (408, 429) or status >= 500:
            return _Transient(f"HTTP {status}: {detail}", _retry_after(exc.response.headers))
        return ModelError(f"{self.base_url} answered HTTP {status}: {detail}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        # A Retry-After longer than we are willing to wait is ignored, as the SDK does: the
        # round's budget, not the provider, decides how long a round may stall.
        if retry_after is not None and 0 <= retry_after <= self.retry_after_max:
            return retry_after
        # Exponential backoff with jitter, so parallel agents hitting one limit spread out.
        return min(self.backoff_max, self.backoff_base * 2 ** attempt) * random.uniform(0.5, 1.0)

    def _body(self, model: str, messages: list[dict[str, str]], mode: str | None,
              request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "messages": messages}
        max_tokens = request.max_tokens or self.max_tokens
        if max_tokens:
            body["max_tokens"] = max_tokens
        temperature = self.temperature_for(request)
        if temperature is not None:
            body["temperature"] = temperature
        schema = dict(request.schema or {})
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": format_name(request.schema_name), "schema": schema,
                "strict": strict_compatible(schema)}}
        elif mode == "json_object":
            # OpenAI ignores the extra "schema" key; llama.cpp turns it into a grammar.
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body
        return message if isinstance(message, str) else json.dumps(message)[:300]
    return exc.response.text[:300] if exc.response is not None else str(exc)


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None
