"""The MCP tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) over rounds.

A `start_round` call from a client that declares the extension in the request's capabilities is
answered with a task handle (`resultType` "task") instead of the tool's result; `tasks/get` reads the
round, `tasks/update` answers what a waiting round waits for, `tasks/cancel` stops it. Other clients
get the tool's result as before.

A task is a round: its id names the workflow, the round and where the round's items begin, so
nothing is kept in memory and any replica answers, also after a restart. Each request is the
caller's by the API's keys; another caller's task id is an unknown task.

Map: running -> working (the latest log line as `statusMessage`: the progress the round's logs
report); waiting -> input_required (a form elicitation for the review or the agent's question);
completed -> completed with a read_round-like result; failed -> completed with `isError` (a tool
error, not a JSON-RPC one, which the spec keeps for `failed`); stopped -> cancelled.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolRequestParams, CallToolResult, RequestParams, ResourceLink, TextContent
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from app.contract.schemas import LogEntry, Message, ReviewRequest
from app.contract.views import waiting_view
from app.errors import ApplicationError, UnauthorizedError
from app.protocols.flow_tools import one_wait, outputs_of, question

ID = "io.modelcontextprotocol/tasks"
POLL_MS = 2000
PAGE = 500
URI = "foreman://files/{file_id}"


class TaskParams(RequestParams):
    task_id: str = Field(alias="taskId")


class UpdateParams(TaskParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses", default_factory=dict)


class _Headers:
    def __init__(self, headers: Any) -> None:
        self.headers = headers


def task_id(workflow_id: str, round_no: int, after_message: int, after_log: int) -> str:
    """The task of a round: the workflow, the round, and the last message and log before it."""
    return f"{workflow_id}:{round_no}:{after_message}:{after_log}"


def _parse(value: str) -> tuple[str, int, int, int]:
    parts = value.rsplit(":", 3)
    if len(parts) != 4 or not all(p.isascii() and p.isdigit() and len(p) < 19 for p in parts[1:]) or not parts[0]:
        raise _unknown()
    return parts[0], int(parts[1]), int(parts[2]), int(parts[3])


def _unknown(detail: str = "Task not found") -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=f"Failed to retrieve task: {detail}")


def declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request declares the extension: on the 2026-07-28 wire the capabilities are the
    request's own (its `_meta`); an older session's handshake is no such declaration."""
    capabilities = ctx.session.client_capabilities
    return (ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            and bool(capabilities and capabilities.extensions and ID in capabilities.extensions))


