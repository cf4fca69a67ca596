"""A round that waits for the user, in a plain chat (the OpenAI-compatible chat completions): the
completion ends with what the round waits for and how to answer it in the same chat; the next
turn of the conversation is the answer (a decision, as `POST /api/workflows/{id}/review` takes it),
and that completion follows the same round on from the decision.

A chat client knows no review endpoint, so a reply decides as a person would mean it: to a plan, a
clear yes approves it, a clear no rejects it, anything else is what to change (a revision); to a
question, the reply is the answer; to a tool call, a clear yes approves it, anything else rejects it
(the reply kept as why), as `app.services.review.chat_decision` takes a chat post.
"""

from __future__ import annotations

import json
from typing import Any

from app.contract.schemas import ReviewMode, ReviewRequest, WaitingFor, is_review_mode
from app.errors import BadRequestError
from app.protocols.rounds import Round, Rounds
from app.store.records import Owner

YES = {"yes", "y", "ok", "okay", "approve", "approved", "go", "go ahead", "do it", "run it", "run", "lgtm",
       "ja", "oui", "sí", "si"}
NO = {"no", "n", "reject", "rejected", "cancel", "stop", "don't", "do not", "nein", "non"}
ARGUMENTS_SHOWN = 2_000  # characters of a tool call's arguments shown in the chat


def _said(prompt: str) -> str:
    return " ".join(prompt.strip().lower().rstrip(".!").split())


def reply_decision(kind: str, prompt: str) -> ReviewRequest:
    """The decision a chat reply makes on a wait of `kind`."""
    said = _said(prompt)
    if kind == "question":
        return ReviewRequest(decision="answer", answer=prompt)
    if said in YES:
        return ReviewRequest(decision="approve")
    if kind == "plan" and said not in NO:
        return ReviewRequest(decision="revise", feedback=prompt)
    return ReviewRequest(decision="reject", feedback=None if said in NO else prompt)


def review_of(metadata: dict[str, str] | None) -> ReviewMode | None:
    """`metadata.foreman_review`: "plan" makes the turn's round wait for a review of its plan, "none" not."""
    review = (metadata or {}).get("foreman_review")
    if review is None:
        return None
    if not is_review_mode(review):
        raise BadRequestError(f"metadata.foreman_review must be 'plan' or 'none', not {str(review)[:40]!r}.",
                              code="bad_review_mode")
    return review


def continues(stored: list[str], history: list[str]) -> bool:
    """Whether a workflow whose user messages are `stored` is the conversation of `history` (its earlier
    user turns): the same texts in order, except turns that were a bare yes or no to a wait (an
    approval, or a rejection without a reason, leaves no user message)."""
    at = 0
    for turn in history:
        if at < len(stored) and stored[at] == turn:
            at += 1
        elif _said(turn) not in YES | NO:
            return False
    return at == len(stored)


async def start_or_answer(rounds: Rounds, owner: Owner, workflow_id: str | None, prompt: str, file_ids: list[int],
                          base_url: str, review: ReviewMode | None = None) -> Round:
    """The conversation's next round; or, when its round waits for the user and the turn has no files,
    the turn's decision on that wait and the same round from there."""
    if workflow_id is not None and not file_ids and prompt:
        row = await rounds.workflows.owned(owner, workflow_id)
        if row.status == "waiting" and row.waiting_for:
            return await rounds.decide(owner, workflow_id, reply_decision(row.waiting_for["kind"], prompt), base_url,
                                       row=row)
    return await rounds.start(owner, workflow_id, prompt, file_ids, base_url, review=review)


def wait_text(wait: WaitingFor) -> str:
    """What the round waits for and how to answer it in this chat, as Markdown."""
    return f"{what_waits(wait)}\n\n{REPLIES[wait.kind]}"


REPLIES = {"plan": "Reply *yes* to run it, *no* to reject it, or say what to change and the project manager "
                   "plans again.",
           "question": "Reply with your answer: the task goes on with it.",
           "tool": "Reply *yes* to approve the call; any other reply rejects it (your reply is kept as why), and "
                   "the round goes on without it."}


def what_waits(wait: WaitingFor) -> str:
    """What the round waits for, as Markdown: the plan, the agent's question, or the tool call."""
    if wait.kind == "plan":
        return "**The plan above waits for your review before it runs.**"
    who = f"The {wait.agent} agent" if wait.agent else "An agent"
    task = f" (task `{wait.task_id}`)" if wait.task_id else ""
    if wait.kind == "question":
        return f"**{who} asks{task}:** {wait.question or 'a question (see above).'}"
    return f"**{who} waits for your approval to run{task}:** {_call(wait.tool or {})}"


def _call(tool: dict[str, Any]) -> str:
    """A tool call as the user approves it: the tool (and its server) and the arguments."""
    name = ".".join(str(tool[k]) for k in ("server", "tool") if tool.get(k)) or str(tool.get("name") or "the task")
    arguments = tool.get("arguments")
    if not arguments:
        return f"`{name}`" + (" (its arguments are filled in after your approval)." if "tool" in tool else ".")
    shown = json.dumps(arguments, ensure_ascii=False, indent=2)
    if len(shown) > ARGUMENTS_SHOWN:
        shown = shown[:ARGUMENTS_SHOWN] + "\n…"
    return f"`{name}` with the arguments\n\n```json\n{shown}\n```"
