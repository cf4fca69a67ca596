"""Steering a running round (multitaskStrategy "steer"): the user's post is a user message of the round
(keyed `<workflow>:<round>:steer:<token>`); before the round starts another task, and once its tasks
have ended, it looks for such messages and the project manager revises the unfinished part of the plan
with them. Finished tasks keep their results and never run again; a steer is not a failure, so it does
not count against MAX_REPLANS. The revision is a `step` message that says what changed."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from agents.base import Plan
from agents.errors import PlanError
from agents.manager import PlanLimits, make_plan
from agents.model import ModelError
from agents.plan import validate_plan
from agents.replan import Revision, merge_revision, revision_prompt
from app.rounds.replanning import write_revision
from app.rounds.runtime import Runtime
from app.store.records import NewLog
from app.store.tables import MessageRow

DEFERRED = "deferred: the user steered the round before it started"


def steer_prefix(workflow_id: str, round_no: int) -> str:
    return f"{workflow_id}:{round_no}:steer:"


async def pending(rt: Runtime, workflow_id: str, round_no: int, handled: set[int]) -> list[MessageRow]:
    """The user's steering messages of the round that no revision has taken up yet, oldest first."""
    rows = await rt.repo.messages.round_messages(workflow_id, round_no, steer_prefix(workflow_id, round_no))
    return [m for m, _ in rows if m.role == "user" and m.id not in handled]


async def handled_so_far(rt: Runtime, workflow_id: str, round_no: int) -> tuple[set[int], int]:
    """The steering messages the round's revisions took up, and how many revisions were steers (a resumed round)."""
    rows = await rt.repo.messages.round_messages(workflow_id, round_no, f"{workflow_id}:{round_no}:replan:")
    steers = [m.meta["revision"]["steer"] for m, _ in rows if m.meta.get("revision", {}).get("steer")]
    return {i for ids in steers for i in ids}, len(steers)


async def revise(rt: Runtime, workflow_id: str, round_no: int, plan: Plan, outcomes: dict[str, Any],
                 steers: list[MessageRow], number: int) -> Revision:
    """Plan the unfinished part again with the user's new request, write the revision and return it."""
    ids = {t.id for t in plan.tasks}
    done = {t: o for t, o in outcomes.items() if t in ids and o.ok}
    request = "\n".join(m.content for m in steers)
    inp = await rt.rounds.round_input(workflow_id, round_no)
    uploads = [d.name for d in inp.documents if not d.problem]
    started, t0 = rt.clock(), time.perf_counter()
    offline = rt.model.offline
    # A real model sees the plan so far and what finished; the offline model plans from the new request.
    prompt = request if offline else (revision_prompt(inp.prompt, plan, {t: o.text for t, o in done.items()}, {}, {})
                                      + f"\n\nThe user asked, while the plan ran: {request}")
    usage, merged = None, None
    try:
        outcome = await make_plan(replace(inp, prompt=prompt), rt.model, rt.registry,
                                  PlanLimits(max_tasks=rt.settings.max_tasks_per_plan))
        usage = outcome.usage
        merged = merge_revision(plan, outcome.plan, set(done), ids | set(outcomes), number)
        if validate_plan(merged, rt.registry.names(), uploads, rt.settings.max_tasks_per_plan + len(done)):
            merged = None
    except (PlanError, ModelError):
        merged = None
    unfinished = [t.id for t in plan.tasks if t.id not in done]
    quoted = request if len(request) <= 160 else request[:157] + "..."
    if merged is None:  # the request is noted; nothing better could be planned
        revision = Revision(plan, f"the user asked “{quoted}” during the round; the plan could not be "
                                  "revised with it and goes on unchanged")
    else:
        added = [t.id for t in merged.tasks if t.id not in done]
        changes = ([f"unfinished task{'s' if len(unfinished) > 1 else ''} {', '.join(unfinished)} replaced by "
                    f"{', '.join(added) or 'nothing'}"] if unfinished else [f"added {', '.join(added) or 'nothing'}"])
        if done:
            changes.append(f"finished {', '.join(sorted(done))} kept")
        revision = Revision(merged, f"the user asked “{quoted}” during the round; " + "; ".join(changes),
                            dropped=unfinished, added=added)
    await write_revision(rt, workflow_id, round_no, revision, key_part=f"s{number}",
                         heading="Plan revised at your request",
                         log=NewLog("", f"Work plan revised at the user's request: {revision.why}",
                                    agent_name="project_manager"),
                         meta={"number": number, "steer": [m.id for m in steers]}, offline=offline, usage=usage,
                         started=started, t0=t0)
    return revision
