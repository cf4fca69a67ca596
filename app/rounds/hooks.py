"""The round's side of its agent work (`agents.round.RoundHooks`): the Runner plans, runs the tasks,
revises the plan and writes the final review; these hooks write each step (`app.rounds.steps`,
`steering`, `replanning`), read back what a resumed round finished, and tell the Runner what the user
steered and when a task waits for the user."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from agents.base import Plan, TaskSpec
from agents.errors import PlanError
from agents.model import ModelError, Usage
from agents.round import (
    FinalOutcome,
    PlanOutcome,
    Ran,
    Review,
    Revision,
    RoundInput,
    Start,
    TaskOutcome,
)
from app.rounds import asking, draining, replanning, steering, tracing
from app.rounds.records import finished_tasks
from app.rounds.runtime import Runtime
from app.rounds.steps import (
    Planned,
    ToPlan,
    final_review,
    final_start_log,
    plan_failed,
    round_key,
    run_one,
    skip_task,
    write_final,
    write_plan,
)
from app.store.records import NewLog
from app.store.tables import FileRow, MessageRow, stored_id

SPANS = {"plan": "plan", "final": "final_answer"}  # a step's trace span, by the step's name


@dataclass
class Settling:
    """The tasks of the plan whose outcome the journal has (written or skipped). The last task to
    settle logs, in its own write, that the final answer is being written: one commit fewer per round.

    Where the database lands writes in the order they are made (`in_order`), a task whose write
    is on its way counts as settled: five tasks ending together are one batch, and the last of
    them carries that log, which still lands after every task's.
    """

    plan: Plan
    final_start: NewLog
    settled: set[str]
    in_order: bool
    announced: bool = False  # the final step's start was logged with a task's outcome
    may_replan: bool = False  # a failure is followed by a revision of the plan, not by the final step
    held: bool = False  # a task failed: the final step's start is not announced early

    def after(self, task_id: str, ok: bool = True) -> list[NewLog]:
        """What to log with the outcome of `task_id`, as it is written: the final step's start when
        no other task is left."""
        if self.in_order:
            self.settled.add(task_id)
        self.held = self.held or (not ok and self.may_replan)
        if self.held or self.announced or any(t.id != task_id and t.id not in self.settled for t in self.plan.tasks):
            return []
        self.announced = True
        return [self.final_start]


class Hooks:
    """The round's side of its agent work (`agents.round.RoundHooks`): the plan's write, each task's run
    and journal write, skips, the user's steering, the waits, the revisions' writes and the final step."""

    def __init__(self, rt: Runtime, workflow_id: str, round_no: int,
                 opening: Callable[[], Awaitable[Planned | ToPlan | None]], decided: bool = False) -> None:
        self.rt, self.workflow_id, self.round_no, self.opening = rt, workflow_id, round_no, opening
        self.to_plan: ToPlan | None = None  # what the Runner plans from (a round that is not resumed)
        self.decided = decided  # the round's part after a decision of the user's (an answer may be there)
        self.announced: frozenset[str] = frozenset()  # tasks whose start the plan's write logged (first pass)
        self.handled: set[int] = set()  # the user's steering messages a revision took up
        self.parked: list[asking.Parked] = []  # tasks that wait for the user (a question, an approval)
        self.settling: Settling | None = None
        self.numbers: dict[str, int] = {}
        self.passes = 0
        self.answer = ""  # the manager's answer to the request (of the plan the round runs; not a revision's)
        self.messages: dict[str, int] = {}  # the id of the message each task's outcome was written in
        self.asked: list[MessageRow] = []  # the user's steering messages the revision being made takes up
        self.delivered: list[FileRow] = []  # the files the round's tasks delivered (read for the final review)
        # The journal's mark of the workflow's steers when none was found pending (`Journal.steer_mark`);
        # none heard yet at the start. None: look.
        self.steer_mark: tuple[int, int] | None = (rt.cursors.generation, 0)

    async def opened(self) -> Start | RoundInput | None:
        opened = await self.opening()
        if isinstance(opened, ToPlan):
            self.to_plan = opened
            return opened.inp
        return None if opened is None else await self._start(opened)

    async def planned(self, outcome: PlanOutcome, seconds: float) -> Start | None:
        assert self.to_plan is not None
        planned = await write_plan(self.rt, self.workflow_id, self.round_no, self.to_plan, outcome, seconds)
        return None if planned is None else await self._start(planned)

    async def unplanned(self, error: PlanError | ModelError, seconds: float) -> None:
        assert self.to_plan is not None
        await plan_failed(self.rt, self.workflow_id, self.round_no, self.to_plan.key, error, seconds)

    async def _start(self, planned: Planned) -> Start:
        """Where the task phase starts from the plan in hand (read back, with what a resumed round finished)."""
        rt, workflow_id, round_no = self.rt, self.workflow_id, self.round_no
        plan, reused = planned.plan, planned.reused
        self.answer = plan.answer
        finished: dict[str, TaskOutcome] = dict(reused)
        revisions: list[str] = []
        steers = 0
        if planned.resumed:  # tasks finished before the crash are not run again
            written, self.messages = finished_tasks(await rt.repo.messages.round_messages(
                workflow_id, round_no, round_key(workflow_id, round_no, "task", "")))
            finished.update(written)
            # A revision written before the crash is the plan the round goes on with.
            revised, revisions = await replanning.revisions_so_far(rt, workflow_id, round_no)
            plan = revised or plan
            self.handled, steers = await steering.handled_so_far(rt, workflow_id, round_no)
            self.steer_mark = None  # a steer posted before a restart is in no count of this process: look once
        self.announced = planned.announced
        spent = planned.tokens + sum(o.tokens for t, o in finished.items() if t not in reused)
        return Start(plan, finished, spent, revisions, steers)

    def step(self, name: str) -> AbstractAsyncContextManager[None]:
        return draining.step()

    @contextlib.contextmanager
    def live(self, name: str) -> Iterator[object]:
        key = self.to_plan.key("message") if name == "plan" and self.to_plan else \
            round_key(self.workflow_id, self.round_no, name, "message")
        with tracing.span(f"foreman.{SPANS.get(name, name)}", **{"gen_ai.agent.name": "project_manager"}), \
                self.rt.journal.drafts.writing(self.workflow_id, self.round_no, key,
                                               kind="plan" if name == "plan" else "answer") as draft:
            yield draft

    async def reviewing(self, ran: Ran) -> Review:
        review, self.delivered = await final_review(self.rt, self.workflow_id, self.round_no, ran,
                                                    announced=bool(self.settling and self.settling.announced))
        return review

    async def ended(self, ran: Ran, review: Review, final: FinalOutcome, failed: ModelError | None,
                    seconds: float) -> None:
        await write_final(self.rt, self.workflow_id, self.round_no, ran, review, self.delivered, final, failed,
                          seconds, answer=self.answer, messages=self.messages)

    def begin(self, plan: Plan, finished: Mapping[str, TaskOutcome], may_replan: bool) -> None:
        self.numbers = {task.id: n for n, task in enumerate(plan.tasks, 1)}
        self.settling = Settling(plan, final_start_log(self.workflow_id, self.round_no), set(finished),
                                 in_order=self.rt.db.in_order, may_replan=may_replan)
        if self.passes:
            self.announced = frozenset()
        self.passes += 1

    async def steered(self) -> bool:
        return bool(await self._pending_steers())

    async def _pending_steers(self) -> list[MessageRow]:
        """The user's steering messages no revision took up yet: no read unless one was heard of since the
        last look that found none (the journal counts the posts this process wrote and, on PostgreSQL, those
        another replica announced; while the announcements are down every look reads)."""
        mark = self.rt.journal.steer_mark(self.workflow_id)
        if mark is not None and mark == self.steer_mark:
            return []
        pending = await steering.pending(self.rt, self.workflow_id, self.round_no, self.handled)
        if not pending:
            self.steer_mark = mark
        return pending

    async def run(self, plan: Plan, task: TaskSpec, dependencies: dict[str, TaskOutcome]) -> TaskOutcome:
        rt, workflow_id, round_no, settling = self.rt, self.workflow_id, self.round_no, self.settling
        assert settling is not None
        approval = await asking.approval(rt, workflow_id, round_no, task)
        if approval and approval.state == "rejected":  # it fails with the user's reason
            reason = await asking.not_approved(rt, workflow_id, round_no, plan, task, self.numbers[task.id],
                                               approval.feedback, then=settling.after(task.id, False))
            settling.settled.add(task.id)
            return TaskOutcome(task.id, ok=False, error=reason)
        delivered = {t: o for t, o in dependencies.items() if o.ok}
        with tracing.task_span(task.agent, task.id):
            outcome, message_id = await run_one(rt, workflow_id, round_no, plan, task, self.numbers[task.id],
                                                delivered, announced=task.id in self.announced,
                                                then=lambda ok=True: settling.after(task.id, ok), approval=approval,
                                                decided=self.decided)
        if message_id is not None:
            self.messages[task.id] = message_id
        if outcome.question or (approval and approval.state == "wanted" and outcome.error == asking.WAITS):
            tool = rt.runner.registry.approval_request(task, outcome.prepared) if not outcome.question else {}
            self.parked.append(asking.Parked(task, "question" if outcome.question else "tool",
                                             question=outcome.question, tool=tool, tokens=outcome.tokens,
                                             prepared=outcome.prepared))
            outcome.waiting = True
            return outcome
        settling.settled.add(task.id)
        return outcome

    async def skip(self, task: TaskSpec, reason: str) -> None:
        await skip_task(self.rt, self.workflow_id, self.round_no, task.id, task.agent, reason)
        if self.settling:
            self.settling.settled.add(task.id)

    async def park(self) -> bool:
        if not self.parked:
            return False
        await asking.park(self.rt, self.workflow_id, self.round_no, self.parked)
        return True

    async def input(self) -> RoundInput:
        return await self.rt.rounds.round_input(self.workflow_id, self.round_no)

    async def steering(self) -> str | None:
        self.asked = await self._pending_steers()
        return "\n".join(m.content for m in self.asked) if self.asked else None

    async def revised(self, revision: Revision, usage: Usage | None, number: int, steer: bool,
                      seconds: float) -> bool:
        rt, workflow_id, round_no = self.rt, self.workflow_id, self.round_no
        if not steer:
            return await replanning.write(rt, workflow_id, round_no, revision, usage, number, seconds)
        await steering.write(rt, workflow_id, round_no, revision, usage, self.asked, number, seconds)
        self.handled.update(stored_id(m) for m in self.asked)
        return False
