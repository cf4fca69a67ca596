"""Flow tools on the MCP revisions before 2026-07-28, which have no tasks extension: the `mcp` SDK's client
pinned to the initialize handshake (`mode="legacy"`: it offers the SDK's newest handshake revision,
2025-11-25, and cannot offer an older one), and a 2025-06-18 client over raw JSON-RPC (the server still
negotiates it). Each lists the flow tools, runs one to its outputs and answers a human node; a run longer
than a call is still a result (`status` "running", followed with read_round), not a task."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from app.protocols import mcp_flows
from tests.harness import wait_for, wait_status
from tests.protocols.flows import gated, greeting, held, publish
from tests.protocols.test_mcp_tasks import Tasks, get

OLDER = "2025-06-18"


@contextlib.asynccontextmanager
async def legacy(server, key: str = "k1") -> AsyncIterator[Client]:
    """The SDK's client on the handshake revision, declaring the tasks extension all the same."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http:
        async with Client(streamable_http_client(server.url + "/mcp", http_client=http), read_timeout_seconds=120,
                          mode="legacy", extensions=[Tasks()]) as client:
            yield client


def _names(suffix: str) -> tuple[str, str, str]:
    return f"Greet {suffix}", f"Gated {suffix}", f"Held {suffix}"


async def test_the_sdk_on_the_previous_revision_lists_runs_and_answers_flow_tools(server, model, monkeypatch):
    suffix = uuid.uuid4().hex[:6]
    greet, gate, hold = _names(suffix)
    with server.client("k1") as rest:
        for definition in (greeting(greet), gated(gate), held(hold)):
            publish(rest, definition)
    async with legacy(server) as mcp:
        assert mcp.protocol_version == LATEST_HANDSHAKE_VERSION == "2025-11-25"
        tools = {t.name: t for t in (await mcp.list_tools()).tools}
        tool = tools[f"flow_greet_{suffix}"]
        assert tool.input_schema["required"] == ["who"] and "outputs" in tool.output_schema["properties"]

        done = await mcp.call_tool(f"flow_greet_{suffix}", {"who": "Ada"})  # the result, not a task
        assert done.structured_content["status"] == "completed"
        assert done.structured_content["outputs"] == {"greeting": "Good day, Ada."}

        asked = await mcp.call_tool(f"flow_gated_{suffix}", {"word": "it"})
        body = asked.structured_content
        assert body["status"] == "waiting" and body["decisions"] == ["send", "drop"]
        taken = await mcp.call_tool("review_round", {"workflow_id": body["workflowId"], "decision": "send"})
        assert not taken.is_error, taken.content
        read = await mcp.call_tool("read_round", {"workflow_id": body["workflowId"], "wait_seconds": 60})
        assert read.structured_content["status"] == "completed"
        assert read.structured_content["messages"][-1]["content"] == "sent it"

        # A run longer than a call: the call answers that it runs and how to follow it (here after 1 s).
        monkeypatch.setattr(mcp_flows, "CALL_SECONDS", 1.0)
        token = uuid.uuid4().hex
        running = await mcp.call_tool(f"flow_held_{suffix}", {"token": token})
        assert not running.is_error and running.structured_content["status"] == "running"
        assert "read_round" in running.content[0].text
        workflow = running.structured_content["workflowId"]
        wait_for(lambda: model.holding(token), 60, "the flow's model call to be held")
        with pytest.raises(MCPError) as refused:  # no tasks on this revision, though the client declared them
            await get(mcp.session, f"{workflow}:1:0:0")
        assert refused.value.error.code == -32021
        stopped = await mcp.call_tool("stop_round", {"workflow_id": workflow})
        assert stopped.structured_content["status"] == "stopped"
    with server.client("k1") as rest:
        assert wait_status(rest, workflow, "stopped")["status"] == "stopped"


def _rpc(client: httpx.Client, method: str, params: dict[str, Any], version: str | None = OLDER) -> dict[str, Any]:
    """One JSON-RPC request; its answer, whether sent as JSON or as a server-sent event."""
    headers = {"Accept": "application/json, text/event-stream", "Authorization": "Bearer k1",
               **({"MCP-Protocol-Version": version} if version else {})}
    answer = client.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": method,
                                                        "params": params})
    assert answer.status_code == 200, answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        [data] = [line[6:] for line in answer.text.splitlines() if line.startswith("data: ")
                  and '"id":1' in line.replace(" ", "")]
        return dict(json.loads(data))
    return dict(answer.json())


def test_a_2025_06_18_client_lists_and_runs_flow_tools(server):
    suffix = uuid.uuid4().hex[:6]
    greet, gate, _ = _names(suffix)
    with server.client("k1") as rest:
        publish(rest, greeting(greet))
        publish(rest, gated(gate))
    with httpx.Client(base_url=server.url, timeout=120) as client:
        hello = _rpc(client, "initialize", {"protocolVersion": OLDER, "capabilities": {},
                                            "clientInfo": {"name": "old", "version": "1"}}, None)
        assert hello["result"]["protocolVersion"] == OLDER
        listed = {t["name"]: t for t in _rpc(client, "tools/list", {})["result"]["tools"]}
        assert {"start_round", "read_round", "review_round", f"flow_greet_{suffix}"} <= set(listed)
        assert listed[f"flow_greet_{suffix}"]["inputSchema"]["required"] == ["who"]
        done = _rpc(client, "tools/call", {"name": f"flow_greet_{suffix}", "arguments": {"who": "Ada"}})["result"]
        assert done["structuredContent"]["outputs"] == {"greeting": "Good day, Ada."}
        asked = _rpc(client, "tools/call", {"name": f"flow_gated_{suffix}", "arguments": {"word": "it"}})["result"]
        workflow = asked["structuredContent"]["workflowId"]
        assert asked["structuredContent"]["status"] == "waiting"
        assert not _rpc(client, "tools/call", {"name": "review_round", "arguments": {
            "workflow_id": workflow, "decision": "drop"}})["result"].get("isError")
        read = _rpc(client, "tools/call", {"name": "read_round", "arguments": {"workflow_id": workflow,
                                                                              "wait_seconds": 60}})["result"]
        assert read["structuredContent"]["status"] == "completed"
        assert read["structuredContent"]["messages"][-1]["content"] == "dropped"
