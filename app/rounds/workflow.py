"""A round as a durable DBOS workflow: plan, tasks (each as soon as its inputs are ready), final.

Every write is keyed by the round and the step, so a step replayed after a crash writes nothing
twice. No step is a DBOS step: each one's journal write (its message, logs and output files, in
one transaction) is its checkpoint. A round resumed after a crash goes on with the plan its
planning message carries, reads the finished tasks' outcomes back from the journal and runs only
the others; a round whose final message was written no longer runs, so nothing of it runs again.
DBOS keeps what only it gives: the durable workflow, its recovery, cancellation and takeover.
(Recording plan and final as DBOS steps as well cost a round about twice the CPU of the
workflow without them: `bench/round_overhead.py`, its two floor lines.)
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from dbos import DBOS

from agents.base import OutputFile, Plan, TaskResult, TaskSpec
from agents.errors import PlanError
from agents.model import ModelError, RetryBudget, Usage, use_budget, use_call_context
from agents.round import PlanOutcome, Ran, Revision, RoundInput, Runner, Start, TaskOutcome, render_plan_message
from app.fsm import Event
from app.rounds import asking, replanning, steering, tracing, waiting
from app.rounds.attempts import run_attempts
from app.rounds.documents import display_name
from app.rounds.draining import gated
from app.rounds.handle import current
from app.rounds.inputs import plan_of
from app.rounds.journal import reason_of
from app.rounds.runtime import Runtime, runner_of
from app.store.database import unavailable
from app.store.full import storage_full
from app.store.ownership import ClaimLostError
from app.store.records import Appended, Cost, NewDocument, NewLog, NewMessage
from app.store.tables import DocumentRow, MessageRow

# A crash or a takeover is not the round's fault: DBOS resumes it however often (`max_recovery_attempts=None`);
# errors inside the round count against ROUND_MAX_ATTEMPTS (`app.rounds.attempts`).

log = logging.getLogger("foreman.rounds")


def round_id(workflow_id: str, round_no: int, segment: int = 0) -> str:
    """The DBOS workflow id of a round (of its part after the user's `segment`-th decision): starting
    it twice runs it once."""
    return f"{workflow_id}:{round_no}" if not segment else f"{workflow_id}:{round_no}:{segment}"


def round_key(workflow_id: str, round_no: int, *parts: object) -> str:
    """The key of a round's message or log: its round and the step that writes it."""
    return ":".join([workflow_id, str(round_no), *map(str, parts)])


_key = round_key


def _stats(usage: Usage, seconds: float) -> dict:
    return dict(bytes_sent=usage.bytes_sent, bytes_received=usage.bytes_received, tokens_used=usage.total_tokens,
                processing_time=round(seconds, 6))


def _cost(usage: Usage, seconds: float) -> Cost:
    return Cost(**_stats(usage, seconds))


@dataclass
class Planned:
    """The plan a round runs, the tokens planning spent, the tasks an interrupted earlier round
    delivered, whether the round resumed after a crash (its tasks may have finished), and the
    tasks whose start the plan's write logged."""

    plan: Plan
    tokens: int
    reused: dict[str, TaskOutcome]
    resumed: bool = False
    announced: frozenset[str] = frozenset()


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


def final_start_log(workflow_id: str, round_no: int) -> NewLog:
    """The log that the final answer is being written."""
    return NewLog(_key(workflow_id, round_no, "final", "start"), "Creating final response",
                  agent_name="project_manager", progress=90)


def start_log(workflow_id: str, round_no: int, plan: Plan, task: TaskSpec) -> NewLog:
    """The log that a task of the plan is running."""
    number, total = next(n for n, t in enumerate(plan.tasks, 1) if t.id == task.id), len(plan.tasks)
    return NewLog(_key(workflow_id, round_no, "task", task.id, "start"), f"Running task {number}/{total}: {task.agent}",
                  agent_name=task.agent, progress=30 + 60 * (number - 1) // total)


@gated
async def plan_step(rt: Runtime, workflow_id: str, round_no: int) -> Planned | None:
    """Extract the round's files, write the user's message; the project manager answers and plans.

    Replayed after a crash, extraction finds each file's contents in the extraction cache, and
    the plan is the one the planning message carries. None: nothing more to run.
    """
    key = lambda *p: _key(workflow_id, round_no, "plan", *p)  # noqa: E731
    with tracing.span("foreman.read_files"):
        prepared = await rt.rounds.prepare(workflow_id, round_no, then=[
            NewLog(key("start"), "Analyzing request and planning work", agent_name="project_manager", progress=10)])
    if prepared is None:  # stopped, deleted or finished before this step
        return None
    inp, replayed = prepared
    review = rt.rounds.review_of(workflow_id, round_no) == "plan"
    if replayed:
        written = await rt.repo.messages.round_messages(workflow_id, round_no, key("message"))
        if written:
            message = written[0][0]
            if "review" in message.meta:  # a plan under review runs in the round's part after the decision
                return None
            plan = plan_of(message)
            return Planned(plan, message.tokens_used, reused_of(plan, inp), resumed=True)
    return await write_plan(rt, workflow_id, round_no, inp, key, review)


async def write_plan(rt: Runtime, workflow_id: str, round_no: int, inp: RoundInput, key: Callable[..., str],
                     review: bool, revision: str = "") -> Planned | None:
    """The project manager plans and the plan is written (its message keyed `key("message")`); with
    `review`, the round then waits for the user's decision on it. `revision`: why this plan replaces
    the one before. None: nothing more to run now."""
    started, t0 = rt.clock(), time.perf_counter()
    runner = runner_of(rt)
    try:
        with (tracing.span("foreman.plan", **{"gen_ai.agent.name": "project_manager"}),
              rt.journal.drafts.writing(workflow_id, round_no, key("message"))):  # the answer streams
            outcome = await runner.plan(inp)
    except (PlanError, ModelError) as exc:
        await rt.journal.fail(workflow_id, round_no, f"Planning failed: {exc}", key("failed"),
                              cost=_cost(getattr(exc, "usage", Usage()), time.perf_counter() - t0))
        return None
    plan = outcome.plan
    reused = reused_of(plan, inp)
    previous_round = inp.previous.round if inp.previous else 0
    # Fixes made to the model's plan without asking it again are worth knowing about.
    repaired = [NewLog(key("repair", n), f"Work plan repaired: {fix}", type="warning",
                       agent_name="project_manager", progress=25)
                for n, fix in enumerate(outcome.repairs, 1)]
    answer_only = not plan.tasks  # the answer is the round's last message: no review to write
    wait = waiting.plan_wait(rt, key) if review and not answer_only else None
    # The tasks that start at once are announced in this write: one commit fewer for the round.
    starting = [] if wait else runner.first_tasks(plan, reused, spent=outcome.usage.total_tokens)
    done = "Work plan revised" if revision else "Work plan created"
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "last" if answer_only else "step",
                             render_plan_message(plan), agent_name="project_manager", started_at=started,
                             meta={"offline": outcome.offline, "model": outcome.model, "language": plan.language,
                                   "plan": rt.rounds.plan_meta(plan), **waiting.plan_review_meta(wait, revision)},
                             **_stats(outcome.usage, time.perf_counter() - t0))],
        logs=[*repaired,
              NewLog(key("done"), f"{done}: {len(plan.tasks)} task{'' if len(plan.tasks) == 1 else 's'}", agent_name="project_manager",
                     progress=25),
              *(NewLog(key("reused", tid), f"Task {tid} ({_agent(plan, tid)}) reused: "
                                           f"delivered in round {previous_round}", agent_name=_agent(plan, tid))
                for tid, o in reused.items()),
              *([answered_log(key("answered"), outcome)] if answer_only else []),
              *(start_log(workflow_id, round_no, plan, task) for task in starting),
              *waiting.wait_logs(wait, key)],
        event=Event.FINISH if answer_only else Event.WAIT if wait else None, wait=wait,
    )
    return None if answer_only or wait else Planned(plan, outcome.usage.total_tokens, reused,
                                            announced=frozenset(t.id for t in starting))


