"""The server's CPU per flow run through each protocol against the same run over REST, and the time from a
human node's decision through each protocol to the next node's start.

    python bench/protocol_flows.py [--runs 10] [--turns 3]

Starts `python -m app` on 127.0.0.1 (SQLite, a fresh data dir, offline: the flows have no model node) in
a process of its own; the clients run here, so only the server's CPU is counted (from /proc). A flow of
a condition and two template nodes runs, each way: REST (`POST /api/workflows/start` with `flow`, then
the event stream to a final status), MCP (its `flow_<slug>` tool), OpenAI (`flow/<slug>`, whole),
AG-UI (`forwardedProps.flow`, events to RUN_FINISHED), A2A (`SendMessage` to the flow's skill). Each way
is warmed up, then the ways take turns, `--turns` times, `--runs` runs a batch; the median server CPU
ms per run and its ratio to REST's (target < 1.15) are printed. Then a flow with a human node waits
once per way, and the decision goes through that way (REST `POST /review`, MCP `review_round`, an MCP
task's `tasks/update` answering its input request, OpenAI the next user message, AG-UI `resume`, A2A a
message with the task id): the time from sending it to
the next node's `startedAt` (the node runs' record), median of `--runs`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import openai
from common import cpu_seconds, free_port, median, service
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mcp_types import Result  # noqa: E402

from tests.protocols.flows import gated, greeting  # noqa: E402
from tests.protocols.test_mcp_tasks import Tasks, UpdateParams, UpdateTask, follow  # noqa: E402

A2A_SEND = {"jsonrpc": "2.0", "method": "SendMessage"}
A2A_HEADERS = {"A2A-Version": "1.0"}


async def rest(ctx: dict[str, Any]) -> None:
    http: httpx.AsyncClient = ctx["http"]
    wid = (await http.post("/api/workflows/start", json={"flow": {"id": ctx["flow"], "inputs": {"who": "Ada"}}})
           ).json()["id"]
    async with http.stream("GET", f"/api/workflows/{wid}/events") as response:
        event = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "status" and json.loads(line[6:])["status"] != "running":
                return


async def mcp(ctx: dict[str, Any]) -> None:
    done = await ctx["mcp"].call_tool(ctx["tool"], {"who": "Ada"})
    assert done.structured_content["status"] == "completed", done


async def chat(ctx: dict[str, Any]) -> None:
    answer = await ctx["openai"].chat.completions.create(model=ctx["model"], messages=[
        {"role": "user", "content": "Ada"}])
    assert answer.choices[0].message.content


def _agui_body(thread: str, **extra: Any) -> dict[str, Any]:
    return {"threadId": thread, "runId": uuid.uuid4().hex, "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [], **extra}


async def _agui(http: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    last: dict[str, Any] = {}
    async with http.stream("POST", "/api/ag-ui", json=body, headers={"Accept": "text/event-stream"}) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                last = json.loads(line[6:])
    return last


async def agui(ctx: dict[str, Any]) -> None:
    end = await _agui(ctx["http"], _agui_body(uuid.uuid4().hex, forwardedProps={
        "flow": {"id": ctx["flow"], "inputs": {"who": "Ada"}}}))
    assert end["type"] == "RUN_FINISHED", end


def _a2a_message(text: str, **fields: Any) -> dict[str, Any]:
    return {**A2A_SEND, "id": uuid.uuid4().hex, "params": {"message": {
        "messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}], **fields}}}


async def a2a(ctx: dict[str, Any]) -> None:
    answer = (await ctx["http"].post("/a2a", json=_a2a_message("Ada", metadata={"skill": ctx["tool"]}),
                                     headers=A2A_HEADERS)).json()
    assert answer.get("result", {}).get("task", {}).get("status", {}).get("state") == "TASK_STATE_COMPLETED", answer


WAYS: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {
    "REST start + event stream": rest, "MCP flow tool": mcp, "OpenAI flow model (whole)": chat,
    "AG-UI forwardedProps.flow": agui, "A2A SendMessage": a2a}


async def _started(http: httpx.AsyncClient, wid: str, node: str) -> float:
    """The node's startedAt (epoch seconds), once it has one."""
    while True:
        items = (await http.get(f"/api/workflows/{wid}/nodes")).json()["items"]
        run = next((i for i in items if i["path"] == node and i.get("startedAt")), None)
        if run:
            return datetime.fromisoformat(run["startedAt"]).timestamp()
        await asyncio.sleep(0.01)


async def _waiting(http: httpx.AsyncClient, wid: str) -> None:
    while (await http.get(f"/api/workflows/{wid}/status")).json()["status"] != "waiting":
        await asyncio.sleep(0.01)


