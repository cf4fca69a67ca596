"""Database rows as the wire objects of the contract.

The rows' text columns for statuses, roles, log types and review modes hold only the values the
contract's literals allow (each is written from one of them): the casts below say so to the type
checker, here where rows become wire objects."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import datetime
from typing import Any, cast

from app.clock import aware
from app.contract.schemas import (
    ContentItem,
    DataStats,
    Decision,
    Document,
    FileInfo,
    LogEntry,
    LogType,
    Message,
    MessageStatus,
    ReviewMode,
    Role,
    RoundStatus,
    WaitingFor,
    Workflow,
    WorkflowStatusView,
    WorkflowSummary,
)
from app.store.records import TASK_RECORD, stored_items
from app.store.tables import DocumentRow, FileRow, LogRow, MessageRow, WorkflowRow, stored_id


def stats_of(row: MessageRow | WorkflowRow) -> DataStats:
    return DataStats(bytes_sent=row.bytes_sent, bytes_received=row.bytes_received, tokens_used=row.tokens_used,
                     processing_time=round(row.processing_time, 6))


def file_info(row: FileRow) -> FileInfo:
    return FileInfo(id=stored_id(row), name=f"{row.name}.{row.ext}" if row.ext else row.name, ext=row.ext,
                    mime_type=row.mime, size=row.size, created_at=aware(row.created_at))


def document_view(doc: DocumentRow, file: FileRow | None, data: bytes | None = None,
                  include_data: bool = False) -> Document:
    # Base64 of binary items (images, embedded files) is as heavy as the file: only with includeData=true.
    contents = [
        ContentItem(sequence_nr=c.sequence_nr, name=c.name, ext=c.ext, content_type=c.content_type,
                    data=c.data if include_data or not c.base64_encoded else "", data_extracted=None,
                    metadata={**c.metadata, "isText": c.is_text, "base64Encoded": c.base64_encoded,
                              "aiProcessed": False},
                    summary=c.summary)
        for c in stored_items(doc.contents)
    ]
    return Document(id=doc.id, file_id=doc.file_id, name=file.name if file else "", ext=file.ext if file else "",
                    mime_type=file.mime if file else "", size=file.size if file else 0, contents=contents,
                    data=base64.b64encode(data).decode("ascii") if data is not None else None)


def message_view(row: MessageRow, docs: list[DocumentRow], files: dict[int, FileRow],
                 blobs: Callable[[FileRow], bytes] | None = None) -> Message:
    def data(file: FileRow | None) -> bytes | None:
        return blobs(file) if blobs is not None and file is not None else None

    return Message(
        id=stored_id(row), workflow_id=row.workflow_id, parent_message_id=row.parent_message_id,
        started_at=aware(row.started_at), finished_at=aware(row.finished_at), sequence_no=row.sequence_no,
        round=row.round, status=cast(MessageStatus, row.status), role=cast(Role, row.role), data_stats=stats_of(row),
        documents=[document_view(d, files.get(d.file_id), data(files.get(d.file_id)), blobs is not None)
                   for d in docs],
        content=row.content,
        agent_name=row.agent_name, metadata=wire_meta(row.meta),
    )


def wire_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A message's meta as clients see it: without the record the round engine keeps for itself (`TASK_RECORD`)."""
    return {k: v for k, v in meta.items() if k != TASK_RECORD} if TASK_RECORD in meta else meta


def log_view(row: LogRow, mandate_id: int, user_id: int, updated_message_id: int | None = None) -> LogEntry:
    return LogEntry(id=stored_id(row), workflow_id=row.workflow_id, message=row.message, type=cast(LogType, row.type),
                    timestamp=aware(row.timestamp), agent_name=row.agent_name, status=cast(RoundStatus, row.status),
                    progress=row.progress or 0, round=row.round, mandate_id=mandate_id, user_id=user_id,
                    updated_message_id=updated_message_id)


def summary_view(row: WorkflowRow) -> WorkflowSummary:
    return WorkflowSummary(id=row.id, mandate_id=row.mandate_id, user_id=row.user_id, name=row.name,
                           started_at=aware(row.started_at), status=cast(RoundStatus, row.status),
                           last_activity=aware(row.last_activity), data_stats=stats_of(row),
                           current_round=row.current_round, progress=row.progress,
                           waiting_for=waiting_view(row), review=cast(ReviewMode, row.review or "none"))


def workflow_view(row: WorkflowRow, messages: list[Message], logs: list[LogEntry]) -> Workflow:
    base = summary_view(row)
    return Workflow(**{f: getattr(base, f) for f in base.__struct_fields__},
                    message_ids=[m.id for m in messages], messages=messages, logs=logs)


def status_view(row: WorkflowRow) -> WorkflowStatusView:
    return WorkflowStatusView(id=row.id, status=cast(RoundStatus, row.status), last_activity=aware(row.last_activity),
                              current_round=row.current_round, progress=row.progress,
                              last_message_id=row.last_message_id, last_log_id=row.last_log_id,
                              waiting_for=waiting_view(row))


DECISIONS: dict[str, list[Decision]] = {"plan": ["approve", "revise", "edit", "reject"],
                                        "question": ["answer", "reject"], "tool": ["approve", "reject"]}


def waiting_view(row: WorkflowRow) -> WaitingFor | None:
    """What the workflow waits for, while it waits (the row keeps it as written with the wait)."""
    wait = row.waiting_for
    if row.status != "waiting" or not wait:
        return None
    return WaitingFor(kind=wait["kind"], message_id=wait["messageId"], since=_stamp(wait["since"]),
                      expires_at=_stamp(wait["expiresAt"]), decisions=list(wait.get("actions") or []) if wait["kind"] == "node" else list(DECISIONS[wait["kind"]]),
                      question=wait.get("question"), tool=wait.get("tool"), task_id=wait.get("taskId"),
                      agent=wait.get("agent"), nodes=wait.get("nodes"))


def _stamp(value: str) -> datetime:
    return aware(datetime.fromisoformat(value))
