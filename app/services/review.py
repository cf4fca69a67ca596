"""The user's decisions on a waiting round (POST /api/workflows/{id}/review, or a chat post while it
waits): approve, revise, edit or reject a plan; answer or reject an agent's question; approve or
reject a task that needs approval. No HTTP here; the round side is `app.rounds.waiting` and
`app.rounds.asking`."""

from __future__ import annotations

import functools
import hashlib
from typing import Any, get_args

import msgspec

from agents.errors import PlanEditError
from agents.round import EditedPlan
from app.clock import now
from app.contract.filenames import clean_name
from app.contract.schemas import Decision, ReviewRequest, WorkflowStatusView, is_decision
from app.contract.views import DECISIONS, status_view, waiting_view
from app.errors import BadRequestError, ConflictError
from app.fsm import Event, WorkflowStatus
from app.rounds.records import plan_of
from app.store.records import NewLog, NewMessage, Owner
from app.store.repository.messages import updates_key
from app.store.tables import WorkflowRow

_STATES = {"approve": "approved", "revise": "revised", "edit": "edited", "reject": "rejected", "answer": "answered"}
_LOGS = {"approve": "Plan approved by user", "revise": "Plan revision requested by user",
         "edit": "Plan edited by user", "reject": "Plan rejected by user"}
_META = {"plan": "review", "question": "question", "tool": "approval", "node": "human"}  # where the answered message keeps its state
_YES = {"yes", "y", "ok", "okay", "approve", "approved", "go ahead", "do it", "run it", "ja", "oui", "sí", "si"}