async def decision(ctx: dict[str, Any], way: str) -> float:
    """Seconds from sending the decision through `way` to the next node's start."""
    http: httpx.AsyncClient = ctx["http"]
    if way == "AG-UI":
        thread = uuid.uuid4().hex
        end = await _agui(http, _agui_body(thread, forwardedProps={"flow": {"id": ctx["gated"], "inputs": {"word": "x"}}}))
        [interrupt] = end["outcome"]["interrupts"]
        wid = interrupt["metadata"]["workflowId"]
    elif way == "OpenAI":
        first = await ctx["openai"].chat.completions.with_raw_response.create(
            model=ctx["gated_model"], messages=[{"role": "user", "content": "x"}])
        wid = first.headers["x-foreman-workflow"]
        asked = first.parse().choices[0].message.content
    elif way == "MCP task":
        created = await ctx["mcp_tasks"].session.call_tool(ctx["gated_tool"], {"word": "x"}, allow_claimed=True)
        asked = await follow(ctx["mcp_tasks"].session, created.task_id, until=("input_required",))
        [key] = asked.input_requests
        wid = created.task_id.split(":")[0]
    elif way == "A2A":
        task = (await http.post("/a2a", json=_a2a_message("x", metadata={"skill": ctx["gated_tool"]}),
                                headers=A2A_HEADERS)).json()
        task_id = task["result"]["task"]["id"]
        wid = task_id.split(":")[0]
    else:
        wid = (await http.post("/api/workflows/start", json={"flow": {"id": ctx["gated"], "inputs": {"word": "x"}}})
               ).json()["id"]
        await _waiting(http, wid)
    sent = time.time()
    if way == "REST":
        send = http.post(f"/api/workflows/{wid}/review", json={"decision": "send"})
    elif way == "MCP":
        send = ctx["mcp"].call_tool("review_round", {"workflow_id": wid, "decision": "send"})
    elif way == "MCP task":
        send = ctx["mcp_tasks"].session.send_request(UpdateTask(params=UpdateParams(
            task_id=created.task_id, input_responses={key: {"action": "accept", "content": {"decision": "send"}}})),
            Result)
    elif way == "OpenAI":
        send = ctx["openai"].chat.completions.create(model=ctx["gated_model"], messages=[
            {"role": "user", "content": "x"}, {"role": "assistant", "content": asked},
            {"role": "user", "content": "send"}])
    elif way == "AG-UI":
        send = _agui(http, _agui_body(thread, resume=[{"interruptId": interrupt["id"], "status": "resolved",
                                                      "payload": {"decision": "send"}}]))
    else:
        send = http.post("/a2a", json=_a2a_message("send", taskId=task_id), headers=A2A_HEADERS)
    sending = asyncio.ensure_future(send)
    started = await _started(http, wid, "send")
    await sending
    return started - sent


async def measure(base: str, pid: int, runs: int, turns: int) -> tuple[dict[str, list[float]], dict[str, float]]:
    async with httpx.AsyncClient(base_url=base, timeout=120) as http, Client(base + "/mcp") as session, \
            Client(base + "/mcp", extensions=[Tasks()]) as tasks:
        ids = []
        for definition in (greeting(), gated()):
            flow = (await http.post("/api/flows", json=definition)).json()["id"]
            await http.post(f"/api/flows/{flow}/versions", json={})
            ids.append(flow)
        ctx = {"http": http, "mcp": session, "mcp_tasks": tasks, "openai": openai.AsyncOpenAI(base_url=base + "/v1", api_key="local"),
               "flow": ids[0], "gated": ids[1], "tool": "flow_greet_people", "model": "flow/greet_people",
               "gated_tool": "flow_gated_send", "gated_model": "flow/gated_send"}
        for way in WAYS.values():
            for _ in range(3):
                await way(ctx)
        spent: dict[str, list[float]] = {name: [] for name in WAYS}
        for _ in range(turns):
            for name, way in WAYS.items():
                before = cpu_seconds(pid)
                for _ in range(runs):
                    await way(ctx)
                spent[name].append((cpu_seconds(pid) - before) * 1000 / runs)
        latency = {}
        for way_name in ("REST", "MCP", "MCP task", "OpenAI", "AG-UI", "A2A"):
            latency[way_name] = median([await decision(ctx, way_name) for _ in range(runs)]) * 1000
        return spent, latency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    pids: list[int] = []
    with tempfile.TemporaryDirectory() as tmp, service(tmp, free_port(), pids=pids, ready_within=300) as base:
        spent, latency = asyncio.run(measure(base, pids[0], args.runs, args.turns))
    floor = median(spent[next(iter(WAYS))])
    print(f"Server CPU per flow run: median over {args.turns} turns of {args.runs} runs each way:")
    for name, values in spent.items():
        print(f"  {name:<28} {median(values):7.1f} ms   x{median(values) / floor:.2f} of REST   "
              f"(batches: {', '.join(f'{v:.1f}' for v in values)})")
    print(f"A human node's decision through each protocol to the next node's start (median of {args.runs}):")
    for name, ms in latency.items():
        print(f"  {name:<9} {ms:7.1f} ms")


if __name__ == "__main__":
    main()
