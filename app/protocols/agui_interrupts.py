"""AG-UI's interrupts for a round that waits for the user (a plan review, an agent's question, a tool
call to approve, a flow's human node): the run ends with RUN_FINISHED whose outcome is `interrupt`,
naming what the round waits for (its `interruptId` stable: `review-<id of the message waited on>`);
the thread's next run answers it with a `resume` entry, taken as a review decision (the REST API's
POST .../review), once: an entry for an interrupt that is not outstanding (unknown, or already
resolved) is a RUN_ERROR and decides nothing. `forwardedProps.review` asks a run's round to wait for
its plan's review; `forwardedProps.flow` (`{"id", "version"?, "inputs"}`) runs a saved flow instead
of a prompt, its node states in the run's state (`nodes`).
"""

from __future__ import annotations

from typing import Any

import msgspec
from ag_ui.core import Interrupt, ResumeEntry

from app.contract.schemas import (
    FlowStartBody,
    ReviewMode,
    ReviewRequest,
    StartRequest,
    WaitingFor,
    is_decision,
    is_review_mode,
)
from app.contract.views import waiting_view
from app.errors import BadRequestError, ConflictError, NotFoundError
from app.protocols.rounds import Round, Rounds
from app.rounds.live import Position
from app.store.records import Owner
from app.store.tables import WorkflowRow

INTERRUPT = "review-"  # an interrupt's id: this and the id of the message the round waits on
REASONS = {"plan": "plan_review", "question": "agent_question", "tool": "tool_approval", "node": "human_node"}
PROMPTS = {"plan": "Review the work plan before it runs: approve it, revise it (with feedback), edit it (with "
                   "a plan) or reject it.",
           "tool": "An agent asks to run a tool: approve or reject the call."}


def interrupt_of(wait: WaitingFor, run: Round, asked: str | None = None) -> Interrupt:
    """What a waiting round waits for, as AG-UI's interrupt: answered by the next run's `resume` entry
    for its id, whose payload is a review decision (`decision`, and `feedback`, `plan` or `answer`)."""
    schema = {"type": "object", "required": ["decision"], "properties": {
        "decision": {"enum": list(wait.decisions)}, "feedback": {"type": "string"},
        "answer": {"type": "string"}, "plan": {"type": "object"}}}
    return Interrupt(id=f"{INTERRUPT}{wait.message_id}", reason=REASONS.get(wait.kind, wait.kind),
                     message=asked or wait.question or PROMPTS.get(wait.kind), response_schema=schema,
                     expires_at=wait.expires_at.isoformat().replace("+00:00", "Z"),
                     metadata={"workflowId": run.workflow_id, "round": run.round, "messageId": wait.message_id,
                               "kind": wait.kind, "tool": wait.tool,
                               **({"nodeId": wait.nodes[0].get("nodeId")} if wait.kind == "node" and wait.nodes else {})})


def decisions_of(resume: list[ResumeEntry]) -> list[ReviewRequest]:
    """The review decisions of a run's `resume`, one per entry, in its order (several when a flow's human
    nodes in parallel branches wait at once); a cancelled interrupt rejects."""
    ids = [entry.interrupt_id for entry in resume]
    if not resume or len(set(ids)) != len(ids) or not all(
            i.startswith(INTERRUPT) and i[len(INTERRUPT):].isascii() and i[len(INTERRUPT):].isdigit()
            and len(i) < 30 for i in ids):
        raise BadRequestError(f"resume must answer the interrupts the thread's last run ended with, each once (ids "
                              f"like '{INTERRUPT}12').", code="bad_resume")
    return [_decision(entry, int(entry.interrupt_id[len(INTERRUPT):])) for entry in resume]


def _decision(entry: ResumeEntry, message_id: int) -> ReviewRequest:
    payload = entry.payload if isinstance(entry.payload, dict) else {}
    if entry.status == "cancelled":
        return ReviewRequest(decision="reject", message_id=message_id, feedback=_text(payload, "feedback"))
    decision = payload.get("decision") or ("answer" if payload.get("answer") else "approve")
    if not is_decision(decision) and not (isinstance(decision, str) and 0 < len(decision) <= 100):
        raise BadRequestError(f"The resume payload's decision must be approve, revise, edit, reject, answer or a "
                              f"human node's action, not {str(decision)[:40]!r}.", code="bad_resume")
    plan = payload.get("plan")
    return ReviewRequest(decision=decision, message_id=message_id, feedback=_text(payload, "feedback"),
                         answer=_text(payload, "answer"), plan=plan if isinstance(plan, dict) else None)


