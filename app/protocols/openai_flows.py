"""The caller's published flows as models of the OpenAI-compatible API: `flow/<slug>` (`app.protocols.flow_tools`).

A chat completion with such a model runs the flow's latest published version: the last user message
fills its first string input, `metadata` may name other inputs (each a string: a number, a boolean or
a JSON list as text for inputs of those types). The answer is the flow's outputs (its `last` message),
whole or streamed. A human node ends the completion with its question and actions; the conversation's
next user message is the action taken (the workflow found as for Foreman's own model, or named by
`X-Foreman-Workflow`), and its completion follows the same round on.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from typing import Any

import msgspec

from app.contract.schemas import ReviewRequest
from app.errors import BadRequestError, NotFoundError
from app.protocols import flow_tools
from app.protocols.flow_tools import FlowTool
from app.protocols.rounds import Ended, Round, Rounds, Text, Waiting
from app.rounds.live import event_data
from app.store.records import Owner

PREFIX = "flow/"


def model_of(flow: FlowTool) -> dict[str, Any]:
    return {"id": PREFIX + flow.slug, "object": "model", "created": 0, "owned_by": "foreman",
            "name": flow.definition.name, "description": flow.description}


async def models(rounds: Rounds, owner: Owner) -> list[dict[str, Any]]:
    return [model_of(f) for f in await flow_tools.published(rounds, owner)]


async def flow_of(rounds: Rounds, owner: Owner, model: str) -> FlowTool:
    flow = await flow_tools.find(rounds, owner, model.removeprefix(PREFIX))
    if flow is None:
        raise NotFoundError(f"The model {model[:80]!r} does not exist: no published flow of yours has that name.",
                            code="model_not_found")
    return flow


def inputs_of(flow: FlowTool, prompt: str, metadata: dict[str, str] | None) -> dict[str, Any]:
    """The flow's inputs: the prompt in its first string input, the others from `metadata` by name."""
    inputs: dict[str, Any] = {}
    first = flow.first_string_input()
    if first is not None and prompt:
        inputs[first] = prompt
    for name, value in (metadata or {}).items():
        spec = flow.definition.inputs.get(name)
        if spec is None:
            continue  # other metadata (foreman_workflow_id, ...) is not an input
        if spec.type == "string":
            inputs[name] = value
            continue
        try:
            inputs[name] = msgspec.json.decode(value)
        except msgspec.DecodeError:
            raise BadRequestError(f"metadata.{name} must be the flow's {spec.type} input as JSON text, "
                                  f"not {value[:40]!r}.", code="invalid_inputs") from None
    return inputs


async def start_or_answer(rounds: Rounds, owner: Owner, flow: FlowTool, workflow_id: str | None, prompt: str,
                          metadata: dict[str, str] | None) -> Round:
    """The answer to the workflow's waiting human node (the prompt is its action), or a new run."""
    if workflow_id is not None:
        row = await rounds.workflows.owned(owner, workflow_id)
        if row.status == "waiting" and (row.waiting_for or {}).get("kind") == "node":
            return await rounds.decide(owner, workflow_id, ReviewRequest(decision=prompt.strip()[:100] or "?"),
                                       row=row)
    return await flow_tools.run(rounds, owner, flow, inputs_of(flow, prompt, metadata))


async def answer(rounds: Rounds, run: Round) -> tuple[str, Ended | Waiting | None]:
    """The flow's outputs as text (or its human node's question), once it ended or waits."""
    last = ""
    async for part in rounds.follow(run, waits=True):
        if isinstance(part, Text) and part.kind == "last":
            last = part.text
        elif isinstance(part, Ended | Waiting):
            return await _text(rounds, run, last, part), part
    return "_The conversation was deleted before the flow ended._", None


async def _text(rounds: Rounds, run: Round, last: str, end: Ended | Waiting) -> str:
    if isinstance(end, Waiting):
        asked = await flow_tools.question(rounds, run.owner, run.workflow_id, end.waiting_for)
        return f"{asked}\n\nReply with one of: {', '.join(end.waiting_for.decisions)}."
    if end.status == "failed":
        return f"{last}\n\n**The flow failed:** {end.error or 'see the workflow log.'}".strip()
    if end.status == "stopped":
        return "_The flow was stopped._"
    return last


def completion(model: str, completion_id: str, text: str, end: Ended | Waiting | None) -> dict[str, Any]:
    return {"id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                         "logprobs": None}], "usage": usage(end)}


async def chunks(rounds: Rounds, run: Round, model: str, completion_id: str,
                 include_usage: bool) -> AsyncGenerator[bytes, None]:
    """The flow's answer as chat.completion.chunk events (keep-alive comments while it runs)."""
    base = {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    extra = {"usage": None} if include_usage else {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}
        return b"data: " + event_data(body | extra) + b"\n\n"

    yield chunk({"role": "assistant", "content": ""})
    last = ""
    end: Ended | Waiting | None = None
    async for part in rounds.follow(run, heartbeats=True, waits=True):
        if part is None:
            yield b": keepalive\n\n"
        elif isinstance(part, Text) and part.kind == "last":
            last = part.text
        elif isinstance(part, Ended | Waiting):
            end = part
            yield chunk({"content": await _text(rounds, run, last, part)})
    yield chunk({}, "stop")
    if include_usage:
        yield b"data: " + event_data(base | {"choices": [], "usage": usage(end)}) + b"\n\n"
    yield b"data: [DONE]\n\n"


def usage(end: Ended | Waiting | None) -> dict[str, int]:
    tokens = end.tokens if end else 0
    return {"prompt_tokens": 0, "completion_tokens": tokens, "total_tokens": tokens}
