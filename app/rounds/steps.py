"""A round's steps, each one journal write (its checkpoint): the plan, one task, a skipped task, the
final review. Keyed by the round and the step, so a step replayed after a crash writes nothing twice;
`app.rounds.workflow` runs them, through the Runner's hooks (`app.rounds.hooks`)."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.engine import Connection

from agents.base import OutputFile, Plan, TaskSpec
from agents.model import CallScope, ModelError, Usage
from agents.round import (
    FinalOutcome,
    PlanOutcome,
    PriorRound,
    Ran,
    Review,
    RoundInput,
    Runner,
    TaskOutcome,
)
from app.fsm import Event
from app.rounds import asking, replanning, tracing, waiting
from app.rounds.documents import display_name
from app.rounds.draining import gated
from app.rounds.journal import reason_of
from app.rounds.records import TaskRecord, plan_of, task_meta
from app.rounds.runtime import Runtime
from app.store.ownership import ClaimLostError
from app.store.records import Appended, Cost, NewDocument, NewLog, NewMessage
from app.store.tables import FileRow, stored_id

log = logging.getLogger("foreman.rounds")


def round_key(workflow_id: str, round_no: int, *parts: object) -> str:
    """The key of a round's message or log: its round and the step that writes it."""
    return ":".join([workflow_id, str(round_no), *map(str, parts)])


_key = round_key


def step_keys(workflow_id: str, round_no: int, *step: object) -> Callable[..., str]:
    """The keys of one step's writes: `key("message")`, `key("done")`."""
    return functools.partial(round_key, workflow_id, round_no, *step)


def _stats(usage: Usage, seconds: float) -> dict[str, Any]:
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


def final_start_log(workflow_id: str, round_no: int) -> NewLog:
    """The log that the final answer is being written."""
    return NewLog(_key(workflow_id, round_no, "final", "start"), "Creating final response",
                  agent_name="project_manager", progress=90)


