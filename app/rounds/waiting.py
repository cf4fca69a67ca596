"""A round that waits for the user, durably and at no cost while it waits.

A round that needs a decision (its plan to review; later an agent's question or a tool call to
approve) writes what it waits for with the event WAIT, in the transaction of the message the
user answers, and its DBOS workflow ends there: a waiting round holds no round slot, no task,
no thread and no database connection, and nothing in memory, so a restart, a SIGKILL or a
takeover loses nothing. The decision (`app.services.review`) is a compare-and-set on the workflow row
that moves it back to running and starts the round's next part as a DBOS workflow of its own
(`round_id(..., segment)`), which reads the decision back and goes on: the plan approved or
edited runs, a revision is planned and waits again. Nobody deciding within
REVIEW_TIMEOUT_SECONDS ends the round stopped (`expire_due`, from the engine's sweep).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from app.clock import now
from app.fsm import Event
from app.rounds import workflow as rounds
from app.rounds.draining import gated
from app.rounds.inputs import plan_of
from app.rounds.runtime import Runtime
from app.store.records import NewLog, Wait


def plan_wait(rt: Runtime, key: Callable[..., str]) -> Wait:
    """The wait for the user's review of the plan whose message is `key("message")`."""
    return Wait("plan", key("message"), rt.settings.review_timeout_seconds)


def plan_review_meta(wait: Wait | None, revision: str) -> dict[str, Any]:
    """What a plan message says about its review (nothing when it runs at once)."""
    meta: dict[str, Any] = {"review": {"state": "pending"}} if wait else {}
    if revision:
        meta["revision"] = revision
    return meta


def wait_logs(wait: Wait | None, key: Callable[..., str]) -> list[NewLog]:
    """The log that the round now waits for the user, and what they may do."""
    if wait is None:
        return []
    return [NewLog(key("waiting"), "Waiting for your review of the plan: approve it, edit it, ask for changes "
                                   "or reject it", agent_name="project_manager", progress=25)]


def expiry_log(workflow_id: str, round_no: int, kind: str, seconds: float) -> NewLog:
    """The last log of a round whose wait expired."""
    what = {"plan": "The plan review", "question": "The agent's question", "tool": "The tool approval"}[kind]
    return NewLog(f"{workflow_id}:{round_no}:expired", f"{what} expired: no decision came within "
                  f"REVIEW_TIMEOUT_SECONDS ({seconds:g} s); the round stopped. Post again to start a new round.",
                  type="warning", agent_name="system", progress=100, status="stopped")


async def go_on(rt: Runtime, workflow_id: str, round_no: int, segment: int) -> None:
    """The round's part after the user's `segment`-th decision: run the plan approved (or edited), or
    plan again with the feedback and wait again. A part that is no longer the round's current one
    (replayed after a crash, after a later decision) runs nothing."""
    row = await rt.repo.workflows.workflow(None, workflow_id)
    if row is None or row.status != "running" or row.current_round != round_no or row.segment != segment:
        return
    decision = row.decision or {}
    message = await rt.repo.messages.message(workflow_id, decision.get("messageId", 0))
    if message is None:
        await rounds.fail_step(rt, workflow_id, round_no, "The plan the decision was about is no longer there.")
        return
    if decision.get("decision") == "revise":
        inp = await rt.rounds.round_input(workflow_id, round_no)
        feedback = decision.get("feedback", "").strip()
        inp = replace(inp, prompt=f"{inp.prompt}\n\n{feedback}".strip(),
                      history=[*inp.history, ("user", inp.prompt), ("assistant", message.content)])
        key = lambda *p: rounds.round_key(workflow_id, round_no, "plan", f"s{segment}", *p)  # noqa: E731
        await gated(rounds.write_plan)(rt, workflow_id, round_no, inp, key, review=True,
                                       revision=f"revised at the user's request: {feedback}")
        return
    plan = plan_of(message)
    inp = await rt.rounds.round_input(workflow_id, round_no)
    planned = rounds.Planned(plan, message.tokens_used, rounds.reused_of(plan, inp), resumed=True)
    await rounds.execute(rt, workflow_id, round_no, planned)


async def expire_due(rt: Runtime) -> int:
    """End the rounds whose wait expired as stopped, each with a log saying so; how many ended."""
    stamp = now()
    ended = 0
    for workflow_id, round_no in await rt.repo.waits.expired(stamp):
        row = await rt.repo.workflows.workflow(None, workflow_id)
        kind = (row.waiting_for or {}).get("kind", "plan") if row else "plan"
        decided = await rt.repo.waits.expire(workflow_id, round_no, stamp, expiry_log(
            workflow_id, round_no, kind, rt.settings.review_timeout_seconds))
        rt.journal.decided(decided, Event.EXPIRE)
        ended += bool(decided and decided.taken)
    return ended