def _stamp(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


class RoundTasks(Extension):
    """Rounds as tasks, over the same `Rounds` services the tools use."""

    identifier = ID

    def __init__(self, rounds: Any, auth: Any) -> None:
        self.rounds = rounds
        self.auth = auth

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("tasks/get", TaskParams, self.get), MethodBinding("tasks/update", UpdateParams,
                                                                                 self.update),
                MethodBinding("tasks/cancel", TaskParams, self.cancel)]

    def caller(self, ctx: ServerRequestContext[Any, Any]) -> Any:
        try:
            return self.auth.owner(_Headers(getattr(ctx.request, "headers", None) or {}))
        except UnauthorizedError as exc:
            raise MCPError(code=INVALID_PARAMS, message=exc.detail) from None

    async def intercept_tool_call(self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any],
                                  call_next: CallNext) -> HandlerResult:
        if not (params.name == "start_round" or params.name.startswith("flow_")) or not declared(ctx):
            return await call_next(ctx)
        owner = self.caller(ctx)
        after = (0, 0)
        workflow_id = (params.arguments or {}).get("workflow_id")
        if isinstance(workflow_id, str):  # the round's items come after the workflow's last ones now
            try:
                row = await self.rounds.workflows.owned(owner, workflow_id)
                after = (row.last_message_id, row.last_log_id)
            except ApplicationError:
                pass  # the tool answers the error
        result = await call_next(ctx)
        if not isinstance(result, CallToolResult) or result.is_error or not result.structured_content:
            return result  # it did not start: the tool's error, at once
        started = result.structured_content
        now = _stamp(datetime.now(UTC))
        return {"resultType": "task", "taskId": task_id(started["workflowId"], started["round"], *after),
                "status": "working", "statusMessage": f"Round {started['round']} of workflow "
                f"{started['workflowId']} started.", "createdAt": now, "lastUpdatedAt": now, "ttlMs": None,
                "pollIntervalMs": POLL_MS}

    async def _round(self, ctx: ServerRequestContext[Any, Any], value: str) -> tuple[Any, Any, int, int, int]:
        require_client_extension(ctx, ID)
        return await self.locate(self.caller(ctx), value)

    async def locate(self, owner: Any, value: str) -> tuple[Any, Any, int, int, int]:
        """The caller, the workflow and the round a task id names (an unknown task when not the caller's)."""
        workflow_id, round_no, after_message, after_log = _parse(value)
        try:
            row = await self.rounds.workflows.owned(owner, workflow_id)
        except ApplicationError:
            raise _unknown() from None  # another caller's task is no task of this one
        if round_no < 1 or after_message > row.last_message_id or after_log > row.last_log_id:
            raise _unknown()
        return owner, row, round_no, after_message, after_log

    async def _items(self, owner: Any, workflow_id: str, kind: str, after: int, round_no: int) -> list[Any]:
        """The round's messages or logs (those after `after` of its round)."""
        items: list[Any] = []
        while True:
            try:
                page = await self.rounds.workflows.page(owner, workflow_id, kind, after, PAGE)
            except ApplicationError:
                raise _unknown() from None
            items += [i for i in page.items if i.round == round_no]
            if not page.has_more or (page.items and page.items[-1].round > round_no):
                return items
            after = page.last_id

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        require_client_extension(ctx, ID)
        return await self.state(self.caller(ctx), params.task_id)

    async def state(self, owner: Any, value: str) -> dict[str, Any]:
        """The task as tasks/get and notifications/tasks tell it (without `resultType`)."""
        owner, row, round_no, after_message, after_log = await self.locate(owner, value)
        logs: list[LogEntry] = await self._items(owner, row.id, "logs", after_log, round_no)
        if round_no == row.current_round:
            status = row.status
        elif round_no < row.current_round:  # an earlier round: as its last log left it
            status = next((e.status for e in reversed(logs) if e.status in ("completed", "stopped", "failed")),
                          "completed")
        else:
            raise _unknown()  # start_round answers once its round is the current one: no such round
        created = logs[0].timestamp if logs else row.started_at
        updated = logs[-1].timestamp if logs else row.last_activity
        task: dict[str, Any] = {"taskId": value, "createdAt": _stamp(created),
                                "lastUpdatedAt": _stamp(updated), "ttlMs": None, "pollIntervalMs": POLL_MS}
        latest = logs[-1] if logs else None
        if status == "running":
            message = f"{latest.progress}%: {latest.message}" if latest else "The round is starting."
            return {**task, "status": "working", "statusMessage": message}
        if status == "waiting":
            waiting = waiting_view(row)
            if waiting is None:
                return {**task, "status": "working"}
            requests: dict[str, Any] = {}  # one per decision: a flow's human nodes waiting at once, each
            for one in one_wait(waiting):
                asks = await question(self.rounds, owner, row.id, one) if one.kind == "node" else _asks(one)
                requests[_key(one)] = _elicitation(one, asks)
            return {**task, "status": "input_required", "inputRequests": requests,
                    "statusMessage": "\n".join(r["params"]["message"] for r in requests.values())}
        if status == "stopped":
            return {**task, "status": "cancelled", "statusMessage": "The round was stopped."}
        messages: list[Message] = await self._items(owner, row.id, "messages", after_message, round_no)
        error = next((e.message for e in reversed(logs) if e.type == "error"), "The round failed.")
        result = _result(row.id, round_no, status, messages, error if status == "failed" else None)
        return {**task, "status": "completed", "statusMessage": f"The round {status}.",
                "result": result.model_dump(by_alias=True, mode="json", exclude_none=True)}

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> dict[str, Any]:
        owner, row, round_no, _, _ = await self._round(ctx, params.task_id)
        current = waiting_view(row) if round_no == row.current_round else None
        # The first response to an open request: the engine takes one decision at a time, and a human node
        # still waiting after it is asked again under the same key.
        waiting, answer = next(((one, params.input_responses[_key(one)]) for one in (one_wait(current) if current
                                                                                     else [])
                                if _key(one) in params.input_responses), (None, None))
        if waiting is None or not isinstance(answer, dict) or answer.get("action") == "cancel":
            return {}  # nothing outstanding under that key: ignored, as the spec says
        given = answer.get("content")
        content = {k: v for k, v in given.items() if isinstance(v, str)} if isinstance(given, dict) else {}
        decision = "reject" if answer.get("action") == "decline" else content.get("decision")
        if waiting.kind == "question" and decision is None:
            decision = "answer"
        if decision not in waiting.decisions or decision == "edit":
            raise MCPError(code=INVALID_PARAMS, message=f"decision must be one of {_choices(waiting)}, "
                                                        f"not {str(decision)[:40]!r}.")
        body = ReviewRequest(decision=decision, message_id=waiting.message_id,
                             feedback=content.get("feedback") or None, answer=content.get("answer") or None)
        try:
            await self.rounds.workflows.reviews.decide(owner, row.id, body)
        except ApplicationError as exc:
            raise MCPError(code=INVALID_PARAMS, message=exc.detail, data={"code": exc.code}) from None
        return {}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        owner, row, round_no, _, _ = await self._round(ctx, params.task_id)
        if round_no == row.current_round and row.status in ("running", "waiting"):
            try:
                await self.rounds.workflows.stop(owner, row.id)
            except ApplicationError:
                pass  # it ended meanwhile: cancelling is cooperative, the ack stands
        return {}


