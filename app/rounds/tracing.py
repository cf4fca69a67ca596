"""Every round as an OpenTelemetry trace, with the GenAI semantic conventions' attributes.

Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set (`Settings.tracing`): then `configure()`
builds an SDK tracer provider exporting over OTLP/HTTP, and the SDK reads the other standard
`OTEL_*` variables itself (headers, timeout, service name, resource attributes, sampler, batch
delays). Off, nothing of the SDK is imported and every hook returns after one check of the
module's `_tracer` (a shared null context, or the model as it was).

One trace per round: a round span (`foreman.round`) with children for reading the files,
planning, each task (`invoke_agent <agent>`), each model call (`chat <model>`) and the final
answer. The trace id is derived from the workflow id and the round number (`trace_id`), so a
round resumed after a crash, or taken over by another replica, continues the same trace without
storing anything: each execution adds its own round span to it. The round's outcome (the FSM's
transition, `outcome`) is the round span's status, set explicitly (completed, stopped: OK;
failed: ERROR) and its `foreman.round.status` (`waiting`: the round waits for the user, and its execution after the
decision adds another round span to the same trace). Prompt and completion text go on the model call's
span only with `LOG_MODEL_IO=true`.

The provider is this module's own, not the process-global one (DBOS sets that one up for its own
spans when configured to): nothing else's spans land in Foreman's traces.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

from agents.model import CallScope, ModelError, ModelRequest, ModelResponse
from app.store.ownership import ClaimLostError

_tracer: Any = None  # the SDK tracer while tracing is on; None: every hook is a no-op
_provider: Any = None
_log_io = False
_NULL = nullcontext()
_round_trace: ContextVar[int | None] = ContextVar("foreman_round_trace", default=None)
_conversation: ContextVar[str | None] = ContextVar("foreman_conversation", default=None)
_live: dict[tuple[str, int], Any] = {}  # (workflow, round) -> its round span in this process
_ENDED = ("completed", "failed", "stopped")


def enabled() -> bool:
    return _tracer is not None


def configure(env: Mapping[str, str], *, log_io: bool = False, exporter: Any = None) -> None:
    """Turn tracing on: OTLP/HTTP to the environment's endpoint, or `exporter` (tests), spans sent
    as they end (`exporter`) or in batches (OTLP)."""
    global _tracer, _provider, _log_io
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    shutdown()
    named = "OTEL_SERVICE_NAME" in env or "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    provider = TracerProvider(resource=Resource.create({} if named else {"service.name": "foreman"}),
                              id_generator=_round_ids())
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    _provider, _log_io = provider, log_io
    _tracer = provider.get_tracer("foreman")


def flush() -> None:
    """Export what is pending now (a served process exports in the background, every few seconds)."""
    if _provider is not None:
        _provider.force_flush()


def shutdown() -> None:
    """Export what is pending and turn tracing off."""
    global _tracer, _provider
    provider, _tracer, _provider = _provider, None, None
    _live.clear()
    if provider is not None:
        provider.shutdown()


def _round_ids() -> Any:
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class RoundIds(RandomIdGenerator):
        """A round's spans take its derived trace id; anything else a random one."""

        def generate_trace_id(self) -> int:
            return _round_trace.get() or super().generate_trace_id()

    return RoundIds()


def trace_id(workflow_id: str, round_no: int) -> int:
    """The round's trace id, the same in every process that runs (or resumes) the round."""
    digest = hashlib.sha256(f"foreman.round:{workflow_id}:{round_no}".encode()).digest()
    return int.from_bytes(digest[:16], "big") or 1


@contextmanager
def _round(workflow_id: str, round_no: int) -> Iterator[None]:
    from opentelemetry.trace import Status, StatusCode

    tid = trace_id(workflow_id, round_no)
    trace_token, conversation_token = _round_trace.set(tid), _conversation.set(workflow_id)
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "project_manager",
                  "gen_ai.conversation.id": workflow_id, "foreman.round": round_no}
    try:
        with CallScope.entered(trace=format(tid, "032x")), _tracer.start_as_current_span(
                "foreman.round", attributes=attributes, record_exception=True,
                set_status_on_exception=False) as span:
            _live[(workflow_id, round_no)] = span
            try:
                yield
            except ClaimLostError:  # another replica goes on with the round, in this trace
                span.set_attribute("foreman.round.status", "handed_over")
                raise
            except Exception as exc:  # the round fails (fail_step writes why, after this span)
                if span.is_recording() and "foreman.round.status" not in (span.attributes or {}):
                    span.set_attribute("foreman.round.status", "failed")
                    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
                raise
            except BaseException:  # cancelled: a stop (its outcome is recorded), or a shutdown
                if "foreman.round.status" not in (span.attributes or {}):
                    span.set_attribute("foreman.round.status", "interrupted")
                raise
            finally:
                _live.pop((workflow_id, round_no), None)
    finally:
        _round_trace.reset(trace_token)
        _conversation.reset(conversation_token)


