"""Rounds as MCP tasks (the `io.modelcontextprotocol/tasks` extension), driven by the `mcp` SDK's client
over streamable HTTP: the client declares the extension with the SDK's `ClientExtension` (which puts it in
each request's capabilities) and claims the "task" result shape; `tasks/get`, `tasks/update` and
`tasks/cancel` go through the session's `send_request` with request models of our own, since the SDK
ships no tasks client."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolResult,
    Request,
    RequestParams,
    Result,
    SubscriptionFilter,
    SubscriptionsListenRequest,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)
from pydantic import ConfigDict

from agents.model import ModelError, ModelRequest, ModelResponse
from tests.harness import upload, wait_for, wait_status
from tests.protocols.conftest import HoldingOffline
from tests.web.conftest import HOLD, start

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")
FAIL = "[fail-for-good]"


class FailingOffline(HoldingOffline):
    """The protocol tests' model; a round whose prompt says FAIL fails (every call of it)."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if FAIL in json.dumps(request.messages):
            raise ModelError("scripted failure: the provider refused the request")
        return await super().complete(request)


@pytest.fixture(scope="module")
def model() -> HoldingOffline:
    return FailingOffline()


class CreatedTask(Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskState(Result):
    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class TaskParams(RequestParams):
    task_id: str


class UpdateParams(TaskParams):
    input_responses: dict[str, Any]


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class UpdateTask(Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


async def get(session: Any, task: str) -> TaskState:
    return await session.send_request(GetTask(params=TaskParams(task_id=task)), TaskState)


async def follow(session: Any, task: str, until: tuple[str, ...] = TERMINAL, seconds: float = 60) -> TaskState:
    """Poll tasks/get until the task's status is one of `until` (or the test fails after `seconds`)."""
    with anyio.fail_after(seconds):
        while (state := await get(session, task)).status not in until:
            await anyio.sleep(0.1)
    return state


class Tasks(ClientExtension):
    """The tasks extension on the client: a task handle is followed to its tool result; task
    notifications (notifications/tasks) are kept in `events`."""

    identifier = TASKS

    def __init__(self) -> None:
        self.events: list[TaskState] = []

    def notifications(self) -> list[NotificationBinding[Any]]:
        async def keep(params: TaskState) -> None:
            self.events.append(params)

        return [NotificationBinding(method="notifications/tasks", params_type=TaskState, handler=keep)]

    def claims(self) -> list[ResultClaim[Any]]:
        async def resolve(created: CreatedTask, ctx: ClaimContext) -> CallToolResult:
            state = await follow(ctx.session, created.task_id)
            assert state.status == "completed", state
            return CallToolResult.model_validate(state.result)

        return [ResultClaim(result_type="task", model=CreatedTask, resolve=resolve)]


@contextlib.asynccontextmanager
async def connect(server, key: str = "k1", tasks: bool = True) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http:
        async with Client(streamable_http_client(server.url + "/mcp", http_client=http), read_timeout_seconds=120,
                          extensions=[Tasks()] if tasks else None) as client:
            yield client


def events_of(client: Client) -> list[TaskState]:
    [extension] = client.extensions
    return extension.events


async def listen(client: Client, *task_ids: str) -> SubscriptionsListenResult:
    """subscriptions/listen for these tasks' notifications: it answers when every one of them has ended."""
    request = SubscriptionsListenRequest(params=SubscriptionsListenRequestParams(
        notifications=SubscriptionFilter(taskIds=list(task_ids))))
    return await client.session.send_request(request, SubscriptionsListenResult)


async def start_task(client: Client, arguments: dict[str, Any]) -> CreatedTask:
    created = await client.session.call_tool("start_round", arguments, allow_claimed=True)
    assert isinstance(created, CreatedTask), created
    return created


async def test_a_round_started_as_a_task_is_polled_to_its_result(server):
    with server.client("k1") as rest:
        [sheet] = upload(rest, "stanley-cups.tsv")
    async with connect(server) as mcp:
        assert TASKS in (mcp.server_capabilities.extensions or {})
        arguments = {"prompt": "Extract the tables as an Excel file.", "file_ids": [sheet["id"]]}
        created = await start_task(mcp, arguments)
        assert created.status == "working" and created.ttl_ms is None and created.poll_interval_ms
        workflow = created.task_id.split(":")[0]
        seen = await get(mcp.session, created.task_id)  # durably created: known at once
        assert seen.status in ("working", "completed")
        if seen.status == "working":
            assert seen.status_message  # the round's latest log line
        done = await follow(mcp.session, created.task_id)
        assert done.status == "completed", done
        result = CallToolResult.model_validate(done.result)
        assert not result.is_error
        assert result.structured_content["workflowId"] == workflow
        assert result.structured_content["status"] == "completed"
        [link] = [c for c in result.content if c.type == "resource_link" and c.name.endswith(".xlsx")]
        assert "spreadsheetml" in (link.mime_type or "")

        # The SDK's own call_tool follows the task through the claim and answers the tool result.
        again = await mcp.call_tool("start_round", {"prompt": "And a short summary.", "workflow_id": workflow})
        assert not again.is_error and again.structured_content["round"] == 2
    async with connect(server) as fresh:  # nothing kept per connection: the id alone names the round
        # The first round's task still reads as that round (an earlier round now: from its logs).
        state = await get(fresh.session, created.task_id)
        assert state.status == "completed" and state.result == done.result


async def test_cancelling_a_task_stops_its_round(server, model):
    token = uuid.uuid4().hex
    async with connect(server) as mcp:
        created = await start_task(mcp, {"prompt": f"{HOLD} {token} Summarise the quarter."})
        wait_for(lambda: model.holding(token), 60, "the round's model call to be held")
        workflow = created.task_id.split(":")[0]
        assert (await get(mcp.session, created.task_id)).status == "working"

        async with connect(server, "k2") as other:  # another caller: an unknown task, the round untouched
            for request in (GetTask(params=TaskParams(task_id=created.task_id)),
                            CancelTask(params=TaskParams(task_id=created.task_id))):
                with pytest.raises(MCPError) as refused:
                    await other.session.send_request(request, TaskState)
                assert refused.value.error.code == -32602 and "Task not found" in refused.value.error.message
        with server.client("k1") as rest:
            assert rest.get(f"/api/workflows/{workflow}/status").json()["status"] == "running"

        await mcp.session.send_request(CancelTask(params=TaskParams(task_id=created.task_id)), Result)
        state = await follow(mcp.session, created.task_id)
        assert state.status == "cancelled" and state.result is None
        with server.client("k1") as rest:
            assert rest.get(f"/api/workflows/{workflow}/status").json()["status"] == "stopped"

        with pytest.raises(MCPError) as unknown:
            await get(mcp.session, f"{workflow}:9:0:0")  # a round it never had
        assert unknown.value.error.code == -32602


async def test_a_waiting_round_is_input_required_and_tasks_update_answers_it(server):
    with server.client("k1") as rest:
        [doc] = upload(rest, "sample-french-1.txt")
        first = start(rest, "Summarise this document.", [doc["id"]], reviewDefault="plan")
        assert first.status_code == 200, first.text
        workflow = first.json()["id"]
        waiting = wait_status(rest, workflow, "waiting")["waitingFor"]
        reply = rest.post(f"/api/workflows/{workflow}/review",
                          json={"decision": "reject", "messageId": waiting["messageId"]})
        assert reply.status_code == 200, reply.text
    async with connect(server) as mcp:
        created = await start_task(mcp, {"prompt": "Summarise it in English.", "workflow_id": workflow})
        state = await follow(mcp.session, created.task_id, ("input_required", *TERMINAL))
        assert state.status == "input_required", state
        [(key, request)] = state.input_requests.items()
        assert request["method"] == "elicitation/create" and "review" in request["params"]["message"]
        schema = request["params"]["requestedSchema"]
        assert schema["properties"]["decision"]["enum"] == ["approve", "revise", "reject"]

        ignored = UpdateTask(params=UpdateParams(task_id=created.task_id, input_responses={"other": {}}))
        await mcp.session.send_request(ignored, Result)  # a key not outstanding: ignored
        assert (await get(mcp.session, created.task_id)).status == "input_required"

        answer = {key: {"action": "accept", "content": {"decision": "approve"}}}
        await mcp.session.send_request(UpdateTask(params=UpdateParams(task_id=created.task_id,
                                                                      input_responses=answer)), Result)
        done = await follow(mcp.session, created.task_id)
        assert done.status == "completed", done
        assert CallToolResult.model_validate(done.result).structured_content["status"] == "completed"


async def test_a_client_without_the_extension_gets_the_tool_result_and_no_tasks(server, model):
    token = uuid.uuid4().hex
    async with connect(server, tasks=False) as mcp:
        started = await mcp.call_tool("start_round", {"prompt": f"{HOLD} {token} Summarise."})
        assert not started.is_error and started.structured_content["status"] == "running"
        workflow = started.structured_content["workflowId"]
        with pytest.raises(MCPError) as refused:
            await get(mcp.session, f"{workflow}:1:0:0")
        assert refused.value.error.code == -32021  # missing required client capability
        stopped = await mcp.call_tool("stop_round", {"workflow_id": workflow})
        assert stopped.structured_content["status"] == "stopped"


async def test_a_failed_round_is_a_completed_task_with_a_tool_error(server):
    async with connect(server) as mcp:
        created = await start_task(mcp, {"prompt": f"{FAIL} Summarise the quarter."})
        done = await follow(mcp.session, created.task_id)
        assert done.status == "completed" and done.error is None, done  # "failed" is for JSON-RPC errors
        result = CallToolResult.model_validate(done.result)
        assert result.is_error and result.structured_content["status"] == "failed"
        assert result.structured_content["error"] and result.structured_content["error"] in result.content[0].text


async def test_task_notifications_carry_the_rounds_progress_until_it_ends(server, model):
    token = uuid.uuid4().hex
    async with connect(server) as mcp:
        created = await start_task(mcp, {"prompt": f"{HOLD} {token} Summarise the quarter."})
        wait_for(lambda: model.holding(token), 60, "the round's model call to be held")
        async with anyio.create_task_group() as group:
            ended: list[SubscriptionsListenResult] = []

            async def follow_stream() -> None:
                ended.append(await listen(mcp, created.task_id))

            group.start_soon(follow_stream)
            with anyio.fail_after(60):
                while not events_of(mcp):
                    await anyio.sleep(0.05)
            working = events_of(mcp)[0]
            assert working.task_id == created.task_id and working.status == "working"
            assert working.status_message  # the round's latest log line, with its progress
            await mcp.session.send_request(CancelTask(params=TaskParams(task_id=created.task_id)), Result)
        assert ended and events_of(mcp)[-1].status == "cancelled"  # the stream ended with the task

    async with connect(server, "k2") as other:  # another caller's task: not honored, the stream ends at once
        with anyio.fail_after(60):
            await listen(other, created.task_id)
        assert events_of(other) == []
