"""agents.round.Runner's task phase through hooks that record what the app would write (no database)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

import pytest

from agents.base import Plan, TaskResult, TaskSpec
from agents.offline.model import OfflineModel
from agents.registry import build_registry
from agents.round import (
    DEFERRED,
    FinalOutcome,
    Limits,
    PlanOutcome,
    Ran,
    Review,
    Revision,
    RoundInput,
    Runner,
    Start,
    TaskOutcome,
)


def task(tid: str, deps: list[str] | None = None) -> TaskSpec:
    return TaskSpec(id=tid, agent="writer", instructions="write", depends_on=deps or [])


class Crash(BaseException):
    """The process dies (nothing after it is written)."""


@dataclass
class Recorder:
    """Hooks whose tasks fail when named in `failing`, park when named in `parking`; `steers` is
    how many passes see the user's steering pending."""

    failing: set[str] = field(default_factory=set)
    parking: set[str] = field(default_factory=set)
    steers: int = 0
    events: list[str] = field(default_factory=list)
    result: Ran | None = None
    final: str = ""
    revisions: list[Revision] = field(default_factory=list)
    crashing: set[str] = field(default_factory=set)  # the process dies while these run
    journal: dict[str, TaskOutcome] = field(default_factory=dict)  # the outcomes written, as a resume reads them

    plan: Plan | None = None  # the plan the journal holds (None: the Runner plans the round)

    async def opened(self) -> Start | RoundInput | None:
        if self.plan is None:
            return await self.input()
        return Start(self.plan, finished={t: o for t, o in self.journal.items() if o.ok})

    async def planned(self, outcome: PlanOutcome, seconds: float) -> Start | None:
        self.events.append(f"planned {len(outcome.plan.tasks)}")
        self.plan = outcome.plan
        return Start(outcome.plan) if outcome.plan.tasks else None

    async def unplanned(self, error: Exception, seconds: float) -> None:
        self.events.append("unplanned")

    @contextlib.asynccontextmanager
    async def step(self, name: str) -> AsyncIterator[None]:
        self.events.append(f"step {name}")
        yield

    def live(self, name: str) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    async def reviewing(self, ran: Ran) -> Review:
        results: dict[str, TaskResult | None] = {t: TaskResult(text=o.text) if o.delivered else None
                                                 for t, o in ran.outcomes.items()}
        return Review(await self.input(), ran.plan, results, ran.skipped, [],
                      {t: o.error for t, o in ran.outcomes.items() if not o.delivered})

    async def ended(self, ran: Ran, review: Review, final: FinalOutcome, failed: object, seconds: float) -> None:
        self.result = ran
        self.final = final.text

    def begin(self, plan: Plan, finished: Mapping[str, TaskOutcome], may_replan: bool) -> None:
        self.events.append(f"begin {','.join(t.id for t in plan.tasks)} finished={','.join(sorted(finished))}")

    async def steered(self) -> bool:
        return self.steers > 0

    async def run(self, plan: Plan, t: TaskSpec, dependencies: dict[str, TaskOutcome]) -> TaskOutcome:
        self.events.append(f"run {t.id}")
        if t.id in self.crashing:
            raise Crash(t.id)
        if t.id in self.parking:
            return TaskOutcome(t.id, ok=False, question="which one?", waiting=True)
        outcome = TaskOutcome(t.id, ok=t.id not in self.failing, text=f"{t.id} done", tokens=10,
                              error="broke" if t.id in self.failing else "")
        self.journal[t.id] = outcome
        return outcome

    async def skip(self, t: TaskSpec, reason: str) -> None:
        self.events.append(f"skip {t.id}")

    async def park(self) -> bool:
        parked = bool(self.parking)
        if parked:
            self.events.append("park")
        return parked

    async def input(self) -> RoundInput:
        return RoundInput(prompt="Write a short note about tea.", documents=[])

    async def steering(self) -> str | None:
        if not self.steers:
            return None
        self.steers -= 1
        return "Write a poem about coffee instead."

    async def revised(self, revision: Revision, usage: object, number: int, steer: bool, seconds: float) -> bool:
        self.events.append(f"{'steer' if steer else 'replan'} {number}")
        self.revisions.append(revision)
        self.failing.clear()
        return False


