"""A conformance test of the round's journal port (`agents.journal.RoundHooks`): the same checks run against
the in-memory journal (`tests/agents/memory_journal.py`) and the app's journal (`app.rounds.hooks.Hooks`) on
SQLite and PostgreSQL. One Runner drives them (the agents' own, with a scripted plan and a scripted agent);
the journal is what differs. A crash is an exception the Runner does not catch, in the middle of a task;
the resume is a fresh journal over what was written, as a restarted process builds it. And a round the
app wrote before its task outcomes were typed records resumes the same (the journal stays compatible)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import pytest
import sqlalchemy as sa

from agents.base import Plan, TaskContext, TaskResult, TaskSpec
from agents.model import Usage
from agents.offline import OfflineModel
from agents.registry import build_registry
from agents.round import (
    Limits,
    PlanOutcome,
    Registry,
    Revision,
    RoundHooks,
    RoundInput,
    Runner,
    Start,
    TaskOutcome,
)
from app.contract.schemas import StartRequest
from app.main import build_engine
from app.rounds import supervisor
from app.rounds.hooks import Hooks
from app.rounds.steps import opening, round_key
from app.rounds.supervisor import Engine
from app.services.workflows import WorkflowService
from app.store.records import TASK_RECORD, NewLog
from app.store.tables import MessageRow, table_of
from tests.agents.memory_journal import MemoryJournal, Recorded
from tests.harness import BACKENDS, backend_url, settings_for
from tests.rounds.engines import OWNER

JOURNALS = ["memory", *BACKENDS]
PROMPT = "Write a short note about tea."
STEERED = "The user asked for a poem about coffee instead."


class Crash(BaseException):
    """The process dies in the middle of a task (nothing after it is written)."""


class Scripted:
    """An agent that does what its script says of each task id: "fail" (the task fails), "crash" (the
    process dies, once); else it delivers "<id> done". `calls`: the task ids it ran, in order."""

    name = "scripted"
    description = "Does what its script says."

    def __init__(self) -> None:
        self.script: dict[str, str] = {}
        self.calls: list[str] = []

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        self.calls.append(task.id)
        what = self.script.get(task.id, "")
        if what == "crash":
            del self.script[task.id]
            raise Crash(task.id)
        if what == "fail":
            raise RuntimeError(f"{task.id} broke")
        return TaskResult(text=f"{task.id} done", usage=Usage(prompt_tokens=5, completion_tokens=5))


def two_tasks() -> Plan:
    return Plan(language="en", answer="I will write it in two steps.", tasks=[
        TaskSpec(id="t1", agent="scripted", instructions="Draft the note."),
        TaskSpec(id="t2", agent="scripted", instructions="Polish the note.", depends_on=["t1"])])


class ScriptedRunner(Runner):
    """The agents' Runner, planning `plan` (the model's planning is not what is tested here)."""

    def __init__(self, registry: Registry) -> None:
        super().__init__(OfflineModel(), registry, Limits(max_replans=1))
        self.plan_to_make = two_tasks()
        self.steered_plan: Plan | None = None  # the revision a steer makes (None: the offline model's)

    async def plan(self, inp: RoundInput) -> PlanOutcome:
        return PlanOutcome(plan=self.plan_to_make, usage=Usage(), model="scripted", offline=True)

    async def steer(self, inp: RoundInput, plan: Plan, outcomes: Mapping[str, TaskOutcome], request: str,
                    number: int) -> tuple[Revision, Any]:
        if self.steered_plan is None:
            return await super().steer(inp, plan, outcomes, request, number)
        return Revision(self.steered_plan, STEERED, dropped=[t.id for t in plan.tasks],
                        added=[t.id for t in self.steered_plan.tasks]), None


class Bench(Protocol):
    """One round on one journal: a fresh journal over it (as a restarted process builds it), the user's
    steering post, and the round's last message (None while it runs)."""

    agent: Scripted
    runner: ScriptedRunner

    def journal(self) -> RoundHooks: ...

    async def steer(self, text: str) -> None: ...

    async def final(self) -> str | None: ...


def registry_with(agent: Scripted) -> Registry:
    registry = build_registry(entry_points=False)
    registry.add(agent, source="test")
    return registry


