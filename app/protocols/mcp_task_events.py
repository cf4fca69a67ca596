"""`notifications/tasks` for the MCP tasks extension: a `subscriptions/listen` request whose filter names
`taskIds` follows those rounds and pushes each task's state as `tasks/get` would answer it, whenever
its status or status message (the round's latest log line: its progress) changes. The stream ends
gracefully once every task it follows has ended. A listen without `taskIds` is the SDK's.

The spec sends no `notifications/progress` for tasks: this is where a round's logs reach a host
that does not poll. Task ids the caller does not own are left out of the acknowledgement.
"""

from __future__ import annotations

from typing import Any, Literal

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer, require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    Notification,
    NotificationParams,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotification,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)
from pydantic import ConfigDict

from app.protocols.mcp_tasks import ID, RoundTasks
from app.protocols.rounds import Round
from app.rounds.live import Position

MAX_TASKS = 16  # per listen stream
ENDED = ("completed", "failed", "cancelled")


class TaskEventParams(NotificationParams):
    model_config = ConfigDict(extra="allow")


class TaskEvent(Notification[TaskEventParams, Literal["notifications/tasks"]]):
    method: Literal["notifications/tasks"] = "notifications/tasks"


def serve(server: MCPServer, tasks: RoundTasks) -> None:
    """Answer `subscriptions/listen` with `taskIds` here; hand every other listen to the SDK's handler."""
    lowlevel = server._lowlevel_server
    entry = lowlevel.get_request_handler("subscriptions/listen")
    if entry is None:
        return
    inner = entry.handler

    async def listen(ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams) -> Any:
        ids = (params.notifications.model_extra or {}).get("taskIds")
        if ids is None:
            return await inner(ctx, params)
        return await _listen(tasks, ctx, ids)

    lowlevel.add_request_handler("subscriptions/listen", SubscriptionsListenRequestParams, listen)


async def _listen(tasks: RoundTasks, ctx: ServerRequestContext[Any, Any], ids: Any) -> SubscriptionsListenResult:
    require_client_extension(ctx, ID)
    if ctx.request_id is None:
        raise MCPError(code=INVALID_REQUEST, message="subscriptions/listen requires a request id")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(ids) > MAX_TASKS:
        raise MCPError(code=INVALID_PARAMS, message=f"taskIds must be a list of at most {MAX_TASKS} task ids.")
    owner = tasks.caller(ctx)
    honored = []
    for value in dict.fromkeys(ids):
        try:
            await tasks.locate(owner, value)
        except MCPError:
            continue  # unknown, or another caller's: not honored
        honored.append(value)
    meta = {SUBSCRIPTION_ID_META_KEY: ctx.request_id}
    honored_filter = SubscriptionFilter.model_validate({"taskIds": honored})  # the extension's key
    await ctx.session.send_notification(SubscriptionsAcknowledgedNotification(
        params=SubscriptionsAcknowledgedNotificationParams(notifications=honored_filter, _meta=meta)),
        related_request_id=ctx.request_id)
    async with anyio.create_task_group() as group:
        for value in honored:
            group.start_soon(_watch, tasks, ctx, owner, value, meta)
    return SubscriptionsListenResult(_meta=meta)


async def _watch(tasks: RoundTasks, ctx: ServerRequestContext[Any, Any], owner: Any, value: str,
                 meta: dict[str, Any]) -> None:
    """Push the task's state on each of its round's events that changes it, until the task ends."""
    last: tuple[Any, Any] | None = None

    async def push() -> bool:
        nonlocal last
        state = await tasks.state(owner, value)
        if (state["status"], state.get("statusMessage")) != last:
            last = (state["status"], state.get("statusMessage"))
            await ctx.session.send_notification(TaskEvent(params=TaskEventParams(**state, _meta=meta)),  # type: ignore[arg-type]
                                                related_request_id=ctx.request_id)
        return state["status"] in ENDED

    try:
        if await push():
            return
        _, row, round_no, _, _ = await tasks.locate(owner, value)  # followed from now: its state is pushed
        run = Round(owner, row.id, round_no, Position(row.last_message_id, row.last_log_id), 0)
        async for _ in tasks.rounds.follow(run, heartbeats=True, tokens=False):
            if await push():
                return
        await push()
    except MCPError:
        return  # the workflow went away meanwhile: nothing more to tell
