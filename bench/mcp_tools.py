"""An MCP tool task's overhead over a direct SDK call to the same server (issue 34: < 5 ms median over stdio).

Starts the tests' stdio server (tests/mcp_servers/calc_stdio.py) twice: once behind the `mcp` SDK's own
`Client`, once behind Foreman's adapter (`agents.tools.mcp.Connection` under a `ToolAgent`: the
arguments taken from the task, checked against the input schema, the call, the result turned into
the task's quoted text). Calls alternate between the two, `N` each; prints the medians and the
adapter's overhead per call. The round's own journal write per task is not in it (bench/round_overhead.py).

    .venv/bin/python bench/mcp_tools.py [N]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.base import TaskContext, TaskSpec  # noqa: E402
from agents.offline.model import OfflineModel  # noqa: E402
from agents.tools.mcp import McpTools, ServerSpec  # noqa: E402


async def main(n: int) -> None:
    args = ["-m", "tests.mcp_servers.calc_stdio"]
    tools = McpTools([ServerSpec(name="calc", transport="stdio", command=sys.executable, args=args, cwd=str(ROOT))],
                     timeout=30)
    agent = next(a for a in await tools.discover() if a.name == "calc.add")
    task = TaskSpec("t1", "calc.add", 'Add {"a": 2, "b": 3}')
    context = TaskContext(prompt="", language="en", documents={}, predecessors={}, model=OfflineModel())
    direct, adapter = [], []
    async with Client(StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT)),
                      read_timeout_seconds=30) as client:
        for _ in range(20):  # warm both
            await client.call_tool("add", {"a": 2, "b": 3})
            await agent.run(task, context)
        for _ in range(n):
            t0 = time.perf_counter()
            await client.call_tool("add", {"a": 2, "b": 3})
            t1 = time.perf_counter()
            await agent.run(task, context)
            t2 = time.perf_counter()
            direct.append(t1 - t0)
            adapter.append(t2 - t1)
    await tools.close()
    d, a = statistics.median(direct) * 1000, statistics.median(adapter) * 1000
    print(f"calls per path: {n} (stdio, tests/mcp_servers/calc_stdio.py, tool add)")
    print(f"direct SDK call    median {d:.2f} ms")
    print(f"Foreman tool task  median {a:.2f} ms")
    print(f"adapter overhead   median {a - d:+.2f} ms per call (target < 5 ms), ratio {a / d:.2f}x")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