def two_tasks() -> Plan:
    return Plan(language="en", answer="ok", tasks=[task("t1"), task("t2", ["t1"])])


def runner() -> Runner:
    return Runner(OfflineModel(), build_registry(entry_points=False), Limits(max_replans=1))


def test_a_round_runs_plan_tasks_and_final_through_its_hooks() -> None:
    hooks = Recorder(plan=two_tasks())
    asyncio.run(runner().run(hooks))
    assert hooks.events == ["step plan", "begin t1,t2 finished=", "run t1", "run t2", "step final"]
    assert hooks.result is not None and set(hooks.result.outcomes) == {"t1", "t2"} and not hooks.result.revisions
    assert hooks.final  # the Runner wrote the final review (the offline model's) and handed it to the journal


def test_a_failure_is_revised_once_within_max_replans() -> None:
    """The Runner revises the plan itself (the offline model's revision drops the failed task and runs the
    one skipped for it without it) and hands the revision to the journal port to write."""
    hooks = Recorder(plan=two_tasks(), failing={"t1"})
    asyncio.run(runner().run(hooks))
    assert hooks.events == ["step plan", "begin t1,t2 finished=", "run t1", "skip t2", "replan 1", "begin t2 finished=", "run t2",
                            "step final"]
    assert hooks.revisions[0].dropped == ["t1"]
    assert hooks.result is not None and hooks.result.revisions == [hooks.revisions[0].why]


def test_steering_defers_what_has_not_started_and_revises_without_counting_as_a_replan() -> None:
    """The user's steering, read through the port, is planned by the Runner: nothing of the old plan
    starts, and the new plan runs."""
    hooks = Recorder(plan=two_tasks(), steers=1)
    asyncio.run(runner().run(hooks))
    assert hooks.events == ["step plan", "begin t1,t2 finished=", "steer 1", "begin t1-r1 finished=", "run t1-r1", "step final"]
    assert "coffee" in hooks.revisions[0].plan.tasks[0].instructions and hooks.revisions[0].dropped == ["t1", "t2"]
    assert hooks.result is not None and set(hooks.result.outcomes) == {"t1-r1"}


def test_a_parked_task_ends_the_part_and_no_final_is_written() -> None:
    hooks = Recorder(plan=two_tasks(), parking={"t1"})
    asyncio.run(runner().run(hooks))
    assert hooks.events == ["step plan", "begin t1,t2 finished=", "run t1", "park"] and hooks.result is None


def test_a_deferred_task_says_why() -> None:
    assert DEFERRED.startswith("deferred")


def test_a_round_resumed_after_a_crash_replays_its_journal_and_runs_only_what_was_not_written() -> None:
    """A crash while t2 runs: t1's outcome is in the journal. The resumed run reads it back (its plan and
    finished tasks), runs t2 only, and its final review counts both tasks as delivered."""
    first = Recorder(plan=two_tasks(), crashing={"t2"})
    with pytest.raises(Crash):
        asyncio.run(runner().run(first))
    assert first.events == ["step plan", "begin t1,t2 finished=", "run t1", "run t2"] and set(first.journal) == {"t1"}
    resumed = Recorder(plan=two_tasks(), journal=dict(first.journal))
    asyncio.run(runner().run(resumed))
    assert resumed.events == ["step plan", "begin t1,t2 finished=t1", "run t2", "step final"]
    assert resumed.result is not None and all(o.delivered for o in resumed.result.outcomes.values())
    assert set(resumed.result.outcomes) == {"t1", "t2"}


def test_the_runner_plans_the_round_and_the_journal_writes_the_plan_it_made() -> None:
    """Without a plan in the journal the Runner plans (the offline model's plan here), hands the plan to
    the journal port, runs its tasks and writes the final review."""
    hooks = Recorder()
    asyncio.run(runner().run(hooks))
    assert hooks.plan is not None and hooks.plan.tasks
    n = len(hooks.plan.tasks)
    assert hooks.events[:2] == ["step plan", f"planned {n}"] and hooks.events[-1] == "step final"
    assert sum(e.startswith("run ") for e in hooks.events) == n and hooks.result is not None