def reused_of(plan: Plan, inp: RoundInput) -> dict[str, TaskOutcome]:
    """Tasks an interrupted previous round delivered are not run again: their results carry over."""
    return Runner.reused(plan, inp.previous)


def _agent(plan: Plan, task_id: str) -> str:
    return next((t.agent for t in plan.tasks if t.id == task_id), "")


@gated
async def run_one(rt: Runtime, workflow_id: str, round_no: int, plan: Plan, task: TaskSpec, number: int,
                  delivered: dict[str, TaskOutcome], announced: bool = False,
                  then: Callable[..., list[NewLog]] = lambda ok=True: [],
                  approval: asking.Approval | None = None) -> TaskOutcome:
    """Run one task of the plan; a failure fails the task, not the round. Its outcome is written once,
    with its message, logs and files, in one transaction: that write is the task's checkpoint.
    `announced`: the plan's write logged its start; `then()`: logs of what follows, written with it;
    `approval` wanted: only what the agent prepares for the user's approval (`asking.run_or_prepare`)."""
    total = len(plan.tasks)
    key = lambda *p: _key(workflow_id, round_no, "task", task.id, *p)  # noqa: E731
    if not announced:
        await rt.journal.append(workflow_id, round_no, logs=[start_log(workflow_id, round_no, plan, task)])
    started, t0 = rt.clock(), time.perf_counter()
    try:
        inp = await rt.rounds.round_input(workflow_id, round_no)
        context = await rt.rounds.task_context(plan, task, inp, delivered, rt.model, rt.retriever)
        context.progress = rt.journal.progress(workflow_id, round_no, key("progress"), task.agent)
        context.answers = await asking.answers(rt, workflow_id, round_no, task.id)
        context.may_ask = rt.settings.agent_questions
        with use_call_context(task=task.id), rt.journal.drafts.writing(workflow_id, round_no, key("message"),
                                                                      task.agent, task.id):
            result = await asking.run_or_prepare(rt.registry, task, context, approval)
        if result.question or "prepared" in result.meta:  # the round waits for the user's answer or approval
            rt.journal.drafts.abandon(key("message"))  # what streamed of it is no message
            asking.check_asked(task, context.answers if result.question else [])
            return TaskOutcome(task.id, ok=False, error=asking.WAITS, question=result.question,
                               tokens=result.usage.total_tokens, prepared=result.meta.get("prepared"))
    except (asyncio.CancelledError, ClaimLostError):
        raise
    except Exception as exc:  # an agent's failure is the task's, never the round's
        tracing.record_error(exc)
        with use_call_context(task=task.id):  # the server log names the task that failed
            reason = reason_of(exc, f"the {task.agent} agent")
        usage = getattr(exc, "usage", Usage())
        await rt.journal.append(
            workflow_id, round_no,
            messages=[NewMessage(key("message"), "assistant", "step",
                                 f"Task {number}/{total} ({task.agent}) failed: {reason}", agent_name=task.agent,
                                 started_at=started, meta={"taskId": task.id, "failed": True, "error": reason},
                                 **_stats(usage, time.perf_counter() - t0))],
            logs=[NewLog(key("error"), f"Task {number}/{total} ({task.agent}) failed: {reason}", type="error",
                         agent_name=task.agent, progress=30 + 60 * number // total), *then(False)],
        )
        return TaskOutcome(task.id, ok=False, error=reason, tokens=usage.total_tokens)
    # One message carries a bounded number of documents.
    files = await runner_of(rt).capped(result.files, f"{task.id}-more-documents.zip")
    documents = await rt.rounds.store(await rt.rounds.owner(workflow_id) if files else None, files)
    write: asyncio.Future | None = None
    try:
        await rt.rounds.fill(documents)
        write = asyncio.ensure_future(rt.journal.append(
            workflow_id, round_no,
            messages=[NewMessage(key("message"), "assistant", "step", result.text, agent_name=task.agent,
                                 started_at=started,
                                 meta={**result.meta, "taskId": task.id, "offline": result.offline,
                                       "model": result.model, **({"undelivered": True} if result.undelivered else {})},
                                 documents=documents, **_stats(result.usage, time.perf_counter() - t0))],
            logs=[_done_log(key("done"), number, total, task.agent, result.undelivered), *then()],
        ))
        written = await asyncio.shield(write)  # a stop does not tear the write in two: it lands or not
    finally:
        await rt.rounds.settle(documents, kept=await _landed(write))
    return TaskOutcome(task.id, ok=True, text=result.text, files=written.file_ids if written else [],
                       tokens=result.usage.total_tokens, undelivered=result.undelivered)


def _done_log(key: str, number: int, total: int, agent: str, undelivered: bool) -> NewLog:
    if undelivered:  # it ran, but nothing of what it was asked came of it: never "done"
        return NewLog(key, f"Task {number}/{total} delivered nothing of what it was asked: {agent}", type="warning",
                      agent_name=agent, progress=30 + 60 * number // total)
    return NewLog(key, f"Task {number}/{total} done: {agent}", agent_name=agent, progress=30 + 60 * number // total)


async def _landed(write: asyncio.Future | None) -> bool:
    """Whether the task's write stored its message (waiting for it when the task was cancelled meanwhile)."""
    if write is None:
        return False
    if not write.done():
        await asyncio.wait([write])
    if write.cancelled() or write.exception() is not None:
        return False
    written: Appended | None = write.result()
    return bool(written and written.message_ids)


def finished_tasks(rows: list[tuple[MessageRow, list[DocumentRow]]]) -> dict[str, TaskOutcome]:
    """The outcomes of the tasks whose message the round wrote before it was interrupted."""
    outcomes = {}
    for message, docs in rows:
        task_id, meta = message.meta.get("taskId"), message.meta
        if not task_id or meta.get("skipped"):
            continue
        failed = bool(meta.get("failed"))
        outcomes[task_id] = TaskOutcome(task_id, ok=not failed, text="" if failed else message.content,
                                        files=[d.file_id for d in docs], tokens=message.tokens_used,
                                        error=meta.get("error", message.content) if failed else "",
                                        undelivered=bool(meta.get("undelivered")))
    return outcomes


async def skip_task(rt: Runtime, workflow_id: str, round_no: int, task_id: str, agent: str, reason: str) -> None:
    """Tell the user a task was skipped because something it needs is missing: a warning and a step message."""
    key = lambda *p: _key(workflow_id, round_no, "skip", task_id, *p)  # noqa: E731
    label = f"Task {task_id} ({agent})"
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "step", f"{label} was skipped: {reason}.",
                             agent_name=agent, meta={"taskId": task_id, "skipped": True})],
        logs=[NewLog(_key(workflow_id, round_no, "skip", task_id), f"{label} skipped: {reason}",
                     type="warning", agent_name=agent)])


@gated
async def final_step(rt: Runtime, workflow_id: str, round_no: int, plan: Plan, outcomes: dict[str, TaskOutcome],
                     skipped: dict[str, str], announced: bool = False, revisions: tuple[str, ...] = ()) -> None:
    """The last message reviews what was delivered against the (last) plan and names each revision of
    it; the round completes. `announced`: the last task's write logged this step's start."""
    key = lambda *p: _key(workflow_id, round_no, "final", *p)  # noqa: E731
    if not announced:
        await rt.journal.append(workflow_id, round_no, logs=[final_start_log(workflow_id, round_no)])
    inp = await rt.rounds.round_input(workflow_id, round_no)
    delivered_ids = [fid for o in outcomes.values() for fid in o.files]
    found = await rt.repo.files.files_by_id(delivered_ids)
    files = [found[i] for i in delivered_ids if i in found]
    delivered = [OutputFile(name=display_name(f), mime=f.mime, data=b"") for f in files]
    # A task that ran but delivered nothing of what it was asked counts as not delivered, with its own reason.
    results = {tid: (TaskResult(text=o.text) if o.delivered else None) for tid, o in outcomes.items()}
    started, t0 = rt.clock(), time.perf_counter()
    failures = {tid: o.error or o.text for tid, o in outcomes.items() if not o.delivered}
    if revisions:  # what a revision dropped without a replacement was planned and not delivered
        plan, lost, lost_skipped = await replanning.with_dropped(rt, workflow_id, round_no, plan)
        results, failures, skipped = {**results, **dict.fromkeys(lost)}, {**failures, **lost}, {**skipped, **lost_skipped}
    spent, fallback = Usage(), []
    with rt.journal.drafts.writing(workflow_id, round_no, key("message")):
        final, failed = await runner_of(rt).final(inp, plan, results, skipped, delivered, failures)
    if failed is not None:
        # What was delivered stays delivered: the offline review (extractive, from the plan and the
        # results) is the final message, and the round ends as its tasks earned.
        log.warning("Round %s of workflow %s: the final review failed (%s); the offline review is written "
                    "instead.", round_no, workflow_id, failed)
        spent = failed.usage
        fallback = [NewLog(key("offline"), "The model could not write the final review; the built-in offline "
                           "review was written instead", type="warning", agent_name="project_manager",
                           progress=95)]
    if revisions:
        final.text = f"{final.text}\n\n{replanning.revisions_note(list(revisions))}"
    attached = await rt.rounds.contents_of(files)
    done = sum(1 for o in outcomes.values() if o.delivered)
    ending = outcome_log(key("done"), len(plan.tasks), done)
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "last", final.text, agent_name="project_manager",
                             started_at=started, meta={"offline": final.offline, "model": final.model},
                             documents=[NewDocument(f.id, contents) for f, contents in attached],
                             **_stats(final.usage + spent, time.perf_counter() - t0))],
        logs=[*fallback, ending],
        event=Event.FINISH if ending.status == "completed" else Event.FAIL,
    )


