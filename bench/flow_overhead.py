"""Flows: what a node costs, a large map, waiting runs, and the same graph against LangGraph.

    python bench/flow_overhead.py [--repeats 3] [--runs 20]

Foreman runs in this process as the service does (its engine, DBOS and SQLite, the openai SDK to a
model stub process over real HTTP: bench/model_stub.py); CPU is this process's (the stub's is not).
Printed, each a median over `--repeats` interleaved repeats:

- CPU per node of a chain of 50 `template` nodes and of 5 (a round's fixed cost subtracted: the
  difference over 45 nodes), and the 50-chain's CPU over the 5-chain's (linear: ~ 10x the per-node
  part);
- a map of 1,000 `template` items: CPU per item and the peak of Python's heap during the run;
- the same 10-node graph in Foreman and in LangGraph's `StateGraph` with `AsyncSqliteSaver`, on the
  same HTTP transport: four `llm` nodes in parallel, a condition, four `llm` nodes in a chain, a map of
  20 items (a template each); CPU per run and the ratio (target at most 0.5x);
- 1,000 runs waiting at a human node: threads, round slots and database connections held.
"""

from __future__ import annotations

import argparse
import functools
import gc
import operator
import statistics
import tempfile
import threading
import time
import tracemalloc
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

import uvloop
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from round_overhead import stub

from agents.registry import build_registry
from app.config import Settings
from app.contract.schemas import FlowStartBody, StartRequest
from app.llm.client import OpenAIModel
from app.main import build_engine
from app.services.workflows import WorkflowService
from app.store.records import Owner
from app.web.server import settle_heap

OWNER = Owner(1, 1)
RUNS = 20


def node(id: str, type: str, **config: Any) -> dict[str, Any]:
    return {"id": id, "type": type, "config": config}


def chain(length: int) -> dict[str, Any]:
    nodes = [node("start", "start"), *(node(f"t{i}", "template", text=f"{{{{ {'inputs.word' if i == 0 else f't{i - 1}.output'} }}}}.")
                                      for i in range(length)), node("end", "end")]
    ids = [n["id"] for n in nodes]
    return {"name": f"chain{length}", "inputs": {"word": {"type": "string"}}, "nodes": nodes,
            "edges": [{"source": a, "target": b} for a, b in zip(ids, ids[1:])], "outputs": {"o": f"{{{{ t{length - 1}.output }}}}"}}


def big_map(items: int) -> dict[str, Any]:
    return {"name": "map", "inputs": {"items": {"type": "list"}},
            "nodes": [node("start", "start"), node("m", "map", items="inputs.items", concurrency=8,
                                                   body=node("b", "template", text="{{ index }}:{{ item }}")),
                      node("end", "end")],
            "edges": [{"source": "start", "target": "m"}, {"source": "m", "target": "end"}],
            "outputs": {"n": "{{ m.output | length }}"}}


def ten_nodes() -> dict[str, Any]:
    """Four llm nodes in parallel, a condition, four llm nodes in a chain, a map of 20 templates."""
    nodes = [node("start", "start"), *(node(f"p{i}", "llm", prompt=f"Part {i} of {{{{ inputs.word }}}}") for i in range(4)),
             node("c", "condition", expression="size(inputs.items) > 0"),
             *(node(f"s{i}", "llm", prompt=f"Step {i}: {{{{ {'p0' if i == 0 else f's{i - 1}'}.output }}}}") for i in range(4)),
             node("m", "map", items="inputs.items", concurrency=8, body=node("b", "template", text="{{ item }}")),
             node("end", "end")]
    edges = [("start", f"p{i}") for i in range(4)] + [(f"p{i}", "c") for i in range(4)]
    edges += [("c", "s0", "true")] + [(f"s{i}", f"s{i + 1}") for i in range(3)] + [("s3", "m"), ("m", "end")]
    return {"name": "ten", "inputs": {"word": {"type": "string"}, "items": {"type": "list"}}, "nodes": nodes,
            "edges": [{"source": e[0], "target": e[1], **({"branch": e[2]} if len(e) > 2 else {})} for e in edges],
            "outputs": {"o": "{{ s3.output }} {{ m.output | length }}"}}


