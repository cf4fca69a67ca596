"""The OpenAI-compatible model client: the only module that imports `openai`.

It owns what the SDK would otherwise decide for us: a hard timeout per call, retries on
transient failures only (drawn from the round's `RetryBudget`), byte and token accounting,
and structured output that degrades from `json_schema` to `json_object` to a prompt.
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

from app.jsonschema import JSONExtractError, extract_json, validate
from app.model import (
    ModelBudgetError,
    ModelError,
    ModelOutputError,
    ModelRequest,
    ModelResponse,
    Usage,
    current_budget,
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


class OpenAIModel:
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
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = model
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
        # Which structured-output mode works, per served model name (the base URL is fixed).
        self.modes: dict[str, str] = {}
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
        start = MODES.index(self.modes.get(model, MODES[0]))
        for mode in MODES[start:]:
            messages = [*request.messages, _schema_instruction(request.schema, mode)]
            try:
                answer = await self._call(model, messages, mode, request, spent)
            except _FormatRejected:
                continue
            self.modes[model] = mode
            data, problems = _check(answer, request.schema)
            if not problems:
                return ModelResponse(text=answer.text, data=data, usage=spent.usage, model=model)
            repair = [*messages, {"role": "assistant", "content": answer.text},
                      _repair_instruction(problems)]
            answer = await self._call(model, repair, mode, request, spent)
            data, problems = _check(answer, request.schema)
            if not problems:
                return ModelResponse(text=answer.text, data=data, usage=spent.usage, model=model)
            raise ModelOutputError(f"{model} gave invalid {request.schema_name} output after a "
                                   f"repair request: {'; '.join(problems[:5])}")
        # The prompt mode sends no response_format, so nothing can reject it.
        raise AssertionError("unreachable")

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
                answer, usage = await self._attempt(body, mode, spent)
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

    async def _attempt(self, body: dict[str, Any], mode: str | None,
                       spent: _Spent) -> tuple[_Answer, Usage]:
        """One HTTP request; adds its cost to `spent` whatever happens."""
        meter = _Meter()
        token = _meter.set(meter)
        started = time.monotonic()
        tokens = (0, 0)
        try:
            async with asyncio.timeout(self.timeout):
                raw = await self._client.chat.completions.with_raw_response.create(**body)
            answer, tokens = _read_answer(_json_body(raw.http_response))
        except (TimeoutError, openai.APITimeoutError) as exc:
            raise _Transient(f"no answer within {self.timeout:g}s") from exc
        except openai.APIConnectionError as exc:
            raise _Transient(f"connection failed: {_cause(exc)}") from exc
        except openai.APIStatusError as exc:
            raise self._classify(exc, mode) from exc
        finally:
            _meter.reset(token)
            cost = Usage(tokens[0], tokens[1], meter.sent, meter.received, 1,
                         time.monotonic() - started)
            spent.usage += cost
        return answer, cost

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
        if self.temperature is not None:
            body["temperature"] = self.temperature
        schema = dict(request.schema or {})
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": _format_name(request.schema_name), "schema": schema, "strict": False}}
        elif mode == "json_object":
            # OpenAI ignores the extra "schema" key; llama.cpp turns it into a grammar.
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body


def _schema_instruction(schema: Mapping[str, Any], mode: str) -> dict[str, str]:
    if mode == "json_schema":
        # The server enforces the schema; the word "JSON" is still required by OpenAI's rules.
        return {"role": "system", "content": "Answer with JSON only."}
    return {"role": "system", "content": "Answer with one JSON value only, no prose, matching "
                                         f"this JSON schema:\n{json.dumps(schema)}"}


def _repair_instruction(problems: list[str]) -> dict[str, str]:
    listed = "\n".join(f"- {p}" for p in problems[:20])
    return {"role": "user", "content": "Your answer did not match the required JSON schema:\n"
                                       f"{listed}\nReply again with only the corrected JSON."}


def _check(answer: _Answer, schema: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """Parse and validate; the problems say precisely what a repair must fix."""
    try:
        data = extract_json(answer.text)
    except JSONExtractError as exc:
        problems = [str(exc)]
        if answer.finish_reason == "length":
            problems.append("the answer was cut off at the token limit; answer more briefly")
        return None, problems
    return data, validate(data, schema)


def _json_body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        # A 200 with a body that is not JSON comes from a broken proxy or gateway: transient.
        raise _Transient(f"the response body is not JSON: {response.text[:80]!r}") from exc


def _read_answer(payload: Any) -> tuple[_Answer, tuple[int, int]]:
    usage = payload.get("usage") if isinstance(payload, dict) else None
    tokens = (0, 0)
    if isinstance(usage, dict):
        tokens = (int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    try:
        choice = payload["choices"][0]
        content = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise _Transient(f"the response has no message: {json.dumps(payload)[:120]}") from exc
    return _Answer(content, choice.get("finish_reason") or ""), tokens


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


def _cause(exc: BaseException) -> str:
    # The root cause names the real problem ("Connection refused"); wrappers only generalise.
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return f"{type(exc).__name__}: {exc}"


def _format_name(name: str) -> str:
    # OpenAI requires ^[a-zA-Z0-9_-]{1,64}$ for the schema name.
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64]
    return cleaned or "output"
