"""An MCP tool that answers too much, or too late, does not break its server for later calls: the answer
over MCP_MAX_RESULT_BYTES is dropped with a sentence, and after it (or a timeout) the session is started
afresh (a stdio server's process too), so the next calls are answered. The real stdio server of
tests/mcp_servers, in a process of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.tools.agent import ToolError
from agents.tools.mcp import McpTools, ServerSpec
from tests.mcp_servers import calls, noted, stdio_entry


async def answered(tools: McpTools, count: int) -> int:
    """How many of `count` add calls are answered right."""
    right = 0
    for n in range(count):
        try:
            right += f"is {n + 3:g}" in (await tools.connections[0].call("add", {"a": n, "b": 3})).text
        except ToolError:
            pass
    return right


async def test_an_oversized_answer_is_dropped_and_later_calls_are_answered(tmp_path):
    log = tmp_path / "calls.jsonl"
    tools = McpTools([ServerSpec(**stdio_entry(log))], 60, max_result_bytes=1_000_000)
    try:
        with pytest.raises(ToolError, match=r"calc.flood answered [0-9,]{9} bytes, more than MCP_MAX_RESULT_BYTES "
                                            r"\(1,000,000\); its answer was dropped"):
            await tools.connections[0].call("flood", {"megabytes": 2})
        assert (await answered(tools, 5)) == 5
    finally:
        await tools.close()
    assert_all_ended(log)


def assert_all_ended(log: Path) -> None:
    """Every server process that noted a call has ended and been reaped once the tools are closed: the
    ones started afresh after a reset, and the ones reset (no zombie, no process left to the collector)."""
    pids = {c["pid"] for c in noted(log)}
    assert len(pids) >= 2, pids  # the reset started a second process
    assert [pid for pid in pids if Path(f"/proc/{pid}").exists()] == []


async def test_after_a_flood_past_the_timeout_later_calls_are_answered(tmp_path):
    log = tmp_path / "calls.jsonl"
    tools = McpTools([ServerSpec(**stdio_entry(log))], 60, max_result_bytes=10_000_000)
    try:
        assert (await answered(tools, 1)) == 1  # started (the start may take long on a loaded machine)
        tools.connections[0].timeout = 2
        with pytest.raises(ToolError):  # 50 MB: past the timeout, or over the bound if it came in time
            await tools.connections[0].call("flood", {"megabytes": 50})
        tools.connections[0].timeout = 60
        assert (await answered(tools, 5)) == 5
        assert [c["tool"] for c in calls(log)].count("add") == 6
    finally:
        await tools.close()
    assert_all_ended(log)