def start_log(workflow_id: str, round_no: int, plan: Plan, task: TaskSpec) -> NewLog:
    """The log that a task of the plan is running."""
    number, total = next(n for n, t in enumerate(plan.tasks, 1) if t.id == task.id), len(plan.tasks)
    return NewLog(_key(workflow_id, round_no, "task", task.id, "start"), f"Running task {number}/{total}: {task.agent}",
                  agent_name=task.agent, progress=30 + 60 * (number - 1) // total)


@dataclass
class ToPlan:
    """A round (or its part after the user asked for a revised plan) that the Runner plans: its input,
    the keys of its plan message's writes, whether the plan waits for the user's review, and why it
    replaces the plan before (empty: the round's first)."""

    inp: RoundInput
    key: Callable[..., str]
    review: bool
    revision: str = ""


async def opening(rt: Runtime, workflow_id: str, round_no: int) -> Planned | ToPlan | None:
    """Extract the round's files, write the user's message: what the project manager plans from.

    Replayed after a crash, extraction finds each file's contents in the extraction cache, and
    the plan is the one the planning message carries. None: nothing more to run.
    """
    key = step_keys(workflow_id, round_no, "plan")
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
    return ToPlan(inp, key, review)


async def plan_failed(rt: Runtime, workflow_id: str, round_no: int, key: Callable[..., str], exc: Exception,
                      seconds: float) -> None:
    """The project manager could not plan (`PlanError`, `ModelError`): the round fails, saying why."""
    await rt.journal.fail(workflow_id, round_no, f"Planning failed: {exc}", key("failed"),
                          cost=_cost(getattr(exc, "usage", Usage()), seconds))


async def write_plan(rt: Runtime, workflow_id: str, round_no: int, to_plan: ToPlan, outcome: PlanOutcome,
                     seconds: float) -> Planned | None:
    """Write the plan the Runner made (its message keyed `key("message")`); under `review`, the round then
    waits for the user's decision on it. None: nothing more to run now."""
    inp, key, review, revision = to_plan.inp, to_plan.key, to_plan.review, to_plan.revision
    started = rt.clock() - timedelta(seconds=seconds)
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
    starting = [] if wait else rt.runner.first_tasks(plan, reused, spent=outcome.usage.total_tokens)
    done = "Work plan revised" if revision else "Work plan created"
    content = outcome.message
    memory = None
    if answer_only:  # the round ends with this write, which stores what later rounds remember of it
        request = (await rt.rounds.round_input(workflow_id, round_no)).prompt  # `inp`'s may hold the feedback
        memory = await remembering(rt, workflow_id, PriorRound(round=round_no, request=request, final=content,
                                                         finished=True))
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "last" if answer_only else "step",
                             content, agent_name="project_manager", started_at=started,
                             meta={"offline": outcome.offline, "model": outcome.model, "language": plan.language,
                                   "plan": outcome.record, **outcome.meta, **waiting.plan_review_meta(wait, revision)},
                             **_stats(outcome.usage, seconds))],
        logs=[*repaired,
              NewLog(key("done"), f"{done}: {len(plan.tasks)} task{'' if len(plan.tasks) == 1 else 's'}", agent_name="project_manager",
                     progress=25),
              *(NewLog(key("reused", tid), f"Task {tid} ({_agent(plan, tid)}) reused: "
                                           f"delivered in round {previous_round}", agent_name=_agent(plan, tid))
                for tid, o in reused.items()),
              *([answered_log(key("answered"), outcome)] if answer_only else []),
              *(start_log(workflow_id, round_no, plan, task) for task in starting),
              *waiting.wait_logs(wait, key)],
        event=Event.FINISH if answer_only else Event.WAIT if wait else None, wait=wait, also=memory,
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
                  approval: asking.Approval | None = None, decided: bool = True) -> tuple[TaskOutcome, int | None]:
    """Run one task of the plan; a failure fails the task, not the round. Its outcome is written once,
    with its message, logs and files, in one transaction: that write is the task's checkpoint. The
    outcome, and the id of the message it was written in (None: not written).
    `announced`: the plan's write logged its start; `then()`: logs of what follows, written with it;
    `approval` wanted: only what the agent prepares for the user's approval (`Runner.run_task`'s `prepare`);
    `decided`: the round went on after a decision of the user's (only then may a question have an answer)."""
    total = len(plan.tasks)
    key = step_keys(workflow_id, round_no, "task", task.id)
    if not announced:
        await rt.journal.append(workflow_id, round_no, logs=[start_log(workflow_id, round_no, plan, task)])
    started, t0 = rt.clock(), time.perf_counter()
    try:
        inp = await rt.rounds.round_input(workflow_id, round_no)
        outputs = await rt.rounds.outputs_of(task.depends_on, delivered)
        # Only a round that went on after a decision can hold an answer to a question: no read per task otherwise.
        answers = await asking.answers(rt, workflow_id, round_no, task.id) if decided else []
        with rt.journal.drafts.writing(workflow_id, round_no, key("message"), task.agent, task.id):
            result = await rt.runner.run_task(
                plan, task, inp, outputs=outputs, texts={t: o.text for t, o in delivered.items()},
                progress=rt.journal.progress(workflow_id, round_no, key("progress"), task.agent), answers=answers,
                may_ask=rt.settings.agent_questions, prepare=approval is not None and approval.wanted,
                prepared=approval.prepared if approval else None)
        if result.question or "prepared" in result.meta:  # the round waits for the user's answer or approval
            rt.journal.drafts.abandon(key("message"))  # what streamed of it is no message
            return TaskOutcome(task.id, ok=False, error=asking.WAITS, question=result.question,
                               tokens=result.usage.total_tokens, prepared=result.meta.get("prepared")), None
    except (asyncio.CancelledError, ClaimLostError):
        raise
    except Exception as exc:  # an agent's failure is the task's, never the round's
        tracing.record_error(exc)
        with CallScope.entered(task=task.id):  # the server log names the task that failed
            reason = reason_of(exc, f"the {task.agent} agent")
        usage = getattr(exc, "usage", Usage())
        failed = await rt.journal.append(
            workflow_id, round_no,
            messages=[NewMessage(key("message"), "assistant", "step",
                                 f"Task {number}/{total} ({task.agent}) failed: {reason}", agent_name=task.agent,
                                 started_at=started, meta=task_meta(TaskRecord(task.id, ok=False, error=reason)),
                                 **_stats(usage, time.perf_counter() - t0))],
            logs=[NewLog(key("error"), f"Task {number}/{total} ({task.agent}) failed: {reason}", type="error",
                         agent_name=task.agent, progress=30 + 60 * number // total), *then(False)],
        )
        return TaskOutcome(task.id, ok=False, error=reason, tokens=usage.total_tokens), _message_id(failed)
    # One message carries a bounded number of documents.
    files = await rt.runner.capped(result.files, f"{task.id}-more-documents.zip")
    documents = await rt.rounds.store(await rt.rounds.owner(workflow_id) if files else None, files)
    write: asyncio.Future[Appended | None] | None = None
    try:
        await rt.rounds.fill(documents)
        write = asyncio.ensure_future(rt.journal.append(
            workflow_id, round_no,
            messages=[NewMessage(key("message"), "assistant", "step", result.text, agent_name=task.agent,
                                 started_at=started,
                                 meta={**result.meta, "offline": result.offline, "model": result.model,
                                       **task_meta(TaskRecord(task.id, undelivered=result.undelivered,
                                                              error=str(result.meta.get("undeliveredReason", ""))))},
                                 documents=documents, **_stats(result.usage, time.perf_counter() - t0))],
            logs=[_done_log(key("done"), number, total, task.agent, result.undelivered), *then()],
        ))
        written = await asyncio.shield(write)  # a stop does not tear the write in two: it lands or not
    finally:
        await rt.rounds.settle(documents, kept=await _landed(write))
    return TaskOutcome(task.id, ok=True, text=result.text, files=written.file_ids if written else [],
                       tokens=result.usage.total_tokens, undelivered=result.undelivered,
                       error=str(result.meta.get("undeliveredReason", ""))), _message_id(written)


def _message_id(written: Appended | None) -> int | None:
    return written.message_ids[0] if written and written.message_ids else None


def _done_log(key: str, number: int, total: int, agent: str, undelivered: bool) -> NewLog:
    if undelivered:  # it ran, but nothing of what it was asked came of it: never "done"
        return NewLog(key, f"Task {number}/{total} delivered nothing of what it was asked: {agent}", type="warning",
                      agent_name=agent, progress=30 + 60 * number // total)
    return NewLog(key, f"Task {number}/{total} done: {agent}", agent_name=agent, progress=30 + 60 * number // total)


async def _landed(write: asyncio.Future[Appended | None] | None) -> bool:
    """Whether the task's write stored its message (waiting for it when the task was cancelled meanwhile)."""
    if write is None:
        return False
    if not write.done():
        await asyncio.wait([write])
    if write.cancelled() or write.exception() is not None:
        return False
    written: Appended | None = write.result()
    return bool(written and written.message_ids)


async def skip_task(rt: Runtime, workflow_id: str, round_no: int, task_id: str, agent: str, reason: str) -> None:
    """Tell the user a task was skipped because something it needs is missing: a warning and a step message."""
    key = step_keys(workflow_id, round_no, "skip", task_id)
    label = f"Task {task_id} ({agent})"
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "step", f"{label} was skipped: {reason}.",
                             agent_name=agent, meta=task_meta(TaskRecord(task_id, ok=False, skipped=True, error=reason)))],
        logs=[NewLog(_key(workflow_id, round_no, "skip", task_id), f"{label} skipped: {reason}",
                     type="warning", agent_name=agent)])


async def final_review(rt: Runtime, workflow_id: str, round_no: int, ran: Ran,
                       announced: bool = False) -> tuple[Review, list[FileRow]]:
    """What the final review reads of what `ran` delivered against the (last) plan, and the files it
    delivered. `announced`: the last task's write logged this step's start."""
    if not announced:
        await rt.journal.append(workflow_id, round_no, logs=[final_start_log(workflow_id, round_no)])
    plan, outcomes, skipped = ran.plan, ran.outcomes, ran.skipped
    inp = await rt.rounds.round_input(workflow_id, round_no)
    delivered_ids = [fid for o in outcomes.values() for fid in o.files]
    found = await rt.repo.files.files_by_id(delivered_ids)
    files = [found[i] for i in delivered_ids if i in found]
    delivered = [OutputFile(name=display_name(f), mime=f.mime, data=b"") for f in files]
    lost: dict[str, str] = {}
    if ran.revisions:  # what a revision dropped without a replacement was planned and not delivered
        plan, lost, lost_skipped = await replanning.with_dropped(rt, workflow_id, round_no, plan)
        skipped = {**skipped, **lost_skipped}
    return Review.of(inp, plan, outcomes, skipped, delivered, dropped=lost), files


async def write_final(rt: Runtime, workflow_id: str, round_no: int, ran: Ran, review: Review,
                      files: list[FileRow], final: FinalOutcome, failed: ModelError | None, seconds: float,
                      answer: str = "", messages: Mapping[str, int] | None = None) -> None:
    """The last message: the Runner's review of what was delivered, naming each revision of the plan;
    the round completes, and stores what later rounds remember of it. `failed`: the model could not
    write the review (the fallback's was); `answer`: the manager's answer to the request; `messages`:
    the id of the message each task's outcome was written in."""
    key = step_keys(workflow_id, round_no, "final")
    started = rt.clock() - timedelta(seconds=seconds)
    spent, fallback = Usage(), []
    if failed is not None:
        # What was delivered stays delivered: the offline review (extractive, from the plan and the
        # results) is the final message, and the round ends as its tasks earned.
        log.warning("Round %s of workflow %s: the final review failed (%s); the offline review is written "
                    "instead.", round_no, workflow_id, failed)
        spent = failed.usage
        fallback = [NewLog(key("offline"), "The model could not write the final review; the built-in offline "
                           "review was written instead", type="warning", agent_name="project_manager",
                           progress=95)]
    if ran.revisions:
        final.text = f"{final.text}\n\n{replanning.revisions_note(list(ran.revisions))}"
    attached = await rt.rounds.contents_of(files)
    done = sum(1 for o in ran.outcomes.values() if o.delivered)
    ending = outcome_log(key("done"), len(review.plan.tasks), done)
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "last", final.text, agent_name="project_manager",
                             started_at=started, meta={"offline": final.offline, "model": final.model},
                             documents=[NewDocument(stored_id(f), contents) for f, contents in attached],
                             **_stats(final.usage + spent, seconds))],
        logs=[*fallback, ending],
        event=Event.FINISH if ending.status == "completed" else Event.FAIL,
        also=await remembering(rt, workflow_id, PriorRound.of(
            round_no, request=review.inp.prompt, answer=answer.strip(), plan=review.plan, outcomes=ran.outcomes,
            final=final.text, finished=True, messages=messages)),
    )


async def remembering(rt: Runtime, workflow_id: str, ended: PriorRound) -> Callable[[Connection], None] | None:
    """What later rounds remember of the round that ends (its turns shortened, with their token counts),
    from the typed values its end holds (`PriorRound.of`): stored once, in the write that ends it."""
    try:
        return await rt.rounds.memory.remembering(workflow_id, ended)
    except Exception as exc:  # noqa: BLE001 - the next round that reaches it computes it instead
        log.warning("Round %s of workflow %s: its memory was not stored (%s); a later round computes it.",
                    ended.round, workflow_id, exc)
        return None


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