def _key(waiting: Any) -> str:
    """Unique over the task's life: one wait is one message."""
    return f"{waiting.kind}-{waiting.message_id}"


def _choices(waiting: Any) -> list[str]:
    return [d for d in waiting.decisions if d != "edit"]  # an edited plan is the REST API's


def _asks(waiting: Any) -> str:
    if waiting.kind == "question":
        return f"{waiting.agent or 'An agent'} asks: {waiting.question}"
    if waiting.kind == "tool":
        return f"{waiting.agent or 'An agent'} waits for approval of a tool call: {waiting.tool}"
    return "The plan waits for your review: approve, revise (with feedback) or reject it."


def _elicitation(waiting: Any, asks: str) -> dict[str, Any]:
    properties: dict[str, Any] = {"decision": {"type": "string", "enum": _choices(waiting)},
                                  "feedback": {"type": "string", "description": "What to change, or why not."}}
    if waiting.kind == "question":
        properties["answer"] = {"type": "string", "description": waiting.question or "Your answer."}
    return {"method": "elicitation/create", "params": {"mode": "form", "message": asks, "requestedSchema": {
        "type": "object", "properties": properties, "required": ["decision"]}}}


def _result(workflow_id: str, round_no: int, status: str, messages: list[Message], error: str | None
            ) -> CallToolResult:
    """What read_round tells of the round: its status, its assistant messages, its documents as links."""
    said = [m for m in messages if m.role == "assistant"]
    documents = list({d.file_id: d for m in said for d in m.documents}.values())
    body = {"workflowId": workflow_id, "round": round_no, "status": status, "error": error,
            "messages": [{"id": m.id, "status": m.status, "agentName": m.agent_name, "content": m.content,
                          "documents": [URI.format(file_id=d.file_id) for d in m.documents]} for m in said]}
    outputs = outputs_of(said[-1]) if said and said[-1].status == "last" else {}
    if outputs:  # a flow's round: its outputs
        body["outputs"] = outputs
    text = "\n\n".join([f"Workflow {workflow_id}, round {round_no}: {status}." + (f" {error}" if error else ""),
                        *(f"**{m.agent_name}**: {m.content}" for m in said)])
    links = [ResourceLink(uri=URI.format(file_id=d.file_id), name=f"{d.name}.{d.ext}" if d.ext else d.name,
                          mime_type=d.mime_type, size=d.size) for d in documents]
    return CallToolResult(content=[TextContent(text=text), *links], structured_content=body,
                          is_error=error is not None)
