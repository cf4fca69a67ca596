"""A round as a durable DBOS workflow: plan, tasks (in parallel where they can), final.

Each step writes its messages and logs under keys derived from the round and the step, so a
step replayed after a crash writes nothing twice; DBOS replays finished steps from their
recorded results, so a crash resumes from the last finished step.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from dbos import DBOS

from agents.base import OutputFile, Plan, TaskContext, TaskResult
from agents.errors import PlanError
from agents.manager import PlanLimits, make_plan, render_plan_message, write_final
from agents.memory import reusable
from agents.model import ModelError, RetryBudget, Usage, use_budget, use_call_context
from agents.plan import schedule
from agents.runner import run_task
from app.documents import display_name
from app.engine import current
from app.fsm import Event
from app.journal import reason_of
from app.records import Cost, NewDocument, NewLog, NewMessage

MAX_RECOVERY_ATTEMPTS = 3


@dataclass
class TaskOutcome:
    """What a task step recorded: small, because DBOS keeps it in its system database."""

    task_id: str
    ok: bool
    text: str = ""
    files: list[int] = field(default_factory=list)
    tokens: int = 0
    error: str = ""


def _key(workflow_id: str, round_no: int, *parts: object) -> str:
    return ":".join([workflow_id, str(round_no), *map(str, parts)])


def _stats(usage: Usage, seconds: float) -> dict:
    return dict(bytes_sent=usage.bytes_sent, bytes_received=usage.bytes_received, tokens_used=usage.total_tokens,
                processing_time=round(seconds, 6))


def _cost(usage: Usage, seconds: float) -> Cost:
    return Cost(**_stats(usage, seconds))


@DBOS.step(name="foreman.plan")
async def plan_step(workflow_id: str, round_no: int) -> tuple[Plan, int, dict[str, TaskOutcome]] | None:
    """Extract the round's files, write the user's message; the project manager answers and plans.

    Extraction shares the planning step: a replay after a crash finds each file's contents in
    the extraction cache and the user's message already written, so it costs no second step.
    """
    rt = current()
    key = lambda *p: _key(workflow_id, round_no, "plan", *p)  # noqa: E731
    inp = await rt.rounds.prepare(workflow_id, round_no, then=[
        NewLog(key("start"), "Analyzing request and planning work", agent_name="project_manager", progress=10)])
    started, t0 = rt.clock(), time.perf_counter()
    limits = PlanLimits(max_tasks=rt.settings.max_tasks_per_plan)
    try:
        outcome = await make_plan(inp, rt.model, rt.registry, limits)
    except (PlanError, ModelError) as exc:
        await rt.journal.fail(workflow_id, round_no, f"Planning failed: {exc}", key("failed"),
                              cost=_cost(getattr(exc, "usage", Usage()), time.perf_counter() - t0))
        return None
    plan = outcome.plan
    # Tasks an interrupted previous round delivered are not run again: their results carry over.
    reused = {tid: TaskOutcome(tid, ok=True, text=t.text, files=list(t.files))
              for tid, t in reusable(plan, inp.previous).items()}
    previous_round = inp.previous.round if inp.previous else 0
    # Fixes made to the model's plan without asking it again are worth knowing about.
    repaired = [NewLog(key("repair", n), f"Work plan repaired: {fix}", type="warning",
                       agent_name="project_manager", progress=25)
                for n, fix in enumerate(outcome.repairs, 1)]
    answer_only = not plan.tasks  # the answer is the round's last message: no review to write
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "last" if answer_only else "step",
                             render_plan_message(plan), agent_name="project_manager", started_at=started,
                             meta={"offline": outcome.offline, "model": outcome.model, "language": plan.language,
                                   "plan": rt.rounds.plan_meta(plan)},
                             **_stats(outcome.usage, time.perf_counter() - t0))],
        logs=[*repaired,
              NewLog(key("done"), f"Work plan created: {len(plan.tasks)} task{'' if len(plan.tasks) == 1 else 's'}", agent_name="project_manager",
                     progress=25),
              *(NewLog(key("reused", tid), f"Task {tid} ({_agent(plan, tid)}) reused: "
                                           f"delivered in round {previous_round}", agent_name=_agent(plan, tid))
                for tid, o in reused.items()),
              *([NewLog(key("answered"), "Workflow completed successfully", agent_name="project_manager",
                        progress=100, status="completed")] if answer_only else [])],
        event=Event.FINISH if answer_only else None,
    )
    return None if answer_only else (plan, outcome.usage.total_tokens, reused)


def _agent(plan: Plan, task_id: str) -> str:
    return next((t.agent for t in plan.tasks if t.id == task_id), "")


@DBOS.step(name="foreman.task")
async def task_step(workflow_id: str, round_no: int, plan: Plan, task_id: str, number: int,
                    predecessors: dict[str, TaskOutcome]) -> TaskOutcome:
    """Run one task of the plan; a failure fails the task, not the round."""
    rt = current()
    task = next(t for t in plan.tasks if t.id == task_id)
    total = len(plan.tasks)
    key = lambda *p: _key(workflow_id, round_no, "task", task_id, *p)  # noqa: E731
    await rt.journal.append(workflow_id, round_no, logs=[
        NewLog(key("start"), f"Running task {number}/{total}: {task.agent}", agent_name=task.agent,
               progress=30 + 60 * (number - 1) // total)])
    started, t0 = rt.clock(), time.perf_counter()
    try:
        context = TaskContext(
            prompt=(inp := await rt.rounds.round_input(workflow_id, round_no)).prompt,
            language=plan.language,
            documents=await rt.rounds.documents_for(workflow_id, round_no, inp, predecessors),
            predecessors={tid: TaskResult(text=o.text) for tid, o in predecessors.items() if o.ok},
            model=rt.model,
            history=inp.history,
            retriever=rt.retriever,
        )
        with use_call_context(task=task_id):
            result = await run_task(rt.registry, task, context)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # an agent's failure is the task's, never the round's
        with use_call_context(task=task_id):  # the server log names the task that failed
            reason = reason_of(exc, f"the {task.agent} agent")
        usage = getattr(exc, "usage", Usage())
        await rt.journal.append(
            workflow_id, round_no,
            messages=[NewMessage(key("message"), "assistant", "step",
                                 f"Task {number}/{total} ({task.agent}) failed: {reason}", agent_name=task.agent,
                                 started_at=started, meta={"taskId": task_id, "failed": True},
                                 **_stats(usage, time.perf_counter() - t0))],
            logs=[NewLog(key("error"), f"Task {number}/{total} ({task.agent}) failed: {reason}", type="error",
                         agent_name=task.agent, progress=30 + 60 * number // total)],
        )
        return TaskOutcome(task_id, ok=False, error=reason, tokens=usage.total_tokens)
    files = await rt.rounds.store_outputs(workflow_id, round_no, result.files)
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "step", result.text, agent_name=task.agent,
                             started_at=started,
                             meta={**result.meta, "taskId": task_id, "offline": result.offline,
                                   "model": result.model},
                             documents=[NewDocument(f.id, contents) for f, contents in files],
                             **_stats(result.usage, time.perf_counter() - t0))],
        logs=[NewLog(key("done"), f"Task {number}/{total} done: {task.agent}", agent_name=task.agent,
                     progress=30 + 60 * number // total)],
    )
    return TaskOutcome(task_id, ok=True, text=result.text, files=[f.id for f, _ in files],
                       tokens=result.usage.total_tokens)


@DBOS.step(name="foreman.skip")
async def skip_step(workflow_id: str, round_no: int, task_id: str, agent: str, reason: str) -> None:
    """Tell the user a task was skipped because something it needs is missing: a warning and a step message."""
    key = lambda *p: _key(workflow_id, round_no, "skip", task_id, *p)  # noqa: E731
    label = f"Task {task_id} ({agent})"
    await current().journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "step", f"{label} was skipped: {reason}.",
                             agent_name=agent, meta={"taskId": task_id, "skipped": True})],
        logs=[NewLog(_key(workflow_id, round_no, "skip", task_id), f"{label} skipped: {reason}",
                     type="warning", agent_name=agent)])


@DBOS.step(name="foreman.final")
async def final_step(workflow_id: str, round_no: int, plan: Plan, outcomes: dict[str, TaskOutcome],
                     skipped: dict[str, str]) -> None:
    """The last message reviews what was delivered against the plan; the round completes."""
    rt = current()
    key = lambda *p: _key(workflow_id, round_no, "final", *p)  # noqa: E731
    await rt.journal.append(workflow_id, round_no, logs=[NewLog(key("start"), "Creating final response",
                                                                 agent_name="project_manager", progress=90)])
    inp = await rt.rounds.round_input(workflow_id, round_no)
    delivered_ids = [fid for o in outcomes.values() for fid in o.files]
    found = await rt.repo.files.files_by_id(delivered_ids)
    files = [found[i] for i in delivered_ids if i in found]
    delivered = [OutputFile(name=display_name(f), mime=f.mime, data=b"") for f in files]
    results = {tid: (TaskResult(text=o.text) if o.ok else None) for tid, o in outcomes.items()}
    started, t0 = rt.clock(), time.perf_counter()
    try:
        final = await write_final(inp, plan, results, skipped, delivered, rt.model,
                                  failures={tid: o.error for tid, o in outcomes.items() if not o.ok})
    except ModelError as exc:
        await rt.journal.fail(workflow_id, round_no, f"The final answer could not be written: {exc}", key("failed"),
                              cost=_cost(exc.usage, time.perf_counter() - t0))
        return
    attached = await rt.rounds.contents_of(files)
    done = sum(1 for o in outcomes.values() if o.ok)
    ending = outcome_log(key("done"), len(plan.tasks), done)
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "last", final.text, agent_name="project_manager",
                             started_at=started, meta={"offline": final.offline, "model": final.model},
                             documents=[NewDocument(f.id, contents) for f, contents in attached],
                             **_stats(final.usage, time.perf_counter() - t0))],
        logs=[ending],
        event=Event.FINISH if ending.status == "completed" else Event.FAIL,
    )


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


@DBOS.step(name="foreman.fail")
async def fail_step(workflow_id: str, round_no: int, reason: str) -> None:
    """End the round as failed with an error log that says why."""
    await current().journal.fail(workflow_id, round_no, reason, _key(workflow_id, round_no, "failed"))


@DBOS.workflow(name="foreman.round", max_recovery_attempts=MAX_RECOVERY_ATTEMPTS)
async def round_workflow(workflow_id: str, round_no: int) -> None:
    """One round of a workflow, from the user's message to the final answer."""
    rt = current()
    rt.track(workflow_id, asyncio.current_task())
    try:
        async with rt.slot(workflow_id, round_no):
            with use_budget(RetryBudget(rt.settings.round_retry_budget, tokens=rt.settings.max_round_tokens)):
                async with asyncio.timeout(rt.settings.max_round_seconds):
                    with use_call_context(workflow=workflow_id, round=round_no):
                        await _run(workflow_id, round_no)
    except TimeoutError:
        await fail_step(workflow_id, round_no,
                        f"The round took longer than MAX_ROUND_SECONDS ({rt.settings.max_round_seconds:g} s).")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # anything unforeseen fails the round with a log, never silently
        await fail_step(workflow_id, round_no, f"The round failed: {reason_of(exc, 'the round')}.")
    finally:
        rt.untrack(workflow_id, asyncio.current_task())


