"""A work plan run as a flow: its tasks are agent nodes, each task's `dependsOn` its edges, and the flow
engine (`agents.flows.FlowRunner`) schedules them as it schedules a person's flow: a node starts when the
edges into it are decided, `concurrency` at once, in the plan's order. What a plan asks beyond a flow is
given to the engine, not written beside it: a task needs every task it depends on (`join_all`), a failed
task rules out what follows it (its `onError` is `branch`, and a plan has no error edges), and the round's
token budget refuses a task about to start (`admit`).

The round's own journal stays the app's (`RoundHooks.run` writes each task): this journal is the run's
memory, the tasks known before (delivered before a crash, or in an earlier part of the round) read back
as settled node runs, and a skipped node reported with the plan's wording of why.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

from agents.base import Plan, TaskSpec
from agents.flows import (
    ERROR_BRANCH,
    AgentConfig,
    Edge,
    FlowDefinition,
    FlowLimits,
    FlowRunner,
    Node,
    NodeError,
    NodeRun,
    Produced,
)
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

    code = http = subflow = llm

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
