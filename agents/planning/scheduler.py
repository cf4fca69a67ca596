"""The plan's scheduler: each task starts as soon as the tasks it depends on are done, a bounded
number at once, within the round's token budget; a task whose dependency failed is skipped. Pure."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol, TypeVar

from agents.base import Plan, TaskSpec

BUDGET = "the round's token budget (MAX_ROUND_TOKENS) is spent"  # why a task not started is skipped

def schedule(plan: Plan, done: set[str], failed: set[str],
             skipped: set[str]) -> tuple[list[TaskSpec], list[tuple[TaskSpec, str]]]:
    """Tasks ready to run (every dependency done) and tasks to skip (a dependency failed or was
    skipped) with the reason, in plan order. Finished tasks appear in neither list; the caller
    leaves out the tasks it is already running."""
    finished = done | failed | skipped
    by_id = {t.id: t for t in plan.tasks}
    ready: list[TaskSpec] = []
    to_skip: list[tuple[TaskSpec, str]] = []
    for task in plan.tasks:
        if task.id in finished:
            continue
        broken = [d for d in task.depends_on if d in failed or d in skipped]
        if broken:
            dep = broken[0]
            agent = by_id[dep].agent if dep in by_id else "?"
            how = "failed" if dep in failed else "was skipped"
            to_skip.append((task, f"it depends on task '{dep}' ({agent}), which {how}"))
        elif all(d in done for d in task.depends_on):
            ready.append(task)
    return ready, to_skip


class Finished(Protocol):
    """What the scheduler needs of a task's outcome: whether it delivered, and the tokens it spent."""

    ok: bool
    tokens: int


O = TypeVar("O", bound=Finished)


async def run_plan(plan: Plan, run: Callable[[TaskSpec, dict[str, O]], Awaitable[O]],
                   skip: Callable[[TaskSpec, str], Awaitable[None]], *, concurrency: int,
                   finished: dict[str, O] | None = None, max_tokens: int | None = None,
                   spent: int = 0) -> tuple[dict[str, O], dict[str, str]]:
    """Run the plan's tasks: each starts as soon as every task it depends on is done, with at most
    `concurrency` running at once; a task whose dependency failed or was skipped is skipped.

    `run(task, dependencies)` runs one task, given the outcomes of the tasks it depends on, and
    returns its outcome (it must not raise: a failed task is an outcome);
    `skip` reports a skipped task with the reason. `finished` are outcomes known before (tasks
    delivered before a crash or in an earlier round): those tasks do not run. Once the tokens
    spent exceed `max_tokens`, tasks not yet started are skipped. Returns every outcome and the
    skipped tasks with their reasons. Cancelling it cancels the running tasks.
    """
    outcomes: dict[str, O] = dict(finished or {})
    skipped: dict[str, str] = {}
    running: dict[asyncio.Task[O], str] = {}
    try:
        while True:
            start, to_skip = _moves(plan, outcomes, set(skipped), set(running.values()), concurrency,
                                    over_budget=max_tokens is not None and spent > max_tokens)
            for task, reason in to_skip:
                skipped[task.id] = reason
                await skip(task, reason)
            if to_skip:
                continue  # what depends on the skipped tasks is skipped in the next pass
            for task in start:
                dependencies = {d: outcomes[d] for d in task.depends_on if d in outcomes}
                running[asyncio.ensure_future(run(task, dependencies))] = task.id
            if not running:
                return outcomes, skipped
            ended, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for future in ended:
                outcome = future.result()
                outcomes[running.pop(future)] = outcome
                spent += outcome.tokens
    finally:
        for future in running:
            future.cancel()
        if running:
            await asyncio.wait(running)


def first_tasks(plan: Plan, finished: Mapping[str, Finished] | None = None, *, concurrency: int,
                max_tokens: int | None = None, spent: int = 0) -> list[TaskSpec]:
    """The tasks `run_plan`, given the same arguments, starts before any other: a round announces
    them in the write of its plan, instead of each in a write of its own."""
    start, _ = _moves(plan, dict(finished or {}), set(), set(), concurrency,
                      over_budget=max_tokens is not None and spent > max_tokens)
    return start


def _moves(plan: Plan, outcomes: Mapping[str, Finished], skipped: set[str], running: set[str], concurrency: int,
           over_budget: bool) -> tuple[list[TaskSpec], list[tuple[TaskSpec, str]]]:
    """The scheduler's next move: the tasks to skip now, with why; when there are none, the tasks to start now."""
    done = {t for t, o in outcomes.items() if o.ok}
    ready, to_skip = schedule(plan, done, set(outcomes) - done, skipped)
    ready = [t for t in ready if t.id not in running]
    if over_budget:
        to_skip += [(t, BUDGET) for t in ready]
        ready = []
    if to_skip:
        return [], to_skip
    return ready[:max(1, concurrency) - len(running)], []
