"""A sub-flow node: another flow run as one node of this run, its node runs under the node's path.

The app's effects supply the sub-flow's definition (`Effects.definition_of`: the owner's flow, at the
version the node names); the rest is the engine's: the depth (MAX_DEPTH), the inputs the sub-flow declares
(those given, then their defaults; one it needs without a default fails the node), and the scoping of its
run: it settles through the parent run's journal and acts through the parent run's effects, each path under
the sub-flow node's (`parent/child`), so the app keys every node run and message by the path from the top.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import msgspec

from agents.flows.definition import AgentConfig, FlowDefinition, FlowRefConfig, HttpConfig, LlmConfig, Node
from agents.flows.runs import Effects, FlowJournal, NodeError, NodeRun, Produced

if TYPE_CHECKING:
    from agents.flows.engine import FlowRunner

MAX_DEPTH = 5  # sub-flows within sub-flows


class SubJournal:
    """A sub-flow's journal: the parent's, each path under the sub-flow node's (`parent/child`)."""

    def __init__(self, parent: FlowJournal, prefix: str) -> None:
        self.parent, self.prefix = parent, prefix

    async def recorded(self) -> dict[str, NodeRun]:
        n = len(self.prefix)
        return {path[n:]: replace(run, path=path[n:]) for path, run in (await self.parent.recorded()).items()
                if path.startswith(self.prefix)}

    async def started(self, node: Node, path: str, done: int, total: int) -> None:
        return None  # the sub-flow node's own start was logged

    async def settled(self, run: NodeRun, done: int, total: int) -> None:
        await self.parent.settled(replace(run, path=self.prefix + run.path), -1, total)

    async def decision(self, path: str) -> str | None:
        return await self.parent.decision(self.prefix + path)


class SubEffects:
    """A sub-flow's effects: the parent's, each path under the sub-flow node's."""

    def __init__(self, parent: Effects, prefix: str) -> None:
        self.parent, self.prefix = parent, prefix

    async def agent(self, node: Node, path: str, config: AgentConfig, instructions: str,
                    files: list[int]) -> Produced:
        return await self.parent.agent(node, self.prefix + path, config, instructions, files)

    async def llm(self, node: Node, path: str, config: LlmConfig, prompt: str, system: str) -> Produced:
        return await self.parent.llm(node, self.prefix + path, config, prompt, system)

    async def code(self, node: Node, path: str, code: str, inputs: Mapping[str, Any],
                   nodes: Mapping[str, Any]) -> Produced:
        return await self.parent.code(node, self.prefix + path, code, inputs, nodes)

    async def http(self, node: Node, path: str, config: HttpConfig, url: str, headers: dict[str, str],
                   body: str | None) -> Produced:
        return await self.parent.http(node, self.prefix + path, config, url, headers, body)

    async def definition_of(self, config: FlowRefConfig) -> FlowDefinition:
        return await self.parent.definition_of(config)


def sub_inputs(definition: FlowDefinition, inputs: Mapping[str, Any], flow_id: int) -> dict[str, Any]:
    """What the sub-flow runs with: the inputs it declares, given or else their defaults."""
    given = {k: v for k, v in inputs.items() if k in definition.inputs}
    missing = [k for k, spec in definition.inputs.items() if k not in given and spec.default is msgspec.UNSET]
    if missing:
        raise NodeError(f"flow {flow_id} needs inputs this flow does not have: {', '.join(missing)}")
    return given | {k: spec.default for k, spec in definition.inputs.items() if k not in given}


async def run_subflow(runner: FlowRunner, path: str, config: FlowRefConfig, inputs: Mapping[str, Any]) -> Produced:
    """The sub-flow node at `path` of `runner`'s run: its outputs are the node's output (a sub-flow's own
    sub-flows at most MAX_DEPTH deep)."""
    if (runner.at + path).count("/") + 1 > MAX_DEPTH:
        raise NodeError(f"sub-flows nest deeper than {MAX_DEPTH}: a flow probably runs itself")
    definition = await runner.effects.definition_of(config)
    result = await runner.under(path, definition).run(sub_inputs(definition, inputs, config.flow_id))
    if result.status == "waiting":
        raise NodeError(f"flow {config.flow_id} waits for a person; a sub-flow with a human node cannot run "
                        "inside another flow yet")
    if result.status == "failed":
        raise NodeError(f"flow {config.flow_id} failed at {result.failed_node or 'its outputs'}: {result.error}")
    return Produced(output=result.outputs)