def round_span(workflow_id: str, round_no: int) -> Any:
    """The round's span around its run (a shared null context when tracing is off)."""
    return _NULL if _tracer is None else _round(workflow_id, round_no)


def outcome(workflow_id: str, round_no: int, status: str) -> None:
    """The round's status changed (the journal's transition): its end is the round span's status."""
    if _tracer is None or status not in _ENDED and status != "waiting":
        return
    span = _live.get((workflow_id, round_no))
    if span is None or not span.is_recording():
        return
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("foreman.round.status", status)
    if status == "waiting":  # this execution ends; the one after the user's decision joins the trace
        return
    span.set_status(Status(StatusCode.ERROR, "the round failed") if status == "failed" else Status(StatusCode.OK))


def span(name: str, **attributes: Any) -> Any:
    """A child span of the round (reading the files, planning, the final answer); a null context when off.
    An exception leaving it is recorded on it, with status ERROR."""
    if _tracer is None:
        return _NULL
    attributes["gen_ai.conversation.id"] = _conversation.get()
    return _tracer.start_as_current_span(name, attributes={k: v for k, v in attributes.items() if v is not None})


def task_span(agent: str, task_id: str) -> Any:
    """One task of the plan: the GenAI `invoke_agent` operation of its agent."""
    if _tracer is None:
        return _NULL
    return span(f"invoke_agent {agent}", **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent,
                                            "foreman.task.id": task_id})


def traced_tool(caller: Any, server: str) -> Any:
    """An MCP server's caller (`agents.tools.agent.ToolCaller`), with a GenAI `execute_tool` span per call while
    tracing is on; the caller itself when it is off."""
    return caller if _tracer is None else TracedTool(caller, server)


class TracedTool:
    """One `execute_tool <server>.<tool>` span per call: the tool, and the error of a call that failed."""

    def __init__(self, inner: Any, server: str) -> None:
        self.inner, self.server = inner, server

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        name = f"{self.server}.{tool}"
        with span(f"execute_tool {name}", **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                                            "gen_ai.tool.type": "extension"}):
            output = await self.inner.call(tool, arguments)
            if getattr(output, "error", False):
                record_error(RuntimeError(f"the tool {name} reported an error"))
            return output


def record_error(exc: BaseException) -> None:
    """An error handled where it happened (a failed task) is still its span's: recorded, status ERROR."""
    if _tracer is None:
        return
    from opentelemetry.trace import Status, StatusCode, get_current_span

    current = get_current_span()
    current.record_exception(exc)
    current.set_status(Status(StatusCode.ERROR, str(exc) or type(exc).__name__))


def traced(model: Any) -> Any:
    """The model, with a span per call while tracing is on; the model itself when it is off."""
    return model if _tracer is None else TracedModel(model)


class TracedModel:
    """Any `Model`, one GenAI `chat` span per call: model, agent, tokens, finish reason, errors."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response: ModelResponse
        if _tracer is None:
            response = await self.inner.complete(request)
            return response
        model_for = getattr(self.inner, "model_for", None)
        model = model_for(request.agent) if callable(model_for) else getattr(self.inner, "name", "model")
        offline = bool(self.inner.offline)
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                      "gen_ai.provider.name": "foreman.offline" if offline else "openai",
                      "gen_ai.agent.name": request.agent, "foreman.model.purpose": request.purpose}
        if request.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = request.max_tokens
        if request.temperature is not None:
            attributes["gen_ai.request.temperature"] = request.temperature
        if _log_io:
            attributes["gen_ai.input.messages"] = json.dumps(request.messages, ensure_ascii=False)
        with span(f"chat {model}", **attributes) as current:
            try:
                response = await self.inner.complete(request)
            except ModelError as exc:
                _usage(current, exc.usage)
                current.set_attribute("error.type", exc.code)
                raise
            _usage(current, response.usage)
            if response.model:
                current.set_attribute("gen_ai.response.model", response.model)
            if response.finish_reason:
                current.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason])
            if _log_io:
                current.set_attribute("gen_ai.output.messages", json.dumps(
                    [{"role": "assistant", "content": response.text}], ensure_ascii=False))
            return response


def _usage(current: Any, usage: Any) -> None:
    current.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
    current.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
