"""A task that waits for the user: an agent's question (kind "question") or a task whose agent needs
the user's approval before it runs (kind "tool", `Registry.needs_approval`).

Such a task is parked: it does not run (or its result, a question, is not written as its outcome),
no new task starts, the tasks already running end, and then the round writes what it waits for
(a `step` message the user answers, with the event WAIT) and its DBOS workflow ends, as under plan
review (`app.rounds.waiting`): the wait holds nothing. The decision starts the round's next part
(`app.rounds.resume`), which runs the plan on: finished tasks are read back and never run again, an
approved task runs, a rejected one is not run and says so, and an agent that asked runs again with
the question and the answer in `TaskContext.answers`. Each wait's message is keyed by the task (and,
for questions, by how many it asked), so a part replayed after a crash writes nothing twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents.base import Plan, TaskSpec
from agents.errors import AgentsError
from agents.questions import MAX_QUESTIONS
from app.fsm import Event
from app.rounds.runtime import Runtime
from app.store.records import NewLog, NewMessage, Wait

NOT_APPROVED = "not run: you did not approve it"


@dataclass
class Parked:
    """A task that waits for the user: its question, or the tool call to approve."""

    task: TaskSpec
    kind: str  # "question" or "tool"
    question: str = ""
    tool: dict[str, Any] = field(default_factory=dict)
    tokens: int = 0


def _key(workflow_id: str, round_no: int, *parts: object) -> str:
    return ":".join([workflow_id, str(round_no), *map(str, parts)])


async def _messages(rt: Runtime, workflow_id: str, round_no: int, prefix: str) -> list[Any]:
    return [m for m, _ in await rt.repo.messages.round_messages(workflow_id, round_no,
                                                                _key(workflow_id, round_no, prefix))]


async def approval(rt: Runtime, workflow_id: str, round_no: int, task: TaskSpec) -> str:
    """The user's decision on running `task`: "" when its agent needs none, "approved", "rejected",
    or "wanted" (not asked yet, or still pending)."""
    if not rt.registry.needs_approval(task.agent):
        return ""
    asked = await _messages(rt, workflow_id, round_no, f"approve:{task.id}:")
    state = asked[0].meta.get("approval", {}).get("state", "pending") if asked else ""
    return state if state in ("approved", "rejected") else "wanted"


async def answers(rt: Runtime, workflow_id: str, round_no: int, task_id: str) -> list[tuple[str, str]]:
    """The questions the task's agent asked in this round and the user's answers, in order."""
    asked = await _messages(rt, workflow_id, round_no, f"ask:{task_id}:")
    return [(m.meta["question"]["text"], m.meta["question"]["answer"]) for m in asked
            if m.meta.get("question", {}).get("state") == "answered"]


def check_asked(task: TaskSpec, answered: list[tuple[str, str]]) -> None:
    """An agent that asks again after MAX_QUESTIONS answers fails its task (it would never end)."""
    if len(answered) >= MAX_QUESTIONS:
        raise AgentsError(f"the {task.agent} agent asked the user more than {MAX_QUESTIONS} questions "
                          "for one task")


async def not_approved(rt: Runtime, workflow_id: str, round_no: int, plan: Plan, task: TaskSpec, number: int) -> str:
    """Write that `task` was not run because the user did not approve it (its outcome: read back as a
    failed task after a crash, so it is neither run nor asked about again); the reason."""
    key = lambda *p: _key(workflow_id, round_no, "task", task.id, *p)  # noqa: E731
    said = f"Task {number}/{len(plan.tasks)} ({task.agent}) {NOT_APPROVED}."
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "step", said, agent_name=task.agent,
                             meta={"taskId": task.id, "failed": True, "notApproved": True, "error": NOT_APPROVED})],
        logs=[NewLog(key("error"), said, type="warning", agent_name=task.agent)])
    return NOT_APPROVED


async def park(rt: Runtime, workflow_id: str, round_no: int, parked: list[Parked]) -> None:
    """The round waits for the user on the first parked task (the others ask again once it goes on)."""
    first = parked[0]
    task = first.task
    if first.kind == "question":
        number = len(await _messages(rt, workflow_id, round_no, f"ask:{task.id}:")) + 1
        key = lambda *p: _key(workflow_id, round_no, "ask", task.id, number, *p)  # noqa: E731
        text = first.question
        meta = {"question": {"state": "pending", "taskId": task.id, "text": text}}
        extra: dict[str, Any] = {"question": text, "taskId": task.id, "agent": task.agent}
        log = f"Waiting for your answer: the {task.agent} agent asks (task {task.id}): {text}"
    else:
        key = lambda *p: _key(workflow_id, round_no, "approve", task.id, *p)  # noqa: E731
        text = (f"Task {task.id} ({task.agent}) needs your approval before it runs: {task.instructions}\n\n"
                "Approve it to run it, or reject it: the round then goes on without it.")
        meta = {"approval": {"state": "pending", "taskId": task.id, "tool": first.tool}}
        extra = {"tool": first.tool, "taskId": task.id, "agent": task.agent}
        log = f"Waiting for your approval: task {task.id} ({task.agent}) runs only once you approve it"
    wait = Wait(first.kind, key("message"), rt.settings.review_timeout_seconds, extra)
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "step", text, agent_name=task.agent, meta=meta,
                             tokens_used=first.tokens)],
        logs=[NewLog(key("waiting"), log, agent_name=task.agent)], event=Event.WAIT, wait=wait)
