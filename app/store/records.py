"""What callers hand the repository and get back: owners, new messages and logs, costs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

from app.fsm import WorkflowStatus
from extractors.base import ContentItem, Extraction

if TYPE_CHECKING:
    from app.store.tables import DocumentRow, ExtractionRow, FileRow, LogRow, MessageRow, WorkflowRow

# The key of a task's message meta under which the round engine keeps the task's outcome as a typed record
# (`app.rounds.records.TaskRecord`): the server's own, never on the wire (`app.contract.views.message_view`).
TASK_RECORD = "_task"


@dataclass(frozen=True, slots=True)
class StoredMemory:
    """A round's memory row as read back (`round_memory`, `app.store.tables.RoundMemoryRow`'s columns)."""

    round: int
    turns: list[list[Any]]
    delivered: list[list[Any]]
    size: int
    finished: bool
    terms: str


@dataclass(frozen=True)
class Owner:
    """Who is asking: objects of other owners do not exist for them."""

    mandate_id: int
    user_id: int


@dataclass(frozen=True, slots=True)
class RoundRequest:
    """What a round was started with: its prompt, its files and their passwords, and whether its plan
    waits for the user's review ("plan")."""

    prompt: str
    file_ids: list[int]
    passwords: dict[str, str]
    review: str = ""
    flow: dict[str, Any] | None = None  # a flow run: {id, version, hash, inputs}


@dataclass
class NewDocument:
    """A file to attach to a new message, with its content items.

    `file` is a file to create with the message (an agent's output): its row is written in the
    message's transaction, and not at all when the message was written before, so no file row
    exists that no message references.
    """

    file_id: int = 0
    contents: list[ContentItem] = field(default_factory=list)
    file: Any = None  # a FileRow without id


@dataclass
class NewMessage:
    """A message to append; `key` is derived from the round and the step that writes it."""

    key: str
    role: str
    status: str
    content: str
    agent_name: str = ""
    started_at: datetime | None = None
    bytes_sent: int = 0
    bytes_received: int = 0
    tokens_used: int = 0
    processing_time: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    documents: list[NewDocument] = field(default_factory=list)


@dataclass
class NewLog:
    """A log entry to append; `key` as for messages."""

    key: str
    message: str
    type: str = "info"
    agent_name: str = ""
    progress: int | None = None
    status: str = ""  # defaults to the workflow's status after the append


@dataclass(frozen=True)
class Wait:
    """What a round starts to wait for, written with the event WAIT: the kind, the message the user
    answers (by its key: it is written in the same transaction), how long the wait may last, and
    what else the user needs to see (a question's text, a tool call)."""

    kind: str  # "plan", "question" or "tool"
    message_key: str
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Decided:
    """What a decision found: the workflow after it, and whether it was taken (False: the round did
    not wait for this decision, or no longer)."""

    workflow: WorkflowRow
    taken: bool
    written: Appended | None = None


@dataclass(frozen=True)
class Cost:
    """What model calls cost that no message carries (a plan that failed, say)."""

    bytes_sent: int = 0
    bytes_received: int = 0
    tokens_used: int = 0
    processing_time: float = 0.0


@dataclass
class Appended:
    """What an append wrote: ids of new rows (a replayed key yields none) and the status after."""

    message_ids: list[int]
    log_ids: list[int]
    status: WorkflowStatus
    last_message_id: int
    last_log_id: int
    before: WorkflowStatus | None = None
    file_ids: list[int] = field(default_factory=list)  # the files created with the messages, in order


@dataclass
class Stopped:
    """What a stop found and did: the workflow as the stop's transaction left it, and what that wrote
    (None when the workflow was not running, so nothing was)."""

    workflow: WorkflowRow
    written: Appended | None


@dataclass
class LivePage:
    """What an event stream reads in one snapshot: the workflow row and the items after its cursors."""

    workflow: WorkflowRow
    messages: list[tuple[MessageRow, list[DocumentRow]]]
    files: dict[int, FileRow]
    logs: list[tuple[LogRow, int | None]]  # with the id of the message the log's transaction filled in
    updated: dict[int, tuple[MessageRow, list[DocumentRow]]]  # those messages as they are now


def extraction_from_row(row: ExtractionRow) -> Extraction:
    return Extraction(mime=row.mime, status=row.status, items=msgspec.convert(row.items, list[ContentItem]),
                      warnings=list(row.warnings))


def stored_items(raw: list[dict[str, Any]]) -> list[ContentItem]:
    """A message document's content items as its row stores them.

    Rows written before items were stored as they are hold the wire's shape (camelCase, the
    flags inside `metadata`); they read as the same items.
    """
    if raw and "sequenceNr" in raw[0]:
        raw = [_from_wire(item) for item in raw]
    return msgspec.convert(raw, list[ContentItem])


def _from_wire(item: dict[str, Any]) -> dict[str, Any]:
    meta = dict(item.get("metadata") or {})
    is_text, base64_encoded = meta.pop("isText", True), meta.pop("base64Encoded", False)
    meta.pop("aiProcessed", None)
    return {"sequence_nr": item["sequenceNr"], "name": item["name"], "ext": item["ext"],
            "content_type": item["contentType"], "data": item["data"], "is_text": is_text,
            "base64_encoded": base64_encoded, "summary": item.get("summary", ""), "metadata": meta}
