"""What one `complete()` is, whatever sends its requests: the served model and temperature per agent,
structured output that degrades from `json_schema` to `json_object` to a prompt (`app.llm.modes`) with
one repair request, tool calls offered until a server refuses them (`app.llm.tools`), and retries on
transient failures only, drawn from the round's `RetryBudget` (`app.llm.retries`). One attempt, one
streamed HTTP request, is the client's (`app.llm.client.OpenAIModel._attempt`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from agents.model import (
    CallScope,
    Model,
    ModelBudgetError,
    ModelError,
    ModelOutputError,
    ModelRequest,
    ModelResponse,
    Usage,
)
from app.llm.answers import Answer, Spent
from app.llm.modes import FormatRejectedError, ModeProbes
from app.llm.retries import TransientError, backoff
from app.llm.streaming import Streamer
from app.llm.structured import (
    KIND_TEMPERATURES,
    check,
    parse,
    repair_instruction,
    request_body,
    with_instruction,
)
from app.llm.tools import ToolsRejectedError, tools_body


class Completions(Model):
    """A `Model` over chat completions: a subclass makes one attempt (`_attempt`), this the rest."""

    offline = False

    def __init__(self, *, model: str, agent_models: Mapping[str, str] | None, max_retries: int,
                 backoff_base: float, backoff_max: float, retry_after_max: float, max_tokens: int | None,
                 temperature: float | None, agent_temperatures: Mapping[str, float] | None) -> None:
        self.name = model
        self.model = model
        self.agent_models = dict(agent_models or {})
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.agent_temperatures = dict(agent_temperatures or {})
        self._modes = ModeProbes()
        self.modes = self._modes.modes  # which structured-output mode works, per served model name
        self._no_tools: set[str] = set()  # served models whose server refused `tools`: not offered again

    async def _attempt(self, body: dict[str, Any], mode: str | None, request: ModelRequest,
                       spent: Spent, streamer: Streamer | None = None) -> tuple[Answer, Usage]:
        """One request of `body`; adds its cost to `spent` whatever happens. Raises `TransientError` (worth
        another attempt), `FormatRejectedError`, `ToolsRejectedError` or `ModelError`."""
        raise NotImplementedError

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
        spent = Spent()
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
                                   spent: Spent) -> ModelResponse:
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
    def _response(answer: Answer, data: Any, spent: Spent, model: str) -> ModelResponse:
        return ModelResponse(text=answer.text, data=data, usage=spent.usage, model=model,
                             finish_reason=answer.finish_reason, tool_calls=answer.tool_calls)

    async def _call(self, model: str, messages: list[dict[str, str]], mode: str | None,
                    request: ModelRequest, spent: Spent) -> Answer:
        """One logical call: attempts with backoff until success, a hard failure or no budget."""
        scope = CallScope.current()
        budget = scope.budget
        if budget is not None and budget.tokens_exhausted:
            raise ModelBudgetError(f"the round's token budget is spent ({budget!r})")
        body = request_body(model, messages, mode, request.schema, request.schema_name,
                            request.max_tokens or self.max_tokens, self.temperature_for(request))
        if model not in self._no_tools:
            body.update(tools_body(request.tools, request.tool_choice))
        stream = scope.stream(request)
        attempt = 0
        while True:
            streamer = None
            if stream is not None:  # a structured answer's draft holds one answer: a new call replaces it
                sink, field = stream.sink, stream.field
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