def answerable(wait: WaitingFor) -> list[int]:
    """The messages a decision may answer now: each human node's waiting at once, else the one waited on."""
    ids = [n.get("messageId") for n in wait.nodes or []] if wait.kind == "node" else []
    return [i for i in ids if isinstance(i, int)] or [wait.message_id]


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


async def outstanding(rounds: Rounds, owner: Owner, workflow_id: str, decisions: list[ReviewRequest]
                      ) -> tuple[WorkflowRow, WaitingFor]:
    """The workflow and what the resume answers, when each of its entries is an interrupt the thread's
    round waits on now; else a ConflictError: an interrupt already resolved (its decision was taken:
    resuming again decides nothing) or unknown."""
    row = await rounds.workflows.owned(owner, workflow_id)
    wait = waiting_view(row)
    open_ids = answerable(wait) if wait is not None else []
    for message_id in (d.message_id for d in decisions):
        if message_id in open_ids:
            continue
        if message_id <= row.last_message_id:
            raise ConflictError(f"The interrupt '{INTERRUPT}{message_id}' was already resolved; nothing was decided "
                                "again.", code="interrupt_resolved")
        raise ConflictError(f"There is no interrupt '{INTERRUPT}{message_id}' on this thread.",
                            code="unknown_interrupt")
    if wait is None:  # no entry at all: decisions_of refuses that
        raise BadRequestError("resume names no interrupt.", code="bad_resume")
    return row, wait


def flow_of(props: Any) -> FlowStartBody | None:
    """`forwardedProps.flow`: a saved flow to run (as POST /api/workflows/start's `flow`)."""
    flow = props.get("flow") if isinstance(props, dict) else None
    if flow is None:
        return None
    try:
        return msgspec.convert(flow, FlowStartBody)
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"forwardedProps.flow does not fit {{id, version?, inputs}}: {exc}.",
                              code="bad_request") from None


async def start_flow(rounds: Rounds, owner: Owner, workflow_id: str, flow: FlowStartBody, base: str) -> Round:
    """The flow's run as the thread's next round (or its first)."""
    position, tokens, existing = Position(), 0, True
    try:
        row = await rounds.workflows.owned(owner, workflow_id)
        position, tokens = Position(row.last_message_id, row.last_log_id), row.tokens_used
    except NotFoundError:
        existing = False
    request = StartRequest(flow=flow)
    answer = await rounds.workflows.start(owner, workflow_id if existing else None, request, None,
                                          None if existing else workflow_id)
    return Round(owner, answer["id"], answer["currentRound"], position, tokens, base)


class NodeStates:
    """A flow round's node runs as an AG-UI run's state has them (`nodes`), read incrementally: each read
    fetches only the runs settled since the last one (without their records), and the run sends only what
    changed (reading and replacing the whole list at every change made a flow run cost 1.2-1.4x its REST
    run's server CPU; bench/protocol_flows.py)."""

    def __init__(self, rounds: Rounds, run: Round) -> None:
        self.rounds, self.run = rounds, run
        self.index: dict[str, int] = {}  # each node's place in `nodes`
        self.waiting: set[str] = set()  # human nodes shown waiting (a node run is kept only once it ends)
        self.since = 0  # the last `seq` read: runs settled at once may share it, so reads begin there

    async def snapshot(self) -> list[dict[str, Any]]:
        """The node states so far."""
        return [state for _, state in await self.changes()]

    async def changes(self, wait: WaitingFor | None = None) -> list[tuple[int | None, dict[str, Any]]]:
        """What changed since the last read, as (None, a node's state to add) or (its index, its new state):
        runs settled since and, with `wait`, the human nodes the round waits on."""
        changed: list[tuple[int | None, dict[str, Any]]] = []
        for state in await self.rounds.workflows.flows.node_states(self.run.workflow_id, self.run.round, self.since):
            self.since = max(self.since, state.seq)
            value = {"nodeId": state.path, "type": state.type, "status": state.status, "attempts": state.attempts,
                     **({"branch": state.branch} if state.branch else {})}
            if state.path in self.waiting:
                self.waiting.discard(state.path)
                changed.append((self.index[state.path], value))
            elif state.path not in self.index:
                self.index[state.path] = len(self.index)
                changed.append((None, value))
        for node in (wait.nodes or []) if wait is not None and wait.kind == "node" else []:
            path = node.get("path")
            if isinstance(path, str) and path not in self.index:
                self.index[path] = len(self.index)
                self.waiting.add(path)
                changed.append((None, {"nodeId": path, "type": "human", "status": "waiting", "attempts": 1}))
        return changed
