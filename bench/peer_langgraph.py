"""The peer of bench/round_overhead.py: the same round shape in LangGraph with its async SQLite checkpointer.

A graph of a plan node, five task nodes run in parallel (`Send`) and a final node, checkpointed by
`AsyncSqliteSaver` in one SQLite file. Every node calls the same model stub over real HTTP through
the openai SDK (streamed, as Foreman calls it) and writes one message row to a second SQLite file,
as Foreman writes its messages to its database beside DBOS's. Needs the `bench` extra.
"""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import aiosqlite
import openai
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

# As Foreman tunes its SQLite files (app/store/database.py, app/rounds/supervisor.py): WAL, and no fsync per commit.
SQLITE_PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=30000")


class RoundState(TypedDict, total=False):
    round: str
    prompt: str
    tasks: list[str]
    task: str
    results: Annotated[list[str], operator.add]


class Peer:
    """The graph, its checkpointer, the message table and the model client; `run(round_id)` runs one round."""

    def __init__(self, directory: Path, base_url: str) -> None:
        self.directory = directory
        self.base_url = base_url
        self.statements = 0
        self.commits = 0

    def _trace(self, statement: str) -> None:
        head = statement.lstrip()[:6].upper()
        if head.startswith("COMMIT"):
            self.commits += 1
        elif not head.startswith("BEGIN"):
            self.statements += 1

    async def __aenter__(self) -> Peer:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.checkpoints = await aiosqlite.connect(self.directory / "checkpoints.sqlite")
        self.messages = await aiosqlite.connect(self.directory / "messages.sqlite")
        for conn in (self.checkpoints, self.messages):
            for pragma in SQLITE_PRAGMAS:
                await conn.execute(pragma)
        await self.messages.execute("CREATE TABLE IF NOT EXISTS message (id INTEGER PRIMARY KEY, round TEXT, "
                                    "node TEXT, content TEXT)")
        await self.messages.commit()
        saver = AsyncSqliteSaver(self.checkpoints)
        await saver.setup()
        for conn in (self.checkpoints, self.messages):
            await conn.set_trace_callback(self._trace)
        self.client = openai.AsyncOpenAI(base_url=self.base_url, api_key="none", max_retries=0)
        self.graph = self._graph().compile(checkpointer=saver)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.close()
        await self.checkpoints.close()
        await self.messages.close()

    async def run(self, round_id: str) -> None:
        state = await self.graph.ainvoke({"round": round_id, "prompt": "Check five points.", "results": []},
                                         {"configurable": {"thread_id": round_id}})
        assert len(state["results"]) == 5, state

    async def _ask(self, content: str, structured: bool = False) -> str:
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if structured else {}
        stream = await self.client.chat.completions.create(
            model="stub", messages=[{"role": "user", "content": content}], stream=True,
            stream_options={"include_usage": True}, **extra)
        parts = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        return "".join(parts)

    async def _write(self, round_id: str, node: str, content: str) -> None:
        await self.messages.execute("INSERT INTO message (round, node, content) VALUES (?, ?, ?)",
                                    (round_id, node, content))
        await self.messages.commit()

    def _graph(self) -> StateGraph:
        async def plan(state: RoundState) -> dict:
            text = await self._ask(f"Plan: {state['prompt']}", structured=True)
            await self._write(state["round"], "plan", text)
            return {"tasks": [t["id"] for t in json.loads(text)["objWorkplan"]]}

        def fan_out(state: RoundState) -> list[Send]:
            return [Send("task", {"round": state["round"], "task": task}) for task in state["tasks"]]

        async def task(state: RoundState) -> dict:
            text = await self._ask(f"Do {state['task']}.")
            await self._write(state["round"], state["task"], text)
            return {"results": [text]}

        async def final(state: RoundState) -> dict:
            text = await self._ask("Review: " + " ".join(state["results"]))
            await self._write(state["round"], "final", text)
            return {}

        graph = StateGraph(RoundState)
        graph.add_node("plan", plan)
        graph.add_node("task", task)
        graph.add_node("final", final)
        graph.add_edge(START, "plan")
        graph.add_conditional_edges("plan", fan_out, ["task"])
        graph.add_edge("task", "final")
        graph.add_edge("final", END)
        return graph