def answered_log(key: str, outcome: PlanOutcome) -> NewLog:
    """The last log of a round the project manager's answer ends. When none of its files could be read,
    it did not complete "successfully": it says so, as a warning."""
    if outcome.unread and not outcome.readable:
        return NewLog(key, f"Workflow completed without a readable file: {', '.join(outcome.unread)} could not be "
                           "read (the answer says why and what to do)", type="warning", agent_name="project_manager",
                      progress=100, status="completed")
    return NewLog(key, "Workflow completed successfully", agent_name="project_manager", progress=100,
                  status="completed")


def outcome_log(key: str, planned: int, done: int) -> NewLog:
    """The round's last log. It failed when tasks were planned and none delivered; else it completed.

    A plan without tasks is the project manager's answer itself: that round completed.
    """
    if planned and not done:
        return NewLog(key, f"Nothing that was planned was delivered: none of the {planned} planned task(s) "
                           "finished (see the final message for why)", type="error", agent_name="project_manager",
                      progress=100, status="failed")
    if done < planned:
        return NewLog(key, f"Workflow completed: {done} of {planned} planned tasks delivered",
                      agent_name="project_manager", progress=100, status="completed")
    return NewLog(key, "Workflow completed successfully", agent_name="project_manager", progress=100,
                  status="completed")