class Reviews:
    """Takes each decision once, as a compare-and-set on the waiting round; its next part starts at once."""

    def __init__(self, workflows: Any) -> None:
        self.workflows = workflows  # app.services.workflows.WorkflowService
        self.rt = workflows.rt
        self.repo = workflows.repo

    async def decide(self, owner: Owner, workflow_id: str, body: ReviewRequest) -> WorkflowStatusView:
        """Take the decision, or say why it does not fit (409 with what the round waits for); the same
        decision posted again right after answers 200 with the current status."""
        self._check(body)
        row = await self.workflows.owned(owner, workflow_id)
        fingerprint = _fingerprint(body)
        wait = row.waiting_for or {}
        _check_decision(row, body)
        if not self._fits(row, body):
            return self._repeated_or_conflict(row, body, fingerprint)
        round_no, kind = row.current_round, wait["kind"]
        # A flow's human nodes may wait at once: the decision answers the one whose message it names.
        answered = body.message_id if kind == "node" and body.message_id is not None else wait["messageId"]
        message = await self.repo.messages.message(workflow_id, answered)
        if message is None:
            raise ConflictError(f"The message this round waits on was deleted; {_RECOVER[kind]}",
                                code="decision_does_not_fit", extra=_state(row))
        field = _META[kind]
        kept = {} if kind == "plan" else dict(message.meta.get(field) or {})  # a question's text, a task's call
        state: dict[str, Any] = {**kept, "state": "decided" if kind == "node" else _STATES[body.decision],
                                 "decidedAt": now().isoformat(), **({"action": body.decision} if kind == "node" else {})}
        patch: dict[str, Any] = {field: state}
        record: dict[str, Any] = {"decision": body.decision, "fingerprint": fingerprint, "kind": kind,
                                  **({"path": kept.get("path", wait.get("path"))} if kind == "node" else {})}
        messages: list[NewMessage] = []
        segment = row.segment + 1
        base = f"{workflow_id}:{round_no}:decision:{segment}"
        if body.decision == "edit":
            edited = await self._edited(workflow_id, round_no, message, body.plan)
            patch |= {"plan": edited.record, "proposedPlan": message.meta.get("plan"), "content": edited.message}
        said = ((body.answer if body.decision == "answer" else body.feedback) or "").strip()
        if said:
            record["answer" if body.decision == "answer" else "feedback"] = said
            state["answer" if body.decision == "answer" else "feedback"] = said
            messages.append(NewMessage(f"{base}:message", "user", "step", said,
                                       meta={"review": {"decision": body.decision, "messageId": answered}}))
        # A task not approved fails and the round goes on; a human node's "reject" is one of its branches.
        reject = body.decision == "reject" and kind in ("plan", "question")
        log = NewLog(updates_key(f"{base}:log", answered), _log_of(kind, body, message.meta, patch),
                     agent_name="system", progress=100 if reject else None, status="stopped" if reject else "")
        event = Event.REJECT if reject else Event.RESUME
        decided = await self.repo.waits.decide(owner, workflow_id, kind, body.message_id, event, record, patch,
                                               messages, [log])
        if decided is None:
            raise self.workflows.no_workflow(workflow_id)
        if not decided.taken:  # another decision came first
            return self._repeated_or_conflict(decided.workflow, body, fingerprint)
        self.rt.journal.decided(decided, event)
        after = decided.workflow
        if event is Event.RESUME:
            await self.workflows.engine.launch(workflow_id, round_no, after.segment)
        return status_view(after)

    def _check(self, body: ReviewRequest) -> None:
        limit = self.rt.settings.max_prompt_chars
        for name in ("feedback", "answer"):
            value = getattr(body, name)
            if value is not None and len(value) > limit:
                raise BadRequestError(f"{name} has {len(value):,} characters; at most {limit:,} are accepted "
                                      "(MAX_PROMPT_CHARS).", code="prompt_too_long")
            if value is not None and "\x00" in value:
                raise BadRequestError(f"{name} must not contain NUL characters (\\u0000).", code="nul_character")
        if body.decision == "revise" and not (body.feedback or "").strip():
            raise BadRequestError("A revise decision needs `feedback`: say what the plan should change.",
                                  code="feedback_required")
        if body.decision == "edit" and body.plan is None:
            raise BadRequestError("An edit decision needs `plan`: {\"tasks\": [...], \"finalDocuments\": [...]}, "
                                  "in the shape of the plan message's metadata.plan.", code="plan_required")
        if body.decision == "answer" and not (body.answer or "").strip():
            raise BadRequestError("An answer decision needs `answer`: the answer to the agent's question.",
                                  code="answer_required")

    @staticmethod
    def _fits(row: WorkflowRow, body: ReviewRequest) -> bool:
        wait = row.waiting_for or {}
        if wait.get("kind") == "node":
            node = waiting_node(wait, body.message_id)
            return row.status == WorkflowStatus.WAITING and node is not None and body.decision in node["actions"]
        allowed = DECISIONS.get(wait.get("kind", ""), ())
        return (row.status == WorkflowStatus.WAITING and body.decision in allowed
                and body.message_id in (None, wait.get("messageId")))

    @staticmethod
    def _repeated_or_conflict(row: WorkflowRow, body: ReviewRequest, fingerprint: str) -> WorkflowStatusView:
        if (row.decision or {}).get("fingerprint") == fingerprint:
            return status_view(row)  # the same decision again: it was taken
        wait = waiting_view(row)
        if wait is None:
            reason = f"the workflow is {row.status} and waits for no decision"
        elif body.message_id not in (None, wait.message_id):
            reason = f"it waits on message {wait.message_id}, not {body.message_id}"
        else:
            reason = f"it waits for a {wait.kind} decision ({', '.join(wait.decisions)}), not {body.decision}"
        raise ConflictError(f"This decision does not fit: {reason}. See waitingFor for what the round waits for.",
                            code="decision_does_not_fit", extra=_state(row))

    async def _edited(self, workflow_id: str, round_no: int, message: Any, raw: dict[str, Any] | None) -> EditedPlan:
        """The user's plan, checked by the Runner by the rules a model's plan is: 400 listing every problem."""
        try:
            edited: EditedPlan = await self.rt.runner.edited(
                raw, plan_of(message), functools.partial(self.rt.rounds.round_input, workflow_id, round_no),
                functools.partial(clean_name, fallback="document"))
        except PlanEditError as exc:
            listed = exc.problems
            raise BadRequestError(f"The edited plan cannot run ({len(listed)} problem"
                                  f"{'' if len(listed) == 1 else 's'}): " + "; ".join(listed) + ". Nothing was changed.",
                                  code="invalid_plan", extra={"problems": listed}) from None
        return edited