@asynccontextmanager
async def foreman(base_url: str, data_dir: Path) -> AsyncIterator[tuple[WorkflowService, Any]]:
    settings = Settings(data_dir=data_dir, max_concurrent_rounds=200, task_concurrency=5, flow_max_node_runs=5000,
                        embeddings="off")
    model = OpenAIModel(base_url=base_url, api_key="none", model="stub", max_connections=200)
    runtime = build_engine(settings, model, build_registry(entry_points=False))
    await runtime.start()
    try:
        yield WorkflowService(runtime), runtime
    finally:
        await runtime.close()


async def saved(service: WorkflowService, definition: dict[str, Any]) -> int:
    return (await service.flows.create(OWNER, definition)).id


async def run_flow(service: WorkflowService, runtime: Any, flow_id: int, inputs: dict[str, Any]) -> str:
    answer = await service.start(OWNER, None, StartRequest(flow=FlowStartBody(id=flow_id, version="draft",
                                                                              inputs=inputs)), None)
    await runtime.wait_round(answer["id"])
    return str(answer["id"])


async def cpu_of(runs: int, one: Callable[[int], Awaitable[Any]]) -> float:
    """CPU ms per call of `one`, after two warm-up calls."""
    for i in range(2):
        await one(-1 - i)
    settle_heap()
    try:
        cpu = time.process_time()
        for i in range(runs):
            await one(i)
        return (time.process_time() - cpu) * 1000 / runs
    finally:
        gc.unfreeze()


async def measure_foreman(base_url: str, tmp: Path, runs: int, out: dict[str, list[float]]) -> None:
    async with foreman(base_url, tmp / uuid.uuid4().hex[:8]) as (service, runtime):
        five, fifty = await saved(service, chain(5)), await saved(service, chain(50))
        mapped, ten = await saved(service, big_map(1000)), await saved(service, ten_nodes())
        out["chain5"].append(await cpu_of(runs, lambda i: run_flow(service, runtime, five, {"word": f"w{i}"})))
        out["chain50"].append(await cpu_of(runs, lambda i: run_flow(service, runtime, fifty, {"word": f"w{i}"})))
        out["ten"].append(await cpu_of(runs, lambda i: run_flow(service, runtime, ten, {
            "word": f"w{i}", "items": [f"i{k}" for k in range(20)]})))
        items = [f"item {k}" for k in range(1000)]
        tracemalloc.start()
        cpu = time.process_time()
        workflow = await run_flow(service, runtime, mapped, {"items": items})
        out["map_item"].append((time.process_time() - cpu) * 1000 / 1000)
        out["map_peak"].append(tracemalloc.get_traced_memory()[1] / 2**20)
        tracemalloc.stop()
        row = await runtime.rt.repo.workflows.workflow(OWNER, workflow)
        assert row is not None and row.status == "completed", row and row.status


async def measure_waiting(base_url: str, tmp: Path, count: int) -> dict[str, Any]:
    """`count` runs that wait at a human node: what they hold once they all wait."""
    async with foreman(base_url, tmp / uuid.uuid4().hex[:8]) as (service, runtime):
        gated = {"name": "gated", "nodes": [node("start", "start"), node("h", "human", message="Go?", actions=["go"]),
                                            node("end", "end")],
                 "edges": [{"source": "start", "target": "h"}, {"source": "h", "target": "end"}]}
        flow_id = await saved(service, gated)
        threads = threading.active_count()
        ids = []
        for _ in range(count):
            answer = await service.start(OWNER, None, StartRequest(flow=FlowStartBody(id=flow_id, version="draft")),
                                         None)
            ids.append(answer["id"])
        for workflow_id in ids:
            await runtime.wait_round(workflow_id)
        waiting = 0
        for workflow_id in ids:
            row = await runtime.rt.repo.workflows.workflow(OWNER, workflow_id)
            waiting += bool(row and row.status == "waiting")
        pool = runtime.rt.db.writer.pool if hasattr(runtime.rt.db, "writer") else None
        return {"waiting": waiting, "threads_before": threads, "threads_after": threading.active_count(),
                "slots": len(getattr(runtime, "_rounds", {})),
                "connections": pool.checkedout() if pool is not None and hasattr(pool, "checkedout") else "n/a"}


class PeerState(TypedDict, total=False):
    run: str
    word: str
    items: list[str]
    parts: Annotated[list[str], operator.add]
    last: str
    mapped: Annotated[list[str], operator.add]
    item: str