class MemoryBench:
    def __init__(self) -> None:
        self.agent = Scripted()
        self.runner = ScriptedRunner(registry_with(self.agent))
        self.recorded = Recorded(PROMPT)

    def journal(self) -> RoundHooks:
        return MemoryJournal(self.recorded, self.runner)

    async def steer(self, text: str) -> None:
        self.recorded.steers.append(text)

    async def final(self) -> str | None:
        return self.recorded.final


class AppBench:
    """The app's journal on a started engine: the round is started as the service starts one, and run here
    (not by the engine's durable workflow, nor by its reconciler) so that the test's Runner drives it."""

    def __init__(self, engine: Engine, agent: Scripted, workflow_id: str) -> None:
        self.engine, self.agent, self.workflow_id = engine, agent, workflow_id
        self.runner = ScriptedRunner(engine.rt.runner.registry)

    def journal(self) -> RoundHooks:
        rt, wid = self.engine.rt, self.workflow_id
        return Hooks(rt, wid, 1, lambda: opening(rt, wid, 1))

    async def steer(self, text: str) -> None:
        await WorkflowService(self.engine).start(OWNER, self.workflow_id,
                                                 StartRequest(prompt=text, multitask_strategy="steer"), None)

    async def final(self) -> str | None:
        rows = await self.engine.rt.repo.messages.round_messages(
            self.workflow_id, 1, round_key(self.workflow_id, 1, "final", "message"))
        return rows[0][0].content if rows else None


@asynccontextmanager
async def app_bench(tmp_path: Path, database_url: str) -> AsyncIterator[AppBench]:
    agent = Scripted()
    engine = build_engine(settings_for(tmp_path, database_url), OfflineModel(), registry_with(agent))
    with pytest.MonkeyPatch.context() as patch:
        # The engine's reconciler launches a running round no durable workflow runs: not this one.
        patch.setattr(supervisor, "RECONCILE_SECONDS", 3600.0)
        await engine.start()
        try:
            rt, wid = engine.rt, "journal-port"
            await rt.repo.workflows.start_round(OWNER, wid, PROMPT, True, PROMPT, [], {}, NewLog(
                "", "Workflow initialized", agent_name="system", progress=0, status="running"))
            rt.rounds.started(wid, 1, PROMPT, [], {})
            yield AppBench(engine, agent, wid)
        finally:
            await engine.close()

