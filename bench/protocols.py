"""The server's CPU per round through each protocol adapter against the REST API: same round, same stub.

    python bench/protocols.py [--rounds 10] [--turns 5] [--tasks 2] [--only mcp,ag-ui]

Starts bench/model_stub.py (instant answers, a plan of `--tasks` tasks) and `python -m app` on
127.0.0.1 (SQLite, a fresh data dir) with the stub as its model, in processes of their own; the
clients run here, so only the server's CPU is counted (from /proc). One round, each way:

- REST: `POST /api/workflows/start`, then the event stream until the round's status is final
  (what the chat page does);
- OpenAI: `POST /v1/chat/completions` with the `openai` SDK, whole, and streamed;
- MCP: `start_round`, then `read_round` with `wait_seconds` (the `mcp` SDK's client, one session);
- AG-UI: `POST /api/ag-ui`, reading the events to RUN_FINISHED.

Each is warmed up with three rounds; then the ways take turns, `--turns` times, each turn a batch
of `--rounds` rounds one after another (the kernel counts CPU in 10 ms ticks: a batch makes it
fine enough). Prints the median server CPU ms per round of each way and its ratio to REST's
(target < 1.15).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable

import httpx
import openai
from common import ROOT, cpu_seconds, free_port, median, service
from mcp import Client

PROMPT = "Check the points of the request."


async def rest(http: httpx.AsyncClient, **_: object) -> None:
    wid = (await http.post("/api/workflows/start", json={"prompt": PROMPT})).json()["id"]
    async with http.stream("GET", f"/api/workflows/{wid}/events") as response:
        event = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "status" and json.loads(line[6:])["status"] != "running":
                return


async def chat_whole(chat: openai.AsyncOpenAI, **_: object) -> None:
    answer = await chat.chat.completions.create(model="foreman", messages=[{"role": "user", "content": PROMPT}])
    assert answer.choices[0].message.content


async def chat_stream(chat: openai.AsyncOpenAI, **_: object) -> None:
    stream = await chat.chat.completions.create(model="foreman", stream=True,
                                                messages=[{"role": "user", "content": PROMPT}])
    async for _chunk in stream:
        pass


async def mcp_round(mcp: Client, **_: object) -> None:
    started = await mcp.call_tool("start_round", {"prompt": PROMPT})
    wid = started.structured_content["workflowId"]
    read = await mcp.call_tool("read_round", {"workflow_id": wid, "wait_seconds": 60})
    assert read.structured_content["status"] == "completed", read.structured_content


async def ag_ui(http: httpx.AsyncClient, **_: object) -> None:
    body = {"threadId": uuid.uuid4().hex, "runId": "r", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": "m", "role": "user", "content": PROMPT}]}
    async with http.stream("POST", "/api/ag-ui", json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: ") and json.loads(line[6:])["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                return


WAYS: dict[str, Callable[..., Awaitable[None]]] = {
    "REST (start + event stream)": rest, "OpenAI chat, whole": chat_whole, "OpenAI chat, streamed": chat_stream,
    "MCP (start_round + read_round)": mcp_round, "AG-UI": ag_ui}


async def measure(base: str, pid: int, rounds: int, turns: int) -> dict[str, list[float]]:
    async with httpx.AsyncClient(base_url=base, timeout=120) as http, \
            Client(base + "/mcp", read_timeout_seconds=120) as mcp:
        chat = openai.AsyncOpenAI(base_url=base + "/v1", api_key="none", max_retries=0, timeout=120)
        clients = {"http": http, "chat": chat, "mcp": mcp}

        async def batch(way: Callable[..., Awaitable[None]], size: int) -> float:
            """Server CPU ms per round over `size` rounds one after another (/proc counts in 10 ms ticks)."""
            client = clients[way.__code__.co_varnames[0]]
            await asyncio.sleep(0.3)  # the previous batch's last writes settle before the meter starts
            before = cpu_seconds(pid)
            for _ in range(size):
                await way(client)
            await asyncio.sleep(0.3)  # ... and this one's, after the client saw the end
            return (cpu_seconds(pid) - before) * 1000 / size

        for way in WAYS.values():
            await batch(way, 3)
        spent: dict[str, list[float]] = {name: [] for name in WAYS}
        for _ in range(turns):
            for name, way in WAYS.items():
                spent[name].append(await batch(way, rounds))
        await chat.close()
        return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="rounds per batch")
    parser.add_argument("--turns", type=int, default=5, help="batches of each way, taking turns")
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated words: only the ways whose names hold one "
                                                    "(REST always runs: it is the measure)")
    args = parser.parse_args()
    if args.only:
        words = [w.strip().lower() for w in args.only.split(",") if w.strip()]
        for name in list(WAYS)[1:]:
            if not any(w in name.lower() for w in words):
                del WAYS[name]
    stub = subprocess.Popen([sys.executable, str(ROOT / "bench" / "model_stub.py"), "--delay", "0", "--tasks",
                             str(args.tasks)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(stub.stdout.readline())
        pids: list[int] = []
        with tempfile.TemporaryDirectory() as tmp, service(tmp, free_port(), settings={
                "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "stub", "LLM_MODEL": "stub"},
                pids=pids, ready_within=300) as base:
            spent = asyncio.run(measure(base, pids[0], args.rounds, args.turns))
    finally:
        stub.terminate()
        stub.wait(10)
    floor = median(spent[next(iter(WAYS))])
    print(f"Server CPU per round: median over {args.turns} turns of {args.rounds} rounds each way "
          f"(a plan of {args.tasks} tasks, instant stub model):")
    for name, values in spent.items():
        print(f"  {name:<32} {median(values):7.1f} ms   x{median(values) / floor:.2f} of REST   "
              f"(batches: {', '.join(f'{v:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