async def _run(workflow_id: str, round_no: int) -> None:
    rt = current()
    planned = await plan_step(workflow_id, round_no)
    if planned is None:
        return
    plan, tokens, reused = planned
    outcomes: dict[str, TaskOutcome] = dict(reused)
    skipped: dict[str, str] = {}
    numbers = {task.id: n for n, task in enumerate(plan.tasks, 1)}
    while True:
        done = {t for t, o in outcomes.items() if o.ok}
        failed = {t for t, o in outcomes.items() if not o.ok}
        ready, skip = schedule(plan, done, failed, set(skipped))
        if tokens > rt.settings.max_round_tokens:
            skip += [(task, "the round's token budget (MAX_ROUND_TOKENS) is spent") for task in ready]
            ready = []
        for task, reason in skip:
            skipped[task.id] = reason
            await skip_step(workflow_id, round_no, task.id, task.agent, reason)
        if not ready:
            if skip:
                continue  # what depends on the skipped tasks is skipped in the next pass
            break
        for start in range(0, len(ready), rt.settings.task_concurrency):
            wave = ready[start:start + rt.settings.task_concurrency]
            results = await asyncio.gather(*(
                task_step(workflow_id, round_no, plan, task.id, numbers[task.id],
                          {d: outcomes[d] for d in task.depends_on if d in outcomes})
                for task in wave))
            for outcome in results:
                outcomes[outcome.task_id] = outcome
                tokens += outcome.tokens
    await final_step(workflow_id, round_no, plan, outcomes, skipped)
