"""A map's items and a loop's iterations: node runs of their own, each settled once through the journal,
so a resumed map runs only the items not yet done and a resumed loop goes on from its last iteration.

A map's items whose body does work outside the engine (a model, an agent, a request, code) may run
elsewhere: given an `ItemRunner` (the app's: on PostgreSQL, any live replica takes them off a shared
queue), the map hands each item not yet settled to it, at most `concurrency` at once, and records the
run it settled; else, and for bodies that compute at once, the items run here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from agents.flows.definition import LoopConfig, MapConfig, Node
from agents.flows.expressions import evaluate
from agents.flows.runs import BudgetError, NodeError, NodeRun, Waiting, node_view, truth

if TYPE_CHECKING:
    from agents.flows.engine import FlowRunner

# Runs one map item (its body at its path, with `item` and `index`) where the app chooses and returns
# the run it settled in the journal; None: run it here (no other replica to send it to).
ItemRunner = Callable[[Node, str, Mapping[str, Any]], Awaitable[NodeRun | None]]
# The bodies worth sending elsewhere: their work is outside the engine and takes time. (A human node
# waits, a sub-flow may, and the rest compute at once: those run where the map runs.)
SHARED_BODIES = frozenset({"llm", "agent", "http", "code"})


async def child(runner: FlowRunner, body: Node, path: str, extra: Mapping[str, Any], counted: bool = False) -> NodeRun:
    """A body's run at `path` (a map item, a loop iteration): what the journal has, or run now and settle."""
    recorded = runner.runs.get(path)
    if recorded is not None and recorded.settled:
        return recorded
    run = await runner.execute(body, path, extra, counted)
    if run.status != "waiting":
        await runner.journal.settled(run, runner.done(), runner.total)
        runner.record(path, run)
    return run


async def shared(runner: FlowRunner, item_runner: ItemRunner, body: Node, path: str,
                 extra: Mapping[str, Any]) -> NodeRun:
    """A map item run by `item_runner` (which settles it) or, when it says so, here; counted against the
    run's node budget here either way."""
    recorded = runner.runs.get(path)
    if recorded is not None and recorded.settled:
        return recorded
    if next(runner.budget) > runner.limits.max_node_runs:
        return runner.over_budget(body, path)
    run = await item_runner(body, path, extra)
    if run is None:
        return await child(runner, body, path, extra, counted=True)
    runner.record(path, run)
    return run


async def run_map(runner: FlowRunner, node: Node, path: str, config: MapConfig, scope: Mapping[str, Any],
                  extra: Mapping[str, Any]) -> NodeRun:
    items = evaluate(config.items, scope)
    if not isinstance(items, list):
        raise NodeError(f"`items` gave {type(items).__name__} ({str(items)[:80]!r}), not a list: a map runs "
                        "over a list")
    results: list[NodeRun | None] = [None] * len(items)
    queue = iter(range(len(items)))  # a bounded queue: `concurrency` workers take the next item
    elsewhere = runner.spread if config.body.type in SHARED_BODIES else None

    async def worker() -> None:
        for index in queue:
            item_path, item_extra = f"{path}[{index}]", {**extra, "item": items[index], "index": index}
            results[index] = run = (await shared(runner, elsewhere, config.body, item_path, item_extra)
                                    if elsewhere is not None else
                                    await child(runner, config.body, item_path, item_extra))
            if run.fatal and run.status == "failed" and config.on_item_error == "fail":
                return

    await asyncio.gather(*(worker() for _ in range(min(config.concurrency, len(items)) or 1)))
    runs = [r for r in results if r is not None]
    if any(r.status == "waiting" for r in runs):
        raise Waiting(next(w for w in runner.waits if w.path.startswith(path)))
    budget = next((r for r in runs if r.status == "failed" and r.fatal and "FLOW_MAX_NODE_RUNS" in r.error), None)
    if budget is not None:
        raise BudgetError(budget.error)
    output: list[Any] = []
    for index, run in enumerate(results):
        if run is None or run.status != "succeeded":
            if config.on_item_error == "fail":
                why = run.error if run is not None else "not run"
                raise NodeError(f"item {index} failed: {why}")
            if config.on_item_error == "drop":
                continue
            output.append(None)
        else:
            output.append(run.output)
    return NodeRun(path, node.id, node.type, "succeeded", output=output, items=len(items),
                   input={"items": len(items)})


async def run_loop(runner: FlowRunner, node: Node, path: str, config: LoopConfig,
                   extra: Mapping[str, Any]) -> NodeRun:
    last: NodeRun | None = None
    iteration = 0
    for iteration in range(1, config.max_iterations + 1):
        last = await child(runner, config.body, f"{path}#{iteration}", {**extra, "iteration": iteration})
        if last.status == "waiting":
            raise Waiting(next(w for w in runner.waits if w.path.startswith(path)))
        if last.status == "failed":
            if last.fatal and "FLOW_MAX_NODE_RUNS" in last.error:
                raise BudgetError(last.error)
            raise NodeError(f"iteration {iteration} failed: {last.error}")
        scope = runner.scope({**extra, "iteration": iteration, config.body.id: node_view(last)})
        if truth(evaluate(config.until, scope)):
            break
    return NodeRun(path, node.id, node.type, "succeeded", output=last.output if last else None,
                   files=list(last.files) if last else [], iterations=iteration)
