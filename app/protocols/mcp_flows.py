"""The caller's published flows as tools of `/mcp`: `flow_<slug>` (`app.protocols.flow_tools`), the flow's
description, its inputs as `inputSchema` (plus an optional `version`), what a call answers as
`outputSchema` (the outputs under `outputs`).

A call runs the flow and follows its round for up to `CALL_SECONDS`: completed, the outputs; a human
node waiting, its question and actions (`status` "waiting", answered with `review_round` and followed
with `read_round`); still running, `status` "running" (follow it with `read_round`). A client that
declares the tasks extension gets the round as a task at once (`app.protocols.mcp_tasks`), where a
human node is `input_required`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, Tool

from app.errors import ApplicationError
from app.protocols import flow_tools
from app.protocols.flow_tools import FlowTool
from app.protocols.rounds import Ended, Rounds, Text, Waiting
from app.store.records import Owner

PREFIX = "flow_"
CALL_SECONDS = 60.0

OUTPUT_SCHEMA_BASE: dict[str, Any] = {
    "workflowId": {"type": "string"}, "round": {"type": "integer"},
    "status": {"type": "string", "enum": ["completed", "failed", "stopped", "waiting", "running"]},
    "error": {"type": ["string", "null"]},
    "question": {"type": "string", "description": "status waiting: what the flow's human node asks"},
    "decisions": {"type": "array", "items": {"type": "string"},
                  "description": "status waiting: the actions review_round takes as its decision"}}


def tool_of(flow: FlowTool) -> Tool:
    outputs = {"type": "object", "properties": {name: {} for name in flow.definition.outputs}}
    return Tool(name=PREFIX + flow.slug, title=flow.definition.name, description=flow.description,
                input_schema=flow.input_schema(version_argument=True),
                output_schema={"type": "object", "properties": {**OUTPUT_SCHEMA_BASE, "outputs": outputs},
                               "required": ["workflowId", "round", "status"]})


async def tools(rounds: Rounds, owner: Owner) -> list[Tool]:
    return [tool_of(f) for f in await flow_tools.published(rounds, owner)]


async def call(rounds: Rounds, owner: Owner, name: str, arguments: dict[str, Any], at_once: bool) -> CallToolResult:
    """Run the flow the tool `name` is; `at_once`: answer once it started (the tasks extension follows it)."""
    flow = await flow_tools.find(rounds, owner, name.removeprefix(PREFIX))
    if flow is None:
        raise ToolError(f"Unknown tool: {name[:100]}")
    inputs = dict(arguments)
    version = inputs.pop("version", None)
    try:
        run = await flow_tools.run(rounds, owner, flow, inputs, version)
    except ApplicationError as exc:
        raise ToolError(f"{exc.detail} ({exc.status_code} {exc.code})") from None
    body: dict[str, Any] = {"workflowId": run.workflow_id, "round": run.round, "status": "running"}
    if at_once:
        return CallToolResult(content=[TextContent(text=f"Flow {flow.definition.name!r} started.")],
                              structured_content=body)
    last = None
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(CALL_SECONDS):
            async for part in rounds.follow(run, tokens=False, waits=True):
                if isinstance(part, Text) and part.kind == "last":
                    last = part.message
                elif isinstance(part, Waiting):
                    asked = await flow_tools.question(rounds, owner, run.workflow_id, part.waiting_for)
                    body.update(status="waiting", question=asked, decisions=part.waiting_for.decisions)
                    text = (f"{asked}\n\nDecide with review_round (workflow_id {run.workflow_id!r}, decision one of "
                            f"{', '.join(part.waiting_for.decisions)}), then follow it with read_round.")
                    return CallToolResult(content=[TextContent(text=text)], structured_content=body)
                elif isinstance(part, Ended):
                    body.update(status=part.status, error=part.error, outputs=flow_tools.outputs_of(last))
                    text = last.content if last is not None else f"The flow {part.status}."
                    return CallToolResult(content=[TextContent(text=text)], structured_content=body,
                                          is_error=part.status != "completed")
    return CallToolResult(content=[TextContent(text=f"The flow still runs: follow workflow {run.workflow_id!r} "
                                                    "with read_round.")], structured_content=body)