_RECOVER = {"plan": "reject it or stop the round.", "question": "reject the question or stop the round.",
            "tool": "reject the task or stop the round.", "node": "stop the round."}


def waiting_node(wait: dict[str, Any], message_id: int | None) -> dict[str, Any] | None:
    """The human node of a flow a decision is for: the one asking in `message_id` (none: the first)."""
    nodes: list[dict[str, Any]] = wait.get("nodes") or [wait]
    if message_id is None:
        return nodes[0]
    return next((n for n in nodes if n.get("messageId", wait.get("messageId")) == message_id), None)


def _check_decision(row: WorkflowRow, body: ReviewRequest) -> None:
    """400 for a decision no wait takes: on a human node, one it does not offer (it still waits); elsewhere
    a word that is not a decision."""
    wait = row.waiting_for or {}
    if row.status == WorkflowStatus.WAITING and wait.get("kind") == "node":
        node = waiting_node(wait, body.message_id)
        if node is None:
            return  # no node waits on that message: the 409 of a decision that does not fit
        actions = list(node.get("actions") or [])
        if body.decision not in actions:
            raise BadRequestError(f"Node {node.get('nodeId')} offers {', '.join(actions)}; {body.decision[:40]!r} is "
                                  "not one of them. The round still waits.", code="unknown_action",
                                  extra={"actions": actions})
    elif not is_decision(body.decision):
        raise BadRequestError(f"decision must be one of {', '.join(get_args(Decision))}, not {body.decision[:40]!r}.",
                              code="invalid_body")


def _log_of(kind: str, body: ReviewRequest, meta: dict[str, Any], patch: dict[str, Any]) -> str:
    """The decision's log: what was decided, on what."""
    if kind == "node":
        node = (meta.get("human") or {}).get("nodeId", "?")
        return f"Node {node}: the user chose {body.decision}"
    if kind == "plan":
        count = len(patch["plan"]["tasks"]) if body.decision == "edit" else 0
        return _LOGS[body.decision] + (f": {count} task{'' if count == 1 else 's'}" if body.decision == "edit" else "")
    task = (meta.get(_META[kind]) or {}).get("taskId", "?")
    if kind == "question":
        return (f"Question answered by user (task {task})" if body.decision == "answer"
                else f"Question rejected by user (task {task}): the round stopped")
    return (f"Task {task} approved by user" if body.decision == "approve"
            else f"Task {task} rejected by user: it is not run and fails with the user's reason")


def _fingerprint(body: ReviewRequest) -> str:
    return hashlib.sha256(msgspec.json.encode(msgspec.to_builtins(body), order="sorted")).hexdigest()


def _state(row: WorkflowRow) -> dict[str, Any]:
    wait = waiting_view(row)
    return {"status": row.status, "currentRound": row.current_round,
            "waitingFor": msgspec.to_builtins(wait) if wait else None}


def chat_decision(row: WorkflowRow, prompt: str) -> ReviewRequest:
    """A chat post while the round waits: a revision of the plan, the answer to a question, or on a
    task that needs approval a clear yes (approve) or anything else (reject, with the post as why)."""
    kind = (row.waiting_for or {}).get("kind")
    if kind == "question":
        return ReviewRequest(decision="answer", answer=prompt)
    if kind == "tool":
        yes = prompt.strip().lower().rstrip(".!") in _YES
        return ReviewRequest(decision="approve") if yes else ReviewRequest(decision="reject", feedback=prompt)
    return ReviewRequest(decision="revise", feedback=prompt)



