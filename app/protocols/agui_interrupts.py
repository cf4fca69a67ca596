"""AG-UI's interrupts for a round that waits for the user (a plan review, an agent's question, a tool
call to approve): the run ends with RUN_FINISHED whose outcome is `interrupt`, naming what the round
waits for; the thread's next run answers it with a `resume` entry, taken as a review decision (the
REST API's POST .../review). `forwardedProps.review` asks a run's round to wait for its plan's review.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import Interrupt, ResumeEntry

from app.contract.schemas import ReviewMode, ReviewRequest, WaitingFor, is_decision, is_review_mode
from app.errors import BadRequestError
from app.protocols.rounds import Round

INTERRUPT = "review-"  # an interrupt's id: this and the id of the message the round waits on
REASONS = {"plan": "plan_review", "question": "agent_question", "tool": "tool_approval"}
PROMPTS = {"plan": "Review the work plan before it runs: approve it, revise it (with feedback), edit it (with "
                   "a plan) or reject it.",
           "tool": "An agent asks to run a tool: approve or reject the call."}


def interrupt_of(wait: WaitingFor, run: Round) -> Interrupt:
    """What a waiting round waits for, as AG-UI's interrupt: answered by the next run's `resume` entry
    for its id, whose payload is a review decision (`decision`, and `feedback`, `plan` or `answer`)."""
    schema = {"type": "object", "required": ["decision"], "properties": {
        "decision": {"enum": list(wait.decisions)}, "feedback": {"type": "string"},
        "answer": {"type": "string"}, "plan": {"type": "object"}}}
    return Interrupt(id=f"{INTERRUPT}{wait.message_id}", reason=REASONS.get(wait.kind, wait.kind),
                     message=wait.question or PROMPTS.get(wait.kind), response_schema=schema,
                     expires_at=wait.expires_at.isoformat().replace("+00:00", "Z"),
                     metadata={"workflowId": run.workflow_id, "round": run.round, "messageId": wait.message_id,
                               "kind": wait.kind, "tool": wait.tool})


def decision_of(resume: list[ResumeEntry]) -> ReviewRequest:
    """The review decision of a run's `resume` (one entry: a round waits for one thing at a time);
    a cancelled interrupt rejects."""
    if len(resume) != 1 or not resume[0].interrupt_id.startswith(INTERRUPT) \
            or not resume[0].interrupt_id[len(INTERRUPT):].isdigit():
        raise BadRequestError(f"resume must answer the one interrupt the thread's last run ended with (an id like "
                              f"'{INTERRUPT}12').", code="bad_resume")
    entry, message_id = resume[0], int(resume[0].interrupt_id[len(INTERRUPT):])
    payload = entry.payload if isinstance(entry.payload, dict) else {}
    if entry.status == "cancelled":
        return ReviewRequest(decision="reject", message_id=message_id, feedback=_text(payload, "feedback"))
    decision = payload.get("decision") or ("answer" if payload.get("answer") else "approve")
    if not is_decision(decision):
        raise BadRequestError(f"The resume payload's decision must be approve, revise, edit, reject or answer, not "
                              f"{str(decision)[:40]!r}.", code="bad_resume")
    plan = payload.get("plan")
    return ReviewRequest(decision=decision, message_id=message_id, feedback=_text(payload, "feedback"),
                         answer=_text(payload, "answer"), plan=plan if isinstance(plan, dict) else None)


def _text(payload: dict[str, Any], name: str) -> str | None:
    value = payload.get(name)
    return value if isinstance(value, str) else None


def review_of(props: Any) -> ReviewMode | None:
    """`forwardedProps.review`: "plan" makes the round wait for a review of its plan, "none" not."""
    review = props.get("review") if isinstance(props, dict) else None
    if review is None:
        return None
    if not is_review_mode(review):
        raise BadRequestError(f"forwardedProps.review must be 'plan' or 'none', not {str(review)[:40]!r}.",
                              code="bad_review_mode")
    return review
