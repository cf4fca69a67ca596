"""A stop cancels a round's task once: PostgreSQL echoes a stop back to the process that said it
(`cancel_local`), and a second cancel would interrupt the first one's cleanup. Here the cleanup is the
MCP SDK's courtesy cancellation to a real stdio server, mid-call."""

from __future__ import annotations

import asyncio

from agents.tools.mcp import McpTools, ServerSpec
from app.rounds.supervisor import cancel_once
from tests.mcp_servers import calls, stdio_entry

CANCELLED = {"server": "calc", "tool": "slow", "event": "cancelled"}


async def test_a_call_cancelled_again_while_it_tells_the_server_still_tells_it(tmp_path):
    log = tmp_path / "calls.jsonl"
    tools = McpTools([ServerSpec(**stdio_entry(log))], 60)
    try:
        call = asyncio.ensure_future(tools.connections[0].call("slow", {"seconds": 120}))
        for _ in range(1200):
            if [c for c in calls(log) if c["tool"] == "slow"]:
                break
            await asyncio.sleep(0.05)
        for _ in range(50):  # the stop, then its echo at every turn of the loop while the call ends
            cancel_once([call])
            await asyncio.sleep(0)
        await asyncio.gather(call, return_exceptions=True)
        assert call.cancelled()
        for _ in range(200):
            if CANCELLED in calls(log):
                break
            await asyncio.sleep(0.05)
        assert CANCELLED in calls(log)
    finally:
        await tools.close()
