"""Foreman as an MCP server: streamable HTTP at `/mcp` (the `mcp` SDK's server), the API's keys.

Tools: `upload_file`, `start_round`, `read_round` (status and `waitingFor`, messages after a cursor,
documents as resource links; with `wait_seconds` it follows the round until it ends or waits for
the user and sends progress notifications from its logs), `stop_round`, `review_round` (a decision
on what a waiting round waits for: its plan, an agent's question, a tool call). Each document a
round produced is a resource `foreman://files/<id>`, listed in `resources/list` for its owner only.

A round is long-running: `start_round` answers at once and `read_round` polls or waits; a client
that declares the tasks extension gets a task handle instead (`app.protocols.mcp_tasks`).

Stateless transport: every request carries its key and nothing is kept between requests, so
any replica answers any call.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
from typing import Any, Protocol, get_args

import msgspec
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    BlobResourceContents,
    CallToolResult,
    ListResourcesResult,
    ListToolsResult,
    ReadResourceResult,
    Resource,
    ResourceLink,
    TextContent,
)

from app.contract.schemas import Decision, LogEntry, Message, ReviewRequest, is_decision, is_review_mode
from app.contract.views import waiting_view
from app.errors import ApplicationError, BadRequestError, NotFoundError, UnauthorizedError
from app.protocols import mcp_flows
from app.protocols.chat_waits import what_waits
from app.protocols.mcp_task_events import serve as serve_task_events
from app.protocols.mcp_tasks import RoundTasks, declared
from app.protocols.rounds import Round, Rounds, Snapshot
from app.rounds.live import Position
from app.store.records import Owner

URI = "foreman://files/{file_id}"
MAX_WAIT_SECONDS = 60.0
PAGE = 100


class _Headers:
    """What the authenticator reads of a request: its headers."""

    def __init__(self, headers: Any) -> None:
        self.headers = headers


class Keys(Protocol):
    """The REST API's bearer keys (`app.web.http.Authenticator`): the owner a request's headers name."""

    def owner(self, request: Any) -> Owner: ...


class ForemanMCP(MCPServer):
    """The MCP server over the REST API's services."""

    def __init__(self, rounds: Rounds, auth: Keys) -> None:
        tasks = RoundTasks(rounds, auth)
        super().__init__("foreman", title="Foreman", version="1",
                         instructions="Foreman runs rounds: a project manager plans, agents work on your documents. "
                                      "Upload with upload_file, start_round, then read_round until its status is "
                                      "not running; produced documents are resources.",
                         extensions=[tasks])
        serve_task_events(self, tasks)
        self.rounds = rounds
        self.auth = auth
        for tool in (upload_file, start_round, stop_round, review_round):
            self.add_tool(tool, structured_output=True)
        self.add_tool(read_round)

    def owner(self, ctx: Context) -> Owner:
        """The caller of this request, by the same bearer keys as the REST API."""
        try:
            return self.auth.owner(_Headers(ctx.headers or {}))
        except UnauthorizedError as exc:
            raise ToolError(exc.detail) from None

    async def _handle_list_tools(self, ctx: Any, params: Any) -> ListToolsResult:
        # The SDK lists tools registered at start-up; beside them, the caller's published flows.
        listed = await super()._handle_list_tools(ctx, params)
        try:
            owner = self.auth.owner(_Headers(getattr(ctx.request, "headers", None) or {}))
        except UnauthorizedError:
            return listed
        return ListToolsResult(tools=[*listed.tools, *await mcp_flows.tools(self.rounds, owner)])

    async def _handle_call_tool(self, ctx: Any, params: Any) -> Any:
        if not params.name.startswith(mcp_flows.PREFIX):
            return await super()._handle_call_tool(ctx, params)
        try:
            owner = self.auth.owner(_Headers(getattr(ctx.request, "headers", None) or {}))
            return await mcp_flows.call(self.rounds, owner, params.name, params.arguments or {}, declared(ctx))
        except UnauthorizedError as exc:
            return CallToolResult(content=[TextContent(text=exc.detail)], is_error=True)
        except ToolError as exc:
            return CallToolResult(content=[TextContent(text=str(exc))], is_error=True)

    async def _handle_list_resources(self, ctx: Any, params: Any) -> ListResourcesResult:
        # The SDK lists resources registered at start-up; ours are each caller's own documents.
        headers = getattr(ctx.request, "headers", None) or {}
        try:
            owner = self.auth.owner(_Headers(headers))
        except UnauthorizedError:
            return ListResourcesResult(resources=[])
        rows = await self.rounds.files.produced(owner)
        return ListResourcesResult(resources=[
            Resource(uri=URI.format(file_id=r.id), name=_name(r.name, r.ext), mime_type=r.mime, size=r.size)
            for r in rows])

    async def _handle_read_resource(self, ctx: Any, params: Any) -> ReadResourceResult:
        uri = str(params.uri)
        file_id = uri.removeprefix(URI.format(file_id=""))
        try:
            owner = self.auth.owner(_Headers(getattr(ctx.request, "headers", None) or {}))
            if not (uri.startswith(URI.format(file_id="")) and file_id.isascii() and file_id.isdigit()
                    and 0 < int(file_id) < 2**63):
                raise NotFoundError(f"There is no document {uri[:100]!r}; its URI is foreman://files/<id>.")
            row = await self.rounds.files.owned(owner, int(file_id))
            data = await self.rounds.files.content(row)
        except ApplicationError as exc:
            raise MCPError(code=INVALID_PARAMS, message=exc.detail, data={"uri": uri, "code": exc.code}) from None
        return ReadResourceResult(contents=[BlobResourceContents(uri=uri, blob=base64.b64encode(data).decode(),
                                                                 mime_type=row.mime)])

    def http_app(self, local: bool, max_body: int) -> Any:
        """The streamable HTTP ASGI app; in local mode (no keys, loopback only) DNS rebinding is refused."""
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=local,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"], allowed_origins=[
                "http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
        return self.streamable_http_app(streamable_http_path="/", stateless_http=True, transport_security=security,
                                        max_request_body_size=max_body)  # upload_file's base64


