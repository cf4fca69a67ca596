"""What the plan's run starts first and why a task is skipped: each task starts as soon as the tasks it
depends on are done, a bounded number at once, within the round's token budget; a task whose dependency
failed is skipped. The run itself is the flow engine's (`agents.planning.as_flow.run_plan`). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

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



def first_tasks(plan: Plan, finished: Mapping[str, Finished] | None = None, *, concurrency: int,
                max_tokens: int | None = None, spent: int = 0) -> list[TaskSpec]:
    """The tasks `agents.planning.as_flow.run_plan`, given the same arguments, starts before any other: a round announces
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
