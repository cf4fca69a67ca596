"""A round that waits for the user, durably and at no cost while it waits.

A round that needs a decision (its plan to review; later an agent's question or a tool call to
approve) writes what it waits for with the event WAIT, in the transaction of the message the
user answers, and its DBOS workflow ends there: a waiting round holds no round slot, no task,
no thread and no database connection, and nothing in memory, so a restart, a SIGKILL or a
takeover loses nothing. The decision (`app.services.review`) is a compare-and-set on the workflow row
that moves it back to running and starts the round's next part as a DBOS workflow of its own
(`round_id(..., segment)`), which reads the decision back and goes on (`app.rounds.resume`): the plan approved or
edited runs, a revision is planned and waits again. Nobody deciding within
REVIEW_TIMEOUT_SECONDS ends the round stopped (`expire_due`, from the engine's sweep).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from app.clock import now
from app.fsm import Event
from app.rounds.runtime import Runtime
from app.store.records import NewLog, Owner, Wait
from app.store.tables import WorkflowRow


async def _take_default(rt: Runtime, row: WorkflowRow, wait: dict[str, Any],
                        launch: Callable[[str, int, int], Awaitable[None]]) -> int:
    """A human node nobody decided on in time takes its default action, as a decision would."""
    action, node = str(wait["defaultAction"]), wait.get("nodeId", "?")
    record = {"decision": action, "kind": "node", "path": wait.get("path"), "fingerprint": "timeout"}
    patch = {"human": {**wait, "state": "timedOut", "action": action, "decidedAt": now().isoformat()}}
    log = NewLog(f"{row.id}:{row.current_round}:timeout:{row.segment + 1}",
                 f"Node {node}: no decision came in time; its default action {action} was taken",
                 agent_name="system", type="warning")
    decided = await rt.repo.waits.decide(Owner(row.mandate_id, row.user_id), row.id, "node", wait.get("messageId"),
                                         Event.RESUME, record, patch, [], [log])
    if decided is None or not decided.taken:
        return 0
    rt.journal.decided(decided, Event.RESUME)
    await launch(row.id, row.current_round, decided.workflow.segment)
    return 1


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
    what = {"plan": "The plan review", "question": "The agent's question", "tool": "The tool approval",
            "node": "The flow's human node"}[kind]
    return NewLog(f"{workflow_id}:{round_no}:expired", f"{what} expired: no decision came within "
                  f"REVIEW_TIMEOUT_SECONDS ({seconds:g} s); the round stopped. Post again to start a new round.",
                  type="warning", agent_name="system", progress=100, status="stopped")


async def expire_due(rt: Runtime, launch: Callable[[str, int, int], Awaitable[None]] | None = None) -> int:
    """End the rounds whose wait expired as stopped, each with a log saying so; a flow's human node with a
    `defaultAction` takes it instead, and its round goes on (`launch`). How many waits ended."""
    stamp = now()
    ended = 0
    for workflow_id, round_no in await rt.repo.waits.expired(stamp):
        row = await rt.repo.workflows.workflow(None, workflow_id)
        wait = (row.waiting_for or {}) if row else {}
        kind = wait.get("kind", "plan")
        if row is not None and kind == "node" and wait.get("defaultAction") and launch is not None:
            ended += await _take_default(rt, row, wait, launch)
            continue
        decided = await rt.repo.waits.expire(workflow_id, round_no, stamp, expiry_log(
            workflow_id, round_no, kind, rt.settings.review_timeout_seconds))
        rt.journal.decided(decided, Event.EXPIRE)
        ended += bool(decided and decided.taken)
    return ended