@gated
async def fail_step(rt: Runtime, workflow_id: str, round_no: int, reason: str) -> None:
    """End the round as failed with an error log that says why."""
    await rt.journal.fail(workflow_id, round_no, reason, _key(workflow_id, round_no, "failed"))


FAIL_RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)  # then every 30 s until the failure is written


async def fail_when_possible(rt: Runtime, workflow_id: str, round_no: int, reason: str) -> None:
    """`fail_step`, tried again while the disk is full or the database unreachable, until it lands:
    a round that cannot write ends `failed`, with its log, as soon as it can (never stays running)."""
    for attempt in itertools.count():
        try:
            await fail_step(rt, workflow_id, round_no, reason)
            return
        except Exception as exc:
            if not (storage_full(exc) or unavailable(exc)):
                raise
            wait = FAIL_RETRY_SECONDS[min(attempt, len(FAIL_RETRY_SECONDS) - 1)]
            if attempt == 0:
                log.error("Round %s:%s cannot write its failure (%s); trying again every %g-%g s until it can.",
                          workflow_id, round_no, "storage full" if storage_full(exc) else "database unavailable",
                          FAIL_RETRY_SECONDS[0], FAIL_RETRY_SECONDS[-1])
            await asyncio.sleep(wait)


@DBOS.workflow(name="foreman.round", max_recovery_attempts=None)
async def round_workflow(workflow_id: str, round_no: int, segment: int = 0) -> None:
    """One round of a workflow, from the user's message to the final answer; from `segment` 1 on, the
    part of it after the user's `segment`-th decision (a round waiting for the user runs nothing)."""
    engine = current()
    rt = engine.rt
    engine.track(workflow_id, asyncio.current_task())
    try:
        async with engine.slot(workflow_id, round_no):
            with use_budget(RetryBudget(rt.settings.round_retry_budget, tokens=rt.settings.max_round_tokens)):
                async with asyncio.timeout(rt.settings.max_round_seconds):
                    with use_call_context(workflow=workflow_id, round=round_no), \
                            tracing.round_span(workflow_id, round_no):
                        if segment:
                            await engine.go_on(rt, workflow_id, round_no, segment)
                        else:
                            await run_attempts(engine, workflow_id, round_no, lambda: _run(rt, workflow_id, round_no))
    except TimeoutError:
        await fail_when_possible(rt, workflow_id, round_no,
                                 f"The round took longer than MAX_ROUND_SECONDS ({rt.settings.max_round_seconds:g} s).")
    except (asyncio.CancelledError, ClaimLostError):
        raise  # stopped, or taken over by another replica (which writes the rest): nothing to write here
    except Exception as exc:  # anything unforeseen fails the round with a log, never silently
        reason = ("the server's storage is full, so the round could not write its work" if storage_full(exc)
                  else reason_of(exc, "the round"))
        await fail_when_possible(rt, workflow_id, round_no, f"The round failed: {reason}.")
    finally:
        rt.journal.drafts.abandon_workflow(workflow_id)  # a draft whose message was never written
        engine.untrack(workflow_id, asyncio.current_task())