def _server(ctx: Context) -> ForemanMCP:
    return ctx.mcp_server  # type: ignore[return-value]


def _name(name: str, ext: str) -> str:
    return f"{name}.{ext}" if ext else name


def _tool_error(exc: ApplicationError) -> ToolError:
    return ToolError(f"{exc.detail} ({exc.status_code} {exc.code})")


async def upload_file(name: str, data_base64: str, ctx: Context) -> dict[str, Any]:
    """Upload a file (its bytes as base64) to use in start_round; returns its file id."""
    server = _server(ctx)
    try:
        data = base64.b64decode(data_base64, validate=True)
    except (binascii.Error, ValueError):
        raise ToolError("data_base64 is not valid base64.") from None
    try:
        [file_id] = await server.rounds.upload(server.owner(ctx), [(name, data)])
    except ApplicationError as exc:
        raise _tool_error(exc) from None
    return {"fileId": file_id}


async def start_round(ctx: Context, prompt: str = "", file_ids: list[int] | None = None,
                      workflow_id: str | None = None, review: str | None = None) -> dict[str, Any]:
    """Start a round: a new workflow, or the next round of `workflow_id`. It runs in the background;
    follow it with read_round. review "plan": the round waits for your review of its plan (answer
    with review_round); "none": it does not (default: the workflow's setting)."""
    server = _server(ctx)
    try:
        if review is not None and not is_review_mode(review):
            raise BadRequestError(f"review must be 'plan' or 'none', not {review[:40]!r}.", code="bad_review_mode")
        run = await server.rounds.start(server.owner(ctx), workflow_id, prompt, list(file_ids or []), review=review)
    except ApplicationError as exc:
        raise _tool_error(exc) from None
    return {"workflowId": run.workflow_id, "round": run.round, "status": "running"}


