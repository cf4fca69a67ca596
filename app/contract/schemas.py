"""Request and response shapes on the wire (msgspec Structs, camelCase as in the contract)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, TypeGuard, get_args

import msgspec

MAX_ID = 2**63 - 1  # ids are 64-bit columns: anything outside is a 400, not a database overflow

FileIdValue = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]


MessageStatus = Literal["first", "step", "last"]
Role = Literal["user", "assistant", "system"]
LogType = Literal["info", "warning", "error"]
RoundStatus = Literal["running", "waiting", "completed", "stopped", "failed"]  # a workflow's status on the wire
WaitKind = Literal["plan", "question", "tool", "node"]
Decision = Literal["approve", "revise", "edit", "reject", "answer"]
ReviewMode = Literal["plan", "none"]


def is_decision(value: object) -> TypeGuard[Decision]:
    """Whether `value` (from JSON a protocol read) is a decision POST .../review takes."""
    return isinstance(value, str) and value in get_args(Decision)


def is_review_mode(value: object) -> TypeGuard[ReviewMode]:
    """Whether `value` (from JSON a protocol read) is a review mode a start takes."""
    return isinstance(value, str) and value in get_args(ReviewMode)


class Camel(msgspec.Struct, rename="camel", omit_defaults=False):
    """A wire object with camelCase field names."""


class DataStats(Camel):
    """What the model provider was sent and returned, and how long the work took."""

    bytes_sent: int
    bytes_received: int
    tokens_used: int
    processing_time: float


class ContentItem(Camel):
    """One extracted piece of a document."""

    sequence_nr: int
    name: str
    ext: str
    content_type: str
    data: str
    data_extracted: str | None
    metadata: dict[str, Any]
    summary: str


class Document(Camel):
    """A file attached to a message, with its extracted contents."""

    id: str
    file_id: int
    name: str
    ext: str
    mime_type: str
    size: int
    contents: list[ContentItem]
    data: str | None = None


class Message(Camel):
    """A chat message."""

    id: int
    workflow_id: str
    parent_message_id: int | None
    started_at: datetime
    finished_at: datetime | None
    sequence_no: int
    round: int
    status: MessageStatus
    role: Role
    data_stats: DataStats
    documents: list[Document]
    content: str
    agent_name: str
    metadata: dict[str, Any]


class LogEntry(Camel):
    """A log line of a workflow."""

    id: int
    workflow_id: str
    message: str
    type: LogType
    timestamp: datetime
    agent_name: str
    status: RoundStatus
    progress: Annotated[int, msgspec.Meta(ge=0, le=100)]
    round: int
    mandate_id: int
    user_id: int
    # The log that says a file was read was written with that file's contents, filled into its
    # round's user message (already delivered): the message to read again, if it still exists.
    updated_message_id: Annotated[int | None, msgspec.Meta(
        description="Set on the log that says a file was read: the id of the (earlier) user message its "
                    "contents were just filled into; read that message again. Null otherwise.")] = None


class WaitingFor(Camel):
    """What a `waiting` round waits for: the message to answer, since when and until when."""

    kind: WaitKind
    message_id: int
    since: datetime
    expires_at: datetime
    decisions: list[str]  # what POST .../review takes for it (a human node: its actions)
    question: str | None = None  # kind "question": what the agent asks
    tool: dict[str, Any] | None = None  # kind "tool": the call awaiting approval (name, arguments, what it does)
    task_id: str | None = None  # kinds "question" and "tool": the plan's task that waits
    agent: str | None = None  # kinds "question" and "tool": the agent that asks, or that waits for approval
    # kind "node": every human node of the flow waiting now ({nodeId, path, messageId, actions, defaultAction});
    # a decision names the one it answers by `messageId` (none: the first, the one `messageId` above names)
    nodes: list[dict[str, Any]] | None = None


class WorkflowSummary(Camel):
    """A workflow without its messages and logs (the list view)."""

    id: str
    mandate_id: int
    user_id: int
    name: str
    started_at: datetime
    status: RoundStatus
    last_activity: datetime
    data_stats: DataStats
    current_round: int
    progress: int
    waiting_for: WaitingFor | None
    review: ReviewMode  # the workflow's default for its rounds' plans ("plan": each waits for review)


class Workflow(WorkflowSummary):
    """The whole workflow object of the contract."""

    message_ids: list[int]
    messages: list[Message]
    logs: list[LogEntry]


class WorkflowList(Camel):
    """A page of the caller's workflows, newest activity first; pass `cursor` back for the next page."""

    items: list[WorkflowSummary]
    has_more: bool
    cursor: str | None