async def _run(rt: Runtime, workflow_id: str, round_no: int) -> None:
    await runner_of(rt).run(Hooks(rt, workflow_id, round_no, lambda: plan_step(rt, workflow_id, round_no)))


async def execute(rt: Runtime, workflow_id: str, round_no: int, planned: Planned) -> None:
    """Run the plan's tasks (those not finished yet), then the final step (a round's part after a decision)."""

    async def given() -> Planned:
        return planned

    await runner_of(rt).run(Hooks(rt, workflow_id, round_no, given))


class Hooks:
    """The round's side of its agent work (`agents.round.RoundHooks`): the plan's write, each task's run
    and journal write, skips, the user's steering, the waits, the revisions' writes and the final step."""

    def __init__(self, rt: Runtime, workflow_id: str, round_no: int,
                 planning: Callable[[], Awaitable[Planned | None]]) -> None:
        self.rt, self.workflow_id, self.round_no, self.planning = rt, workflow_id, round_no, planning
        self.announced: frozenset[str] = frozenset()  # tasks whose start the plan's write logged (first pass)
        self.handled: set[int] = set()  # the user's steering messages a revision took up
        self.parked: list[asking.Parked] = []  # tasks that wait for the user (a question, an approval)
        self.settling: Settling | None = None
        self.numbers: dict[str, int] = {}
        self.passes = 0

    async def planned(self) -> Start | None:
        rt, workflow_id, round_no = self.rt, self.workflow_id, self.round_no
        planned = await self.planning()
        if planned is None:
            return None
        plan, reused = planned.plan, planned.reused
        finished: dict[str, TaskOutcome] = dict(reused)
        revisions: list[str] = []
        steers = 0
        if planned.resumed:  # tasks finished before the crash are not run again
            finished.update(finished_tasks(await rt.repo.messages.round_messages(
                workflow_id, round_no, _key(workflow_id, round_no, "task", ""))))
            # A revision written before the crash is the plan the round goes on with.
            revised, revisions = await replanning.revisions_so_far(rt, workflow_id, round_no)
            plan = revised or plan
            self.handled, steers = await steering.handled_so_far(rt, workflow_id, round_no)
        self.announced = planned.announced
        spent = planned.tokens + sum(o.tokens for t, o in finished.items() if t not in reused)
        return Start(plan, finished, spent, revisions, steers)

    async def final(self, ran: Ran) -> None:
        with tracing.span("foreman.final_answer", **{"gen_ai.agent.name": "project_manager"}):
            await final_step(self.rt, self.workflow_id, self.round_no, ran.plan, ran.outcomes, ran.skipped,
                             announced=bool(self.settling and self.settling.announced),
                             revisions=tuple(ran.revisions))

    def begin(self, plan: Plan, finished: Mapping[str, TaskOutcome], may_replan: bool) -> None:
        self.numbers = {task.id: n for n, task in enumerate(plan.tasks, 1)}
        self.settling = Settling(plan, final_start_log(self.workflow_id, self.round_no), set(finished),
                                 in_order=self.rt.db.in_order, may_replan=may_replan)
        if self.passes:
            self.announced = frozenset()
        self.passes += 1

    async def steered(self) -> bool:
        return bool(await steering.pending(self.rt, self.workflow_id, self.round_no, self.handled))

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
            outcome = await run_one(rt, workflow_id, round_no, plan, task, self.numbers[task.id], delivered,
                                    announced=task.id in self.announced,
                                    then=lambda ok=True: settling.after(task.id, ok), approval=approval)
        if outcome.question or (approval and approval.state == "wanted" and outcome.error == asking.WAITS):
            tool = rt.registry.approval_request(task, outcome.prepared) if not outcome.question else {}
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

    async def steer(self, plan: Plan, outcomes: dict[str, TaskOutcome], number: int) -> Revision | None:
        asked = await steering.pending(self.rt, self.workflow_id, self.round_no, self.handled)
        if not asked:
            return None
        revision = await steering.revise(self.rt, self.workflow_id, self.round_no, plan, outcomes, asked, number)
        self.handled.update(m.id for m in asked)
        return revision

    async def replan(self, plan: Plan, outcomes: dict[str, TaskOutcome], skipped: dict[str, str],
                     number: int) -> Revision | None:
        return await replanning.revise(self.rt, self.workflow_id, self.round_no, plan, outcomes, skipped, number)
