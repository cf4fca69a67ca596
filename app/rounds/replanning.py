"""Re-planning, bounded: when a task failed or was skipped, the project manager revises the rest of the
plan (at most MAX_REPLANS times a round, within its token budget). The revision is a `step` message
listing every task of the new plan, with why; finished tasks keep their results and never run again."""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from datetime import timedelta
from typing import Any

from agents.base import Plan
from agents.model import Usage
from agents.round import Revision
from app.fsm import Event
from app.rounds import waiting
from app.rounds.records import plan_of, record_of
from app.rounds.runtime import Runtime
from app.store.records import NewLog, NewMessage
from app.store.tables import stored_id


def replan_key(workflow_id: str, round_no: int, number: int | str, *parts: object) -> str:
    return ":".join([workflow_id, str(round_no), "replan", str(number), *map(str, parts)])


async def revisions_so_far(rt: Runtime, workflow_id: str, round_no: int) -> tuple[Plan | None, list[str]]:
    """The latest revised plan of the round and why each revision was made (a round resumed after a crash)."""
    rows = await rt.repo.messages.round_messages(workflow_id, round_no, f"{workflow_id}:{round_no}:replan:")
    plans = [m for m, _ in rows if "plan" in m.meta]
    whys = [m.meta.get("revision", {}).get("why", "") for m in plans]
    if not plans:
        return None, whys
    # A plan the user had made again (a revise of a revision under review) is newer than the revision.
    planned = await rt.repo.messages.round_messages(workflow_id, round_no, f"{workflow_id}:{round_no}:plan:")
    if any(stored_id(m) > stored_id(plans[-1]) and "plan" in m.meta for m, _ in planned):
        return None, whys
    return plan_of(plans[-1]), whys


async def write(rt: Runtime, workflow_id: str, round_no: int, revision: Revision, usage: Usage | None,
                number: int, seconds: float) -> bool:
    """Journal the plan the Runner revised after failures (`agents.round.Runner.replan`); True: it waits
    for the user's review (the round's plan was reviewed, so each revision of it is too)."""
    limit = rt.settings.max_replans
    review = await under_review(rt, workflow_id, round_no)
    revision.review = review
    await write_revision(rt, workflow_id, round_no, revision, key_part=number,
                         heading=f"Plan revised ({number} of at most {limit})",
                         log=NewLog("", f"Work plan revised ({number} of at most {limit}): {revision.why}",
                                    type="warning", agent_name="project_manager"),
                         meta={"number": number}, offline=rt.model.offline, usage=usage, seconds=seconds)
    return review


async def under_review(rt: Runtime, workflow_id: str, round_no: int) -> bool:
    """Whether the round's plan was reviewed by the user: then each revision of it waits for review too."""
    rows = await rt.repo.messages.round_messages(workflow_id, round_no, f"{workflow_id}:{round_no}:plan:")
    return any("review" in m.meta for m, _ in rows)


async def write_revision(rt: Runtime, workflow_id: str, round_no: int, revision: Revision, *,
                         key_part: int | str, heading: str, log: NewLog, meta: dict[str, Any], offline: bool,
                         usage: Usage | None, seconds: float) -> None:
    """Journal a revised plan: the manager's step message (the plan, why, what changed) and its log;
    `seconds`: what revising it took."""
    text = f"{heading}: {revision.why}.\n\n{revision.work_plan}"
    key = functools.partial(replan_key, workflow_id, round_no, key_part)
    spent = usage or Usage()
    wait = waiting.plan_wait(rt, key) if revision.review else None
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "step", text, agent_name="project_manager",
                             started_at=rt.clock() - timedelta(seconds=seconds), processing_time=round(seconds, 6),
                             meta={"plan": revision.record, "language": revision.plan.language,
                                   "offline": offline, "revision": {**meta, "why": revision.why,
                                                                    "dropped": revision.dropped,
                                                                    "added": revision.added},
                                   **({"review": {"state": "pending"}} if wait else {})},
                             tokens_used=spent.total_tokens, bytes_sent=spent.bytes_sent,
                             bytes_received=spent.bytes_received)],
        logs=[replace(log, key=key("done")), *waiting.wait_logs(wait, key)],
        event=Event.WAIT if wait else None, wait=wait)


async def with_dropped(rt: Runtime, workflow_id: str, round_no: int,
                       plan: Plan) -> tuple[Plan, dict[str, str], dict[str, str]]:
    """The last plan with the tasks its revisions dropped without a replacement (a task that failed or
    was skipped, whose id and `-r` successors the last plan no longer has), and why each failed or was
    skipped: the final review counts them as planned and not delivered, so a round whose planned work
    all failed never reads as completed because a revision left less to do. Read from the journal,
    so a round resumed after a crash counts the same."""
    prefix = f"{workflow_id}:{round_no}:"
    rows = await rt.repo.messages.round_messages(workflow_id, round_no, prefix)
    specs = {t.id: t for m, _ in rows if "plan" in m.meta and m.key and
             m.key.startswith((f"{prefix}plan:", f"{prefix}replan:")) for t in plan_of(m).tasks}
    kept = {t.id for t in plan.tasks}
    failed: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for m, _ in rows:
        record = record_of(m)
        tid = record.task_id if record else ""
        if record is None or tid not in specs or _base(tid) in {_base(k) for k in kept}:
            continue
        if record.skipped:
            skipped[tid] = record.error
        elif not record.ok:
            failed[tid] = record.error or m.content
    lost = [specs[t] for t in specs if t in failed or t in skipped]
    return (replace(plan, tasks=lost + list(plan.tasks)) if lost else plan), failed, skipped


def _base(task_id: str) -> str:
    """The id a task had before revisions renamed it (`t1-r1`, `t1-r2`: `t1`)."""
    return re.sub(r"(-r\d+)+$", "", task_id)


def revisions_note(revisions: list[str]) -> str:
    """The final message's account of the revisions, one line each."""
    if not revisions:
        return ""
    lines = [f"**Plan revised {len(revisions)} time{'' if len(revisions) == 1 else 's'}:**"]
    lines += [f"{n}. {why}" for n, why in enumerate(revisions, 1)]
    return "\n".join(lines)
