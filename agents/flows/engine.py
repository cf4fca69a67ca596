"""The flow engine: runs a definition's graph of typed nodes to its outputs.

A node runs when every edge into it is decided and at least one of them is taken (a skipped branch
does not block a join); nodes whose inputs are ready run at once, `FlowLimits.concurrency` of them
together. What a node reads is only what the nodes before it produced, so a run's outputs are the
same whatever the concurrency and whatever order independent nodes finish in.

Every node run settles once through the `FlowJournal` (the checkpoint): a run resumed after a crash
or after the user's decision reads the settled runs back and runs only the rest; a map's items and a
loop's iterations are node runs of their own, so a resumed map runs only the items not yet done.
What a node does outside the engine (an agent, a model, the sandbox, a request) goes through
`Effects`, which also supplies a sub-flow's definition (its run is the engine's: `subflows`). A human
node with no decision yet waits: the run goes on with what does not depend on it and then ends
`waiting`, naming every node that waits.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any

from agents.flows.definition import (
    ERROR_BRANCH,
    AgentConfig,
    CodeConfig,
    ConditionConfig,
    FlowDefinition,
    FlowRefConfig,
    HttpConfig,
    HumanConfig,
    LlmConfig,
    LoopConfig,
    MapConfig,
    Node,
    NodeConfig,
    TemplateConfig,
    config_of,
)
from agents.flows.expressions import evaluate
from agents.flows.iteration import ItemRunner, child, run_loop, run_map
from agents.flows.runs import (
    BudgetError,
    Effects,
    FlowJournal,
    FlowLimits,
    FlowResult,
    HumanWait,
    NodeError,
    NodeRun,
    Produced,
    Waiting,
    node_view,
    truth,
)
from agents.flows.subflows import SubEffects, SubJournal, run_subflow
from agents.flows.templates import render


class FlowRunner:
    """One run of one definition, with the app's journal and effects."""

    def __init__(self, definition: FlowDefinition, effects: Effects, journal: FlowJournal,
                 limits: FlowLimits | None = None, secrets: Mapping[str, str] | None = None, *,
                 join_all: bool = False, admit: Callable[[Node], str | None] | None = None,
                 spread: ItemRunner | None = None, at: str = "") -> None:
        """`join_all`: a node runs only when every edge into it is taken, and is skipped as soon as one is
        not (a planned round's tasks: each needs every task it depends on); else one taken edge is enough.
        `admit`: asked as a node is about to start; a reason it gives skips the node instead (a round's
        token budget). `spread`: where a map's items run that do work outside the engine (the app's: another
        replica may take them); None: here (`agents.flows.iteration`). `at`: the path of the sub-flow node
        this run is the run of ("a/" under node `a`; `agents.flows.subflows`), "" for a top-level run."""
        self.definition, self.effects, self.journal, self.at = definition, effects, journal, at
        self.limits = limits or FlowLimits()
        self.secrets = dict(secrets or {})  # what http nodes read as `env.NAME` (never recorded, never shown)
        self.join_all, self.admit, self.spread = join_all, admit, spread
        self.nodes = {n.id: n for n in definition.nodes}
        self.order = {n.id: i for i, n in enumerate(definition.nodes)}
        self.incoming: dict[str, list[Any]] = {n.id: [] for n in definition.nodes}
        self.outgoing: dict[str, list[str]] = {n.id: [] for n in definition.nodes}
        for edge in definition.edges:
            self.incoming.setdefault(edge.target, []).append(edge)
            if edge.target in self.nodes:
                self.outgoing.setdefault(edge.source, []).append(edge.target)
        # Kept as runs are recorded, so that no node's step is linear in the graph (`record`): the
        # top-level nodes settled, each node's view in the scope, a fatal run, the nodes to look at.
        self.runs: dict[str, NodeRun] = {}
        self.settled: set[str] = set()
        self.views: dict[str, dict[str, Any]] = {n.id: node_view(None) for n in definition.nodes}
        self.fatal: NodeRun | None = None
        self.touched: set[str] = set(self.nodes)  # nodes whose edges may have been decided since the last look
        self.waits: list[HumanWait] = []
        self.budget = itertools.count(1)
        self.given: dict[str, Any] = {}  # what a node's effect was called with, kept for its record if it fails
        self.inputs: dict[str, Any] = {}
        self.configs: dict[int, NodeConfig] = {}  # by the node's identity: a body node and a top-level one may share an id

    def under(self, path: str, definition: FlowDefinition) -> FlowRunner:
        """A run of `definition` as the sub-flow node at `path`: through this run's effects and journal, its
        paths under `path/`, within this run's limits."""
        prefix = f"{path}/"
        return FlowRunner(definition, SubEffects(self.effects, prefix), SubJournal(self.journal, prefix), self.limits,
                          at=self.at + prefix)

    @property
    def total(self) -> int:
        return len(self.definition.nodes)

    def done(self) -> int:
        return len(self.settled)

    def record(self, path: str, run: NodeRun) -> None:
        """Keep `run` as the run at `path`; a top-level node's also in the counts, views and the next look."""
        self.runs[path] = run
        if path not in self.nodes:
            return
        self.views[path] = node_view(run)
        if run.settled:
            self.settled.add(path)
            self.touched.update(self.outgoing.get(path, ()))
        else:
            self.settled.discard(path)
        if run.fatal and (self.fatal is None or self.order[path] < self.order[self.fatal.path]):
            self.fatal = run  # the first in the definition's order among those found at once

    def scope(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What a template or an expression reads: the inputs, each node's `{output, files}`, and inside a
        map or loop `item`, `index`, `iteration`."""
        scope: dict[str, Any] = {"inputs": self.inputs, **self.views}
        if extra:
            scope.update(extra)
        return scope

    async def run(self, inputs: Mapping[str, Any]) -> FlowResult:
        """Run the flow (what the journal has settled is not run again) to its end or its waits."""
        self.inputs = dict(inputs)
        for path, recorded in (await self.journal.recorded()).items():
            self.record(path, recorded)
        running: dict[asyncio.Task[NodeRun], str] = {}
        sem = asyncio.Semaphore(self.limits.concurrency)
        try:
            while True:
                if self.fatal is not None:
                    break  # the run fails: what still runs is cancelled (below), nothing more starts
                await self._launch_ready(running, sem)
                if not running:
                    break
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    self.record(running.pop(task), task.result())
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)
        return self._ended()

    def _ended(self) -> FlowResult:
        result = self._outcome()
        result.runs, result.done, result.total = self.runs, self.done(), self.total
        return result

    def _outcome(self) -> FlowResult:
        fatal = self.fatal
        if fatal is not None:
            return FlowResult("failed", failed_node=fatal.node_id, error=fatal.error)
        if self.waits:
            return FlowResult("waiting", waits=list(self.waits))
        try:
            outputs = {name: render(text, self.scope()) for name, text in self.definition.outputs.items()}
        except Exception as exc:  # noqa: BLE001 - a template that fails at run time fails the run, saying why
            return FlowResult("failed", failed_node="", error=f"the flow's outputs could not be rendered: {exc}")
        return FlowResult("completed", outputs=outputs)

    async def _launch_ready(self, running: dict[asyncio.Task[NodeRun], str], sem: asyncio.Semaphore) -> None:
        """Start every node whose incoming edges are all decided; skip those the edges rule out (none taken,
        or with `join_all` one not taken; a skip decides the edges after it). Only the nodes after those
        settled since the last look are looked at, in the definition's order; every skip of a look is
        written before its nodes start."""
        busy = set(running.values())
        starting: list[Node] = []
        while self.touched:  # a pass, in the definition's order; a skip's nodes after it in this one
            passing = [(self.order[n], n) for n in self.touched]
            heapq.heapify(passing)
            self.touched = set()
            while passing:
                at, node_id = heapq.heappop(passing)
                node = self.nodes[node_id]
                if node.id in self.runs or node.id in busy:
                    continue
                edges = self.incoming.get(node.id, [])
                decided = [self._taken(e) for e in edges]
                if any(d is None for d in decided):
                    continue
                if edges and not (all(decided) if self.join_all else any(decided)):
                    skipped = NodeRun(node.id, node.id, node.type, "skipped", error=self._why_skipped(edges, decided))
                    self.record(node.id, skipped)
                    await self.journal.settled(skipped, self.done(), self.total)
                    for later in [n for n in self.touched if self.order[n] > at]:
                        self.touched.discard(later)
                        heapq.heappush(passing, (self.order[later], later))
                    continue
                busy.add(node.id)
                starting.append(node)
        for node in starting:
            running[asyncio.ensure_future(self._top(node, sem))] = node.id

    def _why_skipped(self, edges: list[Any], decided: list[bool | None]) -> str:
        """Why a node is skipped: the first edge into it not taken, by what its source did."""
        source = self.runs[next(e for e, d in zip(edges, decided, strict=True) if not d).source]
        if source.status == "failed":
            return f"it depends on node '{source.node_id}', which failed"
        if source.status == "skipped":
            return f"it depends on node '{source.node_id}', which was skipped"
        return "no branch leading to it was taken"

    def _taken(self, edge: Any) -> bool | None:
        """Whether an edge is taken: None while its source has not settled."""
        source = self.runs.get(edge.source)
        if source is None or not source.settled:
            return None
        if edge.branch == ERROR_BRANCH:
            return source.status == "failed" and source.branch == ERROR_BRANCH
        if source.status == "skipped" or (source.status == "failed" and source.branch == ERROR_BRANCH):
            return False
        if source.status == "failed":
            return not source.fatal  # onError "continue": the rest runs
        return edge.branch is None or edge.branch == source.branch

    async def _top(self, node: Node, sem: asyncio.Semaphore) -> NodeRun:
        async with sem:
            refused = self.admit(node) if self.admit is not None else None
            if refused is not None:
                skipped = NodeRun(node.id, node.id, node.type, "skipped", error=refused)
                await self.journal.settled(skipped, self.done() + 1, self.total)
                return skipped
            await self.journal.started(node, node.id, self.done(), self.total)
            run = await self.execute(node, node.id, {})
            if run.status == "waiting":
                return run
            await self.journal.settled(run, self.done() + 1, self.total)
            return run

    # --- one node -----------------------------------------------------------------------------

    async def execute(self, node: Node, path: str, extra: Mapping[str, Any], counted: bool = False) -> NodeRun:
        """Run one node with its retries, timeout and error strategy; never raises but for a stop. `counted`:
        its run was counted against the node budget already."""
        if not counted and next(self.budget) > self.limits.max_node_runs:
            return self.over_budget(node, path)
        policy = node.retry
        tries = 1 + (policy.max if policy else 0)
        error = ""
        for attempt in range(1, tries + 1):
            try:
                if node.timeout_seconds is None:
                    run = await self.perform(node, path, extra)
                else:
                    async with asyncio.timeout(node.timeout_seconds):
                        run = await self.perform(node, path, extra)
                self.given.pop(path, None)
                run.attempts = attempt
                return run
            except Waiting as waiting:
                self.waits.append(waiting.wait)
                return NodeRun(path, node.id, node.type, "waiting", attempts=attempt)
            except BudgetError as exc:
                return NodeRun(path, node.id, node.type, "failed", attempts=attempt, error=str(exc), fatal=True)
            except TimeoutError:
                error = f"the node took longer than its timeoutSeconds ({node.timeout_seconds:g} s)"
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a node's failure is handled by its error strategy
                error = str(exc).strip() or type(exc).__name__
            if attempt < tries and policy is not None:
                await asyncio.sleep(policy.delay_seconds * 2 ** (attempt - 1))
        return self.failed(node, path, error, tries, self.given.pop(path, None))

    def over_budget(self, node: Node, path: str) -> NodeRun:
        return NodeRun(path, node.id, node.type, "failed", fatal=True,
                       error=f"the run reached FLOW_MAX_NODE_RUNS ({self.limits.max_node_runs} node runs, map "
                             "items and loop iterations counted) and was ended")

    async def item(self, body: Node, path: str, extra: Mapping[str, Any]) -> NodeRun:
        """One map item sent here by another run of this flow (`spread`): its body run and settled."""
        return await child(self, body, path, extra)

    @staticmethod
    def failed(node: Node, path: str, error: str, attempts: int, given: Any = None) -> NodeRun:
        """The node failed for good: what its `onError` makes of it (`given`: what it was called with)."""
        if node.on_error == "default":
            return NodeRun(path, node.id, node.type, "succeeded", attempts=attempts, output=node.default,
                           error=error, input=given)
        run = NodeRun(path, node.id, node.type, "failed", attempts=attempts, error=error, input=given)
        if node.on_error == "branch":
            run.branch = ERROR_BRANCH
        run.fatal = node.on_error == "fail"
        return run

    async def perform(self, node: Node, path: str, extra: Mapping[str, Any]) -> NodeRun:
        """The node's own work, once (raises on failure)."""
        config = self.configs.get(id(node))
        if config is None:  # decoded once per node of this run, not once per run of it (a map's body)
            config = self.configs[id(node)] = config_of(node)
        scope = self.scope(extra)

        def ok(produced: Produced | Any, **fields: Any) -> NodeRun:
            if not isinstance(produced, Produced):
                produced = Produced(output=produced)
            return NodeRun(path, node.id, node.type, "succeeded", output=produced.output, files=produced.files,
                           text=produced.text, **fields)

        if node.type == "start":
            return ok(self.inputs)
        if node.type == "end":
            return ok(None)
        if isinstance(config, TemplateConfig):
            return ok(render(config.text, scope))
        if isinstance(config, ConditionConfig):
            branch = self.branch(config, scope)
            return ok(branch, branch=branch)
        if isinstance(config, LlmConfig):
            prompt, system = render(config.prompt, scope), render(config.system or "", scope)
            self.given[path] = {"prompt": prompt}
            return ok(await self.effects.llm(node, path, config, prompt, system), input=self.given[path])
        if isinstance(config, AgentConfig):
            instructions = render(config.instructions, scope)
            files = self.files_of(config.inputs, scope)
            self.given[path] = {"instructions": instructions, "files": files}
            return ok(await self.effects.agent(node, path, config, instructions, files), input=self.given[path])
        if isinstance(config, CodeConfig):
            nodes = {k: v for k, v in scope.items() if k in self.nodes}
            return ok(await self.effects.code(node, path, config.code, self.inputs, nodes))
        if isinstance(config, HttpConfig):
            secret = {**scope, "env": self.secrets}
            url = render(config.url, secret)
            headers = {k: render(v, secret) for k, v in config.headers.items()}
            body = config.body if not isinstance(config.body, str) else render(config.body, secret)
            text = body if body is None or isinstance(body, str) else json.dumps(body, ensure_ascii=False)
            shown = render(config.url, {**scope, "env": {k: "[secret]" for k in self.secrets}})
            self.given[path] = {"method": config.method, "url": shown}
            return ok(await self.effects.http(node, path, config, url, headers, text), input=self.given[path])
        if isinstance(config, FlowRefConfig):
            inputs = {k: v for k, v in scope.items() if k == "inputs"}["inputs"]
            return ok(await run_subflow(self, path, config, inputs))
        if isinstance(config, HumanConfig):
            decided = await self.journal.decision(path)
            if decided is None:
                raise Waiting(HumanWait(path, node.id, render(config.message, scope), tuple(config.actions),
                                        config.timeout_seconds, config.default_action))
            return ok(decided, branch=decided)
        if isinstance(config, MapConfig):
            return await run_map(self, node, path, config, scope, extra)
        if isinstance(config, LoopConfig):
            return await run_loop(self, node, path, config, extra)
        raise NodeError(f"node type {node.type!r} cannot run")

    @staticmethod
    def branch(config: ConditionConfig, scope: Mapping[str, Any]) -> str:
        if config.expression is not None:
            return "true" if truth(evaluate(config.expression, scope)) else "false"
        for case in config.cases or []:
            if truth(evaluate(case.expression, scope)):
                return case.name
        return "default"

    @staticmethod
    def files_of(inputs: list[str], scope: Mapping[str, Any]) -> list[int]:
        """The file ids an agent node reads: each entry a file id, or a template giving ids (a list, or
        text with ids separated by commas or spaces)."""
        found: list[int] = []
        for entry in inputs:
            value: Any = entry
            if "{{" in entry:
                value = evaluate(entry.strip().removeprefix("{{").removesuffix("}}").strip(), scope) \
                    if entry.strip().startswith("{{") and entry.strip().endswith("}}") else render(entry, scope)
            for item in value if isinstance(value, list) else str(value).replace(",", " ").split():
                if isinstance(item, int) or (isinstance(item, str) and item.isdigit()):
                    found.append(int(item))
                elif isinstance(item, dict) and isinstance(item.get("id"), int):
                    found.append(item["id"])
                else:
                    raise NodeError(f"an input of the agent node is not a file id: {str(item)[:80]!r}")
        return list(dict.fromkeys(found))
