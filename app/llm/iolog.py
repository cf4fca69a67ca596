"""The model I/O log (`LOG_MODEL_IO=true`): one record per model call, for debugging prompts.

Each record names the workflow, round, task and agent the call served, the request's messages,
the structured-output mode, the answer, the usage and the time. Long texts are cut with their
full length noted; keys and headers are never part of it, and file bytes never reach a model
message in the first place.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from agents.model import CallScope, ModelRequest, ToolCall, Usage

log = logging.getLogger("foreman.model_io")
TEXT_LIMIT = 4000  # characters of one message or answer kept in the log


@dataclass(frozen=True)
class ModelCall:
    """One HTTP call to the model, as the log shows it."""

    request: ModelRequest
    body: dict[str, Any]
    mode: str | None
    answer: str
    finish_reason: str
    usage: Usage
    error: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


def cut(text: str, limit: int = TEXT_LIMIT) -> str:
    """`text`, or its beginning with the full length noted when it is longer than `limit`."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut: {len(text)} characters in full]"


def call_record(call: ModelCall) -> dict[str, Any]:
    """The log record's fields: plain JSON values only."""
    scope = CallScope.current()
    record: dict[str, Any] = {
        "workflowId": scope.workflow,
        "round": scope.round_no,
        "taskId": scope.task,
        "agent": call.request.agent,
        "purpose": call.request.purpose,
        "model": call.body.get("model"),
        "mode": call.mode or "text",
        "temperature": call.body.get("temperature"),
        "maxTokens": call.body.get("max_tokens"),
        "messages": [{"role": m.get("role", ""), "content": cut(str(m.get("content", "")))}
                     for m in call.body.get("messages", [])],
        "answer": cut(call.answer),
        "finishReason": call.finish_reason,
        "usage": {"promptTokens": call.usage.prompt_tokens,
                  "completionTokens": call.usage.completion_tokens,
                  "bytesSent": call.usage.bytes_sent, "bytesReceived": call.usage.bytes_received},
        "seconds": round(call.usage.seconds, 3),
    }
    if call.tool_calls:
        record["toolCalls"] = [{"name": c.name, "arguments": cut(str(dict(c.arguments)))} for c in call.tool_calls]
    if call.error:
        record["error"] = call.error
    return record


def log_call(call: ModelCall) -> None:
    """Write one model call to the `foreman.model_io` logger at INFO."""
    record = call_record(call)
    log.info("model call %s %s (%s, %.2f s)", record["purpose"], record["model"], record["mode"],
             record["seconds"], extra={"model_io": record})