async def read_round(workflow_id: str, ctx: Context, after_message_id: int = 0, after_log_id: int = 0,
                     wait_seconds: float = 0) -> CallToolResult:
    """The workflow's status (and waitingFor: what a waiting round waits for, answered with
    review_round), its messages and logs after the cursors, and its documents as resource links.
    wait_seconds (at most 60): first wait that long for the round to end or wait for the user, with
    progress notifications from its logs."""
    server = _server(ctx)
    owner = server.owner(ctx)
    try:
        snapshot = None
        if wait_seconds > 0:
            snapshot = await _wait(server.rounds, owner, workflow_id, after_message_id, after_log_id,
                                   min(wait_seconds, MAX_WAIT_SECONDS), ctx)
        if snapshot is None:
            snapshot = await server.rounds.snapshot(owner, workflow_id, after_message_id, after_log_id, PAGE)
    except ApplicationError as exc:
        raise _tool_error(exc) from None
    row, messages, logs = snapshot.status, snapshot.messages, snapshot.logs
    # A document is on its task's message and again on the final one: one link each.
    documents = list({d.file_id: d for m in messages for d in m.documents if m.role == "assistant"}.values())
    wait = row.waiting_for
    result: dict[str, Any] = {
        "workflowId": workflow_id, "status": row.status, "round": row.current_round, "progress": row.progress,
        "waitingFor": msgspec.to_builtins(wait) if wait else None,
        "messages": [{"id": m.id, "round": m.round, "status": m.status, "agentName": m.agent_name,
                      "content": m.content, "documents": [URI.format(file_id=d.file_id) for d in m.documents]}
                     for m in messages if m.role == "assistant"],
        "logs": [{"id": e.id, "type": e.type, "progress": e.progress, "message": e.message} for e in logs],
        "lastMessageId": snapshot.last_message_id, "lastLogId": snapshot.last_log_id, "hasMore": snapshot.has_more,
    }
    text = "\n\n".join([f"Workflow {workflow_id}: {row.status} (round {row.current_round}, {row.progress}%).",
                        *(f"**{m['agentName']}**: {m['content']}" for m in result["messages"]),
                        *([_waiting(wait)] if wait else [])])
    links = [ResourceLink(uri=URI.format(file_id=d.file_id), name=_name(d.name, d.ext), mime_type=d.mime_type,
                          size=d.size) for d in documents]
    return CallToolResult(content=[TextContent(text=text), *links], structured_content=result)


async def _wait(rounds: Rounds, owner: Owner, workflow_id: str, after_message: int, after_log: int,
                seconds: float, ctx: Context) -> Snapshot | None:
    """Follow the workflow's event stream until it no longer runs (its round ended or waits for the
    user) or `seconds` pass, reporting its logs as progress. What the stream showed by then is the
    answer (no second read); None when the time ran out or the workflow is not the caller's (the read
    after this says so). A round that already ended costs the stream's one read."""
    stream = rounds.stream(Round(owner, workflow_id, 0, Position(after_message, after_log), 0))
    messages: dict[int, Message] = {}
    logs: list[LogEntry] = []
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            async for event, view in stream.follow(rounds.workflows.rt.changes):
                if event in ("message", "update") and view.id > after_message:
                    messages[view.id] = view
                elif event == "log":
                    logs.append(view)
                    await ctx.report_progress(view.progress, 100, view.message)
                elif event == "status" and view.status != "running":
                    return Snapshot.of(view, sorted(messages.values(), key=lambda m: m.id), logs, after_message,
                                       after_log, PAGE)
    return None


async def stop_round(workflow_id: str, ctx: Context) -> dict[str, Any]:
    """Stop the workflow's running round at once."""
    server = _server(ctx)
    try:
        view = await server.rounds.workflows.stop(server.owner(ctx), workflow_id)
    except ApplicationError as exc:
        raise _tool_error(exc) from None
    return {"workflowId": workflow_id, "status": view.status, "round": view.current_round}


async def review_round(workflow_id: str, decision: str, ctx: Context, feedback: str = "", answer: str = "",
                       plan: dict[str, Any] | None = None, message_id: int | None = None,
                       comment: str = "") -> dict[str, Any]:
    """Decide what a waiting round waits for (read_round's waitingFor: its kind and decisions).
    A plan: approve, revise (feedback: what to change), edit (plan: {"tasks": [...], "finalDocuments":
    [...]}, as the plan message's metadata.plan) or reject (feedback: why, optional). An agent's
    question: answer (answer) or reject. A tool call: approve or reject. message_id (optional) names
    the message answered (waitingFor.messageId). A flow's human node: one of its actions. The round goes
    on at once; follow it with read_round."""
    server = _server(ctx)
    feedback = feedback or comment  # `comment`: this tool's earlier name for feedback
    try:
        if not is_decision(decision):  # a flow's human node takes its actions
            wait = waiting_view(await server.rounds.workflows.owned(server.owner(ctx), workflow_id))
            allowed = wait.decisions if wait is not None and wait.kind == "node" else DECISIONS
            if decision not in allowed:
                raise BadRequestError(f"decision must be one of {', '.join(allowed)}, not {decision[:40]!r}.",
                                      code="bad_request")
        if decision == "answer" and not answer:
            answer, feedback = feedback, ""  # the answer given as feedback
        body = ReviewRequest(decision=decision, message_id=message_id, feedback=feedback or None,
                             answer=answer or None, plan=plan)
        view = await server.rounds.workflows.reviews.decide(server.owner(ctx), workflow_id, body)
    except ApplicationError as exc:
        raise _tool_error(exc) from None
    except msgspec.ValidationError as exc:
        raise ToolError(f"The decision does not fit: {exc}. (400 bad_request)") from None
    return {"workflowId": workflow_id, "status": view.status, "round": view.current_round,
            "waitingFor": msgspec.to_builtins(view.waiting_for) if view.waiting_for else None}