@asynccontextmanager
async def langgraph(base_url: str, tmp: Path) -> AsyncIterator[Callable[[int], Awaitable[None]]]:
    """The same ten-node graph in LangGraph with AsyncSqliteSaver, each llm node a streamed call and a row."""
    from peer_langgraph import Peer

    async with Peer(tmp / uuid.uuid4().hex[:8], base_url) as peer:
        async def part(state: PeerState, i: int) -> dict[str, Any]:
            text = await peer._ask(f"Part {i} of {state['word']}")
            await peer._write(state["run"], f"p{i}", text)
            return {"parts": [text]}

        async def step(state: PeerState, i: int) -> dict[str, Any]:
            text = await peer._ask(f"Step {i}: {state.get('last') or state['parts'][0]}")
            await peer._write(state["run"], f"s{i}", text)
            return {"last": text}

        def each(state: PeerState) -> dict[str, Any]:
            return {"mapped": [state["item"]]}

        def fan(state: PeerState) -> list[Send]:
            return [Send("each", {"item": item}) for item in state["items"]]

        graph = StateGraph(PeerState)
        for i in range(4):
            graph.add_node(f"p{i}", functools.partial(part, i=i))
            graph.add_edge(START, f"p{i}")
            graph.add_node(f"s{i}", functools.partial(step, i=i))
        graph.add_node("c", lambda s: {})
        graph.add_node("each", each)
        graph.add_edge([f"p{i}" for i in range(4)], "c")
        graph.add_conditional_edges("c", lambda s: "s0" if s["items"] else END, ["s0", END])
        for i in range(3):
            graph.add_edge(f"s{i}", f"s{i + 1}")
        graph.add_conditional_edges("s3", fan, ["each"])
        graph.add_edge("each", END)
        compiled = graph.compile(checkpointer=peer.graph.checkpointer)

        async def run(i: int) -> None:
            key = f"run-{i}-{uuid.uuid4().hex[:6]}"
            state = await compiled.ainvoke({"run": key, "word": f"w{i}", "items": [f"i{k}" for k in range(20)],
                                            "parts": [], "mapped": []}, {"configurable": {"thread_id": key}})
            assert len(state["mapped"]) == 20, state

        yield run


async def measure_peer(base_url: str, tmp: Path, runs: int, out: dict[str, list[float]]) -> None:
    async with langgraph(base_url, tmp) as run:
        out["peer_ten"].append(await cpu_of(runs, run))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--waiting", type=int, default=1000)
    args = parser.parse_args()
    out: dict[str, list[float]] = {k: [] for k in ("chain5", "chain50", "ten", "map_item", "map_peak", "peer_ten")}
    with tempfile.TemporaryDirectory() as tmp, stub(0.0) as instant:
        for _ in range(args.repeats):  # interleaved: Foreman, the peer, Foreman, ...
            uvloop.run(measure_foreman(instant, Path(tmp), args.runs, out))
            uvloop.run(measure_peer(instant, Path(tmp), args.runs, out))
        held = uvloop.run(measure_waiting(instant, Path(tmp), args.waiting)) if args.waiting else None
    med = {k: statistics.median(v) for k, v in out.items()}
    per_node = (med["chain50"] - med["chain5"]) / 45
    print(f"chain of 5 template nodes: {med['chain5']:.1f} ms CPU per run; of 50: {med['chain50']:.1f} ms "
          f"(ratio {med['chain50'] / med['chain5']:.2f}x); per node {per_node:.2f} ms (target <= 5 ms)")
    print(f"map of 1,000 template items: {med['map_item']:.2f} ms CPU per item, heap peak {med['map_peak']:.1f} MiB")
    print(f"10-node graph (8 llm, 1 condition, 1 map of 20): Foreman {med['ten']:.1f} ms CPU per run, LangGraph + "
          f"AsyncSqliteSaver {med['peer_ten']:.1f} ms: {med['ten'] / med['peer_ten']:.2f}x (target <= 0.5)")
    print("each repeat: " + "; ".join(f"{k} {', '.join(f'{v:.2f}' for v in vs)}" for k, vs in out.items()))
    if held:
        print(f"{held['waiting']} of {args.waiting} runs waiting at a human node: threads {held['threads_before']} "
              f"before, {held['threads_after']} after; round tasks held {held['slots']}; database connections "
              f"checked out {held['connections']}")


if __name__ == "__main__":
    main()
