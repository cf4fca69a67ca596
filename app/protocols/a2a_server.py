"""Foreman as an A2A agent (the `a2a-sdk` package's JSON-RPC binding, A2A 1.0): the agent card at
`/.well-known/agent-card.json` and JSON-RPC at `/a2a`, with the API's bearer keys.

The card has one skill per published flow of the caller (`flow_<slug>`, `app.protocols.flow_tools`)
and `ask_foreman` (a chat round, planned by the project manager); a caller without a key sees only
`ask_foreman`. A message names its skill in `metadata.skill` (default `ask_foreman`): its text is the
round's prompt, or a flow's first string input (`metadata.inputs` the others). An A2A task is a
round: its id is the MCP tasks extension's (`<workflow>:<round>:<message id>:<log id>`, nothing kept
in memory), its `contextId` the workflow (a message with a `contextId` runs in that workflow). A
waiting round is `INPUT_REQUIRED` (its question as the status message); a message with that
`taskId` is the answer (a flow's human node: the action; else as a chat reply decides). Produced
documents are artifacts (download URLs), a flow's outputs an `outputs` data artifact. `CancelTask`
stops the round. `SendMessage` answers once the round ends or waits (`returnImmediately`: at once).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any, cast

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError, UnsupportedOperationError
from google.protobuf.json_format import MessageToDict, ParseDict
from mcp.shared.exceptions import MCPError

from app.contract.schemas import ReviewRequest
from app.errors import ApplicationError, UnauthorizedError
from app.protocols import flow_tools
from app.protocols.chat_waits import reply_decision
from app.protocols.mcp_tasks import RoundTasks, task_id
from app.protocols.rounds import Ended, Round, Rounds, Waiting
from app.store.records import Owner

ASK = "ask_foreman"
STATES = {"working": pb.TASK_STATE_WORKING, "input_required": pb.TASK_STATE_INPUT_REQUIRED,
          "completed": pb.TASK_STATE_COMPLETED, "cancelled": pb.TASK_STATE_CANCELED}


class _Headers:
    def __init__(self, headers: Any) -> None:
        self.headers = headers


async def card(rounds: Rounds, auth: Any, request: Any, base_url: str, version: str) -> dict[str, Any]:
    """The agent card, as JSON: the caller's flows as skills when its key is good."""
    skills = [pb.AgentSkill(id=ASK, name="Ask Foreman", tags=["chat", "documents"],
                            description="A chat round: a project manager plans, agents work on your documents.")]
    with contextlib.suppress(UnauthorizedError):
        owner = auth.owner(request)
        skills += [pb.AgentSkill(id="flow_" + f.slug, name=f.definition.name, description=f.description,
                                 tags=["flow"]) for f in await flow_tools.published(rounds, owner)]
    agent = pb.AgentCard(
        name="Foreman", version=version, description="Multi-agent rounds and saved flows over your documents.",
        supported_interfaces=[pb.AgentInterface(url=f"{base_url}/a2a", protocol_binding="JSONRPC",
                                                protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=False),
        security_schemes={"bearer": pb.SecurityScheme(http_auth_security_scheme=pb.HTTPAuthSecurityScheme(
            scheme="bearer", description="One of the server's API keys."))},
        security_requirements=[ParseDict({"schemes": {"bearer": {}}}, pb.SecurityRequirement())],
        default_input_modes=["text/plain"], default_output_modes=["text/plain", "application/json"],
        skills=skills)
    return cast(dict[str, Any], MessageToDict(agent))


class ForemanA2A(RequestHandler):
    """A2A's methods over rounds (through `Rounds`, as every protocol adapter)."""

    def __init__(self, rounds: Rounds, auth: Any) -> None:
        self.rounds = rounds
        self.auth = auth
        self.tasks = RoundTasks(rounds, auth)

    @staticmethod
    def base(context: ServerCallContext) -> str:
        """The server as the caller reached it (its artifacts' download URLs are absolute)."""
        return str(context.state.get("base_url") or "")

    def owner(self, context: ServerCallContext) -> Owner:
        try:
            return self.auth.owner(_Headers(context.state.get("headers") or {}))  # type: ignore[no-any-return]
        except UnauthorizedError as exc:
            raise InvalidParamsError(message=exc.detail) from None

    async def task(self, owner: Owner, value: str, base_url: str = "") -> pb.Task:
        try:
            state = await self.tasks.state(owner, value)
        except MCPError:
            raise TaskNotFoundError from None
        result = state.get("result") or {}
        structured = result.get("structuredContent") or {}
        status = STATES[state["status"]]
        if result.get("isError"):
            status = pb.TASK_STATE_FAILED
        text = state.get("statusMessage") or ""
        if state["status"] == "completed":
            said = [m["content"] for m in structured.get("messages") or [] if m.get("content")]
            text = said[-1] if said else text
        artifacts = [pb.Artifact(artifact_id=f"file-{c['uri'].rpartition('/')[2]}", name=c.get("name", ""),
                                 parts=[pb.Part(url=f"{base_url}/api/files/{c['uri'].rpartition('/')[2]}/content",
                                                filename=c.get("name", ""), media_type=c.get("mimeType", ""))])
                     for c in result.get("content") or [] if c.get("type") == "resource_link"]
        if structured.get("outputs"):
            artifacts.append(pb.Artifact(artifact_id="outputs", name="outputs",
                                         parts=[ParseDict({"data": structured["outputs"]}, pb.Part())]))
        workflow = value.split(":", 1)[0]
        message = pb.Message(message_id=f"{value}:status", context_id=workflow, task_id=value, role=pb.ROLE_AGENT,
                             parts=[pb.Part(text=text)])
        return pb.Task(id=value, context_id=workflow, status=pb.TaskStatus(state=status, message=message),
                       artifacts=artifacts)

    async def _start(self, owner: Owner, params: pb.SendMessageRequest) -> tuple[Round, str]:
        """The round the message starts or answers, and its task id."""
        run = await self._run(owner, params)
        return run, params.message.task_id or task_id(run.workflow_id, run.round, run.position.message_id,
                                                      run.position.log_id)

    async def _run(self, owner: Owner, params: pb.SendMessageRequest) -> Round:
        message = params.message
        text = "\n".join(p.text for p in message.parts if p.text).strip()
        meta = MessageToDict(message.metadata) if message.HasField("metadata") else {}
        try:
            if message.task_id:  # the answer to a waiting task
                workflow_id = message.task_id.split(":", 1)[0]
                row = await self.rounds.workflows.owned(owner, workflow_id)
                kind = (row.waiting_for or {}).get("kind") if row.status == "waiting" else None
                if kind is None:
                    raise InvalidParamsError(message=f"The task {message.task_id[:100]!r} waits for no input.")
                decision = ReviewRequest(decision=text) if kind == "node" else reply_decision(kind, text)
                return await self.rounds.decide(owner, workflow_id, decision, row=row)
            skill = str(meta.get("skill") or ASK)
            context = message.context_id or None
            if skill == ASK:
                return await self.rounds.start(owner, context, text, [])
            flow = await flow_tools.find(self.rounds, owner, skill.removeprefix("flow_"))
            if flow is None:
                raise InvalidParamsError(message=f"There is no skill {skill[:100]!r}; the agent card lists them.")
            inputs = dict(meta.get("inputs") or {})
            first = flow.first_string_input()
            if first is not None and text and first not in inputs:
                inputs[first] = text
            return await flow_tools.run(self.rounds, owner, flow, inputs, workflow_id=context)
        except ApplicationError as exc:
            raise InvalidParamsError(message=f"{exc.detail} ({exc.status_code} {exc.code})") from None

    async def on_message_send(self, params: pb.SendMessageRequest, context: ServerCallContext) -> pb.Task:
        owner = self.owner(context)
        run, value = await self._start(owner, params)  # its id first: following moves the round's position on
        if not params.configuration.return_immediately:
            async for part in self.rounds.follow(run, tokens=False, waits=True):
                if isinstance(part, Ended | Waiting):
                    break
        return await self.task(owner, value, self.base(context))

    async def on_message_send_stream(self, params: pb.SendMessageRequest,
                                     context: ServerCallContext) -> AsyncGenerator[Any, None]:
        owner = self.owner(context)
        run, value = await self._start(owner, params)
        yield await self.task(owner, value, self.base(context))
        if params.configuration.return_immediately:
            return
        async for part in self.rounds.follow(run, tokens=False, waits=True):
            if isinstance(part, Ended | Waiting):
                break
        done = await self.task(owner, value, self.base(context))
        for artifact in done.artifacts:
            yield pb.TaskArtifactUpdateEvent(task_id=value, context_id=run.workflow_id, artifact=artifact,
                                             last_chunk=True)
        yield pb.TaskStatusUpdateEvent(task_id=value, context_id=run.workflow_id, status=done.status)

    async def on_get_task(self, params: pb.GetTaskRequest, context: ServerCallContext) -> pb.Task:
        return await self.task(self.owner(context), params.id, self.base(context))

    async def on_cancel_task(self, params: pb.CancelTaskRequest, context: ServerCallContext) -> pb.Task:
        owner = self.owner(context)
        before = await self.task(owner, params.id)
        if before.status.state in (pb.TASK_STATE_WORKING, pb.TASK_STATE_INPUT_REQUIRED):
            with contextlib.suppress(ApplicationError):  # it ended meanwhile
                await self.rounds.workflows.stop(owner, params.id.split(":", 1)[0])
        return await self.task(owner, params.id, self.base(context))

    async def on_list_tasks(self, params: Any, context: ServerCallContext) -> Any:
        raise UnsupportedOperationError

    async def on_create_task_push_notification_config(self, params: Any, context: ServerCallContext) -> Any:
        raise UnsupportedOperationError

    async def on_get_task_push_notification_config(self, params: Any, context: ServerCallContext) -> Any:
        raise UnsupportedOperationError

    async def on_subscribe_to_task(self, params: Any, context: ServerCallContext) -> AsyncGenerator[Any, None]:
        raise UnsupportedOperationError
        yield

    async def on_list_task_push_notification_configs(self, params: Any, context: ServerCallContext) -> Any:
        raise UnsupportedOperationError

    async def on_delete_task_push_notification_config(self, params: Any, context: ServerCallContext) -> Any:
        raise UnsupportedOperationError

    async def on_get_extended_agent_card(self, params: Any, context: ServerCallContext) -> Any:
        raise UnsupportedOperationError


def mount_endpoint(handler: ForemanA2A) -> Any:
    """The `/a2a` mount's ASGI app (`app.protocols.mounts.a2a_routes`): the SDK's JSON-RPC routes behind
    the API's keys (401 without a good key)."""
    from a2a.server.routes import create_jsonrpc_routes
    from a2a.server.routes.common import DefaultServerCallContextBuilder
    from litestar.datastructures import Headers
    from starlette.applications import Starlette

    class Context(DefaultServerCallContextBuilder):
        """The SDK's context, with the server's URL as the caller reached it (the mount's path taken off)."""

        def build(self, request: Any) -> ServerCallContext:
            context = super().build(request)
            context.state["base_url"] = str(request.base_url).rstrip("/").removesuffix("/a2a")
            return context

    inner = Starlette(routes=create_jsonrpc_routes(handler, "/", context_builder=Context()))

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        from app.protocols.mcp_server import refuse

        try:
            handler.auth.owner(_Headers(Headers.from_scope(scope)))
        except UnauthorizedError as exc:
            await refuse(send, exc)
            return
        await inner(scope, receive, send)

    return endpoint
