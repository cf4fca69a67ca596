"""The workflow state machine: one explicit table of legal transitions."""

from __future__ import annotations

from enum import StrEnum

from app.errors import ConflictError


class WorkflowStatus(StrEnum):
    """A workflow's status; the values are the wire strings."""

    RUNNING = "running"
    WAITING = "waiting"  # the round waits for the user (a plan to review, a question, a tool call)
    COMPLETED = "completed"
    STOPPED = "stopped"
    FAILED = "failed"
    DELETED = "deleted"


class Event(StrEnum):
    """What happens to a workflow."""

    START = "start"  # a new round is posted
    FINISH = "finish"  # the round delivered its last message
    STOP = "stop"  # the user stopped the round
    FAIL = "fail"  # the round broke
    DELETE = "delete"  # the user deleted the workflow
    WAIT = "wait"  # the round needs the user's decision to go on
    RESUME = "resume"  # the user decided; the round goes on
    REJECT = "reject"  # the user rejected what the round waited on
    EXPIRE = "expire"  # nobody decided within REVIEW_TIMEOUT_SECONDS


S, E = WorkflowStatus, Event

# None is "no workflow yet". Every legal move is listed here and nowhere else.
TRANSITIONS: dict[tuple[WorkflowStatus | None, Event], WorkflowStatus] = {
    (None, E.START): S.RUNNING,
    (S.RUNNING, E.FINISH): S.COMPLETED,
    (S.RUNNING, E.STOP): S.STOPPED,
    (S.RUNNING, E.FAIL): S.FAILED,
    (S.COMPLETED, E.START): S.RUNNING,
    (S.STOPPED, E.START): S.RUNNING,
    (S.FAILED, E.START): S.RUNNING,
    (S.RUNNING, E.DELETE): S.DELETED,
    (S.COMPLETED, E.DELETE): S.DELETED,
    (S.STOPPED, E.DELETE): S.DELETED,
    (S.FAILED, E.DELETE): S.DELETED,
    # Waiting for the user: the round holds nothing while it waits (see app.rounds.waiting).
    (S.RUNNING, E.WAIT): S.WAITING,
    (S.WAITING, E.RESUME): S.RUNNING,
    (S.WAITING, E.REJECT): S.STOPPED,
    (S.WAITING, E.EXPIRE): S.STOPPED,
    (S.WAITING, E.STOP): S.STOPPED,
    (S.WAITING, E.DELETE): S.DELETED,
}

_REASONS: dict[tuple[WorkflowStatus | None, Event], str] = {
    (S.RUNNING, E.START): "its current round is still running; wait for it or stop it first",
    (S.COMPLETED, E.STOP): "it has already completed; there is nothing to stop",
    (S.FAILED, E.STOP): "it has already failed; there is nothing to stop",
    (S.RUNNING, E.RESUME): "its round is running and waits for no decision",
    (S.RUNNING, E.REJECT): "its round is running and waits for no decision",
    (S.COMPLETED, E.RESUME): "its round has completed and waits for no decision",
    (S.STOPPED, E.RESUME): "its round was stopped and waits for no decision; post again to start a new one",
    (S.FAILED, E.RESUME): "its round failed and waits for no decision; post again to start a new one",
    (S.WAITING, E.WAIT): "its round already waits for a decision",
}


class TransitionError(ConflictError):
    """An event that is not legal in the workflow's current status."""

    code = "illegal_transition"

    def __init__(self, status: WorkflowStatus | None, event: Event) -> None:
        reason = _REASONS.get((status, event), "that is not a legal transition")
        shown = status.value if status else "new"
        super().__init__(f"Cannot {event.value} a workflow that is {shown}: {reason}.")
        self.status = status
        self.event = event


def next_status(status: WorkflowStatus | None, event: Event) -> WorkflowStatus:
    """The status after `event`, or TransitionError when the table has no such move."""
    try:
        return TRANSITIONS[(status, event)]
    except KeyError:
        raise TransitionError(status, event) from None


def sources(event: Event) -> list[WorkflowStatus]:
    """The statuses from which `event` is legal (what a compare-and-set may expect)."""
    return [s for (s, e) in TRANSITIONS if e is event and s is not None]