DECISIONS = get_args(Decision)


def _waiting(wait: Any) -> str:
    """A waiting round's line in read_round's text: what it waits for and the decisions review_round takes."""
    return (f"{what_waits(wait)}\n\nDecide with review_round (waitingFor.kind {wait.kind!r}: "
            f"{', '.join(wait.decisions)}).")


def mount_endpoint(server: ForemanMCP, local: bool, max_body: int) -> Any:
    """The `/mcp` route's ASGI app (`app.protocols.mounts.MCP`): the SDK's behind the API's keys (401 in
    the API's error shape). Two
    answers are ours: a GET is 405 (the transport is stateless, so the stream a GET opens would never
    carry a message and was held open for good; the specification allows 405 and the SDK's client
    takes it), and a request whose `id` is neither a string nor a number is JSON-RPC's Invalid
    Request (the SDK took it for a notification: 202 and no answer)."""
    from litestar.datastructures import Headers

    inner = server.http_app(local, max_body)

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        try:
            server.auth.owner(_Headers(Headers.from_scope(scope)))
        except UnauthorizedError as exc:
            await refuse(send, exc)
            return
        if scope["method"] == "GET":
            await _answer(send, 405, {"status_code": 405, "code": "method_not_allowed",
                                      "detail": "This MCP endpoint is stateless and offers no event stream to a "
                                                "GET: POST each JSON-RPC message."}, ((b"allow", b"POST"),))
            return
        if scope["method"] == "POST":
            body, receive = await _read_ahead(receive, max_body)
            bad = False
            if body is not None:  # a large body (upload_file's base64) is read in a thread
                bad = await asyncio.to_thread(_bad_id, body) if len(body) > 65_536 else _bad_id(body)
            if bad:
                await _answer(send, 400, {"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32600, "message": "Invalid Request: id must be a string or a number"}})
                return
        await inner(scope, receive, send)

    return endpoint


class _Envelope(msgspec.Struct):
    id: msgspec.Raw = msgspec.Raw(b"null")


async def _read_ahead(receive: Any, limit: int) -> tuple[bytes | None, Any]:
    """The request's body when it is at most `limit` bytes (else None), and a `receive` that gives it
    again, then whatever follows, to the SDK."""
    chunks: list[dict[str, Any]] = []
    size = 0
    while True:
        message = await receive()
        chunks.append(message)
        if message["type"] != "http.request":
            return None, _replay(chunks, receive)
        size += len(message.get("body", b""))
        if size > limit:
            return None, _replay(chunks, receive)
        if not message.get("more_body", False):
            return b"".join(m.get("body", b"") for m in chunks), _replay(chunks, receive)


def _replay(chunks: list[dict[str, Any]], receive: Any) -> Any:
    async def again() -> Any:
        return chunks.pop(0) if chunks else await receive()
    return again


def _bad_id(body: bytes) -> bool:
    """Whether a JSON-RPC message's `id` is there and is not a string, a number or null."""
    try:
        raw = bytes(msgspec.json.decode(body, type=_Envelope).id).strip()
    except msgspec.DecodeError:  # not one object: the SDK answers for it
        return False
    return raw[:1] in (b"{", b"[", b"t", b"f")


async def _answer(send: Any, status: int, body: Any, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    data = msgspec.json.encode(body)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *headers]})
    await send({"type": "http.response.body", "body": data})


async def refuse(send: Any, exc: UnauthorizedError) -> None:
    """A 401 in the API's error shape, from a mounted ASGI app."""
    await _answer(send, 401, {"status_code": 401, "detail": exc.detail, "code": exc.code},
                  ((b"www-authenticate", b"Bearer"),))
