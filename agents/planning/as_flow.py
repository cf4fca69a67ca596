"""A work plan run as a flow: its tasks are agent nodes, each task's `dependsOn` its edges, and the flow
engine (`agents.flows.FlowRunner`) schedules them as it schedules a person's flow: a node starts when the
edges into it are decided, `concurrency` at once, in the plan's order. What a plan asks beyond a flow is
given to the engine, not written beside it: a task needs every task it depends on (`join_all`), a failed
task rules out what follows it (its `onError` is `branch`, and a plan has no error edges), and the round's
token budget refuses a task about to start (`admit`).

The round's own journal stays the app's (`RoundHooks.run` writes each task): this journal is the run's
memory, the tasks known before (delivered before a crash, or in an earlier part of the round) read back
as settled node runs, and a skipped node reported with the plan's wording of why.

A plan saved as a person's flow (`POST /api/flows` with `fromRound`) is the same graph written as a draft
a person edits (`plan_definition`): the tasks' instructions as literal text, the round's documents and its
request as the flow's inputs.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

from agents.base import OutputSpec, Plan, TaskSpec
from agents.flows import (
    ERROR_BRANCH,
    AgentConfig,
    Edge,
    FlowDefinition,
    FlowLimits,
    FlowRefConfig,
    FlowRunner,
    Node,
    NodeError,
    NodeRun,
    Produced,
    literal,
)
from agents.language import detect_language
from agents.planning.scheduler import BUDGET, Finished

O = TypeVar("O", bound=Finished)


async def run_plan(plan: Plan, run: Callable[[TaskSpec, dict[str, O]], Awaitable[O]],
                   skip: Callable[[TaskSpec, str], Awaitable[None]], *, concurrency: int,
                   finished: dict[str, O] | None = None, max_tokens: int | None = None,
                   spent: int = 0) -> tuple[dict[str, O], dict[str, str]]:
    """Run the plan's tasks: each starts as soon as every task it depends on is done, with at most
    `concurrency` running at once; a task whose dependency failed or was skipped is skipped.

    `run(task, dependencies)` runs one task, given the outcomes of the tasks it depends on, and returns
    its outcome (a failed task is an outcome; what it raises ends the run, and is raised here); `skip`
    reports a skipped task with the reason. `finished` are outcomes known before (tasks delivered before a
    crash or in an earlier round): those tasks do not run. Once the tokens spent exceed `max_tokens`, tasks
    not yet started are skipped. Returns every outcome and the skipped tasks with their reasons. Cancelling
    it cancels the running tasks.
    """
    return await PlanRun(plan, run, skip, finished=finished, max_tokens=max_tokens, spent=spent).run(concurrency)


class _Raised(BaseException):
    """What a task's `run` raised, carried out of the engine (which turns an `Exception` into a failed
    node) to the caller of `run_plan`, as the scheduler before the engine let it through."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(repr(error))
        self.error = error


def task_graph(plan: Plan) -> FlowDefinition:
    """The plan as a flow: one agent node per task, in the plan's order (its `instructions` are the task's
    own and are not a template: the node's effect reads the task), an edge from each task it depends on."""
    nodes = [Node(id=t.id, type="agent", name=t.agent, config={"agent": t.agent, "instructions": ""},
                  on_error="branch") for t in plan.tasks]
    edges = [Edge(source=dep, target=t.id) for t in plan.tasks for dep in t.depends_on]
    return FlowDefinition(name="plan", nodes=nodes, edges=edges)


def node_plan(path: str, config: AgentConfig, instructions: str, inputs: list[str],
              depends_on: list[str]) -> Plan:
    """A person's agent node (at `path` of a flow run) as a plan of one task, the way `task_graph` makes a
    task a node: its agent, its rendered `instructions` and output files, the documents it reads by name and
    the agent nodes before it whose results it reads; in the language its instructions ask in (the user's,
    as a planned round's is the request's)."""
    outputs = [OutputSpec(name=name, type=name.rsplit(".", 1)[-1] if "." in name else "") for name in config.outputs]
    task = TaskSpec(id=path, agent=config.agent, instructions=instructions, inputs=inputs, outputs=outputs,
                    depends_on=depends_on)
    return Plan(language=detect_language(instructions), answer="", tasks=[task])


_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Names a task id cannot be as a draft's node id: the flow's own (`agents.flows` templates read them) and
# the draft's inputs.
TAKEN = frozenset({"start", "end", "inputs", "item", "index", "iteration", "nodes", "result", "loop", "documents",
                   "request"})