@pytest.fixture(params=JOURNALS)
def journal_kind(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """"memory", or a real backend with its URL ('' for SQLite; a fresh PostgreSQL database)."""
    if request.param == "memory":
        yield "memory", ""
        return
    for url in backend_url(request.param):
        yield request.param, url


@asynccontextmanager
async def bench_on(kind: tuple[str, str], tmp_path: Path) -> AsyncIterator[Any]:
    if kind[0] == "memory":
        yield MemoryBench()
        return
    async with app_bench(tmp_path, kind[1]) as bench:
        yield bench


async def test_a_round_runs_its_plan_and_ends_once(journal_kind: tuple[str, str], tmp_path: Path) -> None:
    async with bench_on(journal_kind, tmp_path) as bench:
        await bench.runner.run(bench.journal())
        assert bench.agent.calls == ["t1", "t2"]
        assert await bench.final()  # the Runner's final review, journalled
        assert await bench.journal().opened() is None  # an ended round has nothing left to run
        await bench.runner.run(bench.journal())
        assert bench.agent.calls == ["t1", "t2"]


async def test_a_crash_resumes_from_the_journal_and_no_finished_task_runs_again(journal_kind: tuple[str, str], tmp_path: Path) -> None:
    async with bench_on(journal_kind, tmp_path) as bench:
        bench.agent.script["t2"] = "crash"
        with pytest.raises(Crash):
            await bench.runner.run(bench.journal())
        assert await bench.final() is None
        start = await bench.journal().opened()  # what a restarted process reads back
        assert isinstance(start, Start)
        assert [t.id for t in start.plan.tasks] == ["t1", "t2"] and start.plan.answer == two_tasks().answer
        assert list(start.finished) == ["t1"]
        done = start.finished["t1"]
        assert done.delivered and done.text == "t1 done" and done.tokens == 10 and start.spent == 10
        assert start.revisions == [] and start.steers == 0
        await bench.runner.run(bench.journal())
        assert bench.agent.calls == ["t1", "t2", "t2"]
        assert await bench.final()


async def test_a_failure_is_revised_and_a_crash_resumes_the_revised_plan(journal_kind: tuple[str, str], tmp_path: Path) -> None:
    """t1 fails, t2 is skipped for it, the Runner revises the plan (the offline revision runs t2 without
    t1); the process dies while t2 runs. The resumed round goes on with the revision, not the first plan."""
    async with bench_on(journal_kind, tmp_path) as bench:
        bench.agent.script.update(t1="fail", t2="crash")
        with pytest.raises(Crash):
            await bench.runner.run(bench.journal())
        assert bench.agent.calls == ["t1", "t2"]
        start = await bench.journal().opened()
        assert isinstance(start, Start)
        assert [t.id for t in start.plan.tasks] == ["t2"] and start.plan.tasks[0].depends_on == []
        assert len(start.revisions) == 1 and start.revisions[0] and start.steers == 0
        assert not any(o.ok for o in start.finished.values())  # t1 failed; t2's outcome was never written
        await bench.runner.run(bench.journal())
        assert bench.agent.calls == ["t1", "t2", "t2"]
        assert await bench.final()


async def test_the_users_steering_revises_the_plan_before_it_starts_and_is_taken_up_once(journal_kind: tuple[str, str], tmp_path: Path) -> None:
    async with bench_on(journal_kind, tmp_path) as bench:
        await bench.steer("Write a poem about coffee instead.")
        journal = bench.journal()
        assert await journal.steered()
        await bench.runner.run(journal)
        assert bench.agent.calls == []  # nothing of the first plan started: the revision replaced it
        assert await bench.final() and await bench.journal().opened() is None


async def test_a_steer_taken_up_before_a_crash_is_not_taken_up_again(journal_kind: tuple[str, str], tmp_path: Path) -> None:
    """The user steers; the Runner's revision (scripted: one task, t3) is journalled and the process dies
    while t3 runs. The resumed round goes on with the steered plan, counts the steer, and does not see it
    pending again."""
    async with bench_on(journal_kind, tmp_path) as bench:
        bench.runner.steered_plan = Plan(language="en", answer="A poem, then.", tasks=[
            TaskSpec(id="t3", agent="scripted", instructions="Write a poem about coffee.")])
        bench.agent.script["t3"] = "crash"
        await bench.steer("Write a poem about coffee instead.")
        with pytest.raises(Crash):
            await bench.runner.run(bench.journal())
        journal = bench.journal()
        start = await journal.opened()
        assert isinstance(start, Start)
        assert [t.id for t in start.plan.tasks] == ["t3"] and start.revisions == [STEERED] and start.steers == 1
        assert start.finished == {}
        assert not await journal.steered() and await journal.steering() is None
        await bench.runner.run(bench.journal())
        assert bench.agent.calls == ["t3", "t3"]
        assert await bench.final()


async def test_a_round_written_before_the_typed_records_resumes(database_url: str, tmp_path: Path) -> None:
    """A round interrupted after its first task, its task message in the shape written before the task
    outcomes were typed records (the wire's loose keys only): it resumes after its first task."""
    async with app_bench(tmp_path, database_url) as bench:
        bench.agent.script["t2"] = "crash"
        with pytest.raises(Crash):
            await bench.runner.run(bench.journal())
        M = table_of(MessageRow)
        key = round_key(bench.workflow_id, 1, "task", "t1", "message")

        def downgrade(conn: sa.Connection) -> None:
            meta = conn.execute(sa.select(M.c.meta).where(M.c.key == key)).scalar_one()
            old = {k: v for k, v in meta.items() if k != TASK_RECORD}
            conn.execute(sa.update(M).where(M.c.key == key).values(meta=old))

        await bench.engine.rt.db.run_write(downgrade)
        rows = await bench.engine.rt.repo.messages.round_messages(bench.workflow_id, 1, key)
        assert TASK_RECORD not in rows[0][0].meta and rows[0][0].meta["taskId"] == "t1"
        await bench.runner.run(bench.journal())
        assert bench.agent.calls == ["t1", "t2", "t2"]
        assert await bench.final()
        row = await bench.engine.rt.repo.workflows.workflow(OWNER, bench.workflow_id)
        assert row is not None and row.status == "completed"
