"""agents.round.Runner's task phase through hooks that record what the app would write (no database)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from agents.base import Plan, TaskSpec
from agents.offline.model import OfflineModel
from agents.registry import build_registry
from agents.round import DEFERRED, Limits, Ran, Revision, Runner, Start, TaskOutcome


def task(tid: str, deps: list[str] | None = None) -> TaskSpec:
    return TaskSpec(id=tid, agent="writer", instructions="write", depends_on=deps or [])


@dataclass
class Recorder:
    """Hooks whose tasks fail when named in `failing`, park when named in `parking`; `steering` is
    how many passes see the user's steering pending."""

    failing: set[str] = field(default_factory=set)
    parking: set[str] = field(default_factory=set)
    steering: int = 0
    events: list[str] = field(default_factory=list)
    ended: Ran | None = None

    async def planned(self) -> Start | None:
        return Start(Plan(language="en", answer="ok", tasks=[task("t1"), task("t2", ["t1"])]))

    async def final(self, ran: Ran) -> None:
        self.ended = ran

    def begin(self, plan: Plan, finished: Mapping[str, TaskOutcome], may_replan: bool) -> None:
        self.events.append(f"begin {','.join(t.id for t in plan.tasks)} finished={','.join(sorted(finished))}")

    async def steered(self) -> bool:
        return self.steering > 0

    async def run(self, plan: Plan, t: TaskSpec, dependencies: dict[str, TaskOutcome]) -> TaskOutcome:
        self.events.append(f"run {t.id}")
        if t.id in self.parking:
            return TaskOutcome(t.id, ok=False, question="which one?", waiting=True)
        return TaskOutcome(t.id, ok=t.id not in self.failing, text=f"{t.id} done", tokens=10,
                           error="broke" if t.id in self.failing else "")

    async def skip(self, t: TaskSpec, reason: str) -> None:
        self.events.append(f"skip {t.id}")

    async def park(self) -> bool:
        parked = bool(self.parking)
        if parked:
            self.events.append("park")
        return parked

    async def steer(self, plan: Plan, outcomes: dict[str, TaskOutcome], number: int) -> Revision | None:
        if not self.steering:
            return None
        self.steering -= 1
        self.events.append(f"steer {number}")
        return Revision(replace(plan, tasks=[t for t in plan.tasks if t.id in outcomes and outcomes[t.id].ok]
                                + [task("t3")]), "the user asked")

    async def replan(self, plan: Plan, outcomes: dict[str, TaskOutcome], skipped: dict[str, str],
                     number: int) -> Revision | None:
        if all(o.ok for o in outcomes.values()) and not skipped:  # nothing to revise (as the app's hook)
            return None
        self.events.append(f"replan {number}")
        self.failing.clear()
        return Revision(replace(plan, tasks=[task("t1-r1"), task("t2-r1", ["t1-r1"])]), "t1 broke")


def runner() -> Runner:
    return Runner(OfflineModel(), build_registry(entry_points=False), Limits(max_replans=1))


def test_a_round_runs_plan_tasks_and_final_through_its_hooks() -> None:
    hooks = Recorder()
    asyncio.run(runner().run(hooks))
    assert hooks.events == ["begin t1,t2 finished=", "run t1", "run t2"]
    assert hooks.ended is not None and set(hooks.ended.outcomes) == {"t1", "t2"} and not hooks.ended.revisions


def test_a_failure_is_revised_once_within_max_replans() -> None:
    hooks = Recorder(failing={"t1"})
    asyncio.run(runner().run(hooks))
    assert hooks.events == ["begin t1,t2 finished=", "run t1", "skip t2", "replan 1",
                            "begin t1-r1,t2-r1 finished=", "run t1-r1", "run t2-r1"]
    assert hooks.ended is not None and hooks.ended.revisions == ["t1 broke"]


def test_steering_defers_what_has_not_started_and_revises_without_counting_as_a_replan() -> None:
    hooks = Recorder(steering=1)
    asyncio.run(runner().run(hooks))
    assert hooks.events[:2] == ["begin t1,t2 finished=", "steer 1"]
    assert hooks.events[2:] == ["begin t3 finished=", "run t3"]
    assert hooks.ended is not None and set(hooks.ended.outcomes) == {"t3"}


def test_a_parked_task_ends_the_part_and_no_final_is_written() -> None:
    hooks = Recorder(parking={"t1"})
    asyncio.run(runner().run(hooks))
    assert hooks.events == ["begin t1,t2 finished=", "run t1", "park"] and hooks.ended is None


def test_a_deferred_task_says_why() -> None:
    assert DEFERRED.startswith("deferred")
