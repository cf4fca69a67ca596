"""An in-memory journal and recorded effects for the flow engine: the engine's logic without a server."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from agents.flows.definition import AgentConfig, FlowDefinition, FlowRefConfig, HttpConfig, LlmConfig, Node
from agents.flows.engine import FlowRunner
from agents.flows.runs import FlowLimits, FlowResult, NodeError, NodeRun, Produced


class MemoryJournal:
    """Keeps settled node runs in a dict; `decisions` answers human nodes by path."""

    def __init__(self, runs: Mapping[str, NodeRun] | None = None, decisions: Mapping[str, str] | None = None) -> None:
        self.runs: dict[str, NodeRun] = dict(runs or {})
        self.decisions = dict(decisions or {})
        self.order: list[str] = []
        self.starts: list[str] = []

    async def recorded(self) -> dict[str, NodeRun]:
        return dict(self.runs)

    async def started(self, node: Node, path: str, done: int, total: int) -> None:
        self.starts.append(path)

    async def settled(self, run: NodeRun, done: int, total: int) -> None:
        assert run.path not in self.runs, f"{run.path} settled twice"
        self.runs[run.path] = run
        self.order.append(run.path)

    async def decision(self, path: str) -> str | None:
        return self.decisions.get(path)


class ScriptedEffects:
    """Model calls answer `reply(prompt)`; every call is counted (and its path kept); `fail` makes a node's first n calls
    fail; `flows` are the definitions sub-flow nodes name."""

    def __init__(self, fail: Mapping[str, int] | None = None, delay: float = 0.0,
                 flows: Mapping[int, dict[str, Any]] | None = None) -> None:
        self.calls: list[str] = []
        self.paths: list[str] = []
        self.flows = dict(flows or {})  # what sub-flow nodes run, by flow id
        self.fail = dict(fail or {})
        self.delay = delay

    async def _call(self, node: Node, text: str) -> Produced:
        self.calls.append(node.id)
        if self.delay:
            await asyncio.sleep(self.delay * (1 + hash(text) % 3))
        if self.fail.get(node.id, 0) > 0:
            self.fail[node.id] -= 1
            raise NodeError(f"the model failed on {node.id}")
        return Produced(output=f"<{text}>", text=f"<{text}>")

    async def agent(self, node: Node, path: str, config: AgentConfig, instructions: str,
                    files: list[int]) -> Produced:
        self.paths.append(path)
        return await self._call(node, instructions)

    async def llm(self, node: Node, path: str, config: LlmConfig, prompt: str, system: str) -> Produced:
        self.paths.append(path)
        return await self._call(node, prompt)

    async def code(self, node: Node, path: str, code: str, inputs: Mapping[str, Any],
                   nodes: Mapping[str, Any]) -> Produced:
        raise NodeError("no sandbox here")

    async def http(self, node: Node, path: str, config: HttpConfig, url: str, headers: dict[str, str],
                   body: str | None) -> Produced:
        raise NodeError("no requests here")

    async def definition_of(self, config: FlowRefConfig) -> FlowDefinition:
        if config.flow_id not in self.flows:
            raise NodeError(f"there is no flow {config.flow_id}")
        return FlowDefinition.decode(self.flows[config.flow_id])


async def run(definition: dict[str, Any], inputs: Mapping[str, Any] | None = None,
              journal: MemoryJournal | None = None, effects: ScriptedEffects | None = None,
              concurrency: int = 4, max_node_runs: int = 1000,
              **options: Any) -> tuple[FlowResult, MemoryJournal, ScriptedEffects]:
    """Run `definition`; `options` go to the `FlowRunner` (`join_all`, `admit`)."""
    journal = journal or MemoryJournal()
    effects = effects or ScriptedEffects()
    runner = FlowRunner(FlowDefinition.decode(definition), effects, journal,
                        FlowLimits(max_node_runs=max_node_runs, concurrency=concurrency), **options)
    return await runner.run(dict(inputs or {})), journal, effects