class Deleted(Camel):
    """The answer of every DELETE: what was deleted, and from where."""

    deleted: Literal["workflow", "message", "document"]
    workflow_id: str
    message_id: int | None
    file_id: int | None


class WorkflowStatusView(Camel):
    """The cheap status poll."""

    id: str
    status: RoundStatus
    last_activity: datetime
    current_round: int
    progress: int
    last_message_id: int
    last_log_id: int
    waiting_for: WaitingFor | None


class StartAnswer(Camel):
    """The answer to a start: the round runs in the background."""

    id: str
    status: Literal["running"]
    current_round: int
    queued: bool = False  # multitaskStrategy "enqueue": the post waits to run as the next round


class MessagePage(Camel):
    """Messages after a cursor."""

    items: list[Message]
    last_id: int
    has_more: bool


class LogPage(Camel):
    """Log entries after a cursor."""

    items: list[LogEntry]
    last_id: int
    has_more: bool


class FileInfo(Camel):
    """A stored file."""

    id: int
    name: str
    ext: str
    mime_type: str
    size: int
    created_at: datetime


class StartRequest(Camel, forbid_unknown_fields=False):
    """Start a workflow, or its next round when `?id=` names one."""

    prompt: str = ""
    list_file_id: list[FileIdValue] = []
    passwords: dict[str, str] = {}
    review: ReviewMode | None = None  # this round: "plan" waits for the user's review of the plan
    review_default: ReviewMode | None = None  # the workflow's default from now on (this round included)
    # A post while a round runs: refused (409), queued as the next round, or it stops the running round.
    multitask_strategy: Literal["reject", "enqueue", "interrupt", "steer"] = "reject"
    # Run a saved flow (CONTRACT.md "Flows"): {"id", "version"?, "inputs"}; no planning call.
    flow: FlowStartBody | None = None


class FlowStartBody(Camel, forbid_unknown_fields=True, kw_only=True):
    """Which flow a round runs, which version (none: the latest published; "draft": the draft), with what inputs."""

    id: Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]
    version: Annotated[int, msgspec.Meta(ge=1)] | Literal["draft"] | None = None
    inputs: dict[str, Any] = {}


class RenameRequest(Camel, forbid_unknown_fields=True):
    """A workflow's new name (`PATCH /api/workflows/{id}`): one line of 1 to 80 characters, no NUL."""

    name: str


class ReviewRequest(Camel, forbid_unknown_fields=True):
    """A decision on what a `waiting` round waits for (see `waitingFor`)."""

    # approve, revise, edit, reject, answer; on a flow's human node (waitingFor.kind "node") one of its actions
    decision: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    message_id: Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)] | None = None  # the message answered, to be sure
    feedback: str | None = None  # revise: what to change; reject: why (optional)
    plan: dict[str, Any] | None = None  # edit: {"tasks": [...], "finalDocuments": [...]}, as metadata.plan
    answer: str | None = None  # answer: the answer to an agent's question


class Health(msgspec.Struct):
    """The answer of /health and /ready."""

    status: str


class ErrorBody(msgspec.Struct):
    """Every error answer."""

    status_code: int
    detail: str
    code: str


class ConflictBody(ErrorBody):
    """A request the workflow's state does not allow: its status and round say why (both null for
    `idempotency_in_progress`, which is about the request, not a workflow's state)."""

    status: RoundStatus | None
    currentRound: int | None  # noqa: N815 (wire name)
    waitingFor: WaitingFor | None = None  # noqa: N815 (wire name); a decision that does not fit: what waits
