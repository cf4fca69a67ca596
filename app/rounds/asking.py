"""A task that waits for the user: an agent's question (kind "question") or a task whose agent needs
the user's approval before it runs (kind "tool", `Registry.needs_approval`).

Such a task is parked: it does not run (or its result, a question, is not written as its outcome;
an agent that needs approval and has `prepare` makes its call ready first, e.g. a tool's arguments,
and that is stored with the wait and shown),
no new task starts, the tasks already running end, and then the round writes what it waits for
(a `step` message the user answers, with the event WAIT) and its DBOS workflow ends, as under plan
review (`app.rounds.waiting`): the wait holds nothing. The decision starts the round's next part
(`app.rounds.resume`), which runs the plan on: finished tasks are read back and never run again, an
approved task runs with what was prepared (read back from the wait's message, so a restart changes
nothing of it), a rejected one is not run and fails with the user's reason (re-planned like any
failure), and an agent that asked runs again with
the question and the answer in what the task sees (`Runner.run_task`'s `answers`). Each wait's message is keyed by the task (and,
for questions, by how many it asked), so a part replayed after a crash writes nothing twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from agents.base import Plan, TaskSpec
from app.fsm import Event
from app.rounds.records import TaskRecord, task_meta
from app.rounds.runtime import Runtime
from app.store.records import NewLog, NewMessage, Wait

NOT_APPROVED = "you did not approve it"
WAITS = "waits for the user"  # the outcome of a task parked for an answer or an approval


@dataclass
class Parked:
    """A task that waits for the user: its question, or the tool call to approve."""

    task: TaskSpec
    kind: str  # "question" or "tool"
    question: str = ""
    tool: dict[str, Any] = field(default_factory=dict)
    tokens: int = 0
    prepared: dict[str, Any] | None = None  # what the agent's `prepare` made ready (kind "tool")


@dataclass
class Approval:
    """The user's decision on running a task: `state` "" (its agent needs none), "wanted" (not asked
    yet, or pending), "approved" or "rejected"; what was prepared and shown; the user's reason."""

    state: str = ""
    prepared: dict[str, Any] | None = None
    feedback: str = ""

    @property
    def wanted(self) -> bool:
        """Whether the task waits for it: its run only makes ready what the user approves (`meta["prepared"]`:
        the round parks the task with it). Approved, the run gets what was prepared."""
        return self.state == "wanted"


def _key(workflow_id: str, round_no: int, *parts: object) -> str:
    return ":".join([workflow_id, str(round_no), *map(str, parts)])


async def _messages(rt: Runtime, workflow_id: str, round_no: int, prefix: str) -> list[Any]:
    return [m for m, _ in await rt.repo.messages.round_messages(workflow_id, round_no,
                                                                _key(workflow_id, round_no, prefix))]


async def approval(rt: Runtime, workflow_id: str, round_no: int, task: TaskSpec) -> Approval | None:
    """The user's decision on running `task` (None when its agent needs none), read from the wait's message."""
    if not rt.runner.registry.needs_approval(task.agent):
        return None
    asked = await _messages(rt, workflow_id, round_no, f"approve:{task.id}:")
    meta = asked[0].meta.get("approval", {}) if asked else {}
    state = meta.get("state", "pending")
    return Approval(state if state in ("approved", "rejected") else "wanted", meta.get("prepared"),
                    str(meta.get("feedback") or ""))


async def answers(rt: Runtime, workflow_id: str, round_no: int, task_id: str) -> list[tuple[str, str]]:
    """The questions the task's agent asked in this round and the user's answers, in order."""
    asked = await _messages(rt, workflow_id, round_no, f"ask:{task_id}:")
    return [(m.meta["question"]["text"], m.meta["question"]["answer"]) for m in asked
            if m.meta.get("question", {}).get("state") == "answered"]


async def not_approved(rt: Runtime, workflow_id: str, round_no: int, plan: Plan, task: TaskSpec, number: int,
                       feedback: str = "", then: list[NewLog] | None = None) -> str:
    """Write that `task` failed because the user did not approve it, with their reason (its outcome:
    read back as a failed task after a crash, so it is neither run nor asked about again; re-planned
    like any failure); `then`: logs of what follows, written with it. The reason."""
    key = partial(_key, workflow_id, round_no, "task", task.id)
    reason = f"{NOT_APPROVED}: {feedback}" if feedback else NOT_APPROVED
    said = f"Task {number}/{len(plan.tasks)} ({task.agent}) failed: {reason}"
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "step", said, agent_name=task.agent,
                             meta={**task_meta(TaskRecord(task.id, ok=False, error=reason)), "notApproved": True})],
        logs=[NewLog(key("error"), said, type="error", agent_name=task.agent), *(then or [])])
    return reason


async def park(rt: Runtime, workflow_id: str, round_no: int, parked: list[Parked]) -> None:
    """The round waits for the user on the first parked task (the others ask again once it goes on)."""
    first = parked[0]
    task = first.task
    if first.kind == "question":
        number = len(await _messages(rt, workflow_id, round_no, f"ask:{task.id}:")) + 1
        key = partial(_key, workflow_id, round_no, "ask", task.id, number)
        text = first.question
        meta: dict[str, Any] = {"question": {"state": "pending", "taskId": task.id, "text": text}}
        extra: dict[str, Any] = {"question": text, "taskId": task.id, "agent": task.agent}
        log = f"Waiting for your answer: the {task.agent} agent asks (task {task.id}): {text}"
    else:
        key = partial(_key, workflow_id, round_no, "approve", task.id)
        text = (f"Task {task.id} ({task.agent}) needs your approval before it runs: {task.instructions}\n\n"
                + (f"It will be called with: {json.dumps(first.tool['arguments'], ensure_ascii=False)}\n\n"
                   if isinstance(first.tool.get("arguments"), dict) else "")
                + "Approve it to run it, or reject it (say why): it then fails with your reason, and the "
                  "plan may be revised around it.")
        meta = {"approval": {"state": "pending", "taskId": task.id, "tool": first.tool,
                             **({"prepared": first.prepared} if first.prepared is not None else {})}}
        extra = {"tool": first.tool, "taskId": task.id, "agent": task.agent}
        log = f"Waiting for your approval: task {task.id} ({task.agent}) runs only once you approve it"
    wait = Wait(first.kind, key("message"), rt.settings.review_timeout_seconds, extra)
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "step", text, agent_name=task.agent, meta=meta,
                             tokens_used=first.tokens)],
        logs=[NewLog(key("waiting"), log, agent_name=task.agent)], event=Event.WAIT, wait=wait)
