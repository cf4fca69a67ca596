"""A round's part after the user's decision (see `app.rounds.waiting`): the plan approved or edited runs,
a revision is planned and waits again; after an answered question or a task approved or not, the
round's plan runs on (`app.rounds.asking`)."""

from __future__ import annotations

from app.rounds import steps
from app.rounds import workflow as rounds
from app.rounds.flow_run import run_flow
from app.rounds.records import plan_of
from app.rounds.runtime import Runtime


async def go_on(rt: Runtime, workflow_id: str, round_no: int, segment: int) -> None:
    """The round's part after the user's `segment`-th decision: run the plan approved (or edited), or
    plan again with the feedback and wait again. A part that is no longer the round's current one
    (replayed after a crash, after a later decision) runs nothing."""
    row = await rt.repo.workflows.workflow(None, workflow_id)
    if row is None or row.status != "running" or row.current_round != round_no or row.segment != segment:
        return
    decision = row.decision or {}
    if decision.get("kind") == "node":  # a human node of a flow decided: the flow runs on
        flow = await rt.rounds.flow_of(workflow_id, round_no)
        await run_flow(rt, workflow_id, round_no, flow or {}, decision)
        return
    if decision.get("kind") in ("question", "tool"):
        await _run_on(rt, workflow_id, round_no)
        return
    message = await rt.repo.messages.message(workflow_id, decision.get("messageId", 0))
    if message is None:
        await rounds.fail_step(rt, workflow_id, round_no, "The plan the decision was about is no longer there.")
        return
    if decision.get("decision") == "revise":
        inp = await rt.rounds.round_input(workflow_id, round_no)
        feedback = decision.get("feedback", "").strip()
        inp = rt.runner.revising(inp, plan_of(message), message.content, feedback)
        key = steps.step_keys(workflow_id, round_no, "plan", f"s{segment}")
        await rounds.execute(rt, workflow_id, round_no, steps.ToPlan(
            inp, key, review=True, revision=f"revised at the user's request: {feedback}"))
        return
    plan = plan_of(message)
    inp = await rt.rounds.round_input(workflow_id, round_no)
    planned = steps.Planned(plan, message.tokens_used, steps.reused_of(plan, inp), resumed=True)
    await rounds.execute(rt, workflow_id, round_no, planned)


async def _run_on(rt: Runtime, workflow_id: str, round_no: int) -> None:
    """The round's plan (the last one its manager wrote and the user let run) goes on: finished tasks
    are read back, revisions made so far hold, the task the decision was about runs (or not)."""
    rows = await rt.repo.messages.round_messages(workflow_id, round_no, steps.round_key(workflow_id, round_no, "plan", ""))
    plans = [m for m, _ in rows if "plan" in m.meta]
    if not plans:
        await rounds.fail_step(rt, workflow_id, round_no, "The plan the round ran is no longer there.")
        return
    plan = plan_of(plans[-1])
    inp = await rt.rounds.round_input(workflow_id, round_no)
    planned = steps.Planned(plan, plans[-1].tokens_used, steps.reused_of(plan, inp), resumed=True)
    await rounds.execute(rt, workflow_id, round_no, planned)
