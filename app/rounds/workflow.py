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

from dbos import DBOS

from agents.model import CallScope
from app.rounds import tracing
from app.rounds.attempts import run_attempts
from app.rounds.draining import gated
from app.rounds.flow_run import run_flow
from app.rounds.handle import current
from app.rounds.hooks import Hooks
from app.rounds.journal import reason_of
from app.rounds.runtime import Runtime
from app.rounds.steps import Planned, ToPlan, opening, round_key
from app.store.connections import unavailable
from app.store.full import storage_full
from app.store.ownership import ClaimLostError

# A crash or a takeover is not the round's fault: DBOS resumes it however often (`max_recovery_attempts=None`);
# errors inside the round count against ROUND_MAX_ATTEMPTS (`app.rounds.attempts`).

log = logging.getLogger("foreman.rounds")


def round_id(workflow_id: str, round_no: int, segment: int = 0) -> str:
    """The DBOS workflow id of a round (of its part after the user's `segment`-th decision): starting
    it twice runs it once."""
    return f"{workflow_id}:{round_no}" if not segment else f"{workflow_id}:{round_no}:{segment}"


@gated
async def fail_step(rt: Runtime, workflow_id: str, round_no: int, reason: str) -> None:
    """End the round as failed with an error log that says why."""
    await rt.journal.fail(workflow_id, round_no, reason, round_key(workflow_id, round_no, "failed"))


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
            # The round's model calls name it, draw on its budget, and, in a round resumed by this start, wait
            # for no optional warm-up (the vectors of a file in another language than a question,
            # `agents.knowledge.indexed`): under repeated crashes each start would wait again and the round
            # never get on (issue 51, item 11).
            with CallScope.entered(workflow=workflow_id, round_no=round_no,
                                   resumed=engine.resumed(workflow_id, round_no, segment),
                                   retries=rt.settings.round_retry_budget, tokens=rt.settings.max_round_tokens):
                async with asyncio.timeout(rt.settings.max_round_seconds):
                    with tracing.round_span(workflow_id, round_no):
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
    flow = await rt.rounds.flow_of(workflow_id, round_no)
    if flow is not None:  # a saved flow: the engine runs its definition, no planning call
        await run_flow(rt, workflow_id, round_no, flow)
        return
    await rt.runner.run(Hooks(rt, workflow_id, round_no, lambda: opening(rt, workflow_id, round_no)))


async def execute(rt: Runtime, workflow_id: str, round_no: int, planned: Planned | ToPlan) -> None:
    """A round's part after a decision: run the plan's tasks (those not finished yet), then the final step;
    or (`ToPlan`) plan again and wait for the user's review of the new plan."""

    async def given() -> Planned | ToPlan:
        return planned

    await rt.runner.run(Hooks(rt, workflow_id, round_no, given, decided=True))
