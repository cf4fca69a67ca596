"""What a round's journal writes keep as typed records, and read back as `agents.round`'s values: the plan
(its planning message's `plan`, `Plan.record`) and each task's outcome (`TaskRecord`, under
`TASK_RECORD` in its message's meta, written with the message and never shown on the wire).

A resumed round's finished tasks and an ended round's memory are decoded from these records; the loose
keys the wire shows (`taskId`, `failed`, `error`, `undelivered`, `skipped`) are written from the record and
read back only for messages written before the record existed (`_legacy`, the one place)."""

from __future__ import annotations

from typing import Any

import msgspec

from agents.base import Plan
from agents.round import TaskOutcome
from app.store.records import TASK_RECORD
from app.store.tables import DocumentRow, MessageRow, stored_id


class TaskRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """A task's outcome as its journal write stores it (`TaskOutcome`'s durable part: its text is the
    message's content, its files the message's documents, its tokens the message's `tokens_used`)."""

    task_id: str
    ok: bool = True
    error: str = ""  # why it failed, or why it was skipped
    undelivered: bool = False  # it ran, and said it could not do what it was asked
    skipped: bool = False  # it never ran: something it needs is missing

    @property
    def delivered(self) -> bool:
        return self.ok and not self.undelivered and not self.skipped

    def outcome(self, text: str, files: list[int], tokens: int) -> TaskOutcome:
        """The task's outcome, with what its message holds."""
        return TaskOutcome(self.task_id, ok=self.ok, text=text if self.ok else "", files=files, tokens=tokens,
                           error=self.error, undelivered=self.undelivered)


def task_meta(record: TaskRecord) -> dict[str, Any]:
    """The task's message meta: the wire's keys (as they always were) and the record itself."""
    wire: dict[str, Any] = {"taskId": record.task_id}
    if record.skipped:
        wire["skipped"] = True
    elif not record.ok:
        wire |= {"failed": True, "error": record.error}
    elif record.undelivered:
        wire["undelivered"] = True
    return {**wire, TASK_RECORD: msgspec.to_builtins(record)}


def record_of(message: MessageRow) -> TaskRecord | None:
    """The outcome a task's message records (None: not a task's outcome)."""
    meta = message.meta or {}
    if TASK_RECORD in meta:
        return msgspec.convert(meta[TASK_RECORD], TaskRecord)
    return _legacy(message)


def _legacy(message: MessageRow) -> TaskRecord | None:
    """A task's message written before the record (databases from before it): its outcome from the
    wire's loose keys. The only reader of them; nothing written since needs it."""
    meta = message.meta or {}
    task_id = meta.get("taskId")
    if not task_id:
        return None
    if meta.get("skipped"):
        return TaskRecord(task_id, ok=False, skipped=True,
                          error=message.content.split("was skipped: ", 1)[-1].rstrip("."))
    if meta.get("failed"):
        return TaskRecord(task_id, ok=False, error=meta.get("error", message.content))
    return TaskRecord(task_id, undelivered=bool(meta.get("undelivered")))


def finished_tasks(rows: list[tuple[MessageRow, list[DocumentRow]]]) -> tuple[dict[str, TaskOutcome], dict[str, int]]:
    """The outcomes of the tasks whose message the round wrote (before it was interrupted, or before it
    waited for the user), and the id of each one's message. A skipped task is not finished."""
    outcomes: dict[str, TaskOutcome] = {}
    messages: dict[str, int] = {}
    for message, docs in rows:
        record = record_of(message)
        if record is None or record.skipped:
            continue
        outcomes[record.task_id] = record.outcome(message.content, [d.file_id for d in docs], message.tokens_used)
        messages[record.task_id] = stored_id(message)
    return outcomes, messages


def plan_of(message: MessageRow) -> Plan:
    """The plan a round's planning (or revision) message carries (`Plan.record`): a resumed
    round goes on with the plan it made before the crash, without asking the model again."""
    meta = message.meta or {}
    return Plan.from_record(meta.get("plan", {}), meta.get("language", ""), message.content.split("\n\n### ", 1)[0])