def plan_definition(plan: Plan, name: str, prompt: str, file_ids: list[int]) -> dict[str, Any]:
    """A draft of `plan`: one agent node per task (its agent, instructions, output files), `dependsOn` as
    edges, the round's documents as the `documents` input (read by the tasks that name an upload; one that
    names no file sees the uploads and its predecessors' results, as in the round), an earlier task's files
    by the tasks that name them, the request's text as the `request`
    input wherever the instructions repeat it."""
    ids: dict[str, str] = {}
    for n, task in enumerate(plan.tasks, 1):
        ours = task.id if _ID.fullmatch(task.id) and task.id not in TAKEN else f"task_{n}"
        ids[task.id] = ours if ours not in ids.values() else f"task_{n}"
    made = {o.name: ids[t.id] for t in plan.tasks for o in t.outputs}
    request = prompt.strip()
    repeats = bool(request) and any(request in t.instructions for t in plan.tasks)
    nodes: list[dict[str, Any]] = [{"id": "start", "type": "start", "config": {}}]
    edges: list[dict[str, Any]] = []
    for task in plan.tasks:
        text = "{{ inputs.request }}".join(literal(part) for part in task.instructions.split(request)) \
            if repeats else literal(task.instructions)
        uploads = any(name not in made for name in task.inputs)  # none named: it reads as the round's did
        reads = ["{{ inputs.documents }}"] if file_ids and uploads else []
        reads += [f"{{{{ {made[name]}.files }}}}" for name in task.inputs
                  if name in made and made[name] in (ids.get(d) for d in task.depends_on)]
        nodes.append({"id": ids[task.id], "type": "agent", "name": task.id, "config": {
            "agent": task.agent, "instructions": text, "inputs": list(dict.fromkeys(reads)),
            "outputs": [o.name for o in task.outputs]}})
        edges += [{"source": ids[d], "target": ids[task.id]} for d in task.depends_on if d in ids] or [
            {"source": "start", "target": ids[task.id]}]
    needed = {ids[d] for t in plan.tasks for d in t.depends_on if d in ids}
    leaves = [ids[t.id] for t in plan.tasks if ids[t.id] not in needed]
    nodes.append({"id": "end", "type": "end", "config": {}})
    edges += [{"source": leaf, "target": "end"} for leaf in leaves] or [{"source": "start", "target": "end"}]
    inputs: dict[str, Any] = {}
    if file_ids:
        inputs["documents"] = {"type": "files", "default": list(file_ids), "description": "The round's documents"}
    if repeats:
        inputs["request"] = {"type": "string", "default": request, "description": "The request"}
    return {"name": name, "description": f"Saved from a round: {request[:200]}", "inputs": inputs, "nodes": nodes,
            "edges": edges, "outputs": {leaf: f"{{{{ {leaf}.output }}}}" for leaf in leaves}}


class PlanRun(Generic[O]):
    """One run of a plan's tasks: the engine's effects (a task's agent is the caller's `run`) and its journal."""

    def __init__(self, plan: Plan, run: Callable[[TaskSpec, dict[str, O]], Awaitable[O]],
                 skip: Callable[[TaskSpec, str], Awaitable[None]], *, finished: Mapping[str, O] | None,
                 max_tokens: int | None, spent: int) -> None:
        self.plan, self.task_run, self.task_skip = plan, run, skip
        self.tasks = {t.id: t for t in plan.tasks}
        self.outcomes: dict[str, O] = dict(finished or {})
        self.known = dict(self.outcomes)
        self.skipped: dict[str, str] = {}
        self.max_tokens, self.spent = max_tokens, spent

    async def run(self, concurrency: int) -> tuple[dict[str, O], dict[str, str]]:
        limits = FlowLimits(max_node_runs=max(1000, len(self.plan.tasks)), concurrency=max(1, concurrency))
        runner = FlowRunner(task_graph(self.plan), self, self, limits, join_all=True, admit=self.admit)
        try:
            await runner.run({})
        except _Raised as raised:
            raise raised.error from None
        return self.outcomes, self.skipped

    def admit(self, node: Node) -> str | None:
        over = self.max_tokens is not None and self.spent > self.max_tokens
        return BUDGET if over else None

    # --- the engine's effects: a node is its task --------------------------------------------------

    async def agent(self, node: Node, path: str, config: AgentConfig, instructions: str,
                    files: list[int]) -> Produced:
        task = self.tasks[node.id]
        dependencies = {d: self.outcomes[d] for d in task.depends_on if d in self.outcomes}
        try:
            outcome = await self.task_run(task, dependencies)
        except Exception as exc:  # noqa: BLE001 - not a failed task: the caller's error, raised to it
            raise _Raised(exc) from exc
        self.outcomes[task.id] = outcome
        self.spent += outcome.tokens
        if not outcome.ok:
            raise NodeError(str(getattr(outcome, "error", "") or "the task failed"))
        return Produced()

    async def llm(self, *args: Any) -> Produced:
        raise NodeError("a plan has no llm node")

    code = http = llm

    async def definition_of(self, config: FlowRefConfig) -> FlowDefinition:
        raise NodeError("a plan has no sub-flow node")

    # --- the engine's journal ----------------------------------------------------------------------

    async def recorded(self) -> Mapping[str, NodeRun]:
        """The tasks known before, as settled node runs (a failed one rules out what depends on it)."""
        return {tid: NodeRun(tid, tid, "agent", "succeeded") if o.ok
                else NodeRun(tid, tid, "agent", "failed", branch=ERROR_BRANCH)
                for tid, o in self.known.items() if tid in self.tasks}

    async def started(self, node: Node, path: str, done: int, total: int) -> None:
        return None  # the task's own start is written by `run`

    async def settled(self, run: NodeRun, done: int, total: int) -> None:
        if run.status != "skipped":
            return
        task = self.tasks[run.node_id]
        reason = run.error if run.error == BUDGET else self._why(task)
        self.skipped[task.id] = reason
        await self.task_skip(task, reason)

    async def decision(self, path: str) -> str | None:
        return None

    def _why(self, task: TaskSpec) -> str:
        """The plan's words for a task skipped because of what it depends on: the first such task."""
        for dep in task.depends_on:
            if dep in self.skipped or (dep in self.outcomes and not self.outcomes[dep].ok):
                agent = self.tasks[dep].agent if dep in self.tasks else "?"
                how = "was skipped" if dep in self.skipped else "failed"
                return f"it depends on task '{dep}' ({agent}), which {how}"
        return "none of the tasks it depends on delivered"
